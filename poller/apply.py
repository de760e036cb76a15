"""Notification events to cache changes, without I/O.

Each handler mirrors, on the cached versions, what the database write did (store/catalog.py and
store/txns.py): a transactional write stages versions stamped with its write id (invisible until
its COMMIT_TXN is applied), a commit marks the write id committed, an abort discards its
versions; non-transactional writes replace the latest version in place. `TableBatch` collects a
batch's changes to one table and builds one new immutable entry at the end.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from store import codec
from store.events import EventType
from store.cache.entry import Codec as Codec  # lives beside the entries; still importable from here
from store.cache.entry import (
    CommittedWriteIds,
    CommittedWriteIdsChanges,
    TableEntry,
    Version,
    build_entry,
    refresh_live,
    renamed_live,
    with_changes,
    partition_version,
)
from store.models import NotificationEvent, Partition, Table

# A rename re-frames every cached partition of the table in one step of the event loop (about 7 µs
# each). Above this many partitions the entry is dropped instead, and the next read of the table
# loads it again in steps (store/cache/loader.py): reads go to the database meanwhile.
RENAME_REFRAME_MAX = 20_000

TABLE_EVENTS = frozenset({EventType.CREATE_TABLE, EventType.ALTER_TABLE, EventType.DROP_TABLE, EventType.ADD_PARTITION,
                          EventType.ALTER_PARTITION, EventType.DROP_PARTITION, EventType.ALLOC_WRITE_ID,
                          EventType.VERSIONS_GC, EventType.ABORTED_WRITES_FORGOTTEN, EventType.WRITE_IDS_SEEDED})
TXN_OUTCOME_EVENTS = frozenset({EventType.COMMIT_TXN, EventType.ABORT_TXN})
DATABASE_EVENTS = frozenset({EventType.CREATE_DATABASE, EventType.ALTER_DATABASE, EventType.DROP_DATABASE})


def decode(event: NotificationEvent) -> dict[str, Any]:
    return json.loads(event.message) if event.message else {}


def affected_table_ids(event: NotificationEvent, message: dict[str, Any]) -> list[int]:
    if event.event_type in TXN_OUTCOME_EVENTS:
        return sorted({int(w["table_id"]) for w in message.get("write_ids", [])})
    if event.event_type in TABLE_EVENTS and event.table_id:
        return [event.table_id]
    return []


@dataclass
class TableBatch:
    """One table's changes in a batch: `apply` each event, then `finish()` gives the new entry.

    The entry's partition map, live view and name index are changed in place as events are applied
    (store/cache/entry.py says why), so a batch costs what it changes; the rest of the entry is
    copied on first write and frozen by `finish()`. An entry whose batch raised part-way must not
    be read again (the poller drops it)."""

    entry: TableEntry
    codec: Codec
    dropped: bool = False
    _parts: dict[str, tuple[Version, ...]] | None = None  # a re-framed copy after a rename, else the entry's
    _tables: list[tuple[Version, Table]] | None = None
    _committed: CommittedWriteIdsChanges | None = None
    _writers: dict[int, int] | None = None
    _gc: int | None = None
    _applied: int = field(default=0)
    _size_delta: int = 0  # frame bytes added minus removed
    _touched: set[str] = field(default_factory=set)  # partitions whose versions changed
    # Of those, the ones whose versions, as this batch set them, carry each write id: an abort looks
    # only at these (and at the live view's pending ones), not at every partition the batch touched.
    _touched_by: dict[int, set[str]] = field(default_factory=dict)
    _decided: set[int] = field(default_factory=set)  # write ids committed or aborted

    def __post_init__(self) -> None:
        self._applied = self.entry.applied_event_id

    def parts(self) -> dict[str, tuple[Version, ...]]:
        return self._parts if self._parts is not None else self.entry.partitions

    # copy-on-first-write accessors
    def tables(self) -> list[tuple[Version, Table]]:
        if self._tables is None:
            self._tables = list(self.entry.table_versions)
        return self._tables

    def writers(self) -> dict[int, int]:
        if self._writers is None:
            self._writers = dict(self.entry.writers)
        return self._writers

    def committed(self) -> CommittedWriteIdsChanges:
        if self._committed is None:
            self._committed = CommittedWriteIdsChanges.of(self.entry.committed)
        return self._committed

    def apply(self, event: NotificationEvent, message: dict[str, Any]) -> None:
        if event.event_id <= self._applied or self.dropped:
            return  # already reflected (a fill that read past this event, or a replay)
        handler = _HANDLERS.get(event.event_type)
        if handler is not None:
            handler(self, event, message)
        self._applied = event.event_id

    def finish(self) -> TableEntry | None:
        """The new entry, or None when the table is gone from the cache (dropped, or renamed with
        more than RENAME_REFRAME_MAX partitions)."""
        if self.dropped:
            return None
        changes: dict[str, object] = {"applied_event_id": self._applied}
        renamed: dict[int, Version] | None = None  # id of a partition version -> its copy under the new name
        if self._tables is not None:
            latest = next((t for v, t in self._tables if v.dropped_wid is None), self._tables[0][1])
            changes.update(table_versions=tuple(self._tables), db_name=latest.db_name, name=latest.name)
            if (latest.db_name, latest.name) != (self.entry.db_name, self.entry.name):
                if len(self.parts()) > RENAME_REFRAME_MAX:
                    return None
                renamed = self._rename_partitions((latest.db_name, latest.name))
            if latest.is_acid != self.entry.acid:  # made transactional: reads need snapshots from now on
                changes["acid"] = latest.is_acid
                self._touched |= self.parts().keys()  # and every partition is seen under the new view
        if renamed is not None:  # every frame is new: counted again
            changes["partitions"] = self.parts()
        elif self._size_delta:
            changes["size_bytes"] = self.entry.size_bytes + self._size_delta
        if self._committed is not None:
            changes["committed"] = self._committed.frozen()
        if self._writers is not None:
            changes["writers"] = self._writers
        if self._gc is not None:
            changes["gc_watermark"] = self._gc
        entry = with_changes(self.entry, **changes)
        live, touched = entry.live, self._touched
        if renamed is not None:
            live, stale = renamed_live(live, renamed)
            touched = touched | stale
        if touched or self._decided or renamed is not None:
            live = refresh_live(live, entry.partitions, entry.view, touched=touched, decided=self._decided)
            entry = with_changes(entry, live=live)
        return entry

    # -- helpers -----------------------------------------------------------------------------

    def _partition_version(self, p: Partition, write_id: int) -> Version:
        return partition_version(self.codec, write_id, None, p)

    def _rename_partitions(self, new_name: tuple[str, str]) -> dict[int, Version]:
        """Re-frame every partition for the table's new name (frames carry the entry's name;
        partitions built in this batch were framed for the name the batch started with). Returns
        the copy of each old version, by id, so the live view can follow without a recompute.
        The only step whose cost grows with the table: renames are rare."""
        rename = self.codec.rename_partition((self.entry.db_name, self.entry.name), new_name)
        reframed: dict[int, bytes] = {}  # id of a frame -> the frame under the new name (versions share frames)
        renamed: dict[int, Version] = {}

        def copy(old: Version) -> Version:
            frame = reframed.get(id(old.frame))
            if frame is None:
                frame = reframed[id(old.frame)] = rename(old.frame)
            new = renamed[id(old)] = replace(old, frame=frame)
            return new

        self._parts = {name: tuple(map(copy, versions)) for name, versions in self.parts().items()}
        return renamed

    def _put(self, name: str, versions: tuple[Version, ...]) -> None:
        """Set the versions of `name` (none: it is gone), keeping the name index and size in step."""
        parts = self.parts()
        before = parts.get(name)
        if before is not None:
            self._size_delta -= sum(len(v.frame) for v in before)
        if versions:
            parts[name] = versions
            self._size_delta += sum(len(v.frame) for v in versions)
            if before is None:
                self.entry.names.add(name)
        elif before is not None:
            del parts[name]
            self.entry.names.remove(name)
        self._touched.add(name)
        for v in versions:
            for w in (v.created_wid, v.dropped_wid):
                if w:
                    self._touched_by.setdefault(w, set()).add(name)

    def _write(self, name: str, new: Version | None, write_id: int) -> None:
        """Replace (new) or drop (None) the latest version of `name`, as the database did."""
        versions = self.parts().get(name, ())
        latest = versions[0] if versions and versions[0].dropped_wid is None else None
        rest = versions[1:] if latest is not None else versions
        if write_id == 0 or (latest is not None and latest.created_wid == write_id):
            kept = rest  # non-transactional, or the txn's own version: changed in place
        elif latest is not None:
            kept = (replace(latest, dropped_wid=write_id), *rest)
        else:
            kept = rest
        self._put(name, ((new,) if new is not None else ()) + tuple(kept))


def _add_partitions(b: TableBatch, e: NotificationEvent, m: dict[str, Any]) -> None:
    for pj in m.get("partitions", []):
        p = codec.partition_from_json(b.entry.db_name, b.entry.name, pj)
        b._write(p.name, b._partition_version(p, e.write_id), e.write_id)
    if e.write_id:
        b.writers()[e.txn_id] = e.write_id


def _drop_partitions(b: TableBatch, e: NotificationEvent, m: dict[str, Any]) -> None:
    for name in m.get("partition_names", []):
        b._write(name, None, e.write_id)
    if e.write_id:
        b.writers()[e.txn_id] = e.write_id


def _alter_table(b: TableBatch, e: NotificationEvent, m: dict[str, Any]) -> None:
    table = codec.table_from_json(m["table"])
    tables = b.tables()
    new = Version(e.write_id, None, b.codec.table(table))
    latest_i = next((i for i, (v, _) in enumerate(tables) if v.dropped_wid is None), None)
    if latest_i is not None:
        v, t = tables[latest_i]
        if e.write_id == 0 or v.created_wid == e.write_id:
            tables.pop(latest_i)
        else:
            tables[latest_i] = (Version(v.created_wid, e.write_id, v.frame), t)
    tables.insert(0, (new, table))
    if e.write_id:
        b.writers()[e.txn_id] = e.write_id


def _drop_table(b: TableBatch, e: NotificationEvent, m: dict[str, Any]) -> None:
    b.dropped = True


def _alloc(b: TableBatch, e: NotificationEvent, m: dict[str, Any]) -> None:
    # A table's creation takes over the ids reserved under its name (store/txns.py take_reserved_write_ids);
    # of a txn that ended before, the event says how, as that txn's own event could not name the table.
    committed, aborted = set(m.get("committed", ())), set(m.get("aborted", ()))
    for txn_id, write_id in zip(m.get("txn_ids", []), m.get("write_ids", [])):
        if write_id in committed or write_id in aborted:
            _decide(b, int(write_id), committed=write_id in committed)
        else:
            b.writers()[int(txn_id)] = int(write_id)


def _outcome(b: TableBatch, e: NotificationEvent, m: dict[str, Any]) -> None:
    for w in m.get("write_ids", []):
        if int(w["table_id"]) != b.entry.table_id:
            continue
        _decide(b, int(w["write_id"]), committed=e.event_type == EventType.COMMIT_TXN)
        b.writers().pop(e.txn_id, None)


def _decide(b: TableBatch, write_id: int, *, committed: bool) -> None:
    """The write id committed, or aborted (its versions discarded)."""
    b._decided.add(write_id)
    if committed:
        b.committed().commit(write_id)
    else:
        b.committed().abort(write_id)
        _discard(b, write_id)


def _discard(b: TableBatch, write_id: int) -> None:
    """Abort: drop versions the write id created, reopen versions it ended (store.txns.discard_versions).
    The partitions it wrote are those the live view lists as waiting for its outcome, or written
    in this batch (a transactional table's write ids are never decided before their writes): of
    these, those this batch left carrying the write id (`_touched_by`; a pass over every partition
    the batch touched made a batch of many writes and aborts quadratic)."""
    parts = b.parts()
    for name in b.entry.live.pending.get(write_id, set()) | b._touched_by.get(write_id, set()):
        versions = parts.get(name, ())
        if any(v.created_wid == write_id or v.dropped_wid == write_id for v in versions):
            b._put(name, tuple(replace(v, dropped_wid=None if v.dropped_wid == write_id else v.dropped_wid)
                               for v in versions if v.created_wid != write_id))
    tables = b.tables()
    tables[:] = [(Version(v.created_wid, None if v.dropped_wid == write_id else v.dropped_wid, v.frame), t)
                 for v, t in tables if v.created_wid != write_id]


def _gc(b: TableBatch, e: NotificationEvent, m: dict[str, Any]) -> None:
    watermark = int(m["gc_watermark"])
    for name, versions in list(b.parts().items()):  # housekeeping's periodic clean-up: a full pass
        kept = tuple(v for v in versions if v.dropped_wid is None or v.dropped_wid > watermark)
        if len(kept) != len(versions):
            b._put(name, kept)
    tables = b.tables()
    tables[:] = [(v, t) for v, t in tables if v.dropped_wid is None or v.dropped_wid > watermark]
    b._gc = max(watermark, b.entry.gc_watermark)


def _forget_aborted(b: TableBatch, e: NotificationEvent, m: dict[str, Any]) -> None:
    for w in m.get("write_ids", []):
        b.committed().forget_aborted(int(w))


def _seeded(b: TableBatch, e: NotificationEvent, m: dict[str, Any]) -> None:
    b.committed().seeded(int(m["seed_write_id"]))


_HANDLERS: dict[str, Callable[[TableBatch, NotificationEvent, dict[str, Any]], None]] = {
    EventType.ADD_PARTITION: _add_partitions,
    EventType.ALTER_PARTITION: _add_partitions,  # same shape: the new objects replace the latest versions
    EventType.DROP_PARTITION: _drop_partitions,
    EventType.ALTER_TABLE: _alter_table,
    EventType.DROP_TABLE: _drop_table,
    EventType.ALLOC_WRITE_ID: _alloc,
    EventType.COMMIT_TXN: _outcome,
    EventType.ABORT_TXN: _outcome,
    EventType.VERSIONS_GC: _gc,
    EventType.ABORTED_WRITES_FORGOTTEN: _forget_aborted,
    EventType.WRITE_IDS_SEEDED: _seeded,
}


def new_table_entry(event: NotificationEvent, message: dict[str, Any], c: Codec) -> TableEntry:
    """A table created after this cache started: nothing written yet, no write ids."""
    table = codec.table_from_json(message["table"])
    return build_entry([(Version(0, None, c.table(table)), table)], {}, committed=CommittedWriteIds(),
                       writers={}, gc_watermark=0, applied_event_id=event.event_id)
