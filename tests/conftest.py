"""Shared fixtures: a real PostgreSQL (the embedded one) and real gateways on 127.0.0.1.

One PostgreSQL cluster per test session; the schema is migrated once into a template database
and every test gets its own clone (CREATE DATABASE ... TEMPLATE), which is fast and isolated.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import itertools
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator, TypeVar

import asyncpg
import grpc
import hypothesis
import pytest

from gateway.app import Gateway, migrate_database
from gateway.config import Settings, load_settings
from gateway.embedded_pg import UNSAFE_FAST_SETTINGS, EmbeddedPostgres
from loadtest import gateway_process
from protos.metastore.v1 import catalog_pb2_grpc, events_pb2_grpc

T = TypeVar("T")

REPO = Path(__file__).resolve().parent.parent

# No property test is timed: Hypothesis' default 200 ms deadline per example fails a test on a loaded
# machine (a pause of the whole process, seen in test_wire under two soaks), and speed is measured by the
# benchmarks, not by unit tests.
hypothesis.settings.register_profile("untimed", deadline=None)
hypothesis.settings.load_profile("untimed")
TEMPLATE_DB = "metastore_template"
_db_counter = itertools.count(1)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "allow_loop_exceptions: the test expects unhandled exceptions in the event "
                                       "loop (no test needs it today; say why where it is used)")


@pytest.fixture(autouse=True)
async def fail_on_loop_exceptions(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """Fail the test when the event loop reported an exception nobody handled: "Task exception was
    never retrieved", an exception in a callback, a future's lost error (asyncpg's _testbase does the
    same). Such errors are otherwise only logged, and a background task can die unseen.

    The tests share one loop (session scope); the handler is installed for each test and the loop's
    own handler is put back after it. A task dropped with its exception is reported when it is
    garbage collected, hence the collection before the check."""
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    gc.freeze()  # what exists now is not this test's: the collection below then scans only the test's objects
    try:
        yield
        await asyncio.sleep(0)  # callbacks scheduled by the test's last step run now
        gc.collect()
    finally:
        gc.unfreeze()
        loop.set_exception_handler(previous)
    if seen and request.node.get_closest_marker("allow_loop_exceptions") is None:
        pytest.fail("unhandled exception(s) in the event loop:\n" + "\n".join(_describe(c) for c in seen),
                    pytrace=False)


def _describe(context: dict[str, Any]) -> str:
    where = context.get("task") or context.get("future") or context.get("handle") or ""
    text = f"- {context.get('message', '')} {where}".rstrip()
    exc = context.get("exception")
    if exc is not None:
        text += "\n" + "".join(traceback.format_exception(exc)).rstrip()
    return text


class PgCluster:
    """The session's PostgreSQL server, and fresh migrated databases cloned from the template ahead of the
    tests that take them: a clone took 22 to 176 ms (timed by hand on this project's template, slowest
    right after a gateway's work), which a thread of its own now spends while the test before runs (the
    suite leaves about half the machine idle)."""

    AHEAD = 2  # clones made before they are asked for
    TAKE_TIMEOUT_S = 120.0

    def __init__(self, server: EmbeddedPostgres) -> None:
        self.server = server
        self._ready: queue.Queue[str | BaseException] = queue.Queue(maxsize=self.AHEAD)
        self._stopping = threading.Event()
        self._cloner = threading.Thread(target=lambda: asyncio.run(self._clone()), name="test-database-cloner",
                                        daemon=True)

    def dsn(self, database: str) -> str:
        return self.server.dsn(database)

    def start_cloning(self) -> None:
        self._cloner.start()

    def stop_cloning(self) -> None:
        self._stopping.set()
        self._cloner.join(30)

    async def fresh_database(self) -> str:
        """The DSN of a new database cloned from the migrated template, for this caller alone."""
        try:
            made = self._ready.get_nowait()
        except queue.Empty:
            try:
                made = await asyncio.to_thread(self._ready.get, timeout=self.TAKE_TIMEOUT_S)
            except queue.Empty:
                raise RuntimeError(f"no test database was cloned within {self.TAKE_TIMEOUT_S:.0f} s") from None
        if isinstance(made, BaseException):
            self._ready.put(made)  # every later caller fails alike
            raise RuntimeError("the test databases' cloner failed") from made
        return self.dsn(made)

    async def _clone(self) -> None:
        try:
            conn = await asyncpg.connect(self.dsn("postgres"))
            try:
                while not self._stopping.is_set():
                    name = f"t{os.getpid()}_{next(_db_counter)}"
                    await conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE_DB}")
                    while not self._stopping.is_set():
                        with contextlib.suppress(queue.Full):
                            self._ready.put(name, timeout=0.2)
                            break
            finally:
                await conn.close()
        except BaseException as exc:  # the takers see it, not a silent thread's log line
            while not self._stopping.is_set():
                with contextlib.suppress(queue.Full):
                    self._ready.put(exc, timeout=0.2)
                    return


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    root = Path(tempfile.mkdtemp(prefix="msgw-test-"))
    root.chmod(0o755)
    server = EmbeddedPostgres(root, settings=dict(UNSAFE_FAST_SETTINGS))
    server.start()
    cluster = PgCluster(server)
    asyncio.run(_create_template(cluster))
    cluster.start_cloning()
    yield cluster
    cluster.stop_cloning()
    server.stop()
    # One database per test: gigabytes of files by the end of `make test`, whose removal (about 15 s)
    # nothing needs to wait for, so it goes on in a process of its own after the session ends.
    subprocess.Popen(["rm", "-rf", "--", str(root)], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def _create_template(cluster: PgCluster) -> None:
    conn = await asyncpg.connect(cluster.dsn("postgres"))
    try:
        await conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE_DB}")
        await conn.execute(f"CREATE DATABASE {TEMPLATE_DB}")
    finally:
        await conn.close()
    await migrate_database(cluster.dsn(TEMPLATE_DB))


@pytest.fixture
async def pg_dsn(pg_cluster: PgCluster) -> str:
    """A fresh, migrated database for this test."""
    return await pg_cluster.fresh_database()


@dataclass
class GatewayClient:
    address: str
    channel: grpc.aio.Channel
    catalog: catalog_pb2_grpc.CatalogStub
    events: events_pb2_grpc.EventsStub


async def connect(address: str) -> GatewayClient:
    channel = grpc.aio.insecure_channel(address)
    await asyncio.wait_for(channel.channel_ready(), 20)
    return GatewayClient(address, channel, catalog_pb2_grpc.CatalogStub(channel), events_pb2_grpc.EventsStub(channel))


# Drops with deleteData delete a managed table's files: tests keep theirs out of /user/hive/warehouse.
TEST_WAREHOUSE = tempfile.mkdtemp(prefix="msgw-test-warehouse-")
atexit.register(shutil.rmtree, TEST_WAREHOUSE, True)
# The warehouse of the test running now, a directory of its own under TEST_WAREHOUSE (own_warehouse): a
# table's default directory one test leaves behind (db.db/t2) must not be in the way of another's.
_test_warehouse = TEST_WAREHOUSE


@pytest.fixture(autouse=True)
def own_warehouse() -> Iterator[None]:
    global _test_warehouse
    _test_warehouse = tempfile.mkdtemp(dir=TEST_WAREHOUSE)
    try:
        yield
    finally:
        _test_warehouse = TEST_WAREHOUSE


def gateway_settings(dsn: str, **conf: str) -> Settings:
    return load_settings(environ={}, overrides={"metastore.gateway.dsn": dsn, "metastore.gateway.port": 0,
                                                "hive.metastore.port": 0,
                                                "hive.metastore.warehouse.dir": _test_warehouse,
                                                "metastore.gateway.shutdown.grace": "2s", **conf})


@contextlib.asynccontextmanager
async def running_gateway(dsn: str, **conf: str) -> AsyncIterator[Gateway]:
    """A real gateway in this process (gateway_settings(dsn, **conf)), started, and stopped on exit."""
    gw = Gateway(gateway_settings(dsn, **conf))
    await gw.start()
    try:
        yield gw
    finally:
        await gw.stop()


@pytest.fixture
async def gateway(pg_dsn: str) -> AsyncIterator[GatewayClient]:
    """A real gateway in this process, on 127.0.0.1 with a free port, on a fresh database."""
    async with running_gateway(pg_dsn) as gw:
        client = await connect(f"127.0.0.1:{gw.port}")
        try:
            yield client
        finally:
            await client.channel.close()


class GatewayProcess(gateway_process.GatewayProcess):
    """`metastore-gateway serve ARGS` as its own OS process (what a second gateway host would run); its
    output in a temporary log file, `output()` (also after stop())."""

    def __init__(self, *args: str) -> None:
        super().__init__(args)


async def wait_applied(gw: Gateway, timeout_s: float = 10.0) -> None:
    """Wait until the gateway's poller has applied every event committed so far."""
    assert gw.poller is not None
    from store import events

    head = await gw.database.read(events.current_event_id)
    async with asyncio.timeout(timeout_s):
        while gw.poller.position < head:
            await asyncio.sleep(0.01)


async def behind_a_held_write(gw: Gateway, write: Callable[[asyncpg.Connection], Awaitable[Any]],
                              call: Callable[[], Awaitable[T]], timeout_s: float = 20.0) -> asyncio.Future[T]:
    """`call()` made while another writer holds rows: `write(conn)` runs in a transaction of the
    gateway's database (its Outcome's events appended, as any write's), which stays open, its rows
    locked, until PostgreSQL reports a session waiting on a lock (the call, behind it); then the write
    commits. The call's future, to await."""
    written, release = asyncio.Event(), asyncio.Event()

    async def held(conn: asyncpg.Connection) -> Any:
        outcome = await write(conn)
        written.set()
        await release.wait()
        return outcome

    writer = asyncio.create_task(gw.database.transact(held))
    try:
        async with asyncio.timeout(timeout_s):
            while not written.is_set():
                if writer.done():
                    await writer  # (it failed: say why)
                await asyncio.sleep(0.005)
            called = asyncio.ensure_future(call())
            while not await gw.database.pool.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'"):
                await asyncio.sleep(0.005)
    finally:
        release.set()
        await writer
    return called
