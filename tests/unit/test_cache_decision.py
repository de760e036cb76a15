"""The read decision on hand-built cache entries: the seed's examples and every miss reason."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Mapping

from hypothesis import given
from hypothesis import strategies as st

from protos.metastore.v1 import catalog_pb2 as pb
from store.cache._frames import EncodedNames
from store.cache.entry import CommittedWriteIds, TableEntry, Version, build_entry
from store.cache.sharded import (
    NO_SNAPSHOT,
    OWN_WRITES,
    STALE,
    TABLE_ID_MISMATCH,
    UNKNOWN_TABLE,
    VERSIONS_NOT_HELD,
    Miss,
    PartitionsHit,
    ShardedCache,
    VersionsHit,
)
from store.models import FieldSchema, Table, TableType
from store.snapshot import ReadSnapshot, is_visible
from hive.writeids import ValidWriteIdList

TABLE = Table(db_name="db", name="t", table_type=TableType.MANAGED, transactional=True,
              partition_keys=(FieldSchema("p", "string"),), table_id=42)


def _entry(committed: str, partitions: Mapping[str, tuple[Version, ...]], gc_watermark: int = 0,
           writers: dict[int, int] | None = None) -> TableEntry:
    return build_entry([(Version(0, None, b"table"), TABLE)], partitions,
                       committed=CommittedWriteIds.from_list(ValidWriteIdList.parse(committed)),
                       writers=writers or {}, gc_watermark=gc_watermark, applied_event_id=100)


def _cache(entry: TableEntry) -> ShardedCache:
    cache = ShardedCache(shards=4)
    cache.put(entry)
    return cache


def _read(cache: ShardedCache, request: str, names: list[str] | None = None, **kw: int) -> PartitionsHit | Miss:
    snapshot = ReadSnapshot(ValidWriteIdList.parse(request), txn_id=kw.get("txn_id", 0),
                            expected_table_id=kw.get("table_id", 42))
    if kw.get("thrift_too"):  # Hive's Thrift API reads the same versions (it frames them itself)
        versions = cache.read_partition_versions("db", "t", names or ["p=a"], snapshot)
        assert isinstance(versions, VersionsHit)
        thrift_frames = [v.frame for v in versions.versions]
    hit = cache.read_partitions("db", "t", names or ["p=a"], snapshot)
    if kw.get("thrift_too"):
        assert isinstance(hit, PartitionsHit) and thrift_frames == hit.frames
    # gRPC's encoded answer decides alike, from str names and from names read in place (FrameMap.join);
    # the counts the tests read stay the plain read's.
    counted = replace(cache.stats, misses=Counter(cache.stats.misses))
    serialized = pb.GetPartitionsByNamesRequest(names=names or ["p=a"]).SerializeToString()
    for requested in (names or ["p=a"], EncodedNames(serialized, 3)):
        encoded = cache.read_partitions_encoded("db", "t", requested, snapshot)
        assert encoded == (b"".join(hit.frames) if isinstance(hit, PartitionsHit) else hit)
    cache.stats = counted
    return hit


def test_seed_cached_11_7_8_answers_a_request_12_7_8_12() -> None:
    """Write ids 1..6, 9, 10, 11 are committed in both: the cache is fresh for this request."""
    cache = _cache(_entry("db.t:11:9223372036854775807:7,8:", {"p=a": (Version(11, None, b"v11"),)}))
    hit = _read(cache, "db.t:12:7:7,8,12:")
    assert isinstance(hit, PartitionsHit) and hit.frames == [b"v11"]


def test_seed_cached_12_7_12_answers_12_7_8_12_only_with_what_that_snapshot_sees() -> None:
    """Write id 8 committed after the caller's snapshot: the cache holds 8's change and the version
    it replaced; the caller must get the replaced one, never 8's."""
    versions = (Version(8, None, b"by-write-8"), Version(3, 8, b"before-8"))
    cache = _cache(_entry("db.t:12:7:7,12:", {"p=a": versions}))
    hit = _read(cache, "db.t:12:7:7,8,12:")
    assert isinstance(hit, PartitionsHit) and hit.frames == [b"before-8"]
    newer = _read(cache, "db.t:12:7:7,12:")
    assert isinstance(newer, PartitionsHit) and newer.frames == [b"by-write-8"]


def test_seed_example_goes_to_the_database_when_the_needed_version_is_gone() -> None:
    cache = _cache(_entry("db.t:12:7:7,12:", {"p=a": (Version(8, None, b"by-write-8"),)}, gc_watermark=8))
    assert _read(cache, "db.t:12:7:7,8,12:") == Miss(VERSIONS_NOT_HELD)


def test_a_request_that_saw_a_commit_the_cache_has_not_is_stale() -> None:
    cache = _cache(_entry("db.t:11:9223372036854775807:7,8:", {"p=a": (Version(1, None, b"x"),)}))
    assert _read(cache, "db.t:12:9223372036854775807:7:") == Miss(STALE)  # 8 and 12 committed for the caller


def test_other_miss_reasons() -> None:
    cache = _cache(_entry("db.t:5:9223372036854775807::", {"p=a": (Version(1, None, b"x"),)}, writers={77: 6}))
    assert _read(cache, "db.t:5:9223372036854775807::", table_id=41) == Miss(TABLE_ID_MISMATCH)
    assert _read(cache, "db.t:5:9223372036854775807::", txn_id=77) == Miss(OWN_WRITES)
    assert cache.read_partitions("db", "t", ["p=a"], ReadSnapshot()) == Miss(NO_SNAPSHOT)
    assert cache.read_partitions("db", "other", ["p=a"], ReadSnapshot()) == Miss(UNKNOWN_TABLE)
    assert cache.stats.misses == {TABLE_ID_MISMATCH: 1, OWN_WRITES: 1, NO_SNAPSHOT: 1, UNKNOWN_TABLE: 1}


def test_uncommitted_and_aborted_versions_are_invisible() -> None:
    versions = (Version(6, None, b"open-6"), Version(2, 6, b"committed-2"))
    cache = _cache(_entry("db.t:6:6:6:5", {"p=a": versions, "p=b": (Version(5, None, b"aborted-5"),)}))
    hit = _read(cache, "db.t:6:6:6:5", ["p=a", "p=b"], thrift_too=1)
    assert isinstance(hit, PartitionsHit) and hit.frames == [b"committed-2"]


def test_names_are_canonicalised_deduplicated_and_kept_in_request_order() -> None:
    parts = {"p=a": (Version(1, None, b"a"),), "p=b": (Version(1, None, b"b"),)}
    cache = _cache(_entry("db.t:1:9223372036854775807::", parts))
    hit = _read(cache, "db.t:1:9223372036854775807::", ["p=b", "P=a", "p=b", "p=zz"], thrift_too=1)
    assert isinstance(hit, PartitionsHit) and hit.frames == [b"b", b"a"]
    hit = _read(cache, "db.t:1:9223372036854775807::", ["P=a", "p=b", "p=a", "p=zz", "P=b"], thrift_too=1)
    assert isinstance(hit, PartitionsHit) and hit.frames == [b"a", b"b"]  # where each is first named


def test_hives_read_by_names_answers_each_partition_once_in_name_order() -> None:
    """Hive's Thrift API (gateway/thrift/handler.py `_by_names`) asks for name order: the live view's path
    (every name in its stored spelling) and the general one (another spelling, or a snapshot the live view
    does not answer) order alike, each partition once."""
    parts = {name: (Version(1, None, name.encode()),) for name in ("p=a", "p=b", "p=c")}
    cache = _cache(_entry("db.t:1:9223372036854775807::", parts))
    snapshot = ReadSnapshot(ValidWriteIdList.parse("db.t:1:9223372036854775807::"), expected_table_id=42)
    for names in (["p=c", "p=a", "p=b", "p=a"], ["p=c", "P=a", "p=zz", "p=b", "p=a", "P=C"]):
        hit = cache.read_partition_versions("db", "t", names, snapshot, in_name_order=True)
        assert isinstance(hit, VersionsHit) and [v.frame for v in hit.versions] == [b"p=a", b"p=b", b"p=c"]
    hit = cache.read_partition_versions("db", "t", ["p=c", "p=a"], snapshot)
    assert isinstance(hit, VersionsHit) and [v.frame for v in hit.versions] == [b"p=c", b"p=a"]  # request order


def test_memory_bound_evicts_least_recently_used_tables() -> None:
    cache = ShardedCache(shards=2, max_partitions=3)
    for table_id, name in ((1, "t1"), (2, "t2")):
        table = Table(db_name="db", name=name, partition_keys=(FieldSchema("p", "string"),), table_id=table_id)
        cache.put(build_entry([(Version(0, None, b""), table)], {"p=a": (Version(0, None, b""),),
                                                                 "p=b": (Version(0, None, b""),)},
                              committed=CommittedWriteIds(), writers={}, gc_watermark=0, applied_event_id=1))
    cache.read_partitions("db", "t1", ["p=a"], ReadSnapshot())  # t1 used after t2
    assert cache.enforce_memory_bound() == [2]
    assert isinstance(cache.read_partitions("db", "t2", ["p=a"], ReadSnapshot()), Miss)
    assert cache.stats.misses["evicted"] == 1


@st.composite
def _histories_and_snapshots(draw: st.DrawFn) -> tuple[dict[str, tuple[Version, ...]], str]:
    """Partition histories over write ids 1..12 (newest first, each version ended by the next one's
    write id, as the database writes them) and a snapshot the cache covers. Not every history is one
    the conflict rules allow; the cache must still pick what the rule picks: the newest visible."""
    hwm = draw(st.integers(1, 12))
    exceptions = draw(st.sets(st.integers(1, hwm), max_size=hwm))
    aborted = draw(st.sets(st.sampled_from(sorted(exceptions)), max_size=len(exceptions))) if exceptions else set()
    parts = {}
    for i in range(draw(st.integers(1, 6))):
        wids = sorted(draw(st.sets(st.integers(1, 12), min_size=1, max_size=4)), reverse=True)
        dropped = draw(st.booleans())
        ends = [None if not dropped else draw(st.integers(wids[0] + 1, 13))] + wids[:-1]
        parts[f"p={i}"] = tuple(Version(w, end, f"{i}@{w}".encode()) for w, end in zip(wids, ends))
    open_ids = sorted(exceptions - aborted)
    min_open = open_ids[0] if open_ids else 9223372036854775807
    listed = ",".join(map(str, open_ids))
    return parts, f"db.t:{hwm}:{min_open}:{listed}:{','.join(map(str, sorted(aborted)))}"


@given(_histories_and_snapshots())
def test_a_cached_read_answers_what_the_databases_visibility_rule_selects(case: tuple[dict[str, tuple[Version, ...]],
                                                                                      str]) -> None:
    parts, request = case
    cache = _cache(_entry("db.t:13:9223372036854775807::", parts))
    wl = ValidWriteIdList.parse(request)
    hit = _read(cache, request, list(parts), thrift_too=1)
    newest_visible = (next((v for v in versions if is_visible(wl, 0, v.created_wid, v.dropped_wid)), None)
                      for versions in parts.values())
    shown = {name: v for name, v in zip(parts, newest_visible) if v is not None}
    expected = [v.frame for v in shown.values()]
    assert isinstance(hit, PartitionsHit) and hit.frames == expected
    # Listing in name order (Hive's get_partitions, get_partition_names) sees the same partitions.
    snapshot = ReadSnapshot(wl, expected_table_id=42)
    listed = cache.read_versions_by_filter("db", "t", "", 100, snapshot)
    assert isinstance(listed, VersionsHit) and [v.frame for v in listed.versions] == [
        shown[name].frame for name in sorted(shown)]
    assert cache.list_partition_names("db", "t", "", 100, snapshot) == (sorted(shown), None)
    after = sorted(name for name in shown if name > "p=0")
    assert cache.list_partition_names("db", "t", "p=0", 1, snapshot) == (after[:1], after[0] if after[1:] else None)
