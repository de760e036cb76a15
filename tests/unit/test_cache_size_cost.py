"""The cache's memory bound is checked after every CREATE_TABLE the poller applies and after every batch.
It summed the partitions of every cached table each time, so a gateway caching many tables spent time in
proportion to them on each event, on the event loop: creating 10,000 tables one after another went from
3.8 ms a create to 17 ms (py-spy: ShardedCache.partition_count). The count is now kept as entries are put
and removed; it stays what the sum says."""

from __future__ import annotations

import json
import time

from hive.writeids import ValidWriteIdList
from loadtest.profile_poller import CODEC
from poller.apply import TableBatch
from store import codec
from store.cache.entry import CommittedWriteIds, TableEntry, Version, build_entry
from store.cache.sharded import ShardedCache
from store.events import EventType
from store.models import FieldSchema, NotificationEvent, Partition, Table


def _entry(table_id: int, partitions: int = 1) -> TableEntry:
    table = Table(db_name="db", name=f"t{table_id}", partition_keys=(FieldSchema("p", "string"),), table_id=table_id)
    parts = {f"p={i}": (Version(0, None, b"x", (str(i),)),) for i in range(partitions)}
    committed = CommittedWriteIds.from_list(ValidWriteIdList.parse(f"db.t{table_id}:1:9223372036854775807::"))
    return build_entry([(Version(0, None, b"table"), table)], parts, committed=committed, writers={}, gc_watermark=0,
                       applied_event_id=1)


def _summed(cache: ShardedCache) -> int:
    return sum(e.partition_count for e in cache.entries())


def test_the_partition_count_is_the_sum_over_the_entries() -> None:
    cache = ShardedCache(shards=4)
    for table_id in range(1, 6):
        cache.install(_entry(table_id, table_id))
    assert cache.partition_count() == _summed(cache) == 15
    # A poller batch changes the entry's partitions in place, then puts the entry it finishes with.
    added = Partition("db", "t3", ("new",), "p=new")
    message = {"partitions": [codec.partition_to_json(added)]}
    batch = TableBatch(cache.get(3), CODEC)  # type: ignore[arg-type]
    batch.apply(NotificationEvent(2, 0, EventType.ADD_PARTITION, "db", "t3", 3, 0, 0, json.dumps(message)), message)
    cache.replace(3, batch.finish())
    assert cache.partition_count() == _summed(cache) == 16
    cache.put(_entry(2, 7))  # another copy replaces the old one
    cache.replace(4, None)
    assert cache.partition_count() == _summed(cache) == 1 + 7 + 4 + 5
    cache.max_partitions = 10
    assert cache.enforce_memory_bound(keep=5) and cache.partition_count() == _summed(cache) <= 10
    cache.clear()
    assert cache.partition_count() == 0


def _install_seconds(count: int) -> float:
    entries = [_entry(table_id) for table_id in range(1, count + 1)]
    cache = ShardedCache()
    started = time.perf_counter()
    for entry in entries:
        cache.install(entry)
    return time.perf_counter() - started


def test_installing_many_tables_costs_in_proportion_to_them() -> None:
    _install_seconds(100)  # warm up
    small = _install_seconds(2_000) / 2_000
    large = _install_seconds(20_000) / 20_000
    # Linear: the same per table within noise (before: each install summed every earlier table, and more at 20,000).
    assert large < 4 * small + 10e-6, f"{large * 1e6:.1f} µs per table against {small * 1e6:.1f}"
