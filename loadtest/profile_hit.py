"""Where a cached GetPartitionsByNames(100) spends its time in the gateway's own code, without gRPC:
`python -m loadtest.profile_hit`.

Builds a cache entry of 10,000 partitions the way the poller does and times the hit path in-process:
the request's deserializer, the Catalog servicer's whole method (its checks, the cache's read decision
and FrameMap's join, error mapping), and the cache's part of it alone. `make bench` reports these steps
next to the ratios, so a missed goal comes with them.
"""

from __future__ import annotations

import random
import time
from typing import Any, Awaitable, Callable, Coroutine, cast

from gateway import wire
from gateway.config import load_settings
from gateway.servicers.catalog import CatalogServicer, NamesRequest
from hive.writeids import ValidWriteIdList
from loadtest.gateway_targets import partition_values, partitions_request
from protos.metastore.v1 import catalog_pb2 as pb
from store.cache.entry import CommittedWriteIds, Version, build_entry
from store.cache.facade import CachedCatalog, table_key
from store.cache.sharded import ShardedCache
from store.catalog_store import CatalogStore
from store.models import FieldSchema, Partition, SerDeInfo, StorageDescriptor, Table
from store.snapshot import ReadSnapshot

ORC = "org.apache.hadoop.hive.ql.io.orc."


class _NoDatabase:
    """The store behind the profiled servicer: a hit never reaches it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a cached hit reached the database ({name})")


def _answer(method_call: Awaitable[bytes]) -> bytes:
    """Run a servicer method's coroutine, which must not await (a hit), to its answer."""
    call = cast(Coroutine[Any, Any, bytes], method_call)
    try:
        call.send(None)
    except StopIteration as done:
        return cast(bytes, done.value)
    call.close()
    raise AssertionError("a cached hit awaited")


def _cache(partitions: int) -> tuple[ShardedCache, list[str]]:
    sd = StorageDescriptor(location="/w/bench.db/events", input_format=ORC + "OrcInputFormat",
                           output_format=ORC + "OrcOutputFormat", serde=SerDeInfo(serialization_lib=ORC + "OrcSerde"))
    table = Table(db_name="bench", name="events", transactional=True, table_id=1, sd=sd,
                  partition_keys=(FieldSchema("ds", "string"), FieldSchema("hr", "int")))
    parts = {}
    for ds, hr in partition_values(partitions):
        name = f"ds={ds}/hr={hr}"
        p = Partition("bench", "events", (ds, hr), name,
                      StorageDescriptor(location=f"/w/bench.db/events/{name}", input_format=sd.input_format,
                                        output_format=sd.output_format, serde=sd.serde),
                      {"numRows": "1000", "totalSize": "123456"}, 1700000000, 1)
        parts[name] = (Version(1, None, wire.partition_element(p), p.values),)
    committed = CommittedWriteIds.from_list(ValidWriteIdList.parse("bench.events:1:9223372036854775807::"))
    cache = ShardedCache()
    cache.put(build_entry([(Version(0, None, wire.table_message(table)), table)], parts, committed=committed,
                          writers={}, gc_watermark=0, applied_event_id=1))
    return cache, list(parts)


def _per_call_us(fn: Callable[[], object], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - started) / calls * 1e6


def profile(batch: int = 100, partitions: int = 10_000, calls: int = 5000) -> list[tuple[str, float]]:
    """(step, microseconds per call) for a cached GetPartitionsByNames(batch)."""
    cache, names = _cache(partitions)
    catalog = CachedCatalog(cache, cast(CatalogStore, _NoDatabase()))
    servicer = CatalogServicer(cast(CatalogStore, _NoDatabase()), load_settings(environ={}), catalog)
    read = pb.ReadContext(valid_write_id_list="bench.events:1:9223372036854775807::", table_id=1)
    raw = partitions_request(random.Random(1).sample(names, batch), read)
    request = NamesRequest.from_bytes(raw)
    reply = pb.GetPartitionsByNamesResponse.FromString(_answer(servicer.GetPartitionsByNames(request, None)))
    assert len(reply.partitions) == batch and reply.partitions[0].table_name == "events"
    db, table = table_key(request.message.db_name, request.message.table_name)
    snapshot = ReadSnapshot.parse(read.valid_write_id_list, read.txn_id, read.table_id)
    assert isinstance(catalog.cached_partitions_encoded(db, table, request.names, snapshot), bytes)
    return [
        (f"deserialize the request ({batch} names, read in place)",
         _per_call_us(lambda: NamesRequest.from_bytes(raw), calls)),
        ("the servicer's hit: checks, read decision, join",
         _per_call_us(lambda: _answer(servicer.GetPartitionsByNames(request, None)), calls)),
        (f"of which the cache's read decision and {batch} frames joined",
         _per_call_us(lambda: catalog.cached_partitions_encoded(db, table, request.names, snapshot), calls)),
    ]


def main() -> None:
    for label, us in profile():
        print(f"{label:55} {us:8.1f} us/call")


if __name__ == "__main__":
    main()
