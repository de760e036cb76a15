"""The compactor's loops in the gateway: Initiator, Cleaner (with Hive 4's clean-up of aborted
writes, store/aborted_writes.py) and history reaper (Hive's Initiator, Cleaner and the
purgeCompactionHistory step; the Worker is a Spark job, pipeline/compactor/).

Design note: how the Initiator learns a partition's file facts. It lists the partition's directory
itself, as Hive's Initiator does (AcidUtils.getAcidState on the filesystem), rather than trusting
sizes a writer or a worker reported. A report can be lost: a writer that dies after its commit, an
aborted writer that never reports, files removed by a Cleaner or by hand; the directory is the truth
and the same directory choice readers make (pipeline.acid) says what counts. To keep the listing
cheap, the database picks the tables to look at: those whose write-id counter moved since the last
round (compaction_checked) or that have aborted write ids. Only their partitions are listed.

Every gateway runs the loops with the same configuration; each round runs in one database
transaction that first tries its own advisory lock, so one gateway does a round at a time
(DESIGN: background services elect themselves this way). Blocking filesystem work runs in a worker
thread; every round is bounded by a time-out, failures back off, cancellation passes through.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from dataclasses import dataclass, field
from typing import Awaitable, Callable

import asyncpg

from hive.clock import SYSTEM_CLOCK, Clock
from hive.writeids import ValidTxnList
from poller import compactor_files as files
from poller.elected import Work, repeat, run_elected
from store import aborted_writes, compaction, txns
from store.codec import partition_from_row, table_from_row
from store.compaction_policy import Thresholds, auto_compaction_disabled, decide, thresholds_for
from store.db import Database
from store.errors import InvalidArgument, NotFound
from store.events import NewEvent, Outcome
from store.models import Table
from store.sql import compaction as sql

_log = logging.getLogger(__name__)

# Advisory lock ids ("msgw" + loop number), beside poller/housekeeping.py's 0x...01xx.
INITIATOR_LOCK = 0x6D736777_0201
CLEANER_LOCK = 0x6D736777_0202
HISTORY_LOCK = 0x6D736777_0203
ABORTS_LOCK = 0x6D736777_0204
VERSION = "metastore-gateway"
MAX_BACKOFF_S = 300.0


@dataclass(frozen=True, slots=True)
class CompactorSettings:
    """Hive's names and defaults (hive-reference §7); gateway/config.py carries the keys."""

    initiator_on: bool = False                 # hive.compactor.initiator.on
    cleaner_on: bool = True                    # hive.compactor.cleaner.on
    check_interval_s: float = 300.0            # hive.compactor.check.interval
    cleaner_interval_s: float = 5.0            # hive.compactor.cleaner.run.interval
    worker_timeout_s: float = 86400.0          # hive.compactor.worker.timeout
    failed_threshold: int = 2                  # hive.compactor.initiator.failed.compacts.threshold
    thresholds: Thresholds = field(default_factory=Thresholds)
    retention_succeeded: int = 3               # hive.compactor.history.retention.succeeded
    retention_failed: int = 3                  # hive.compactor.history.retention.failed
    retention_attempted: int = 2               # hive.compactor.history.retention.attempted
    retention_refused: int = 3                 # hive.compactor.history.retention.refused
    history_interval_s: float = 120.0          # hive.compactor.history.reaper.interval
    tables_per_round: int = 1000               # hive.compactor.fetch.size-like cap on one round's work
    round_timeout_s: float = 600.0             # a stuck filesystem or database cannot hold a round forever
    txn_timeout_s: float = 300.0               # hive.txn.timeout: an abort younger than this may still have a writer

    def __post_init__(self) -> None:
        keys = {"check_interval_s": "hive.compactor.check.interval",
                "cleaner_interval_s": "hive.compactor.cleaner.run.interval",
                "worker_timeout_s": "hive.compactor.worker.timeout",
                "history_interval_s": "hive.compactor.history.reaper.interval",
                "txn_timeout_s": "hive.txn.timeout"}
        for name, key in keys.items():
            if getattr(self, name) <= 0:
                raise InvalidArgument(f"{key}: must be a positive duration, got {getattr(self, name)}")
        counts = {"retention_succeeded": "hive.compactor.history.retention.succeeded",
                  "retention_failed": "hive.compactor.history.retention.failed",
                  "retention_attempted": "hive.compactor.history.retention.attempted",
                  "failed_threshold": "hive.compactor.initiator.failed.compacts.threshold"}
        for name, key in counts.items():
            if getattr(self, name) < 0:
                raise InvalidArgument(f"{key}: must not be negative, got {getattr(self, name)}")
        if self.round_timeout_s <= 0 or self.retention_refused < 0 or self.tables_per_round < 1:
            raise InvalidArgument("compactor round time-out, refused retention and tables per round must be positive")


@dataclass
class Compactor:
    db: Database
    settings: CompactorSettings
    # Whether a local directory lies outside metastore.gateway.data.roots (gateway/warehouse.py), where
    # the Cleaner deletes nothing: a caller may place a transactional table anywhere its OS user can write.
    outside_data_roots: Callable[[str], bool] = field(kw_only=True)
    clock: Clock = field(default=SYSTEM_CLOCK, kw_only=True)
    host: str = field(default_factory=socket.gethostname, kw_only=True)
    stats: dict[str, int] = field(default_factory=lambda: {
        "initiated": 0, "not_initiated": 0, "requeued": 0, "cleaned": 0, "dirs_removed": 0, "history_purged": 0,
        "aborted_write_ids_forgotten": 0, "aborted_compaction_txns_forgotten": 0, "aborted_dirs_removed": 0,
        "errors": 0})
    # table id -> (the aborted write ids a sweep found still held there, when): not swept again for
    # hive.compactor.check.interval unless other ids became due (a held id waits for a compaction).
    _held: dict[int, tuple[frozenset[int], float]] = field(default_factory=dict)

    async def run(self) -> None:
        """The enabled loops, until cancelled."""
        s = self.settings
        async with asyncio.TaskGroup() as tg:
            if s.initiator_on:
                tg.create_task(self._loop("compaction initiator", s.check_interval_s, self.initiate_once))
                tg.create_task(self._loop("compaction history reaper", s.history_interval_s, self.purge_once))
            if s.cleaner_on:
                tg.create_task(self._loop("compaction cleaner", s.cleaner_interval_s, self.clean_once))
                tg.create_task(self._loop("aborted writes cleaner", s.cleaner_interval_s, self.clean_aborted_once))

    async def _loop(self, name: str, interval_s: float, once: Callable[[], Awaitable[object]]) -> None:
        await repeat(f"{name} round", once, clock=self.clock, interval_s=interval_s,
                     round_timeout_s=self.settings.round_timeout_s,
                     backoff_max_s=max(interval_s, MAX_BACKOFF_S), errors=self.stats, log=_log)

    async def _elected(self, lock_id: int, work: Work) -> int | None:
        return await run_elected(self.db, lock_id, work)

    # -- Initiator -----------------------------------------------------------------------------------

    async def initiate_once(self) -> int | None:
        """One Initiator round: give dead workers' entries back, then queue what the thresholds ask
        for. The number queued; None when another gateway holds the Initiator's lock."""
        async def work(conn: asyncpg.Connection) -> Outcome[int]:
            requeued = await compaction.requeue_timed_out(conn, self.settings.worker_timeout_s)
            if requeued.value:
                self.stats["requeued"] += len(requeued.value)
                _log.warning("compactions %s had no worker heartbeat for %gs: queued again", requeued.value,
                             self.settings.worker_timeout_s)
            queued = 0
            txn_list = await txns.get_open_txns(conn)
            now_s = float(await conn.fetchval(sql.DB_NOW_S))
            for row in await conn.fetch(sql.CANDIDATE_TABLES, self.settings.tables_per_round):
                table = table_from_row(row)
                queued += await self._check_table(conn, table, txn_list, now_s)
                await conn.execute(sql.MARK_CHECKED, table.table_id, row["next_write_id"])
            return Outcome(queued, requeued.events)

        queued = await self._elected(INITIATOR_LOCK, work)
        self.stats["initiated"] += queued or 0
        return queued

    async def _check_table(self, conn: asyncpg.Connection, table: Table, txn_list: ValidTxnList,
                           now_s: float) -> int:
        if auto_compaction_disabled(table.parameters):
            return 0
        try:
            thresholds = thresholds_for(self.settings.thresholds, table.parameters)
        except InvalidArgument as exc:
            _log.warning("not compacting %s automatically: %s", table.full_name, exc)
            return 0
        view = compaction.compactor_view(await txns.table_write_ids(conn, table.full_name, table.table_id, txn_list))
        aborted = {int(r["write_id"]): float(r["finished_s"] or 0.0)
                   for r in await conn.fetch(sql.ABORTED_WRITE_IDS, table.table_id)}
        if table.is_partitioned:
            targets = [(r["part_name"], partition_from_row(table.db_name, table.name, r).sd.location)
                       for r in await conn.fetch(sql.LATEST_PARTITIONS, table.table_id)]
        else:
            targets = [(None, table.sd.location)]
        queued = 0
        for part_name, location in targets:
            facts = await asyncio.to_thread(files.partition_facts, location, view, txn_list, aborted)
            decision = decide(facts, thresholds, now_s)
            if decision.type is None:
                continue
            what = f"{table.full_name}" + (f" partition {part_name}" if part_name else "")
            if await conn.fetchrow(sql.ACTIVE_ENTRY, table.table_id, part_name) is not None:
                continue
            if await compaction.failed_too_often(conn, table.table_id, part_name, self.settings.failed_threshold):
                await compaction.record_not_initiated(
                    conn, table, part_name, decision.type,
                    f"the last {self.settings.failed_threshold} compactions failed "
                    "(hive.compactor.initiator.failed.compacts.threshold); run ALTER TABLE ... COMPACT by hand once "
                    f"the cause is fixed. Would have queued: {decision.reason}", self._initiator_id(), VERSION)
                self.stats["not_initiated"] += 1
                continue
            done = await compaction.enqueue(conn, table, part_name, decision.type, run_as=table.owner or "",
                                            initiator_id=self._initiator_id(), initiator_version=VERSION,
                                            manual=False)
            if done.accepted:
                queued += 1
                _log.info("queued %s compaction %d of %s: %s", compaction.TYPE_NAMES[decision.type], done.id, what,
                          decision.reason)
        return queued

    def _initiator_id(self) -> str:
        return f"{self.host}-initiator"

    # -- Cleaner -------------------------------------------------------------------------------------

    async def clean_once(self) -> int | None:
        """One Cleaner round over the ready entries no open txn can still need the old files of.
        The number cleaned; None when another gateway holds the Cleaner's lock."""
        async def work(conn: asyncpg.Connection) -> Outcome[int]:
            entries, lowest_open = await compaction.ready_to_clean(conn, self.settings.tables_per_round)
            if not entries:
                return Outcome(0)
            txn_list = await txns.get_open_txns(conn)
            cleaned = 0
            for entry in entries:
                cleaned += await self._clean(conn, entry, txn_list, txn_list.before(lowest_open))
            return Outcome(cleaned)

        cleaned = await self._elected(CLEANER_LOCK, work)
        self.stats["cleaned"] += cleaned or 0
        return cleaned

    async def _clean(self, conn: asyncpg.Connection, entry: compaction.QueueEntry, txn_list: ValidTxnList,
                     seen_by_open_readers: ValidTxnList) -> int:
        """Remove what the entry's compaction made obsolete. Obsolete as every open reader sees the files
        (`seen_by_open_readers`): a newer compaction's output committed after a reader began covers
        nothing yet (seed 9002 of tests/spark/test_acid_lifecycle_random.py: a reader lost a delta)."""
        try:
            table, location = await compaction.target_of(conn, entry)
        except NotFound:
            await compaction.mark_cleaned(conn, entry.id)  # nothing left to clean (Hive does the same)
            return 1
        if self.outside_data_roots(location):
            _log.warning("compaction %d: %s is outside the gateway's data roots; its obsolete directories were left",
                         entry.id, location)
            await compaction.mark_clean_failed(
                conn, entry.id, f"cleaning {location} refused: it is outside the gateway's data roots "
                "(metastore.gateway.data.roots), where it deletes nothing; the compacted input directories were left "
                "(readers skip them): delete them by hand, or list the directory as a data root")
            return 0
        current = await txns.table_write_ids(conn, table.full_name, table.table_id, txn_list)
        view = files.cleaner_view(current, entry.highest_write_id)
        if view is None:
            _log.warning("compaction %d: a write id up to %d is open again; cleaning later", entry.id,
                         entry.highest_write_id)
            return 0
        try:
            obsolete = await asyncio.to_thread(files.obsolete_dirs, location, view, seen_by_open_readers)
            removed = await asyncio.to_thread(files.remove, obsolete)
        except (OSError, ValueError) as exc:
            await compaction.mark_clean_failed(conn, entry.id, f"cleaning {location} failed: {exc}")
            return 0
        self.stats["dirs_removed"] += len(removed)
        if len(removed) < len(obsolete):
            _log.warning("compaction %d: %d of %d obsolete directories could not be removed; trying again next round",
                         entry.id, len(obsolete) - len(removed), len(obsolete))
            return 0
        await compaction.mark_cleaned(conn, entry.id)
        _log.info("compaction %d cleaned: removed %d directories under %s", entry.id, len(removed), location)
        return 1

    # -- aborted writes ------------------------------------------------------------------------------

    async def clean_aborted_once(self) -> int | None:
        """One round of Hive 4's abort clean-up (store/aborted_writes.py): for each table due, delete
        the directories holding only its aborted write ids, or the output of its aborted compaction
        txns, then forget the ids and txns no directory holds. The number of write ids forgotten;
        None when another gateway holds the lock."""
        s = self.settings

        async def work(conn: asyncpg.Connection) -> Outcome[int]:
            due = await aborted_writes.due(conn, more_than=s.thresholds.aborted_num,
                                           older_than_s=s.thresholds.aborted_age_s, ended_before_s=s.txn_timeout_s,
                                           tables=s.tables_per_round)
            forgotten: list[int] = []
            events: list[NewEvent] = []
            for table in due:
                done = await self._clean_aborted(conn, table)
                forgotten += done.value
                events += done.events
            return Outcome(len(forgotten), tuple(events))

        forgotten = await self._elected(ABORTS_LOCK, work)
        self.stats["aborted_write_ids_forgotten"] += forgotten or 0
        return forgotten

    async def _clean_aborted(self, conn: asyncpg.Connection, table: aborted_writes.AbortedWrites) -> Outcome[list[int]]:
        now = self.clock.monotonic()
        last = self._held.get(table.table_id)
        if (last is not None and table.write_ids <= last[0] and not table.compaction_txns
                and now - last[1] < self.settings.check_interval_s):
            return Outcome([])
        roots = await aborted_writes.roots(conn, table.table_id)
        outside = sorted({r.location for r in roots if self.outside_data_roots(r.location)})
        if outside:  # what those directories hold is unknown, so none of the ids may be forgotten
            if table.table_id not in self._held:
                _log.warning("aborted writes to table id %d not cleaned: %s%s outside the gateway's data roots "
                             "(metastore.gateway.data.roots), where it deletes nothing", table.table_id,
                             outside[0], f" and {len(outside) - 1} more are" if len(outside) > 1 else " is")
            self._held[table.table_id] = (table.write_ids, now)
            return Outcome([])
        try:
            sweep = await asyncio.to_thread(files.sweep_aborted, roots, table.write_ids, table.compaction_txns)
        except (OSError, ValueError) as exc:
            _log.warning("aborted writes to table id %d not cleaned: %s", table.table_id, exc)
            return Outcome([])
        self.stats["aborted_dirs_removed"] += len(sweep.removed)
        if sweep.held:
            self._held[table.table_id] = (sweep.held, now)
            _log.info("table id %d: %d aborted write id(s) are in directories beside committed ones; they stay "
                      "listed until a compaction replaces those", table.table_id, len(sweep.held))
        else:
            self._held.pop(table.table_id, None)
        txns_gone = await aborted_writes.forget_compaction_txns(conn, table.compaction_txns - sweep.held_txns)
        self.stats["aborted_compaction_txns_forgotten"] += len(txns_gone)
        done = await aborted_writes.forget(conn, table.table_id, table.write_ids - sweep.held)
        if done.value or txns_gone:
            _log.info("table id %d: removed %d directories of aborted writes; %d aborted write id(s) and %d aborted "
                      "compaction txn(s) forgotten", table.table_id, len(sweep.removed), len(done.value),
                      len(txns_gone))
        return done

    # -- history -------------------------------------------------------------------------------------

    async def purge_once(self) -> int | None:
        s = self.settings

        async def work(conn: asyncpg.Connection) -> Outcome[int]:
            return Outcome(await compaction.purge_history(
                conn, succeeded=s.retention_succeeded, failed=max(s.retention_failed, s.failed_threshold),
                attempted=s.retention_attempted, refused=s.retention_refused))

        purged = await self._elected(HISTORY_LOCK, work)
        self.stats["history_purged"] += purged or 0
        return purged

