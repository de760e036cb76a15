"""The compactor's queue and history (Hive's CompactionTxnHandler, hive-reference §7).

Design note. An entry moves `i` (initiated) -> `w` (working: a worker claimed it) -> `r` (ready for
cleaning: the worker's compaction txn committed) -> history `s` (succeeded: the Cleaner removed what
it made obsolete). A worker's failure sends it to history as `f` (failed) or `c` (refused: nothing
to compact); the Initiator records `a` (did not initiate) when a partition failed too often.
Entries are keyed by the table's stable id and carry its names for SHOW COMPACTIONS.

The worker's compaction txn is opened here (`start`), with its snapshot, in the same database
transaction that records it on the entry, and committed here (`complete`) in the same database
transaction that marks the entry ready for cleaning and records the Cleaner's horizon (the next txn
id at that moment, read under the counter's share lock: every txn opened before the commit is below
it, opens in flight included, and every txn at or above it opens after the commit and sees the new
base). So there is no window in which the new base is visible and the entry does not say so, or the
reverse. A worker that stops heartbeating loses its entry (`requeue_timed_out`) and its txn is
aborted in that step: whatever it wrote carries an aborted visibility txn, which no reader reads
and the Cleaner removes; a late `complete` from it fails.

Every function takes a connection inside the caller's transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import asyncpg

from hive.writeids import LONG_MAX, ValidTxnList, ValidWriteIdList
from store import catalog, txns
from store.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied
from store.events import NewEvent, Outcome
from store.models import Partition, StorageDescriptor, Table
from store.codec import partition_from_row, table_from_row
from store.sql import compaction as sql
from store.sql import txns as txn_sql

MAJOR, MINOR = "a", "i"
TYPE_NAMES = {MAJOR: "MAJOR", MINOR: "MINOR"}
TYPES_BY_NAME = {"MAJOR": MAJOR, "MINOR": MINOR}
INITIATED, WORKING, READY_FOR_CLEANING = "i", "w", "r"
SUCCEEDED, FAILED, DID_NOT_INITIATE, REFUSED, ABORTED = "s", "f", "a", "c", "x"
# SHOW COMPACTIONS' words for the states (Hive's CompactionState / TxnStore constants).
STATE_NAMES = {INITIATED: "initiated", WORKING: "working", READY_FOR_CLEANING: "ready for cleaning",
               SUCCEEDED: "succeeded", FAILED: "failed", DID_NOT_INITIATE: "did not initiate", REFUSED: "refused",
               ABORTED: "aborted"}
COMPACTION_TXN_TYPE = 3  # Hive's TxnType.COMPACTION
MAX_ERROR_MESSAGE = 4000  # Hive's CQ_ERROR_MESSAGE is a bounded text column too
MAX_WORKER_ID = 256


@dataclass(frozen=True, slots=True)
class CompactionInfo:
    """One row of SHOW COMPACTIONS (queue or history)."""

    id: int
    db_name: str
    table_name: str
    partition_name: str | None
    type: str                  # MAJOR or MINOR
    state: str                 # a STATE_NAMES value
    worker_id: str
    enqueue_time_ms: int
    start_ms: int
    end_ms: int
    run_as: str
    highest_write_id: int
    error_message: str
    next_txn_id: int
    txn_id: int
    commit_time_ms: int
    initiator_id: str
    initiator_version: str
    worker_version: str
    pool_name: str
    manual: bool


@dataclass(frozen=True, slots=True)
class QueueEntry:
    id: int
    db_name: str
    table_name: str
    partition_name: str | None
    table_id: int
    state: str
    type: str
    properties: Mapping[str, str]
    worker_id: str
    txn_id: int
    highest_write_id: int
    next_txn_id: int
    manual: bool
    worker_user: str = ""  # the authenticated user whose worker claimed it; "" in the open mode

    @classmethod
    def from_row(cls, r: Any) -> QueueEntry:
        props = r["cq_tblproperties"]
        return cls(r["cq_id"], r["cq_database"], r["cq_table"], r["cq_partition"], r["cq_table_id"], r["cq_state"],
                   r["cq_type"], dict(json.loads(props) if isinstance(props, str) else props or {}),
                   r["cq_worker_id"] or "", r["cq_txn_id"] or 0, r["cq_highest_write_id"] or 0,
                   r["cq_next_txn_id"] or 0, r["cq_manual"], r["cq_worker_user"] or "")


@dataclass(frozen=True, slots=True)
class CompactionJob:
    """What a worker needs once its compaction txn is open (the answer to `start`)."""

    entry: QueueEntry
    txn_id: int
    valid_txn_list: ValidTxnList
    write_ids: ValidWriteIdList  # the compactor's view (§2.2): no open write ids, aborted ones kept
    location: str                # the partition's (or the unpartitioned table's) directory
    table: Table = field(repr=False)
    storage: StorageDescriptor = field(default_factory=StorageDescriptor, repr=False)  # the location's format

    @property
    def file_format(self) -> tuple[str, str]:
        """(input format, serde library) the partition records, else the table; ("", "") for none."""
        for sd in (self.storage, self.table.sd):
            if sd.input_format or sd.serde.serialization_lib:
                return sd.input_format, sd.serde.serialization_lib
        return "", ""


@dataclass(frozen=True, slots=True)
class Enqueued:
    id: int
    accepted: bool             # False: an initiated or working entry for the partition existed (its id)
    state: str


def _bounded(text: str, limit: int = MAX_ERROR_MESSAGE) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def compactor_view(write_ids: ValidWriteIdList) -> ValidWriteIdList:
    """Hive's createValidCompactWriteIdList (§2.2): the high-water mark drops below the lowest open
    write id and only aborted exceptions stay, so a compactor never folds in a write that may still
    commit, and never reads one that aborted."""
    hwm = write_ids.high_watermark
    if write_ids.min_open_write_id != LONG_MAX:
        hwm = write_ids.min_open_write_id - 1
    aborted = frozenset(w for w in write_ids.aborted if w <= hwm)
    return ValidWriteIdList(write_ids.table_name, hwm, LONG_MAX, tuple(sorted(aborted)), aborted)


def check_worker_id(worker_id: str) -> str:
    if not worker_id or len(worker_id) > MAX_WORKER_ID:
        raise InvalidArgument(f"worker_id must be 1 to {MAX_WORKER_ID} characters (Hive names workers host-thread)")
    return worker_id


# -- enqueue --------------------------------------------------------------------------------------


async def resolve_target(conn: asyncpg.Connection, db_name: str, table_name: str,
                         partition_name: str | None) -> tuple[Table, Partition | None]:
    """The table (managed, transactional) and partition a compaction request names."""
    table = await catalog.get_table(conn, db_name, table_name)
    if not table.is_acid:
        raise InvalidArgument(f"table {table.full_name} is not transactional: only managed tables with "
                              "'transactional'='true' have deltas to compact")
    if not table.is_partitioned:
        if partition_name:
            raise InvalidArgument(f"table {table.full_name} is not partitioned; leave the partition out")
        return table, None
    if not partition_name:
        raise InvalidArgument(f"table {table.full_name} is partitioned: name the partition to compact "
                              f"(ALTER TABLE {table.full_name} PARTITION (...) COMPACT ...)")
    names = catalog.canonical_names(table, [partition_name])
    row = await conn.fetchrow(sql.LATEST_PARTITION, table.table_id, names[0])
    if row is None:
        raise NotFound(f"partition {names[0]} of table {table.full_name} does not exist")
    return table, partition_from_row(table.db_name, table.name, row)


async def enqueue(conn: asyncpg.Connection, table: Table, partition_name: str | None, type_: str, *,
                  properties: Mapping[str, str] | None = None, run_as: str = "", initiator_id: str = "",
                  initiator_version: str = "", manual: bool) -> Enqueued:
    """Queue a compaction unless one is initiated or working for the partition already (then its
    id, accepted False, as Hive's compact() answers)."""
    if type_ not in TYPE_NAMES:
        raise InvalidArgument(f"compaction type must be MAJOR or MINOR, got {type_!r}")
    for _ in range(2):  # a concurrent enqueue can win between the probe and the insert: look again
        row = await conn.fetchrow(sql.ACTIVE_ENTRY, table.table_id, partition_name)
        if row is not None:
            return Enqueued(int(row["cq_id"]), False, str(row["cq_state"]))
        new_id = await conn.fetchval(sql.INSERT_ENTRY, table.db_name, table.name, partition_name, table.table_id,
                                     type_, json.dumps(dict(properties or {})), run_as, initiator_id,
                                     initiator_version, manual)
        if new_id is not None:
            return Enqueued(int(new_id), True, INITIATED)
    raise FailedPrecondition(f"could not queue a compaction of {table.full_name} {partition_name or ''}: "
                             "the queue changed twice under the request; retry")


async def record_not_initiated(conn: asyncpg.Connection, table: Table, partition_name: str | None, type_: str,
                               message: str, initiator_id: str, initiator_version: str) -> int:
    return int(await conn.fetchval(sql.INSERT_NOT_INITIATED, table.db_name, table.name, partition_name,
                                   table.table_id, type_, _bounded(message), initiator_id, initiator_version))


async def failed_too_often(conn: asyncpg.Connection, table_id: int, partition_name: str | None,
                           threshold: int) -> bool:
    """Hive's checkFailedCompactions: the newest `threshold` outcomes (did-not-initiate left out) all
    failed. A manual compaction that succeeds puts a success on top, which ends the streak."""
    if threshold <= 0:
        return False
    rows = await conn.fetch(sql.RECENT_OUTCOMES, table_id, partition_name, threshold)
    return len(rows) >= threshold and all(r["cc_state"] == FAILED for r in rows)


# -- worker ---------------------------------------------------------------------------------------


async def claim_next(conn: asyncpg.Connection, worker_id: str, worker_version: str, *,
                     user: str = "", run_as: str | None = None) -> QueueEntry | None:
    """The oldest initiated entry (with `run_as`, the oldest that runs as that user), now `working`
    for `worker_id` of `user` (the authenticated caller; "" in the open mode); None when the queue
    has none.

    An authenticated non-admin's worker claims only compactions that run as it: a compaction reads
    and rewrites its table's data with its run-as user's authority (Hive's worker runs it as
    CQ_RUN_AS), and a worker that could claim anyone's entries could also fail them until the
    Initiator stops compacting those partitions (hive.compactor.initiator.failed.compacts.threshold)."""
    check_worker_id(worker_id)
    row = await conn.fetchrow(sql.PICK_NEXT, run_as)
    if row is None:
        return None
    await conn.execute(sql.CLAIM, row["cq_id"], worker_id, worker_version, user or None)
    return QueueEntry.from_row(await conn.fetchrow(sql.ENTRY_FOR_UPDATE, row["cq_id"]))


async def _owned(conn: asyncpg.Connection, compaction_id: int, worker_id: str, caller: str | None) -> QueueEntry:
    """The entry, locked, checked to be working for this worker and, unless `caller` is None (the open
    mode, or an admin), claimed by `caller`: a worker id is no secret (SHOW COMPACTIONS lists it)."""
    row = await conn.fetchrow(sql.ENTRY_FOR_UPDATE, compaction_id)
    if row is None:
        raise NotFound(f"compaction {compaction_id} is not in the queue (finished, or purged from history); "
                       "claim another one")
    entry = QueueEntry.from_row(row)
    if entry.state != WORKING or entry.worker_id != worker_id:
        raise FailedPrecondition(
            f"compaction {compaction_id} is {STATE_NAMES[entry.state]}"
            + (f" by worker {entry.worker_id!r}" if entry.worker_id else "")
            + f", not working for {worker_id!r}: it was given back to the queue after "
              "hive.compactor.worker.timeout without a heartbeat; drop this attempt")
    if caller is not None and entry.worker_user != caller:
        raise PermissionDenied(f"compaction {compaction_id} was claimed by another user's worker; only that user "
                               "or an admin (hive.users.in.admin.role) may start, heartbeat, complete or fail it")
    return entry


async def target_of(conn: asyncpg.Connection, entry: QueueEntry) -> tuple[Table, str]:
    """The entry's table (latest version) and the directory to compact; NotFound once dropped."""
    table, storage = await _target_storage(conn, entry)
    return table, storage.location


async def _target_storage(conn: asyncpg.Connection, entry: QueueEntry) -> tuple[Table, StorageDescriptor]:
    """The entry's table (latest version) and the storage descriptor of what to compact: the
    partition's, or the unpartitioned table's; NotFound once dropped."""
    row = await conn.fetchrow(sql.LATEST_TABLE_BY_ID, entry.table_id)
    if row is None:
        raise NotFound(f"table {entry.db_name}.{entry.table_name} (id {entry.table_id}) was dropped")
    table = table_from_row(row)
    if entry.partition_name is None:
        return table, table.sd
    prow = await conn.fetchrow(sql.LATEST_PARTITION, entry.table_id, entry.partition_name)
    if prow is None:
        raise NotFound(f"partition {entry.partition_name} of {table.full_name} was dropped")
    return table, partition_from_row(table.db_name, table.name, prow).sd


async def start(conn: asyncpg.Connection, compaction_id: int, worker_id: str, *, user: str, host: str,
                caller: str | None = None) -> Outcome[CompactionJob]:
    """Open the entry's compaction txn and take its snapshot: the txns it sees, the compactor's
    view of the table's write ids, and the directory to compact."""
    entry = await _owned(conn, compaction_id, worker_id, caller)
    if entry.txn_id:
        raise FailedPrecondition(f"compaction {compaction_id} has txn {entry.txn_id} already; one attempt per claim")
    table, storage = await _target_storage(conn, entry)
    opened = await txns.open_txns(conn, 1, user=user, host=host, agent_info=f"compactor {worker_id}",
                                  txn_type=COMPACTION_TXN_TYPE)
    txn_id = opened.value[0]
    await conn.execute(sql.SET_TXN, compaction_id, txn_id)
    await conn.execute(sql.RECORD_COMPACTION_TXN, txn_id, entry.table_id)
    txn_list = await txns.get_open_txns(conn, txn_id)
    write_ids = await txns.table_write_ids(conn, table.full_name, table.table_id, txn_list)
    return Outcome(CompactionJob(entry, txn_id, txn_list, compactor_view(write_ids), storage.location, table, storage),
                   opened.events)


async def heartbeat(conn: asyncpg.Connection, compaction_id: int, worker_id: str, *,
                    caller: str | None = None) -> None:
    """Keep the entry (and its compaction txn) alive."""
    entry = await _owned(conn, compaction_id, worker_id, caller)
    await conn.execute(sql.HEARTBEAT, compaction_id)
    if entry.txn_id:
        aborted, missing = await txns.heartbeat(conn, [entry.txn_id])
        if aborted or missing:
            raise FailedPrecondition(f"the compaction txn {entry.txn_id} of compaction {compaction_id} was aborted "
                                     "(hive.txn.timeout without a heartbeat); drop this attempt")


async def complete(conn: asyncpg.Connection, compaction_id: int, worker_id: str, txn_id: int,
                   highest_write_id: int, *, caller: str | None = None) -> Outcome[None]:
    """Commit the compaction txn and mark the entry ready for cleaning, in one step. Marking waits for
    an OpenTxns in flight, and opens wait from then until the caller's transaction commits
    (MARK_COMPACTED's share lock on the txn counter), so commit soon after."""
    entry = await _owned(conn, compaction_id, worker_id, caller)
    if not entry.txn_id or entry.txn_id != txn_id:
        raise FailedPrecondition(f"txn {txn_id} is not the compaction txn of compaction {compaction_id} "
                                 f"({entry.txn_id or 'none opened'}); call StartCompaction first")
    if highest_write_id < 1:
        raise InvalidArgument(f"highest_write_id must be at least 1, got {highest_write_id}")
    committed = await txns.commit_txn(conn, txn_id)
    await conn.execute(sql.MARK_COMPACTED, compaction_id, highest_write_id)
    await conn.execute(sql.FORGET_COMPACTION_TXN, txn_id)
    return Outcome(None, committed.events)


async def _abort_if_open(conn: asyncpg.Connection, txn_ids: Sequence[int], reason: str) -> tuple[NewEvent, ...]:
    ids = [t for t in txn_ids if t]
    if not ids:
        return ()
    open_ids = [r["txn_id"] for r in await conn.fetch(txn_sql.SELECT_TXN_STATES, ids) if r["state"] == txns.OPEN]
    return (await txns.abort_txns(conn, open_ids, reason=reason)).events if open_ids else ()


async def fail(conn: asyncpg.Connection, compaction_id: int, worker_id: str, message: str, *,
               refused: bool, caller: str | None = None) -> Outcome[None]:
    """The worker gives up: history `f` (failed) or `c` (refused: nothing to compact). Its txn, if
    open, is aborted, so anything it wrote stays invisible and is the Cleaner's to remove."""
    entry = await _owned(conn, compaction_id, worker_id, caller)
    events = await _abort_if_open(conn, [entry.txn_id], f"compaction {compaction_id} failed")
    await conn.fetchval(sql.MOVE_TO_HISTORY, compaction_id, REFUSED if refused else FAILED, _bounded(message))
    return Outcome(None, events)


async def requeue_timed_out(conn: asyncpg.Connection, timeout_s: float) -> Outcome[list[int]]:
    """Working entries without a heartbeat for `timeout_s` go back to `initiated`; their txns are aborted."""
    rows = await conn.fetch(sql.TIMED_OUT_WORKERS, timeout_s)
    if not rows:
        return Outcome([])
    ids = [int(r["cq_id"]) for r in rows]
    events = await _abort_if_open(conn, [int(r["cq_txn_id"] or 0) for r in rows],
                                  f"compaction worker timed out (hive.compactor.worker.timeout {timeout_s:g}s)")
    await conn.execute(sql.REQUEUE, ids, f"worker timed out after {timeout_s:g}s without a heartbeat "
                                         "(hive.compactor.worker.timeout); queued again")
    return Outcome(ids, events)


# -- Cleaner --------------------------------------------------------------------------------------


async def ready_to_clean(conn: asyncpg.Connection, limit: int) -> tuple[list[QueueEntry], int]:
    """Ready entries that no open txn can still need the old files of, locked for this round, and the
    lowest open txn (else the next txn id): no txn from it on counts as committed to the Cleaner."""
    watermark = int(await conn.fetchval(sql.MIN_OPEN_TXN_WATERMARK))
    return [QueueEntry.from_row(r) for r in await conn.fetch(sql.READY_TO_CLEAN, watermark, limit)], watermark


async def mark_cleaned(conn: asyncpg.Connection, compaction_id: int) -> None:
    await conn.fetchval(sql.MOVE_TO_HISTORY, compaction_id, SUCCEEDED, None)


async def mark_clean_failed(conn: asyncpg.Connection, compaction_id: int, message: str) -> None:
    await conn.fetchval(sql.MOVE_TO_HISTORY, compaction_id, FAILED, _bounded(message))


async def purge_history(conn: asyncpg.Connection, *, succeeded: int, failed: int, attempted: int,
                        refused: int) -> int:
    status = await conn.execute(sql.PURGE_HISTORY, succeeded, failed, attempted, refused)
    return int(status.split()[-1])


# -- SHOW COMPACTIONS -----------------------------------------------------------------------------


MAX_SHOW = 10_000  # entries one SHOW COMPACTIONS answers at most, over either protocol


async def show(conn: asyncpg.Connection, *, db_name: str | None = None, table_name: str | None = None,
               partition_name: str | None = None, compaction_id: int | None = None, type_: str | None = None,
               state: str | None = None, pool_name: str | None = None, limit: int = MAX_SHOW) -> list[CompactionInfo]:
    """SHOW COMPACTIONS: the queue's entries and the history's, by id, at most `limit`; each filter
    that is set (a TYPE_NAMES key, a STATE_NAMES key) keeps only the entries that match it."""
    rows = await conn.fetch(sql.SHOW, db_name.lower() if db_name else None,
                            table_name.lower() if table_name else None, partition_name or None, limit,
                            compaction_id, type_, state, pool_name)
    return [CompactionInfo(
        r["id"], r["db"], r["tbl"], r["part"], TYPE_NAMES[r["type"]], STATE_NAMES[r["state"]], r["worker_id"] or "",
        r["enqueue_ms"] or 0, r["start_ms"] or 0, r["end_ms"] or 0, r["run_as"], r["highest_write_id"] or 0,
        r["error_message"] or "", r["next_txn_id"] or 0, r["txn_id"] or 0, r["commit_ms"] or 0, r["initiator_id"],
        r["initiator_version"], r["worker_version"] or "", r["pool_name"], r["manual"]) for r in rows]


@dataclass(frozen=True, slots=True)
class CommittedCompaction:
    id: int
    partition_name: str | None  # None: the table's own
    type: str  # MAJOR or MINOR (a TYPE_NAMES key)


async def latest_committed(conn: asyncpg.Connection, db_name: str, table_name: str,
                           partition_names: Sequence[str] | None, after_id: int | None) -> list[CommittedCompaction]:
    """Hive's get_latest_committed_compaction_info: of each partition (of those named; none named: of every
    one, and of the table's own), the newest compaction whose files a reader may use now, succeeded or
    waiting for the Cleaner, with an id above `after_id` when it is set; newest first. A table that does
    not exist has none, as Hive answers."""
    try:
        table = await catalog.get_table(conn, db_name, table_name)
    except NotFound:
        return []
    seen: set[str | None] = set()
    latest = []
    for r in await conn.fetch(sql.LATEST_COMMITTED, table.table_id, list(partition_names) if partition_names else None,
                              after_id):
        if r["part"] not in seen:
            seen.add(r["part"])
            latest.append(CommittedCompaction(r["id"], r["part"], TYPE_NAMES[r["type"]]))
    return latest
