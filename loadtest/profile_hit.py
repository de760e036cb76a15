"""Where a cached GetPartitionsByNames(100) spends its time in the gateway's own code, without gRPC:
`python -m loadtest.profile_hit`.

Builds a cache entry of 10,000 partitions the way the poller does and times each step of the hit path
in-process. `make bench` reports these steps next to the ratios, so a missed goal comes with them.
"""

from __future__ import annotations

import functools
import random
import time
from typing import Callable

from gateway import wire
from hive.writeids import ValidWriteIdList
from loadtest.gateway_targets import partition_values, partitions_request
from protos.metastore.v1 import catalog_pb2 as pb
from store.cache.entry import CommittedWriteIds, Version, build_entry
from store.cache.facade import table_key
from store.cache.sharded import PartitionsHit, ShardedCache
from store.models import FieldSchema, Partition, SerDeInfo, StorageDescriptor, Table
from store.snapshot import ReadSnapshot

ORC = "org.apache.hadoop.hive.ql.io.orc."
_parse_snapshot = functools.lru_cache(maxsize=1024)(ReadSnapshot.parse)  # as the Catalog servicer keeps it


def _target(db_name: str, table_name: str, read: pb.ReadContext) -> tuple[str, str, ReadSnapshot]:
    """What the Catalog servicer checks before a cached read: normalized names, the parsed snapshot, the
    snapshot's table name."""
    db_key, tbl_key = table_key(db_name, table_name)
    snapshot = _parse_snapshot(read.valid_write_id_list, read.txn_id, read.table_id)
    snapshot.check_table_name(f"{db_key}.{tbl_key}")
    return db_key, tbl_key, snapshot


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
    """(step, microseconds per call) for each step of a cached GetPartitionsByNames(batch)."""
    cache, names = _cache(partitions)
    read = pb.ReadContext(valid_write_id_list="bench.events:1:9223372036854775807::", table_id=1)
    raw = partitions_request(random.Random(1).sample(names, batch), read)
    request = pb.GetPartitionsByNamesRequest.FromString(raw)
    db, table, snapshot = _target(request.db_name, request.table_name, request.read)
    hit = cache.read_partitions(db, table, request.names, snapshot)
    assert isinstance(hit, PartitionsHit) and len(hit.frames) == batch
    reply = pb.GetPartitionsByNamesResponse.FromString(b"".join(hit.frames))
    assert len(reply.partitions) == batch and reply.partitions[0].table_name == "events"
    return [
        (f"parse the request ({batch} names)", _per_call_us(lambda: pb.GetPartitionsByNamesRequest.FromString(raw),
                                                            calls)),
        ("check names, parse the snapshot", _per_call_us(lambda: _target(request.db_name, request.table_name,
                                                                          request.read), calls)),
        (f"read decision and {batch} lookups", _per_call_us(lambda: cache.read_partitions(db, table, request.names,
                                                                                          snapshot), calls)),
        (f"join {batch} pre-framed partitions", _per_call_us(lambda: b"".join(hit.frames), calls)),
    ]


def main() -> None:
    steps = profile()
    for label, us in steps:
        print(f"{label:45} {us:8.1f} us/call")
    print(f"{'total':45} {sum(us for _, us in steps):8.1f} us/call")


if __name__ == "__main__":
    main()
