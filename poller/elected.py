"""The one mechanism behind every background loop that several gateways share a database for
(housekeeping, the compactor): a round runs in one transaction that first tries the loop's
advisory lock, so whichever gateway gets it does the round and the others skip it; a loop repeats
its round on an interval, bounds each round, and backs off after failures, surviving database
restarts. A database outage is logged at DEBUG (the gateway's probe reports it once each way,
gateway/db_health.py); any other failure with its traceback.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable

import asyncpg

from hive.backoff import Backoff
from hive.clock import Clock
from store.db import Database
from store.errors import Unavailable
from store.events import Outcome
from store.sql import housekeeping as sql

Work = Callable[[asyncpg.Connection], Awaitable[Outcome[int]]]


async def run_elected(db: Database, lock_id: int, work: Work) -> int | None:
    """`work` in one transaction, if this gateway holds `lock_id`; None when another one does.
    The events `work` returns are appended last in the same transaction (Database.transact)."""
    async def run(conn: asyncpg.Connection) -> Outcome[int | None]:
        if not await conn.fetchval(sql.TRY_LEADERSHIP, lock_id):
            return Outcome(None)
        done = await work(conn)
        return Outcome(done.value, done.events)

    return (await db.transact(run)).value


async def repeat(name: str, once: Callable[[], Awaitable[object]], *, clock: Clock, interval_s: float,
                 round_timeout_s: float, backoff_max_s: float, errors: dict[str, int], log: logging.Logger,
                 start_s: float = 0.0) -> None:
    """Run `once` after `start_s`, then every `interval_s`, each round bounded by `round_timeout_s`;
    after failures wait interval x 2^failures (at most `backoff_max_s`), counting them in
    `errors["errors"]`. Until cancelled."""
    await clock.sleep(start_s)
    backoff = Backoff(initial_s=interval_s, max_s=backoff_max_s, max_doublings=5)
    failures = 0
    while True:
        try:
            async with asyncio.timeout(round_timeout_s):
                await once()
            failures = 0
            await clock.sleep(interval_s)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a loop must survive database restarts and bugs alike
            failures += 1
            errors["errors"] += 1
            if isinstance(exc, Unavailable):
                log.debug("%s: %s (%d in a row)", name, exc, failures)
            else:
                log.exception("%s failed (%d in a row)", name, failures)
            await clock.sleep(backoff.delay(failures))
