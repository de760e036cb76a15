"""The poller's LISTEN connection killed by the server while idle is an outage like any other: one
DEBUG line and a reconnect, not a WARNING.

A backend that PostgreSQL ends while its client is idle (a fast shutdown, pg_terminate_backend) sends
an ErrorResponse ("terminating connection due to administrator command") and then closes the
socket. asyncpg reads the two in separate passes of the loop: the unexpected ErrorResponse puts its
protocol in its error-consuming state (asyncpg/protocol/coreproto.pyx, `_read_server_messages` has no
branch for an idle connection), while `is_closed()` stays False until the EOF is read. A query started
in between, by the one coroutine that uses the connection, fails with InternalClientError "cannot
switch to state 12; another operation (2) is in progress": nothing else was in progress. The poller
took that for trouble of its own and logged a WARNING (seen as a flaky failure of tests/e2e/
test_readiness.py test_a_database_outage_flips_health_with_one_line_each_way, which expects one line
each way). The test puts the poller's read exactly in that window: the server's goodbye is waiting in
the socket, one loop pass reads its ErrorResponse, and the poller is woken in that pass.
"""

from __future__ import annotations

import asyncio
import logging
import time

import asyncpg
import pytest

from protos.metastore.v1 import catalog_pb2 as pb
from tests.conftest import connect, running_gateway, wait_applied


async def test_a_listener_the_server_ended_while_idle_is_reconnected_without_a_warning(
        pg_dsn: str, caplog: pytest.LogCaptureFixture) -> None:
    async with running_gateway(pg_dsn) as gw:
        poller = gw.poller
        assert poller is not None
        await wait_applied(gw)
        await asyncio.sleep(0.2)  # the poller waits for a notification on its idle LISTEN connection
        listener = poller._listener
        assert listener is not None
        caplog.set_level(logging.DEBUG, logger="poller.poller")
        errors = poller.stats.errors
        other = await asyncpg.connect(pg_dsn)
        try:
            # The server ends the listener's backend a moment after the statement is sent, while this test
            # keeps the loop from reading: the server's ErrorResponse and its EOF are then both waiting.
            end_it = await other.prepare("SELECT pg_terminate_backend($1) FROM pg_sleep($2)")
            ended = asyncio.create_task(end_it.fetchval(listener.get_server_pid(), 0.2))
            await asyncio.sleep(0)  # the statement goes out
            time.sleep(0.8)  # blocks the loop
            await asyncio.sleep(0)  # this pass reads the ErrorResponse; the EOF is read a pass later ...
            poller.resume()  # ... and the poller, woken in this pass, reads the log before that
            assert await ended
        finally:
            await other.close()
        client = await connect(f"127.0.0.1:{gw.port}")
        try:
            await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="after")))
        finally:
            await client.channel.close()
        await wait_applied(gw)  # the poller reconnected and goes on
    lines = [r.getMessage() for r in caplog.records if r.name == "poller.poller"]
    # The read met the connection in that window (were asyncpg ever to mark it closed on the ErrorResponse,
    # it would not, and this test would have nothing left to show) ...
    assert poller.stats.errors > errors and any("another operation (2) is in progress" in m for m in lines), lines
    # ... and took it for what it is, a lost connection: the probe speaks of outages, not the poller.
    assert [r.getMessage() for r in caplog.records if r.name == "poller.poller" and r.levelno > logging.DEBUG] == []
