"""SIGTERM under load: `metastore-gateway serve` as its own process, busy on both protocols, stops
within its documented bound with status 0, every call either answered or refused cleanly, and leaves
the database as a stop must: no half-done write, no wait registered, no advisory lock held; the next
gateway on it serves.

The load: gRPC reads and write txns (each adds three partitions in one call, then commits), Thrift
reads and writes, a lock request WAITING behind another txn's exclusive lock (its client polling
CheckLock), an add waiting for the open txn that created the same partition (registered in
txn_waits), a Thrift client that sent half a message and went silent, and an open gRPC stream (the
reflection service's, the gateway's only streaming method).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable

import asyncpg
import grpc
import psutil
import pytest
import thriftpy2.transport
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from gateway.app import migrate_database
from gateway.embedded_pg import UNSAFE_FAST_SETTINGS, EmbeddedPostgres
from gateway.thrift.idl import hms
from gateway.warehouse import ACID_METADATA_FILE
from pipeline.acid import base_dir_name
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import table
from tests.conftest import TEST_WAREHOUSE, GatewayProcess, connect, running_gateway
from tests.thrift_client import ThriftClient

GRACE_S = 2.0
# README "Operating": in-flight calls get the grace, then the rest of the stop (background tasks,
# pool, an idle client's GOAWAY) takes seconds. Asserted with margin for a loaded 2-core machine.
STOP_BOUND_S = GRACE_S + 8.0
# A call's end as a stop may give it: answered, or refused / cut off so the client knows to retry.
CLEAN = {grpc.StatusCode.UNAVAILABLE}


@dataclass
class Outcomes:
    """What each load task saw: answers, and failures by kind."""
    ok: int = 0
    failures: dict[str, int] = field(default_factory=dict)

    def failed(self, kind: str) -> None:
        self.failures[kind] = self.failures.get(kind, 0) + 1


def _half_thrift_call() -> bytes:
    name = b"get_all_databases"
    return (-2147418111).to_bytes(4, "big", signed=True) + len(name).to_bytes(4, "big") + name[:5]


async def _grpc_loop(outcomes: Outcomes, call: Callable[[], Awaitable[None]]) -> None:
    """Call until the gateway refuses; a refusal that is not clean is recorded by its code."""
    while True:
        try:
            await call()
            outcomes.ok += 1
        except grpc.aio.AioRpcError as exc:
            outcomes.failed(exc.code().name)
            if exc.code() in CLEAN:
                return
            raise


async def _thrift_loop(port: int, outcomes: Outcomes, names: itertools.count[int]) -> None:
    client = ThriftClient(port)
    try:
        while True:
            try:
                await client("get_all_databases")
                await client("create_database", hms.Database(name=f"thrift_{next(names)}", description="",
                                                             parameters={}))
                outcomes.ok += 1
            except (thriftpy2.transport.TTransportException, ConnectionError, EOFError) as exc:
                outcomes.failed(type(exc).__name__)
                return
    finally:
        client.close()


async def _open_and_add(txns: transactions_pb2_grpc.TransactionsStub, catalog: catalog_pb2_grpc.CatalogStub,
                        value: str) -> int:
    [txn_id] = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="load", hostname="h"))).txn_ids
    await catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", txn_id=txn_id, partitions=[pb.Partition(values=[value])]))
    return int(txn_id)


async def test_sigterm_under_load_stops_in_bound_and_leaves_no_partial_state(pg_dsn: str) -> None:
    args = ("--dsn", pg_dsn, "--conf", f"metastore.gateway.shutdown.grace={GRACE_S:g}s",
            "--conf", f"hive.metastore.warehouse.dir={TEST_WAREHOUSE}")
    proc = GatewayProcess(*args, "--log-level", "INFO")
    try:
        address = await asyncio.to_thread(proc.wait_serving)
        thrift_port = int(proc.thrift_address.rsplit(":", 1)[1])
        client = await connect(address)
        catalog = client.catalog
        txns = transactions_pb2_grpc.TransactionsStub(client.channel)
        locks = locks_pb2_grpc.LocksStub(client.channel)
        await catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=(("p", "string"),),
                                                                    transactional=True)))

        # An add waiting for its partition's creator, an open txn.
        await _open_and_add(txns, catalog, "contended")
        [waiter] = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="load", hostname="h"))).txn_ids
        waiting_add = asyncio.ensure_future(catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name="db", table_name="t", txn_id=waiter, partitions=[pb.Partition(values=["contended"])])))

        # A lock WAITING behind another txn's exclusive one, its client polling.
        [holder, lock_waiter] = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=2, user="load",
                                                                         hostname="h"))).txn_ids
        component = lpb.LockComponent(db_name="db", table_name="t", type=lpb.EXCLUSIVE,
                                      operation=lpb.DATA_OPERATION_UPDATE)
        held = await locks.Lock(lpb.LockRequest(components=[component], txn_id=holder, user="load", hostname="h"))
        assert held.state == lpb.ACQUIRED
        waiting = await locks.Lock(lpb.LockRequest(components=[component], txn_id=lock_waiter, user="load",
                                                   hostname="h"))
        assert waiting.state == lpb.WAITING

        async def check_lock() -> None:
            assert (await locks.CheckLock(lpb.CheckLockRequest(lock_id=waiting.lock_id))).state == lpb.WAITING
            await asyncio.sleep(0.05)

        writes = itertools.count()
        committed: list[str] = []

        async def write_txn() -> None:
            [txn_id] = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="load", hostname="h"))).txn_ids
            prefix = f"w{next(writes)}"
            await catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name="db", table_name="t", txn_id=txn_id,
                partitions=[pb.Partition(values=[f"{prefix}_{i}"]) for i in range(3)]))
            await txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn_id))
            committed.append(prefix)

        async def read() -> None:
            await catalog.GetDatabase(pb.GetDatabaseRequest(name="db"))
            await txns.GetOpenTxns(tpb.GetOpenTxnsRequest())

        # An open stream, and a Thrift client that sent half a message and went silent.
        reflection = reflection_pb2_grpc.ServerReflectionStub(client.channel).ServerReflectionInfo()
        await reflection.write(reflection_pb2.ServerReflectionRequest(list_services=""))
        await reflection.read()
        silent_reader, silent_writer = await asyncio.open_connection("127.0.0.1", thrift_port)
        silent_writer.write(_half_thrift_call())
        await silent_writer.drain()

        grpc_outcomes = {name: Outcomes() for name in ("write", "read", "check_lock")}
        thrift_outcomes = [Outcomes() for _ in range(2)]
        thrift_names = itertools.count()
        load = [asyncio.ensure_future(_grpc_loop(grpc_outcomes["write"], write_txn)) for _ in range(3)]
        load += [asyncio.ensure_future(_grpc_loop(grpc_outcomes["read"], read)) for _ in range(3)]
        load.append(asyncio.ensure_future(_grpc_loop(grpc_outcomes["check_lock"], check_lock)))
        load += [asyncio.ensure_future(_thrift_loop(thrift_port, o, thrift_names)) for o in thrift_outcomes]

        async with asyncio.timeout(20):  # the load is under way, the add registered as waiting
            while len(committed) < 3 or sum(o.ok for o in thrift_outcomes) < 2:
                await asyncio.sleep(0.05)
            conn = await asyncpg.connect(pg_dsn)
            try:
                while not await conn.fetchval("SELECT count(*) FROM txn_waits"):
                    await asyncio.sleep(0.05)
            finally:
                await conn.close()
        assert not waiting_add.done()

        started = time.monotonic()
        exit_code = await asyncio.to_thread(proc.stop, STOP_BOUND_S + 20)
        took = time.monotonic() - started
        assert exit_code == 0, proc.output()[-3000:]
        assert took < STOP_BOUND_S, f"the stop took {took:.1f}s (bound {STOP_BOUND_S:g}s):\n{proc.output()[-3000:]}"

        # No call hung: each ended once the process was gone, answered or refused cleanly.
        async with asyncio.timeout(10):
            results = await asyncio.gather(*load, return_exceptions=True)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await waiting_add
            assert refused.value.code() in CLEAN, refused.value
            with pytest.raises(grpc.aio.AioRpcError) as cut:
                await reflection.read()
            assert cut.value.code() in CLEAN, cut.value
            assert await silent_reader.read() == b""  # closed by the gateway
        assert not [r for r in results if isinstance(r, BaseException)], (results, grpc_outcomes, thrift_outcomes)
        for name, outcomes in grpc_outcomes.items():
            assert outcomes.ok > 0 and set(outcomes.failures) <= {c.name for c in CLEAN}, (name, outcomes)
        silent_writer.close()
        await client.channel.close()

        # The database: whole writes only, no registered wait, no advisory lock.
        conn = await asyncpg.connect(pg_dsn)
        try:
            names = [r["part_name"] for r in await conn.fetch(
                "SELECT part_name FROM partitions WHERE part_name LIKE 'p=w%' "
                "AND table_id IN (SELECT table_id FROM tbls WHERE db_name = 'db' AND tbl_name = 't')")]
            by_write: dict[str, int] = {}
            for name in names:
                prefix = name.removeprefix("p=").rsplit("_", 1)[0]
                by_write[prefix] = by_write.get(prefix, 0) + 1
            assert all(n == 3 for n in by_write.values()), by_write
            assert set(committed) <= set(by_write)
            assert await conn.fetchval("SELECT count(*) FROM txn_waits") == 0, \
                await conn.fetch("SELECT * FROM txn_waits")
            assert await conn.fetchval("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") == 0
        finally:
            await conn.close()
    finally:
        proc.stop()

    # The next gateway on the same database serves.
    again = GatewayProcess(*args)
    try:
        address = await asyncio.to_thread(again.wait_serving)
        async with grpc.aio.insecure_channel(address) as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            got = await catalog_pb2_grpc.CatalogStub(channel).GetDatabase(pb.GetDatabaseRequest(name="db"), timeout=5)
            assert got.database.name == "db"
    finally:
        assert again.stop() == 0


async def test_sigterm_during_a_file_operation_that_hangs_still_exits_in_bound(pg_dsn: str, tmp_path: Path) -> None:
    """A file operation that never returns (a hung mount; here a FIFO where a truncate writes its base's
    marker, so open() waits for a reader that never comes) holds its worker thread forever: the stop
    abandons it, the process still exits in bound with status 0, and the truncate's database
    transaction, open around the file operation, is rolled back."""
    tmp_path.chmod(0o755)
    warehouse = tmp_path / "warehouse"
    proc = GatewayProcess("--dsn", pg_dsn, "--conf", f"metastore.gateway.shutdown.grace={GRACE_S:g}s",
                          "--conf", f"hive.metastore.warehouse.dir={warehouse}")
    try:
        address = await asyncio.to_thread(proc.wait_serving)
        client = await connect(address)
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "u", keys=(), transactional=True)))
        await client.channel.close()
        thrift = ThriftClient(int(proc.thrift_address.rsplit(":", 1)[1]))
        (txn,) = (await thrift("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
        (alloc,) = (await thrift("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="db", tableName="u", txnIds=[txn]))).txnToWriteIds
        location = Path((await thrift("get_table", "db", "u")).sd.location.removeprefix("file:"))
        base = location / base_dir_name(alloc.writeId)
        base.mkdir(parents=True)
        os.mkfifo(base / ACID_METADATA_FILE)
        truncating = asyncio.ensure_future(thrift("truncate_table_req", hms.TruncateTableRequest(
            dbName="db", tableName="u", writeId=alloc.writeId,
            environmentContext=hms.EnvironmentContext(properties={"truncateSkipDataDeletion": "true"}))))
        conn = await asyncpg.connect(pg_dsn)
        try:
            async with asyncio.timeout(20):  # the truncate's transaction is open, its file operation hung
                while not await conn.fetchval("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                                              "current_database() AND state LIKE 'idle in transaction%'"):
                    await asyncio.sleep(0.05)

            started = time.monotonic()
            exit_code = await asyncio.to_thread(proc.stop, STOP_BOUND_S + 20)
            took = time.monotonic() - started
            assert exit_code == 0 and took < STOP_BOUND_S, (exit_code, took, proc.output()[-3000:])
            with pytest.raises((thriftpy2.transport.TTransportException, ConnectionError, EOFError)):
                await asyncio.wait_for(truncating, 10)
            thrift.close()
            assert await conn.fetchval("SELECT count(*) FROM txns WHERE txn_id = $1 AND state = 'o'", txn) == 1
            assert await conn.fetchval("SELECT count(*) FROM notification_log WHERE tbl_name = 'u' AND write_id = $1",
                                       alloc.writeId) == 0  # nothing of the truncate was written
        finally:
            await conn.close()
    finally:
        proc.stop()
        with contextlib.suppress(OSError):  # let a thread still blocked on the FIFO (a failed run) go
            os.close(os.open(base / ACID_METADATA_FILE, os.O_RDONLY | os.O_NONBLOCK))


async def test_calls_arriving_as_the_stop_begins_are_refused_unavailable_not_cancelled(pg_dsn: str) -> None:
    """grpc core answers CANCELLED to a call that reached the server but no handler yet when the server
    stops (grpc/grpc#41785), a status clients do not retry though nothing of the call ran. The stop
    first refuses, UNAVAILABLE, what reaches a handler, until calls stop coming: clients that keep
    calling through the stop all see UNAVAILABLE."""
    async with running_gateway(pg_dsn) as gw:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{gw.port}")
        catalog = catalog_pb2_grpc.CatalogStub(channel)
        codes: list[grpc.StatusCode] = []

        async def calls() -> None:
            while True:
                try:
                    await catalog.GetDatabase(pb.GetDatabaseRequest(name="default"))
                except grpc.aio.AioRpcError as exc:
                    codes.append(exc.code())
                    return

        load = [asyncio.ensure_future(calls()) for _ in range(32)]
        await asyncio.sleep(0.5)
        await gw.stop()
        async with asyncio.timeout(10):
            await asyncio.gather(*load)
        await channel.close()
    assert codes and set(codes) == {grpc.StatusCode.UNAVAILABLE}, codes


async def test_a_stop_while_the_database_is_frozen_ends_in_bound(tmp_path: Path) -> None:
    """PostgreSQL frozen (SIGSTOP: a paused VM, a network cut without a reset) with calls under way on both
    protocols and more waiting for a connection: the stop cuts them at the grace's end, but their
    connections' clean-up (asyncpg's cancel request, the release's rollback) waited on the frozen server,
    10 s and more past the grace (found by an ops probe: 27 s with the default 10 s grace). Once the
    probe says the database does not answer, the stop drops the pool's connections instead."""
    tmp_path.chmod(0o755)
    server = EmbeddedPostgres(tmp_path / "pg", settings=dict(UNSAFE_FAST_SETTINGS))
    dsn = server.start()
    frozen: list[psutil.Process] = []
    try:
        await migrate_database(dsn)
        async with running_gateway(dsn, **{"metastore.gateway.db.check.interval": "200ms"}) as gw:
            client = await connect(f"127.0.0.1:{gw.port}")
            thrift = ThriftClient(gw.thrift_port)
            postmaster = psutil.Process(server._postmaster_pid() or 0)
            frozen = [postmaster, *postmaster.children()]
            for process in frozen:
                process.suspend()
            calls = [asyncio.ensure_future(client.catalog.CreateDatabase(
                         pb.CreateDatabaseRequest(database=pb.Database(name=f"d{i}")), timeout=120))
                     for i in range(12)]  # more than the pool's 10 connections: some wait for one
            calls.append(asyncio.ensure_future(thrift("get_all_databases")))
            async with asyncio.timeout(15):
                while gw.probe is None or gw.probe.up:  # the probe's own time-out (5 s) tells
                    await asyncio.sleep(0.1)
            started = time.monotonic()
            await gw.stop()
            took = time.monotonic() - started
            for call in calls:
                call.cancel()  # (they ended, refused or cut, with the stop; the thrift one in its thread)
            await asyncio.gather(*calls, return_exceptions=True)
            thrift.close()
            await client.channel.close()
        assert took < STOP_BOUND_S, f"the stop took {took:.1f}s with the database frozen"
    finally:
        for process in frozen:
            with contextlib.suppress(psutil.Error):
                process.resume()
        server.stop()
