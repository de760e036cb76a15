"""Who changes the cache, and how: the facade's write marks on hand-built entries (no database is
involved in a mark), fill requests, and the poller-facing methods."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from store.cache.entry import CommittedWriteIds, TableEntry, Version, build_entry
from store.cache.facade import CachedCatalog
from store.cache.fills import FillRequests
from store.cache.sharded import BEHIND_TOKEN, OWN_WRITES, Miss, PartitionsHit, ShardedCache
from store.catalog_store import CatalogStore
from store.models import Database, FieldSchema, Table, TableType
from store.snapshot import ReadSnapshot
from hive.writeids import ValidWriteIdList

KEYS = (FieldSchema("p", "string"),)


def _entry(name: str, table_id: int, *, acid: bool = False, applied: int = 100) -> TableEntry:
    table = Table(db_name="db", name=name, table_type=TableType.MANAGED, transactional=acid, partition_keys=KEYS,
                  table_id=table_id)
    committed = CommittedWriteIds.from_list(ValidWriteIdList.parse(f"db.{name}:1:9223372036854775807::"))
    return build_entry([(Version(0, None, b"table"), table)], {"p=a": (Version(1 if acid else 0, None, b"a"),)},
                       committed=committed, writers={}, gc_watermark=0, applied_event_id=applied)


def _facade(*entries: TableEntry, enabled: bool = True) -> CachedCatalog:
    cache = ShardedCache(shards=2, enabled=enabled)
    for entry in entries:
        cache.install(entry)
    cache.advance(100)
    # The marks never touch the store: a CatalogStore without a database is enough here.
    return CachedCatalog(cache, CatalogStore(None, warehouse_dir=""))  # type: ignore[arg-type]


LATEST = ReadSnapshot()


def _read(facade: CachedCatalog, name: str, snapshot: ReadSnapshot = LATEST, token: int = 0) -> PartitionsHit | Miss:
    return facade.cached_partitions_by_names("db", name, ["p=a"], snapshot, token)


def test_a_write_holds_reads_of_its_table_under_the_normalised_name_until_the_cache_applies_it() -> None:
    facade = _facade(_entry("t", 1))
    facade.wrote("DB", "T", 101)
    assert _read(facade, "t") == Miss(BEHIND_TOKEN)
    facade.cache.advance(101)
    assert isinstance(_read(facade, "t"), PartitionsHit)


def test_a_rename_holds_reads_of_the_new_name_as_well() -> None:
    facade = _facade(_entry("old", 1), _entry("new", 2))  # "new": a stale copy under the name it takes
    facade.wrote("db", "Old", 101, renamed_to=("Db", "NEW"))
    assert _read(facade, "old") == Miss(BEHIND_TOKEN)
    assert _read(facade, "new") == Miss(BEHIND_TOKEN)
    facade.cache.advance(101)
    assert isinstance(_read(facade, "new"), PartitionsHit)


def test_a_write_under_a_txn_sends_that_txns_reads_to_the_database_even_when_it_appended_no_event() -> None:
    facade = _facade(_entry("t", 1, acid=True))
    mine = ReadSnapshot(ValidWriteIdList.parse("db.t:1:9223372036854775807::"), txn_id=77, expected_table_id=1)
    assert isinstance(_read(facade, "t", mine, token=100), PartitionsHit)
    facade.wrote("DB", "t", 0, txn_id=77)  # e.g. an if-exists drop that dropped nothing
    assert _read(facade, "t", mine, token=100) == Miss(OWN_WRITES)
    other = ReadSnapshot(mine.write_ids, txn_id=78, expected_table_id=1)
    assert isinstance(_read(facade, "t", other, token=100), PartitionsHit)  # only that txn's reads


def test_a_database_write_holds_reads_of_the_database() -> None:
    facade = _facade()
    facade.cache.put_database(Database(name="db"))
    facade.wrote("DB", "", 101)
    assert facade.cached_database("db") == Miss(BEHIND_TOKEN)
    facade.cache.advance(101)
    assert facade.cached_database("db") == Database(name="db")


def test_a_disabled_cache_takes_no_marks() -> None:
    facade = _facade(enabled=False)
    facade.wrote("db", "t", 101, txn_id=7)
    facade.wrote("db", "", 102)
    assert facade.cache._local_writes == {}


def test_a_read_of_a_table_the_cache_does_not_hold_asks_for_it_once() -> None:
    cache = ShardedCache(shards=2, max_partitions=1)
    cache.install(_entry("t1", 1))
    cache.install(_entry("t2", 2))  # evicts t1
    for _ in range(3):
        cache.read_partitions("db", "t1", ["p=a"], ReadSnapshot())
        cache.read_partitions("db", "nope", ["p=a"], ReadSnapshot())
    cache.read_database("nodb")
    assert cache.stats.misses == {"evicted": 3, "unknown_table": 4}
    assert cache.fill_requests.drain() == [("db", "t1"), ("db", "nope")]
    assert cache.fill_requests.drain() == []


def test_fill_requests_are_bounded_and_signal_the_filler() -> None:
    wanted = FillRequests(max_pending=2)
    assert not wanted._ready.is_set()
    for name in ("a", "b", "c", "a"):
        wanted.want(("db", name))
    assert len(wanted) == 2 and wanted._ready.is_set()
    assert wanted.drain() == [("db", "a"), ("db", "b")]
    assert not wanted._ready.is_set()
    with pytest.raises(ValueError):
        FillRequests(max_pending=0)


def test_the_cache_moves_only_forward_and_keeps_the_newer_copy_of_a_table() -> None:
    cache = ShardedCache()
    cache.advance(5)
    with pytest.raises(ValueError, match="cannot move back"):
        cache.advance(4)
    newer, older = _entry("t", 1, applied=9), _entry("t", 1, applied=8)
    assert cache.install(newer) and not cache.install(older)
    assert cache.get(1) is newer
    cache.replace(1, None)
    assert cache.get(1) is None and cache.by_name("db", "t") is None


def _calls_and_imports(path: Path) -> tuple[set[str], set[str]]:
    tree = ast.parse(path.read_text(), str(path))
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imports |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    return calls, imports


def test_only_the_facade_marks_writes_and_the_store_stays_free_of_protocols() -> None:
    """The cache's write marks have one caller, so a second protocol's servicer cannot get them
    subtly different; and the store never imports a protocol (it is handed its encoders)."""
    root = Path(__file__).resolve().parents[2]
    marks = {"hold_until", "note_writer"}
    for package in ("gateway", "poller", "store"):
        for path in (root / package).rglob("*.py"):
            calls, imports = _calls_and_imports(path)
            if path != root / "store/cache/facade.py":
                assert not calls & marks, f"{path.relative_to(root)} marks the cache itself: call CachedCatalog.wrote"
            if package == "store":
                assert not {i.split(".")[0] for i in imports} & {"grpc", "protos", "gateway", "poller"}, path
