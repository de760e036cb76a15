"""The table cache: entries sharded by table id, the read decision, and the memory bound.

Readers take no lock and never await: they look an entry up, check it against the request's
snapshot and assemble the response from pre-encoded bytes, or return a `Miss` naming why the
database must answer. A miss for a table the cache does not hold asks for it in `fill_requests`,
which the poller drains.

Why there is no lock. Every writer runs on the gateway's one event loop and none awaits while it
changes the cache: the poller applies a batch, installs a fill or a prewarm, and the read-through
facade (store/cache/facade.py) marks a write, each in one synchronous step. Entries are immutable
(store/cache/entry.py): a writer builds a new one and swaps the reference, so a reader holding an
entry never sees half an update, and a reader never runs in the middle of a writer. The writers
change the cache only through the methods below (`advance`, `install`, `replace`, `put_database`,
`drop_database`, `clear`; `hold_until` and `note_writer` for the facade), never its fields.

The read decision for a transactional table (seed 000, DESIGN.md): the cache answers only when
every write id committed in the caller's ValidWriteIdList is committed in the cache's view
(`covers`), the table id matches, the caller has no uncommitted writes of its own on the table,
and the versions the snapshot needs are still held. Non-transactional tables and databases are
eventually consistent; a `min_event_id` token makes the cache answer only once it has applied
that event.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from hive import names as n
from store.cache.entry import TableEntry, Version, all_committed_through, pick, with_changes
from store.cache.fills import FillRequests
from store.errors import NotPartitioned
from store.models import Database, Table
from hive.partition_filter import PARTITION_FILTER, Dialect, parse_filter
from store.snapshot import ReadSnapshot
from hive.writeids import ValidWriteIdList, covers

# Why a read went to the database (metric label values).
STALE = "stale"
UNKNOWN_TABLE = "unknown_table"
TABLE_ID_MISMATCH = "table_id_mismatch"
EVICTED = "evicted"
NO_SNAPSHOT = "no_snapshot"
OWN_WRITES = "own_writes"
BEHIND_TOKEN = "behind_token"
VERSIONS_NOT_HELD = "versions_not_held"
NAME_NOT_VISIBLE = "name_not_in_snapshot"
DISABLED = "disabled"


@dataclass(frozen=True, slots=True)
class Miss:
    reason: str


@dataclass(frozen=True, slots=True)
class PartitionsHit:
    """Cached partitions as response elements. They carry the entry's current table name, which is
    the name the read asked for: the by-name index holds current names only. A filter read also
    answers their names (a page's token is its last one)."""

    frames: list[bytes]
    names: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class VersionsHit:
    """Cached partition versions with the table version the snapshot sees, for a protocol that
    frames them itself (Hive's Thrift API: gateway/thrift/wire.py)."""

    table: Table
    versions: list[Version]


@dataclass
class CacheStats:
    hits: int = 0
    misses: Counter[str] = field(default_factory=Counter)
    evictions: int = 0
    latest_committed_reads: int = 0  # reads that carried no snapshot (Hive 2.3 and Trino over Thrift)


class ShardedCache:
    def __init__(self, *, shards: int = 16, max_partitions: int = 5_000_000, enabled: bool = True) -> None:
        if shards < 1:
            raise ValueError("the cache needs at least one shard")
        self.enabled = enabled
        self.max_partitions = max_partitions
        self._shards: list[dict[int, TableEntry]] = [{} for _ in range(shards)]
        self._by_name: dict[tuple[str, str], int] = {}
        self._evicted_names: set[tuple[str, str]] = set()
        self._last_used: dict[int, int] = {}
        # Each entry's partition count when it was last put, and their sum: the memory bound is checked
        # after every CREATE_TABLE and every batch, which summing over the entries made quadratic in the
        # tables cached. The poller changes an entry's partitions in place only in a batch that then
        # puts (or removes) it, in the same synchronous step, so the sum is exact between steps.
        self._counted: dict[int, int] = {}
        self._partition_total = 0
        # The cached tables each open txn writes (the keys of their entries' `writers`), so a commit finds
        # the tables it wrote without a pass over every cached table (store/cache/facade.py ended_txns).
        self._written_by: dict[int, set[int]] = {}
        self._clock = itertools.count()
        self._databases: dict[str, Database] = {}
        # Writes through this gateway not yet applied by the poller: (db, table or "") -> event id. A
        # database's entry holds its tables' reads too (a drop or alter of it changes what they answer).
        self._local_writes: dict[tuple[str, str], int] = {}
        # Databases read from PostgreSQL newer than the cache: name -> the event id that read saw. Holds
        # reads of the database only; its tables' entries are as current as the cache's position says.
        self._database_reads: dict[str, int] = {}
        self._applied_event_id = 0
        self.stats = CacheStats()
        self.fill_requests = FillRequests()  # tables reads missed; the poller drains it

    # -- structure ---------------------------------------------------------------------------

    @property
    def applied_event_id(self) -> int:
        """Every event up to this one is reflected (moved only by `advance`, and back by `clear(rewind=True)`)."""
        return self._applied_event_id

    @property
    def databases(self) -> Mapping[str, Database]:
        """The cached databases by name (read-only; `put_database`/`drop_database` change them)."""
        return MappingProxyType(self._databases)

    def _shard(self, table_id: int) -> dict[int, TableEntry]:
        return self._shards[table_id % len(self._shards)]

    def get(self, table_id: int) -> TableEntry | None:
        return self._shard(table_id).get(table_id)

    def by_name(self, db_name: str, table_name: str) -> TableEntry | None:
        table_id = self._by_name.get((db_name, table_name))
        return None if table_id is None else self.get(table_id)

    def entries(self) -> list[TableEntry]:
        return [e for s in self._shards for e in s.values()]

    def partition_count(self) -> int:
        return self._partition_total

    def tables_written_by(self, txn_id: int) -> list[TableEntry]:
        """The cached tables whose entries list `txn_id` among their writers."""
        return [e for table_id in self._written_by.get(txn_id, ()) if (e := self.get(table_id)) is not None]

    def _index_writers(self, table_id: int, before: Mapping[int, int], after: Mapping[int, int]) -> None:
        for txn_id in before.keys() - after.keys():
            tables = self._written_by.get(txn_id)
            if tables is not None:
                tables.discard(table_id)
                if not tables:
                    del self._written_by[txn_id]
        for txn_id in after.keys() - before.keys():
            self._written_by.setdefault(txn_id, set()).add(table_id)

    def size_bytes(self) -> int:
        return sum(e.size_bytes for e in self.entries())

    # -- writes (the poller's: batches, fills, prewarm; each one synchronous step) ------------

    def put(self, entry: TableEntry, *, added_writer: int = 0) -> None:
        """Install or replace an entry, unconditionally. `added_writer`: the entry's writers are the old
        entry's and this txn (note_writer), indexed without comparing the two."""
        old = self.get(entry.table_id)
        if old is not None and self._by_name.get((old.db_name, old.name)) == old.table_id:
            del self._by_name[(old.db_name, old.name)]
        if added_writer and old is not None:
            self._written_by.setdefault(added_writer, set()).add(entry.table_id)
        elif old is None or old.writers is not entry.writers:
            self._index_writers(entry.table_id, old.writers if old is not None else {}, entry.writers)
        self._shard(entry.table_id)[entry.table_id] = entry
        self._partition_total += entry.partition_count - self._counted.get(entry.table_id, 0)
        self._counted[entry.table_id] = entry.partition_count
        self._by_name[(entry.db_name, entry.name)] = entry.table_id
        self._evicted_names.discard((entry.db_name, entry.name))
        self._last_used[entry.table_id] = next(self._clock)

    def remove(self, table_id: int) -> None:
        old = self._shard(table_id).pop(table_id, None)
        self._last_used.pop(table_id, None)
        self._partition_total -= self._counted.pop(table_id, 0)
        if old is not None:
            self._index_writers(table_id, old.writers, {})
        if old is not None and self._by_name.get((old.db_name, old.name)) == table_id:
            del self._by_name[(old.db_name, old.name)]

    def replace(self, table_id: int, entry: TableEntry | None) -> None:
        """A batch's outcome for one table: its new entry, or None when the batch dropped it."""
        if entry is None:
            self.remove(table_id)
        else:
            self.put(entry)

    def install(self, entry: TableEntry) -> bool:
        """A table loaded (or created) at a log position: kept unless the cache already holds a copy
        at least as new; then the memory bound is enforced, sparing this entry. Says if it was kept."""
        current = self.get(entry.table_id)
        kept = current is None or current.applied_event_id < entry.applied_event_id
        if kept:
            self.put(entry)
        self.enforce_memory_bound(keep=entry.table_id)
        return kept

    def put_database(self, database: Database) -> None:
        self._databases[database.name] = database

    def drop_database(self, name: str) -> None:
        self._databases.pop(name, None)

    def advance(self, event_id: int) -> None:
        """The cache reflects every event up to `event_id` (after a batch, a prewarm, or at start).
        Positions only move forward; read holds the position covers are dropped."""
        if event_id < self._applied_event_id:
            raise ValueError(f"the cache cannot move back from event {self._applied_event_id} to {event_id}")
        self._applied_event_id = event_id
        if self._local_writes:
            self._local_writes = {k: v for k, v in self._local_writes.items() if v > event_id}
        if self._database_reads:
            self._database_reads = {k: v for k, v in self._database_reads.items() if v > event_id}

    def clear(self, *, rewind: bool = False) -> None:
        """Drop every table and database (a reload follows); the read holds stay, and so does the
        position unless `rewind`: the log was rewritten below it (a database restored, or failed over
        to a copy without its last commits), so the reload's `advance` starts it again lower. Holds
        that name events of the lost history only send more reads to the database until passed."""
        for s in self._shards:
            s.clear()
        self._by_name.clear()
        self._last_used.clear()
        self._counted.clear()
        self._partition_total = 0
        self._written_by.clear()
        self._databases.clear()
        if rewind:
            self._applied_event_id = 0

    def enforce_memory_bound(self, keep: int = 0) -> list[int]:
        """Evict least recently used whole tables until the partition count fits."""
        total = self.partition_count()
        if total <= self.max_partitions:
            return []
        evicted = []
        for table_id in sorted(self._last_used, key=self._last_used.__getitem__):
            if total <= self.max_partitions:
                break
            if table_id == keep:
                continue
            entry = self.get(table_id)
            if entry is None:
                continue
            total -= entry.partition_count
            self.remove(table_id)
            self._evicted_names.add((entry.db_name, entry.name))
            evicted.append(table_id)
        self.stats.evictions += len(evicted)
        return evicted

    # -- write marks (the read-through facade's: store/cache/facade.py) ------------------------

    def note_writer(self, db_name: str, table_name: str, txn_id: int) -> None:
        """A write through this gateway: until the poller applies the txn's outcome, its reads of
        the table go to the database (the ALLOC event may not have been applied yet)."""
        entry = self.by_name(db_name, table_name)
        if entry is not None and txn_id not in entry.writers:
            self.put(with_changes(entry, writers={**entry.writers, txn_id: -1}), added_writer=txn_id)

    def hold_until(self, db_name: str, table_name: str, event_id: int) -> None:
        """Reads of this table ("" for the database itself) on this gateway go to the database until
        the cache has applied `event_id`: after a write through this gateway (a client reads its own
        writes there), and after a database read that saw a newer state than the cache (reads on one
        gateway never go back in time)."""
        if event_id > self._applied_event_id:
            key = (db_name, table_name)
            self._local_writes[key] = max(event_id, self._local_writes.get(key, 0))

    def hold_database_reads(self, name: str, event_id: int) -> None:
        """Reads of database `name` (not of its tables) on this gateway go to PostgreSQL until the cache
        has applied `event_id`: a read there saw that state, and reads never go back in time."""
        if event_id > self._applied_event_id:
            self._database_reads[name] = max(event_id, self._database_reads.get(name, 0))

    # -- reads (no awaits) --------------------------------------------------------------------

    def _miss(self, reason: str) -> Miss:
        self.stats.misses[reason] += 1
        return Miss(reason)

    def _resolve(self, db_name: str, table_name: str, snapshot: ReadSnapshot, min_event_id: int
                 ) -> tuple[TableEntry, ValidWriteIdList | None] | Miss:
        if not self.enabled:
            return Miss(DISABLED)
        entry = self.by_name(db_name, table_name)
        if entry is None:
            key = (db_name, table_name)
            self.fill_requests.want(key)
            return self._miss(EVICTED if key in self._evicted_names else UNKNOWN_TABLE)
        self._last_used[entry.table_id] = next(self._clock)
        applied = max(entry.applied_event_id, self._applied_event_id)
        if self._local_writes and max(self._local_writes.get((db_name, table_name), 0),
                                      self._local_writes.get((db_name, ""), 0)) > applied:
            return self._miss(BEHIND_TOKEN)
        if snapshot.expected_table_id and snapshot.expected_table_id != entry.table_id:
            return self._miss(TABLE_ID_MISMATCH)
        if not entry.acid:
            if min_event_id > applied:
                return self._miss(BEHIND_TOKEN)
            return entry, None
        if snapshot.latest_committed and snapshot.write_ids is None:
            # No snapshot came: what this cache knows is committed (eventually consistent across
            # gateways; this gateway's own writes were held back above until applied).
            self.stats.latest_committed_reads += 1
            return entry, entry.committed_list
        wl = snapshot.write_ids
        if wl is None or not snapshot.expected_table_id:
            return self._miss(NO_SNAPSHOT)  # the database answers FAILED_PRECONDITION, saying what is missing
        if snapshot.txn_id and (snapshot.txn_id in entry.writers or not 0 < min_event_id <= applied):
            # The caller's own writes must be visible to it. This cache knows them only up to what it
            # applied: without a `min_event_id` covering the txn's last write (any gateway may have
            # taken it), only the database can tell.
            return self._miss(OWN_WRITES)
        if not covers(entry.committed_list, wl):
            return self._miss(STALE)
        if entry.gc_watermark and (wl.high_watermark < entry.gc_watermark or any(
                w <= entry.gc_watermark and not wl.is_write_id_aborted(w) for w in wl.exceptions)):
            return self._miss(VERSIONS_NOT_HELD)
        return entry, wl

    def _visible_table(self, db_name: str, table_name: str, snapshot: ReadSnapshot, min_event_id: int,
                       *, partitioned: bool) -> tuple[TableEntry, ValidWriteIdList | None, Version, Table] | Miss:
        """The entry, the snapshot, and the table version the snapshot sees under this name."""
        resolved = self._resolve(db_name, table_name, snapshot, min_event_id)
        if isinstance(resolved, Miss):
            return resolved
        entry, wl = resolved
        found = entry.table_for(wl)
        if found is None or (found[1].db_name, found[1].name) != (db_name, table_name):
            return self._miss(NAME_NOT_VISIBLE)
        if partitioned and not found[1].partition_keys:
            raise NotPartitioned(found[1])
        return entry, wl, found[0], found[1]

    def read_table(self, db_name: str, table_name: str, snapshot: ReadSnapshot, min_event_id: int = 0) -> bytes | Miss:
        """The encoded Table the snapshot sees, or a miss."""
        found = self._visible_table(db_name, table_name, snapshot, min_event_id, partitioned=False)
        if isinstance(found, Miss):
            return found
        self.stats.hits += 1
        return found[2].frame

    def read_table_object(self, db_name: str, table_name: str, snapshot: ReadSnapshot,
                          min_event_id: int = 0) -> Table | Miss:
        """The Table the snapshot sees, as an object (for a protocol that encodes it itself), or a miss."""
        found = self._visible_table(db_name, table_name, snapshot, min_event_id, partitioned=False)
        if isinstance(found, Miss):
            return found
        self.stats.hits += 1
        return found[3]

    def read_partitions(self, db_name: str, table_name: str, names: Sequence[str], snapshot: ReadSnapshot,
                        min_event_id: int = 0) -> PartitionsHit | Miss:
        """`read_partition_versions`' partitions as their frames (gRPC answers `read_partitions_encoded`)."""
        found = self.read_partition_versions(db_name, table_name, names, snapshot, min_event_id)
        return found if isinstance(found, Miss) else PartitionsHit([v.frame for v in found.versions])

    def read_partitions_encoded(self, db_name: str, table_name: str, names: Sequence[str], snapshot: ReadSnapshot,
                                min_event_id: int = 0) -> bytes | Miss:
        """`read_partitions`' frames as one encoded answer, joined (gRPC's GetPartitionsByNamesResponse
        body). When the live view may answer, FrameMap.join does (store/cache/_frames.c: `_from_live`'s
        rule in C); `names` may then be EncodedNames, read where the request holds them."""
        found = self._visible_table(db_name, table_name, snapshot, min_event_id, partitioned=True)
        if isinstance(found, Miss):
            return found
        entry, wl, _, table = found
        self.stats.hits += 1
        if _sees_as_live(entry, wl):
            joined = entry.live.frames.join(names)
            if joined is not None:
                return joined
        return b"".join([v.frame for v in _named_versions(entry, wl, table, dict.fromkeys(names))])

    def read_partitions_by_filter(self, db_name: str, table_name: str, filter_text: str, limit: int,
                                  snapshot: ReadSnapshot, min_event_id: int = 0,
                                  dialect: Dialect = PARTITION_FILTER, after: str = "") -> PartitionsHit | Miss:
        """Visible partitions matching a filter (gRPC's dialect, or Hive 2.3's), in name order, after the
        name `after` (a page's start), at most `limit` + 1 of them (the caller tells "too many", or a next
        page, from that), with their names; the filter runs in memory on each candidate."""
        found = self._visible_table(db_name, table_name, snapshot, min_event_id, partitioned=True)
        if isinstance(found, Miss):
            return found
        entry, wl, _, table = found
        matches = parse_filter(filter_text, table.partition_keys, dialect).matches
        self.stats.hits += 1
        matched = _matching_versions(entry, wl, matches, limit, after)
        return PartitionsHit([v.frame for _, v in matched], [name for name, _ in matched])

    def read_partition_versions(self, db_name: str, table_name: str, names: Sequence[str], snapshot: ReadSnapshot,
                                min_event_id: int = 0, *, in_name_order: bool = False) -> VersionsHit | Miss:
        """The versions the snapshot sees of these partitions, with their table (a protocol that frames
        them itself): in request order, or with `in_name_order` in the order of their stored names (Hive's
        answer to a read by names)."""
        found = self._visible_table(db_name, table_name, snapshot, min_event_id, partitioned=True)
        if isinstance(found, Miss):
            return found
        entry, wl, _, table = found
        # Each partition answers once, where the request first names it (in any spelling), as the
        # database's answer does.
        requested = dict.fromkeys(sorted(names) if in_name_order else names)
        self.stats.hits += 1
        versions = _from_live(entry, wl, requested)  # every name in its stored spelling: sorted is name order
        if versions is None:
            if in_name_order:  # a name in another spelling sorts as its stored one
                partitions, keys = entry.partitions, table.partition_keys
                requested = dict.fromkeys(sorted(requested, key=lambda name: name if name in partitions
                                                 else n.canonical_partition_name(keys, name)))
            versions = _named_versions(entry, wl, table, requested)
        return VersionsHit(table, versions)

    def read_versions_by_filter(self, db_name: str, table_name: str, filter_text: str, limit: int,
                                snapshot: ReadSnapshot, min_event_id: int = 0,
                                dialect: Dialect = PARTITION_FILTER) -> VersionsHit | Miss:
        """`read_partitions_by_filter` as versions with their table; an empty filter matches all."""
        found = self._visible_table(db_name, table_name, snapshot, min_event_id, partitioned=True)
        if isinstance(found, Miss):
            return found
        entry, wl, _, table = found
        matches = parse_filter(filter_text, table.partition_keys, dialect).matches if filter_text else _any
        self.stats.hits += 1
        return VersionsHit(table, [v for _, v in _matching_versions(entry, wl, matches, limit)])

    def read_versions_by_partial(self, db_name: str, table_name: str, partial: Sequence[str], limit: int,
                                 snapshot: ReadSnapshot, min_event_id: int = 0) -> VersionsHit | Miss:
        """Visible versions matching Hive's partial specification, in name order, at most `limit` + 1:
        only the range of sorted names under its leading values is looked at (hive/names.py)."""
        found = self._visible_table(db_name, table_name, snapshot, min_event_id, partitioned=True)
        if isinstance(found, Miss):
            return found
        entry, wl, _, table = found
        names = entry.sorted_names
        prefix = n.partial_name_prefix(table.partition_keys, partial)
        in_range = itertools.takewhile(lambda name: name.startswith(prefix),
                                       itertools.islice(names, bisect.bisect_left(names, prefix), None))
        matched: list[Version] = []
        for _, version in _shown_in_order(entry, wl, in_range):
            if n.matches_partial_values(version.values, partial):
                matched.append(version)
                if len(matched) > limit:
                    break
        self.stats.hits += 1
        return VersionsHit(table, matched)

    def list_partition_names(self, db_name: str, table_name: str, after: str, page_size: int,
                             snapshot: ReadSnapshot, min_event_id: int = 0) -> tuple[list[str], str | None] | Miss:
        """Up to page_size visible names after `after`, and the last name when more follow."""
        found = self._visible_table(db_name, table_name, snapshot, min_event_id, partitioned=True)
        if isinstance(found, Miss):
            return found
        entry, wl = found[0], found[1]
        names = entry.sorted_names
        out: list[str] = []
        for name, _ in _shown_in_order(entry, wl, itertools.islice(names, bisect.bisect_right(names, after), None)):
            out.append(name)
            if len(out) > page_size:
                break
        self.stats.hits += 1
        if len(out) > page_size:
            return out[:page_size], out[page_size - 1]
        return out, None

    def read_database(self, name: str, min_event_id: int = 0) -> Database | Miss:
        """Databases are eventually consistent, with the `min_event_id` token for session consistency."""
        if not self.enabled:
            return Miss(DISABLED)
        if max(min_event_id, self._local_writes.get((name, ""), 0),
               self._database_reads.get(name, 0)) > self._applied_event_id:
            return self._miss(BEHIND_TOKEN)
        database = self._databases.get(name)
        if database is None:
            return self._miss(UNKNOWN_TABLE)
        self.stats.hits += 1
        return database


def _sees_as_live(entry: TableEntry, wl: ValidWriteIdList | None) -> bool:
    """Whether the snapshot sees the entry's partitions as the live view shows them (LiveView's rule)."""
    return all_committed_through(wl) >= entry.live.through


def _from_live(entry: TableEntry, wl: ValidWriteIdList | None, requested: dict[str, None]) -> list[Version] | None:
    """The live view's versions of the requested names, when the snapshot sees these partitions as
    this cache does; None when it does not, or when a name is absent or spelled otherwise (the
    general path, `_named_versions`, answers then). FrameMap.join (store/cache/_frames.c) keeps the
    same rule for the frames."""
    if not _sees_as_live(entry, wl):
        return None
    found = list(map(entry.live.versions.get, requested))
    return None if None in found else found  # type: ignore[return-value]  # no None in it


def _named_versions(entry: TableEntry, wl: ValidWriteIdList | None, table: Table,
                    requested: dict[str, None]) -> list[Version]:
    """The versions the snapshot sees of the requested partitions, each once, where the request
    first names it (in any spelling), as the database's answer has them."""
    settled = all_committed_through(wl)
    partitions = entry.partitions
    found: list[Version] = []
    respelled: set[str] = set()
    position: dict[str, int] = {}
    for i, name in enumerate(requested):
        versions = partitions.get(name)
        if versions is None:  # not the stored spelling (or absent): canonicalise
            name = n.canonical_partition_name(table.partition_keys, name)
            if name in respelled or name not in partitions:
                continue
            position = position or {k: j for j, k in enumerate(requested)}
            if position.get(name, i) < i:
                continue  # named earlier in its stored spelling
            respelled.add(name)
            versions = partitions[name]
        elif respelled and name in respelled:
            continue  # named earlier in another spelling
        latest = versions[0]
        if latest.dropped_wid is None and latest.created_wid <= settled:
            found.append(latest)  # the common case: nothing about it is in flight
        else:
            version = pick(versions, wl)
            if version is not None:
                found.append(version)
    return found


def _any(values: Sequence[str]) -> bool:
    return True


def _matching_versions(entry: TableEntry, wl: ValidWriteIdList | None, matches: Callable[[Sequence[str]], bool],
                       limit: int, after: str = "") -> list[tuple[str, Version]]:
    """Visible versions whose values match, with their names, in name order after `after`, at most
    `limit` + 1 of them."""
    names = entry.sorted_names
    candidates = itertools.islice(names, bisect.bisect_right(names, after), None) if after else names
    found: list[tuple[str, Version]] = []
    for name, version in _shown_in_order(entry, wl, candidates):
        if matches(version.values):
            found.append((name, version))
            if len(found) > limit:
                break
    return found


def _shown_in_order(entry: TableEntry, wl: ValidWriteIdList | None,
                    names: Iterable[str]) -> Iterator[tuple[str, Version]]:
    """Each of `names` (the entry's) with the version the snapshot sees, skipping those it sees none
    of: from the live view when the snapshot may use it (`_sees_as_live`; a name the live view
    lacks is then invisible to both), else by the visibility rule, partition by partition."""
    if _sees_as_live(entry, wl):
        shown = entry.live.versions
        return ((name, version) for name in names if (version := shown.get(name)) is not None)
    partitions = entry.partitions
    return ((name, version) for name in names if (version := pick(partitions[name], wl)) is not None)
