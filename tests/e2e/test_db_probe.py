"""The database probe (gateway/db_health.py) outlives a round that fails in a way it does not expect.

Before, an error outside its list (asyncpg's InternalClientError "cannot switch to state ...; another
operation is in progress", which a connection whose server was killed under a query can raise) ended
the probe's task: health stayed SERVING and the embedded server's supervisor, which acts on the
probe's verdict, never restarted a dead server. Seen as a flaky failure of tests/e2e/test_embedded_pg.py
test_a_gateway_stopped_during_a_restart_leaves_no_server_running (1 run in 6 to 16 here, the probe
never reporting the database down while the poller logged that error)."""

from __future__ import annotations

import asyncio
import time
from typing import Callable

import asyncpg

from gateway.db_health import DatabaseProbe


class _FailingRounds(DatabaseProbe):
    """A real probe whose rounds raise `error` while `failing` is set (the fault a killed server can cause)."""

    failing = False
    error: Exception = RuntimeError("unexpected")

    async def check_once(self) -> bool:
        if self.failing:
            raise self.error
        return await super().check_once()


async def _until(predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not predicate():
            await asyncio.sleep(0.02)


async def test_the_probe_reports_an_unexpected_failure_as_down_and_goes_on(pg_dsn: str) -> None:
    changes: list[bool] = []
    probe = _FailingRounds(pg_dsn, interval_s=0.05, on_change=changes.append)
    task = asyncio.create_task(probe.run())
    try:
        await _until(lambda: probe.locks_held == 0 and probe._conn is not None)
        for error in (asyncpg.InternalClientError("cannot switch to state 11; another operation (2) is in progress"),
                      KeyError("anything else")):
            probe.error, probe.failing = error, True
            await _until(lambda: not probe.up)
            assert not task.done()
            probe.failing = False
            await _until(lambda: probe.up)
        assert changes == [False, True, False, True]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_probe_connection_the_server_ended_while_idle_is_not_an_outage(pg_dsn: str) -> None:
    """The probe keeps one connection between rounds. When the server ends it while idle (idle_session_timeout,
    pg_terminate_backend, a proxy's idle cut) just before a round, asyncpg tells only by failing that round's
    statement, and the probe reported the database down: health NOT_SERVING for a round, a database that was
    up (found by an ops probe: idle_session_timeout = 2s, the probe's interval, flipped health every 4 s). The
    test puts the round exactly there, as tests/e2e/test_poller_lost_listener.py does the poller's read."""
    changes: list[bool] = []
    probe = DatabaseProbe(pg_dsn, on_change=changes.append)
    other = await asyncpg.connect(pg_dsn)
    try:
        assert await probe.check_once()
        assert probe._conn is not None
        end_it = await other.prepare("SELECT pg_terminate_backend($1) FROM pg_sleep($2)")
        ended = asyncio.create_task(end_it.fetchval(probe._conn.get_server_pid(), 0.2))
        await asyncio.sleep(0)  # the statement goes out
        time.sleep(0.8)  # blocks the loop: the server's goodbye waits in the probe's socket
        await asyncio.sleep(0)  # this pass reads its ErrorResponse; the EOF is read a pass later ...
        assert await probe.check_once()  # ... and the round runs before that
        assert await ended
        assert changes == [] and probe.up
    finally:
        await other.close()
        await probe._close()


async def test_rounds_at_the_same_time_take_turns_on_the_probes_connection(pg_dsn: str) -> None:
    """A check_once of a caller's own beside the loop's round (tests/e2e/test_observability.py reads the counts
    so) failed with "another operation is in progress" on the one connection, and said NOT_SERVING."""
    changes: list[bool] = []
    probe = DatabaseProbe(pg_dsn, on_change=changes.append)
    try:
        assert await asyncio.gather(*(probe.check_once() for _ in range(4))) == [True] * 4
        assert changes == [] and probe.up
    finally:
        await probe._close()
