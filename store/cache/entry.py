"""One cached table: its versions, pre-encoded, and the write-id state they reflect.

Design note. The cache mirrors the database's versioned metadata rather than one "current"
copy: every table and partition version is held with its (created_wid, dropped_wid) stamps and
its protobuf bytes, so a snapshot is answered by the same visibility rule the SQL uses
(store/snapshot.py), and an older snapshot can be answered too. What the cache may answer is
decided by `committed`: the write ids whose COMMIT_TXN this cache has applied. A request whose
committed write ids are all in `committed` needs nothing the cache has not seen.

An entry's scalar state (write ids, names, position) is immutable: a writer builds a new entry
and swaps the reference. Its large maps (the partitions, the live view's frames and pending write
ids, the sorted names) are changed in place by the poller, so that a batch costs what it changes,
not what the table holds: copying a map of a million partitions per batch would stall the event
loop for tens of milliseconds. That is safe because every reader and writer runs on the gateway's
one event loop, a reader never awaits while it holds an entry (store/cache/sharded.py), and a
batch is applied in one synchronous step; a batch that fails part-way drops the tables it touched
from the cache (poller/poller.py), so a half-changed map is never read.

A partition version's `frame` is a ready response element carrying the entry's current
(db_name, name); the poller re-frames them when a rename is applied (gateway/wire.py).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Mapping, Sequence

from store.cache._frames import FrameMap
from store.models import Partition, Table
from hive.writeids import LONG_MAX, ValidWriteIdList

PartitionEncoder = Callable[[Partition], bytes]
# A Partition as Hive Thrift struct fields (gateway/thrift/wire.py), and whether it carries columns of its own
ThriftPartitionEncoder = Callable[[Partition], tuple[bytes, bool]]
# (old (db, table), new (db, table)) -> re-frames a partition frame framed for the old name
PartitionRenamer = Callable[[tuple[str, str], tuple[str, str]], Callable[[bytes], bytes]]
TableEncoder = Callable[[Table], bytes]


@dataclass(frozen=True, slots=True)
class Codec:
    """How cached objects become frames: handed in by the gateway (gateway/wire.py), so the store
    never imports a protocol's messages."""

    partition: PartitionEncoder  # a Partition as a response element, carrying its table's name
    rename_partition: PartitionRenamer  # the same element carrying another table name
    table: TableEncoder
    thrift_partition: ThriftPartitionEncoder | None = None  # None: no Thrift endpoint, no Thrift bytes


@dataclass(frozen=True, slots=True)
class Version:
    """One version of a partition (or table): visible to snapshots that see `created_wid`
    committed and `dropped_wid` (None: still the latest) not committed. `frame` is the encoded
    message, ready to be joined into a response."""

    created_wid: int
    dropped_wid: int | None
    frame: bytes
    values: tuple[str, ...] = ()
    # The same partition for Hive's Thrift API: its struct's fields but the table's names (and the
    # table's columns, unless it has its own), so a rename or a column change needs no re-encoding.
    thrift: bytes = b""
    thrift_own_columns: bool = False


def partition_version(codec: Codec, created_wid: int, dropped_wid: int | None, p: Partition) -> Version:
    """A partition version encoded for every protocol the codec serves."""
    thrift, own_columns = codec.thrift_partition(p) if codec.thrift_partition is not None else (b"", False)
    return Version(created_wid, dropped_wid, codec.partition(p), p.values, thrift, own_columns)


def visible(v: Version, snapshot: ValidWriteIdList | None) -> bool:
    """The visibility rule of store/snapshot.py; None (non-transactional table) means latest."""
    if snapshot is None:
        return v.dropped_wid is None
    return _committed(v.created_wid, snapshot) and (v.dropped_wid is None or not _committed(v.dropped_wid, snapshot))


def _committed(w: int, snapshot: ValidWriteIdList) -> bool:
    return w == 0 or (w <= snapshot.high_watermark and not _contains(snapshot.exceptions, w))


def all_committed_through(snapshot: ValidWriteIdList | None) -> int:
    """The highest write id at or below which every write id is committed in the snapshot: a
    latest version created at or below it is visible without looking at the exceptions."""
    if snapshot is None:
        return LONG_MAX
    if snapshot.exceptions:
        return min(snapshot.high_watermark, snapshot.exceptions[0] - 1)
    return snapshot.high_watermark


def _contains(sorted_ids: tuple[int, ...], w: int) -> bool:
    if not sorted_ids:
        return False
    i = bisect.bisect_left(sorted_ids, w)
    return i < len(sorted_ids) and sorted_ids[i] == w


def pick(versions: tuple[Version, ...], snapshot: ValidWriteIdList | None) -> Version | None:
    for v in versions:
        if visible(v, snapshot):
            return v
    return None


@dataclass(frozen=True, slots=True)
class CommittedWriteIds:
    """The write ids of one table this cache knows are committed: 1..hwm minus `open_or_aborted`."""

    hwm: int = 0
    open_or_aborted: frozenset[int] = frozenset()
    aborted: frozenset[int] = frozenset()

    @classmethod
    def from_list(cls, wl: ValidWriteIdList) -> "CommittedWriteIds":
        return cls(wl.high_watermark, frozenset(wl.exceptions), frozenset(wl.aborted))

    def as_list(self, table_name: str) -> ValidWriteIdList:
        exceptions = tuple(sorted(self.open_or_aborted))
        opened = [w for w in exceptions if w not in self.aborted]
        return ValidWriteIdList(table_name, self.hwm, min(opened) if opened else LONG_MAX, exceptions, self.aborted)

    def _raise_hwm(self, w: int) -> tuple[int, frozenset[int]]:
        if w <= self.hwm:
            return self.hwm, self.open_or_aborted
        # Ids between the old hwm and w belong to txns whose outcome this cache has not seen yet.
        return w, self.open_or_aborted | frozenset(range(self.hwm + 1, w))

    def commit(self, w: int) -> "CommittedWriteIds":
        hwm, exceptions = self._raise_hwm(w)
        return CommittedWriteIds(hwm, exceptions - {w}, self.aborted - {w})

    def abort(self, w: int) -> "CommittedWriteIds":
        hwm, exceptions = self._raise_hwm(w)
        return CommittedWriteIds(hwm, exceptions | {w}, self.aborted | {w})

    def seeded(self, seed: int) -> "CommittedWriteIds":
        """Write ids 1..`seed` committed, no txn ever having held them (store/txns.py seed_write_id, which only
        a table that has had no write ids takes): a view loaded after the seed has it already."""
        if self.hwm >= seed:
            return self
        return CommittedWriteIds(seed, self.open_or_aborted, self.aborted)

    def forget_aborted(self, w: int) -> "CommittedWriteIds":
        """An aborted write id no directory holds any more is no longer listed (store/aborted_writes.py):
        the database's lists count it committed from now on, and so does this view, to still cover them."""
        if w not in self.aborted:
            return self  # not known as aborted here: this view was loaded after the ids were forgotten
        return CommittedWriteIds(self.hwm, self.open_or_aborted - {w}, self.aborted - {w})


@dataclass(slots=True)
class CommittedWriteIdsChanges:
    """A CommittedWriteIds being changed by one poller batch, in place: each commit or abort costs one
    set operation, where CommittedWriteIds' own (a new frozen copy each) cost its size, so a batch
    deciding n write ids of a table with many aborted ones was quadratic. The same rules; `frozen()`
    once, when the batch ends."""

    hwm: int
    open_or_aborted: set[int]
    aborted: set[int]

    @classmethod
    def of(cls, committed: CommittedWriteIds) -> "CommittedWriteIdsChanges":
        return cls(committed.hwm, set(committed.open_or_aborted), set(committed.aborted))

    def frozen(self) -> CommittedWriteIds:
        return CommittedWriteIds(self.hwm, frozenset(self.open_or_aborted), frozenset(self.aborted))

    def _raise_hwm(self, w: int) -> None:
        if w > self.hwm:  # as CommittedWriteIds._raise_hwm
            self.open_or_aborted.update(range(self.hwm + 1, w))
            self.hwm = w

    def commit(self, w: int) -> None:
        self._raise_hwm(w)
        self.open_or_aborted.discard(w)
        self.aborted.discard(w)

    def abort(self, w: int) -> None:
        self._raise_hwm(w)
        self.open_or_aborted.add(w)
        self.aborted.add(w)

    def seeded(self, seed: int) -> None:
        self.hwm = max(self.hwm, seed)

    def forget_aborted(self, w: int) -> None:
        if w in self.aborted:
            self.open_or_aborted.discard(w)
            self.aborted.discard(w)


@dataclass(frozen=True, slots=True)
class LiveView:
    """Each partition's version as this cache's own committed view sees it, kept up to date by the
    poller so that most reads are one dictionary lookup per name.

    A read may use it when every write id up to `through` is committed in the read's snapshot:
    write ids at or below `through` are then committed for both, and any other write id a partition
    version carries is not committed here, so (the read being covered) not for the reader either.
    Both see every version alike. `pending` lists the partitions each write id wrote that is neither
    committed nor aborted here yet: its outcome changes what they show. `frames` holds the same
    versions' frames in a FrameMap (store/cache/_frames.c): gRPC's hit is then one call that finds the
    names where the request holds them and joins their frames."""

    versions: dict[str, Version] = field(default_factory=dict)  # changed in place by the poller (module note)
    frames: FrameMap = field(default_factory=FrameMap)  # versions[name].frame; changed in place, as versions
    through: int = 0  # the highest write id committed here that a partition version carries
    pending: dict[int, set[str]] = field(default_factory=dict)  # changed in place, as versions


def _live_of(versions: tuple[Version, ...], view: ValidWriteIdList | None) -> tuple[Version | None, int, set[int]]:
    """A partition under the cache's view: its visible version, the highest committed write id its
    versions carry, and the write ids they carry that the view has no outcome for."""
    shown = None
    through = 0
    undecided: set[int] = set()
    for v in versions:
        if shown is None and visible(v, view):
            shown = v
        if view is not None:
            for w in (v.created_wid, v.dropped_wid):
                if not w:
                    continue
                if _committed(w, view):
                    through = max(through, w)
                elif not view.is_write_id_aborted(w):
                    undecided.add(w)
    return shown, through, undecided


def live_view(partitions: Mapping[str, tuple[Version, ...]], view: ValidWriteIdList | None) -> LiveView:
    return refresh_live(LiveView(), partitions, view, touched=partitions)


def refresh_live(live: LiveView, partitions: Mapping[str, tuple[Version, ...]], view: ValidWriteIdList | None,
                 *, touched: Iterable[str] = (), decided: Iterable[int] = ()) -> LiveView:
    """`live` after a batch changed the versions of `touched` and decided (committed or aborted) the
    write ids `decided`: only those partitions are looked at again, and its maps are changed in
    place (the module note says why that is safe)."""
    shown, frames, pending = live.versions, live.frames, live.pending
    names = set(touched)
    for w in decided:
        names |= pending.pop(w, set())
    through = live.through
    for name in names:
        versions = partitions.get(name)
        version, name_through, undecided = _live_of(versions, view) if versions else (None, 0, set())
        if version is None:
            shown.pop(name, None)
            frames.pop(name, None)
        else:
            shown[name] = version
            frames[name] = version.frame
        through = max(through, name_through)
        for w in undecided:
            pending.setdefault(w, set()).add(name)
    return LiveView(shown, frames, through, pending)


def renamed_live(old: LiveView, renamed: Mapping[int, Version]) -> tuple[LiveView, set[str]]:
    """`old` with each version replaced by its re-framed copy (a rename; `renamed` maps a version's
    id to its copy); visibility is unchanged. Also the names whose version has no copy: a batch
    replaced them, so they need `refresh_live`."""
    shown: dict[str, Version] = {}
    frames = FrameMap()
    stale: set[str] = set()
    for name, version in old.versions.items():
        copy = renamed.get(id(version))
        if copy is None:
            stale.add(name)
        else:
            shown[name] = copy
            frames[name] = copy.frame
    return LiveView(shown, frames, old.through, old.pending), stale


class NameIndex:
    """A table's partition names in sorted order, kept up to date by the poller as names come and
    go. Changes are recorded as they are applied and sorted in when a read asks for the names in
    order: a few by binary insertion (a memmove each), many by one linear merge. So a batch that
    adds or drops a few partitions of a large table costs a few set operations, and a read after it
    well under a millisecond at a million names."""

    __slots__ = ("_sorted", "_added", "_removed")
    _MERGE_ABOVE = 256  # changes past which one merge beats that many insertions

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._sorted: list[str] = sorted(names)
        self._added: set[str] = set()
        self._removed: set[str] = set()

    def add(self, name: str) -> None:
        """A name the table did not have."""
        if name in self._removed:
            self._removed.discard(name)
        else:
            self._added.add(name)

    def remove(self, name: str) -> None:
        """A name the table had."""
        if name in self._added:
            self._added.discard(name)
        else:
            self._removed.add(name)

    def sorted(self) -> Sequence[str]:
        """The names in order (the index's own list: read it, do not keep it across an await)."""
        added, removed = self._added, self._removed
        if not added and not removed:
            return self._sorted
        names = self._sorted
        if len(added) + len(removed) > self._MERGE_ABOVE:
            kept = [n for n in names if n not in removed] if removed else names
            names = kept + sorted(added)
            names.sort()  # two sorted runs: timsort merges them in linear time
            self._sorted = names
        else:
            for name in removed:
                del names[bisect.bisect_left(names, name)]
            for name in added:
                bisect.insort(names, name)
        self._added, self._removed = set(), set()
        return names


@dataclass(frozen=True, slots=True)
class TableEntry:
    table_id: int
    db_name: str
    name: str
    acid: bool
    table_versions: tuple[tuple[Version, Table], ...]  # newest first
    # name -> versions, newest first; changed in place by the poller (module note)
    partitions: dict[str, tuple[Version, ...]]
    names: NameIndex  # the partitions' names, for reads in name order
    committed: CommittedWriteIds
    committed_list: ValidWriteIdList  # `committed` in Hive's form, for writeids.covers
    writers: Mapping[int, int]  # open txn id -> its write id on this table
    gc_watermark: int  # versions ended by write ids <= this are gone (here and in the database)
    applied_event_id: int  # every event <= this is reflected
    live: LiveView = field(default_factory=LiveView)
    partition_keys_count: int = 0
    size_bytes: int = field(default=0, compare=False)

    @property
    def view(self) -> ValidWriteIdList | None:
        """What this cache itself sees committed (None: not transactional, latest wins)."""
        return self.committed_list if self.acid else None

    @property
    def full_name(self) -> str:
        return f"{self.db_name}.{self.name}"

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    @property
    def sorted_names(self) -> Sequence[str]:
        return self.names.sorted()

    def table_for(self, snapshot: ValidWriteIdList | None) -> tuple[Version, Table] | None:
        for version, table in self.table_versions:
            if visible(version, snapshot):
                return version, table
        return None


def build_entry(
    table_versions: Iterable[tuple[Version, Table]],
    partitions: Mapping[str, tuple[Version, ...]],
    *,
    committed: CommittedWriteIds,
    writers: Mapping[int, int],
    gc_watermark: int,
    applied_event_id: int,
    live: LiveView | None = None,
) -> TableEntry:
    """An entry; `live` replaces the computed live view (store/cache/loader.py passes an empty one
    and builds it in steps)."""
    versions = tuple(table_versions)
    latest = next((t for v, t in versions if v.dropped_wid is None), versions[0][1])
    committed_list = committed.as_list(latest.full_name)
    return TableEntry(
        table_id=latest.table_id,
        db_name=latest.db_name,
        name=latest.name,
        acid=latest.is_acid,
        table_versions=versions,
        partitions=dict(partitions),  # the entry's own: the poller changes it in place
        names=NameIndex(partitions),
        committed=committed,
        committed_list=committed_list,
        writers=writers,
        gc_watermark=gc_watermark,
        applied_event_id=applied_event_id,
        live=live if live is not None else live_view(partitions, committed_list if latest.is_acid else None),
        partition_keys_count=len(latest.partition_keys),
        size_bytes=sum(len(v.frame) for vs in partitions.values() for v in vs),
    )


def with_changes(entry: TableEntry, **changes: object) -> TableEntry:
    if "committed" in changes:
        committed = changes["committed"]
        assert isinstance(committed, CommittedWriteIds)
        db_name, name = changes.get("db_name", entry.db_name), changes.get("name", entry.name)
        changes["committed_list"] = committed.as_list(f"{db_name}.{name}")
    if "partitions" in changes and "size_bytes" not in changes:
        parts = changes["partitions"]
        assert isinstance(parts, dict)
        changes["size_bytes"] = sum(len(v.frame) for vs in parts.values() for v in vs)
    return replace(entry, **changes)  # type: ignore[arg-type]
