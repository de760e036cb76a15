"""Brings the embedded PostgreSQL back when its server dies under a running gateway.

Design note. A gateway that started the embedded server, or attached to the one running on its data
directory, owns it as a service manager would: when the postmaster dies (kill -9, the OOM killer, a
crash) the gateway starts it again, rather than answering UNAVAILABLE until an operator restarts the
gateway. The database probe (gateway/db_health.py) is what notices: while it reports the database
down, the supervisor looks at the data directory once a round, and restarts only a server that died
(its postmaster gone, postmaster.pid left behind: EmbeddedPostgres.server_state). A server stopped on
purpose stays stopped: a stop (pg_ctl stop in any mode, the last gateway out) removes postmaster.pid,
and `metastore-gateway postgres stop` also marks the directory, which covers a server that died first.
A server that runs but does not answer is not the supervisor's business; the probe says so.

The restart runs under the data directory's start-up lock (EmbeddedPostgres.restart_if_died), so of
the gateways sharing the directory one starts the server and the others find it running, and a
`postgres stop` is never undone. A failed attempt (old server processes still holding the shared
memory, say) is retried after a back-off for as long as the server stays dead, each attempt bounded
by pg_ctl start's time-out. An attempt runs in a thread, which a cancellation cannot stop: it goes on,
and the gateway's stop() waits for it (`pending`, bounded) before it detaches, so a SIGTERM in the
middle of a restart leaves no server without a gateway. Once the server is back the pool replaces its
dead connections (store/db.py) and the probe turns health SERVING again.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass, field
from typing import Callable

from gateway.embedded_pg import EmbeddedPostgres, EmbeddedPostgresError
from hive.backoff import Backoff

_log = logging.getLogger(__name__)
RESTART_BACKOFF = Backoff(initial_s=1.0, max_s=30.0)  # between failed attempts


@dataclass
class PostgresSupervisor:
    pg: EmbeddedPostgres
    database_up: Callable[[], bool]  # the probe's verdict
    interval_s: float = 2.0  # how often it looks while the database is down: the probe's interval
    backoff: Backoff = RESTART_BACKOFF
    restarts: int = 0  # servers this gateway started again (metrics)
    _pending: asyncio.Future[bool] | None = field(default=None, init=False, repr=False)

    @property
    def pending(self) -> asyncio.Future[bool] | None:
        """A restart still under way in its thread (it goes on when run() is cancelled), else None."""
        pending = self._pending
        return pending if pending is not None and not pending.done() else None

    async def run(self) -> None:
        """Supervise until cancelled."""
        told_stopped = False
        while True:
            await asyncio.sleep(self.interval_s)
            if self.database_up():
                told_stopped = False
                continue
            state = await asyncio.to_thread(self.pg.server_state)
            if state == "died":
                await self._restart()
            elif state == "stopped" and not told_stopped:
                told_stopped = True
                _log.info("the embedded PostgreSQL on %s is stopped (not by a crash): not restarting it; a gateway "
                          "starting, or `metastore-gateway postgres start`, starts it", self.pg.pgdata)

    async def _restart(self) -> None:
        """Start the dead server again; after a failed attempt, wait and try again while it stays dead."""
        _log.warning("the embedded PostgreSQL on %s died (its postmaster is gone, postmaster.pid left behind); "
                     "restarting it", self.pg.pgdata)
        for attempt in itertools.count():
            try:
                restarted = await self._in_thread(self.pg.restart_if_died)
            except (EmbeddedPostgresError, OSError) as exc:
                wait_s = self.backoff.delay(attempt)
                _log.warning("restarting the embedded PostgreSQL on %s failed (%s; see %s); next attempt in %.0fs",
                             self.pg.pgdata, exc, self.pg.log_file, wait_s)
                await asyncio.sleep(wait_s)
                continue
            if restarted:
                self.restarts += 1
                _log.warning("restarted the embedded PostgreSQL on %s after %d failed attempt(s)", self.pg.pgdata,
                             attempt)
            else:
                _log.info("the embedded PostgreSQL on %s was restarted by another gateway, or stopped on purpose",
                          self.pg.pgdata)
            return

    async def _in_thread(self, fn: Callable[[], bool]) -> bool:
        self._pending = asyncio.ensure_future(asyncio.to_thread(fn))
        self._pending.add_done_callback(_retrieve)  # its error is ours, or nobody's once run() is cancelled
        return await asyncio.shield(self._pending)


def _retrieve(future: asyncio.Future[bool]) -> None:
    if not future.cancelled():
        future.exception()
