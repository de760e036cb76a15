"""Housekeeping loops: time-out reaper, aborted-txn and TXN_TO_WRITE_ID cleaners, write-set and
version GC, event log retention, and the open-txn counter.

Every gateway runs every loop with the same configuration. A round of an elected loop runs in
one database transaction that first tries that loop's advisory lock; whoever gets it does the
work, the others skip the round, so any number of gateways behave like one. The open-txn counter
is per gateway (each gateway enforces hive.max.open.txns itself, as each Hive metastore does).
Loops never hold a lock across rounds, log and back off on errors, and let cancellation through.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Awaitable, Callable

import asyncpg

from store import housekeeping as hk
from store import locks, write_set
from hive.clock import SYSTEM_CLOCK, Clock
from poller.elected import Work, repeat, run_elected
from store.db import Database
from store.events import Outcome
from store.txn_store import TxnStore

_log = logging.getLogger(__name__)

# Advisory lock ids, one per elected loop ("msgw" + loop number).
REAPER_LOCK = 0x6D736777_0101
ACID_HOUSEKEEPER_LOCK = 0x6D736777_0102
EVENT_TRIM_LOCK = 0x6D736777_0103

MAX_BACKOFF_S = 30.0


@dataclass(frozen=True, slots=True)
class HousekeepingSettings:
    txn_timeout_s: float = 300.0
    reaper_start_s: float = 100.0
    reaper_interval_s: float = 180.0
    housekeeper_interval_s: float = 60.0
    event_ttl_s: float = 86400.0
    event_clean_interval_s: float = 7200.0
    count_open_txns_interval_s: float = 1.0


@dataclass
class Housekeeper:
    db: Database
    txn_store: TxnStore
    settings: HousekeepingSettings
    stats: dict[str, int] = field(default_factory=lambda: {"reaped_txns": 0, "aborted_txns_forgotten": 0,
                                                          "t2w_tables_cleaned": 0,
                                                          "write_set_rows_collected": 0, "versions_collected": 0,
                                                          "events_trimmed": 0, "errors": 0})
    clock: Clock = field(default=SYSTEM_CLOCK, kw_only=True)  # the loops' sleeps; tests pass a fake one

    async def run(self) -> None:
        """Run every loop until cancelled."""
        s = self.settings
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self._loop("open-txn counter", 0.0, s.count_open_txns_interval_s,
                                      self.txn_store.refresh_open_count))
            tg.create_task(self._loop("time-out reaper", s.reaper_start_s, s.reaper_interval_s, self.reap_once))
            tg.create_task(self._loop("acid housekeeper", s.housekeeper_interval_s, s.housekeeper_interval_s,
                                      self.clean_once))
            tg.create_task(self._loop("event log trim", s.event_clean_interval_s, s.event_clean_interval_s,
                                      self.trim_once))

    async def _loop(self, name: str, start_s: float, interval_s: float, once: Callable[[], Awaitable[object]]) -> None:
        await repeat(f"housekeeping loop {name!r}", once, clock=self.clock, start_s=start_s, interval_s=interval_s,
                     round_timeout_s=max(60.0, interval_s), backoff_max_s=MAX_BACKOFF_S, errors=self.stats, log=_log)

    async def _elected(self, lock_id: int, work: Work) -> int | None:
        return await run_elected(self.db, lock_id, work)

    async def reap_once(self) -> int | None:
        async def work(conn: asyncpg.Connection) -> Outcome[int]:
            # Hive's performTimeOuts: standalone locks first (timeOutLocks), then txns (their locks go with them).
            expired = await locks.time_out_locks(conn, self.settings.txn_timeout_s)
            if expired:
                request_ids = sorted({r["ext_id"] for r in expired})
                self.stats["timed_out_locks"] = self.stats.get("timed_out_locks", 0) + len(request_ids)
                _log.warning("released %d lock request(s) without a heartbeat for %gs: %s", len(request_ids),
                             self.settings.txn_timeout_s, request_ids[:20])
            reaped = await hk.reap_timed_out_txns(conn, self.settings.txn_timeout_s)
            ids = reaped.value
            if ids:
                _log.warning("aborted %d txn(s) without a heartbeat for %gs: %s", len(ids), self.settings.txn_timeout_s,
                             ids[:20])
            return Outcome(len(ids), reaped.events)

        reaped = await self._elected(REAPER_LOCK, work)
        self.stats["reaped_txns"] += reaped or 0
        return reaped

    async def clean_once(self) -> int | None:
        async def work(conn: asyncpg.Connection) -> Outcome[int]:
            # An aborted txn is kept for hive.txn.timeout, so its client, heartbeating or not, learns it was aborted.
            forgotten = await hk.forget_empty_aborted_txns(conn, self.settings.txn_timeout_s)
            if forgotten.forgotten:
                self.stats["aborted_txns_forgotten"] += forgotten.forgotten
                _log.info("forgot %d aborted txn(s) that wrote nothing (up to txn %d)", forgotten.forgotten,
                          forgotten.highest)
            result = await hk.clean_txn_to_write_id(conn)
            self.stats["t2w_tables_cleaned"] += result.rows_deleted_tables
            self.stats["write_set_rows_collected"] += await write_set.gc(conn)
            return await hk.gc_versions(conn)

        collected = await self._elected(ACID_HOUSEKEEPER_LOCK, work)
        self.stats["versions_collected"] += collected or 0
        return collected

    async def trim_once(self) -> int | None:
        async def work(conn: asyncpg.Connection) -> Outcome[int]:
            return Outcome(await hk.trim_event_log(conn, self.settings.event_ttl_s))

        trimmed = await self._elected(EVENT_TRIM_LOCK, work)
        self.stats["events_trimmed"] += trimmed or 0
        return trimmed
