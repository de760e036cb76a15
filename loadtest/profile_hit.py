"""Where a cached GetPartitionsByNames(100) spends its time, without gRPC: `python -m loadtest.profile_hit`.

Builds a cache entry of 10,000 partitions the way the poller does and times each step of the hit path.
"""

import random
import time
from store.cache.entry import CommittedWriteIds, Version, build_entry
from store.cache.sharded import ShardedCache
from store.models import FieldSchema, Partition, StorageDescriptor, SerDeInfo, Table, TableType
from store.snapshot import ReadSnapshot
from store.writeids import ValidWriteIdList
from gateway import wire
from gateway.servicers.catalog import _target
from protos.metastore.v1 import catalog_pb2 as pb
from loadtest.gateway_targets import partition_values, partitions_request

keys = (FieldSchema("ds", "string"), FieldSchema("hr", "int"))
t = Table(db_name="bench", name="events", transactional=True, partition_keys=keys, table_id=1,
          sd=StorageDescriptor(location="/w/bench.db/events", input_format="org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
                               output_format="org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat", serde=SerDeInfo(serialization_lib="org.apache.hadoop.hive.ql.io.orc.OrcSerde")))
parts = {}
for ds, hr in partition_values(10000):
    name = f"ds={ds}/hr={hr}"
    p = Partition("bench", "events", (ds, hr), name, StorageDescriptor(location=f"/w/bench.db/events/{name}", input_format=t.sd.input_format, output_format=t.sd.output_format, serde=t.sd.serde), {"numRows": "1000", "totalSize": "123456"}, 1700000000, 1)
    parts[name] = (Version(1, None, wire.partition_element(p), p.values),)
wl = ValidWriteIdList.parse("bench.events:1:9223372036854775807::")
cache = ShardedCache()
cache.put(build_entry([(Version(0, None, wire.table_message(t)), t)], parts, committed=CommittedWriteIds.from_list(wl), writers={}, gc_watermark=0, applied_event_id=1))
names = random.Random(1).sample(list(parts), 100)
read = pb.ReadContext(valid_write_id_list=wl.to_string(), table_id=1)
raw = partitions_request(names, read)
N = 5000
def timeit(label: str, fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    for _ in range(N): fn()
    dt = (time.perf_counter() - t0) / N * 1e6
    print(f"{label:55} {dt:8.1f} us/call")
    return dt
req = pb.GetPartitionsByNamesRequest.FromString(raw)
timeit("parse request (FromString, 100 names)", lambda: pb.GetPartitionsByNamesRequest.FromString(raw))
timeit("_target (names, ReadSnapshot.parse of the list)", lambda: _target(req.db_name, req.table_name, req.read))
db, tb, snap = _target(req.db_name, req.table_name, req.read)
hit = cache.read_partitions(db, tb, req.names, snap)
timeit("cache.read_partitions (decision + 100 lookups)", lambda: cache.read_partitions(db, tb, req.names, snap))
timeit("join 100 pre-framed partitions", lambda: b"".join(hit.frames))
out = b"".join(hit.frames)
print("response bytes", len(out), "partitions", len(pb.GetPartitionsByNamesResponse.FromString(out).partitions))
