"""A commit or abort through a gateway holds that gateway's reads of the tables the txn wrote until its poller
has applied the outcome (store/cache/facade.py ended_txns). It found them by a pass over every cached table,
so each commit cost time in proportion to the tables cached, on the event loop: open_txns + commit_txn took
1.8 ms with 100 tables cached and 6.5 to 11.3 ms with 20,000. The cache now keeps, per open txn, the tables
whose entries list it among their writers."""

from __future__ import annotations

import time

from hive.writeids import ValidWriteIdList
from store.cache.entry import CommittedWriteIds, TableEntry, Version, build_entry, with_changes
from store.cache.facade import CachedCatalog
from store.cache.sharded import ShardedCache
from store.catalog_store import CatalogStore
from store.models import FieldSchema, Table


def _entry(table_id: int, writers: dict[int, int] | None = None) -> TableEntry:
    table = Table(db_name="db", name=f"t{table_id}", transactional=True, partition_keys=(FieldSchema("p", "string"),),
                  table_id=table_id)
    committed = CommittedWriteIds.from_list(ValidWriteIdList.parse(f"db.t{table_id}:1:9223372036854775807::"))
    return build_entry([(Version(0, None, b"table"), table)], {}, committed=committed, writers=writers or {},
                       gc_watermark=0, applied_event_id=1)


def _facade(entries: list[TableEntry]) -> CachedCatalog:
    cache = ShardedCache(shards=4)
    for entry in entries:
        cache.install(entry)
    cache.advance(1)
    return CachedCatalog(cache, CatalogStore(None, warehouse_dir=""))  # type: ignore[arg-type]


def _held(facade: CachedCatalog) -> set[str]:
    return {name for (_, name), _ in facade.cache._local_writes.items()}  # noqa: SLF001 - what the marks hold


def test_an_ended_txn_holds_the_tables_whose_entries_list_it_as_a_writer() -> None:
    facade = _facade([_entry(1, {7: 3}), _entry(2, {7: 4, 8: 1}), _entry(3, {8: 2}), _entry(4)])
    cache = facade.cache
    cache.note_writer("db", "t4", 7)  # a write through this gateway: its entry lists the txn from now on
    cache.replace(3, with_changes(cache.get(3), writers={9: 5}))  # type: ignore[arg-type]  # a batch: 8 ended, 9 began
    cache.remove(1)
    facade.ended_txns([8], 10)
    assert _held(facade) == {"t2"}  # not t3, which no longer lists 8
    facade.ended_txn(7, 11)
    assert _held(facade) == {"t2", "t4"}  # not t1, no longer cached
    facade.ended_txns([9, 12], 12)
    assert _held(facade) == {"t2", "t3", "t4"}
    cache.clear()
    facade.ended_txn(9, 13)
    assert cache.tables_written_by(9) == []


def _commit_seconds(tables: int, commits: int = 2_000) -> float:
    facade = _facade([_entry(table_id, {table_id: 1}) for table_id in range(1, tables + 1)])
    started = time.perf_counter()
    for txn_id in range(tables + 1, tables + 1 + commits):  # txns that wrote no cached table
        facade.ended_txn(txn_id, 2)
    return time.perf_counter() - started


def test_a_commit_costs_the_same_however_many_tables_are_cached() -> None:
    _commit_seconds(100)  # warm up
    small = _commit_seconds(2_000)
    large = _commit_seconds(20_000)
    # Before: a pass over the cached tables each, 10x at 20,000 tables against 2,000.
    assert large < 4 * small + 2e-3, f"{large * 1e3:.1f} ms for 2,000 commits with 20,000 tables cached against " \
                                     f"{small * 1e3:.1f} ms with 2,000"
