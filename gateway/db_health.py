"""Whether this gateway's database answers, checked on a connection of its own.

Design note. Health must say NOT_SERVING while the database is unreachable (every call would be
UNAVAILABLE) and SERVING once it is back, and an operator needs one log line each way, not one per
failed call or loop. The probe keeps one connection outside the pool, so a pool that is merely
busy (every connection checked out) does not read as "database down", and runs two cheap queries
each `interval_s`: the lock counts and the aborted txns' counts that metrics export, so the probe
costs nothing extra. A
failure closes the connection and the next round reconnects; every wait is bounded (connect and
query time-outs), and cancellation goes straight through.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Callable

import asyncpg

from store.db import CONNECT_REFUSED, CONNECTION_LOST
from store.sql import locks as lock_sql
from store.sql import txns as txn_sql

_log = logging.getLogger(__name__)


class QuietPoolReconnects(logging.Filter):
    """asyncpg's pool logs a warning with a traceback each time it fails to reconnect its minimum
    connections (every 1, 2, 4 ... 60 s while the database is away, or refuses its connections: new
    credentials, the database gone). That failure is the outage the probe already reported in one
    line: keep the record at DEBUG, without the traceback. Other records pass unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, (*CONNECTION_LOST, *CONNECT_REFUSED)) and record.getMessage().startswith(
                "Failed to restore the pool"):
            record.msg, record.args = f"{record.getMessage()}: {exc}", None
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            # Demoted after its logger let it through at WARNING: let handlers see it only where DEBUG is on
            # (a handler without a level of its own, as logging.basicConfig's, would print it at INFO).
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


QUIET_POOL_RECONNECTS = QuietPoolReconnects()


def quiet_pool_reconnects() -> None:
    """Install the filter on asyncpg's pool logger (idempotent; stateless, so gateways share it)."""
    pool_log = logging.getLogger("asyncpg.pool")
    if QUIET_POOL_RECONNECTS not in pool_log.filters:
        pool_log.addFilter(QUIET_POOL_RECONNECTS)


@dataclass
class DatabaseProbe:
    dsn: str
    interval_s: float = 2.0
    timeout_s: float = 5.0
    on_change: Callable[[bool], None] = field(default=lambda up: None)
    up: bool = True  # the gateway has just connected when the probe starts
    locks_held: int = 0
    locks_waiting: int = 0
    aborted_txns: int = 0
    oldest_aborted_txn_age_s: float = 0.0
    aborted_write_ids: int = 0
    _conn: asyncpg.Connection | None = field(default=None, init=False, repr=False)
    # One round at a time on the one connection: a check_once of the caller's own (the tests', to see the
    # counts now) beside the loop's failed with "another operation is in progress" and said NOT_SERVING.
    _one_round: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)

    async def run(self) -> None:
        """Probe until cancelled. A round that fails in a way check_once does not expect counts as the
        database down (said in the log line) and the next round tries again: a probe that ended would
        leave health SERVING, and the embedded server's supervisor idle, for the rest of the process."""
        try:
            while True:
                try:
                    await self.check_once()
                except Exception as exc:  # noqa: BLE001 - the probe must outlive any one round
                    await self._close()
                    self._set(False, f"unexpected {type(exc).__name__}: {exc}"[:300])
                await asyncio.sleep(self.interval_s)
        finally:
            await self._close()

    async def check_once(self) -> bool:
        async with self._one_round:
            return await self._check()

    async def _check(self) -> bool:
        try:
            async with asyncio.timeout(self.timeout_s):
                reused = self._conn is not None and not self._conn.is_closed()
                try:
                    rows, aborted = await self._round()
                except CONNECTION_LOST:
                    if not reused:
                        raise
                    # The connection kept since the last round died meanwhile (the server ended it while idle:
                    # idle_session_timeout, pg_terminate_backend, a proxy's idle cut), which asyncpg may tell only
                    # by failing the next statement: whether the database answers is a new connection's question.
                    # Without this, one such round said NOT_SERVING for a database that was up.
                    await self._close()
                    rows, aborted = await self._round()
        except asyncio.CancelledError:
            raise
        except (*CONNECTION_LOST, asyncpg.PostgresError) as exc:
            await self._close()
            said = str(exc) or (f"no answer within {self.timeout_s:g}s" if isinstance(exc, TimeoutError) else "")
            self._set(False, f"{type(exc).__name__}: {said}"[:300])
            return False
        counts = {r["state"]: r["count"] for r in rows}
        self.locks_held, self.locks_waiting = counts.get("a", 0), counts.get("w", 0)
        self.aborted_txns, self.aborted_write_ids = int(aborted["aborted"]), int(aborted["write_ids"])
        self.oldest_aborted_txn_age_s = float(aborted["oldest_s"])
        self._set(True, "")
        return True

    async def _round(self) -> tuple[list[asyncpg.Record], asyncpg.Record]:
        """The round's two queries, on the probe's connection (opened when it has none)."""
        if self._conn is None or self._conn.is_closed():
            self._conn = await asyncpg.connect(self.dsn, timeout=self.timeout_s)
        rows = await self._conn.fetch(lock_sql.COUNT_LOCKS_BY_STATE)
        aborted = await self._conn.fetchrow(txn_sql.ABORTED_TXN_STATS)
        return rows, aborted

    def _set(self, up: bool, why: str) -> None:
        if up == self.up:
            return
        self.up = up
        if up:
            _log.warning("database reachable again; health SERVING")
        else:
            _log.warning("database unreachable (%s); health NOT_SERVING, calls wait for it (hive.hmshandler.retry.*), "
                         "then answer UNAVAILABLE", why)
        self.on_change(up)

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            conn.terminate()  # no goodbye over a connection that just failed: it may hang
