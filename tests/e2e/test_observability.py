"""Per-call metrics and logs on both protocols, the gauges, reflection v1, and INTERNAL with its
request id: a real gateway (real PostgreSQL, gRPC and Thrift on loopback), scraped over HTTP."""

from __future__ import annotations

import asyncio
import logging
import re
import urllib.request
from typing import AsyncIterator

import asyncpg
import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2
from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
from hmsclient.genthrift.hive_metastore import ttypes as ht

from gateway.app import Gateway, startup_line
from gateway.interceptors import CallObserver, ObservingInterceptor
from gateway.metrics import CallStats
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import table
from tests.conftest import PgCluster, connect, gateway_settings


@pytest.fixture
async def gw(pg_dsn: str) -> AsyncIterator[Gateway]:
    gateway = Gateway(gateway_settings(pg_dsn, **{"metastore.gateway.metrics.port": "0",
                                                  "metastore.gateway.access.log": "true",
                                                  "metastore.gateway.db.check.interval": "100ms"}))
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        return str(reply.read().decode())


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample; 0 when it is absent."""
    for line in text.splitlines():
        if not line.startswith(name + ("{" if labels else " ")):
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0])) if labels else {}
        if all(got.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def test_calls_counted_by_protocol_method_and_status(gw: Gateway, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="metastore.access")
    client = await connect(f"127.0.0.1:{gw.port}")
    await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="sales")))
    for _ in range(3):
        await client.catalog.GetDatabase(pb.GetDatabaseRequest(name="sales"))
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await client.catalog.GetDatabase(pb.GetDatabaseRequest(name="nosuch"))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    txns = transactions_pb2_grpc.TransactionsStub(client.channel)
    await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=2, user="etl", hostname="h"))
    assert gw.housekeeper is not None
    store = gw.housekeeper.txn_store  # concurrent calls in this process: one group-commit batch each
    opened = await asyncio.gather(*(store.open_txns(1, user="etl", host="h", agent_info="") for _ in range(8)))
    await asyncio.gather(*(store.commit(ids[0]) for ids, _ in opened))
    locks = locks_pb2_grpc.LocksStub(client.channel)
    held = await locks.Lock(lpb.LockRequest(components=[lpb.LockComponent(
        db_name="sales", type=lpb.EXCLUSIVE, operation=lpb.DATA_OPERATION_NO_TXN)], user="alice", hostname="h"))
    await locks.Lock(lpb.LockRequest(components=[lpb.LockComponent(
        db_name="sales", type=lpb.SHARED_READ, operation=lpb.DATA_OPERATION_NO_TXN)], user="bob", hostname="h"))
    await client.catalog.CreateTable(pb.CreateTableRequest(table=table("sales", "acid", transactional=True)))
    failed = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=2, user="etl", hostname="h"))).txn_ids
    await txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(txn_ids=[failed[0]], db_name="sales",
                                                                      table_name="acid"))
    await txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=list(failed)))
    hms = hmsclient.HMSClient(host="127.0.0.1", port=gw.thrift_port)
    hms.open()
    try:
        assert await asyncio.to_thread(ThriftHiveMetastore.Client.get_all_databases, hms) == ["default", "sales"]
        with pytest.raises(ht.NoSuchObjectException):
            await asyncio.to_thread(ThriftHiveMetastore.Client.get_database, hms, "nosuch")
    finally:
        hms.close()
    assert gw.housekeeper is not None and gw.probe is not None
    await gw.housekeeper.txn_store.refresh_open_count()  # what its loop does every second, now
    assert await gw.probe.check_once()  # what it does every 100 ms, now

    text = await asyncio.to_thread(scrape, gw.metrics_port)
    get_db = "/metastore.v1.Catalog/GetDatabase"
    assert sample(text, "metastore_rpc_calls_total", protocol="grpc", method=get_db, code="OK") == 3
    assert sample(text, "metastore_rpc_calls_total", protocol="grpc", method=get_db, code="NOT_FOUND") == 1
    assert sample(text, "metastore_rpc_duration_seconds_count", protocol="grpc", method=get_db) == 4
    assert sample(text, "metastore_rpc_duration_seconds_bucket", protocol="grpc", method=get_db, le="+Inf") == 4
    assert 0 < sample(text, "metastore_rpc_duration_seconds_sum", protocol="grpc", method=get_db) < 10
    assert sample(text, "metastore_rpc_calls_total", protocol="thrift", method="get_all_databases", code="OK") == 1
    assert sample(text, "metastore_rpc_calls_total", protocol="thrift", method="get_database",
                  code="NoSuchObjectException") == 1
    assert sample(text, "metastore_open_txns") == 2
    for call in ("OpenTxns", "CommitTxn"):
        assert sample(text, "metastore_txn_group_commit_batches_total", call=call) == 1
        assert sample(text, "metastore_txn_group_commit_calls_total", call=call) == 8
    assert sample(text, "metastore_locks", state="held") == 1 and sample(text, "metastore_locks", state="waiting") == 1
    assert sample(text, "metastore_aborted_txns") == 2 and sample(text, "metastore_aborted_write_ids") == 1
    assert 0 < sample(text, "metastore_oldest_aborted_txn_age_seconds") < 60
    assert sample(text, "metastore_db_pool_max") == gw.settings.pool_max_size
    assert sample(text, "metastore_db_pool_connections", state="idle") >= 1
    assert sample(text, "metastore_database_up") == 1 and sample(text, "metastore_ready") == 1
    assert sample(text, "process_resident_memory_bytes") > 10_000_000
    assert "metastore_cache_hits" in text and "metastore_poller_lag_ms" in text

    lines = [r.getMessage() for r in caplog.records if r.name == "metastore.access"]
    missing_line = next(line for line in lines if line.startswith(f"grpc {get_db} NOT_FOUND"))
    assert re.fullmatch(rf"grpc {get_db} NOT_FOUND \d+\.\d\dms peer=ipv4:127\.0\.0\.1:\d+ user=-", missing_line)
    assert any(line.startswith("grpc /metastore.v1.Transactions/OpenTxns OK") and line.endswith("user=etl")
               for line in lines)
    assert any(line.startswith("thrift get_database NoSuchObjectException") and "peer=('127.0.0.1'" in line
               for line in lines)
    await locks.Unlock(lpb.UnlockRequest(lock_id=held.lock_id))
    await client.channel.close()


async def test_startup_line_names_every_address(gw: Gateway) -> None:
    line = startup_line(gw)
    assert f"serving on 127.0.0.1:{gw.port} (database: " in line
    assert f"Hive Thrift API on 127.0.0.1:{gw.thrift_port}" in line
    assert f"metrics on http://127.0.0.1:{gw.metrics_port}/metrics" in line
    assert "NOT_SERVING" not in line  # ready: start() waited for the cache
    assert ":***@" in line or "@" not in line.split("database: ")[1]  # no password


async def test_reflection_v1_and_v1alpha_list_the_services(gw: Gateway) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{gw.port}") as channel:
        for version in ("v1", "v1alpha"):
            call = channel.stream_stream(
                f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
                request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)
            stream = call(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
            replies = [reply async for reply in stream]
            names = {s.name for s in replies[0].list_services_response.service}
            assert {"metastore.v1.Catalog", "metastore.v1.Admin", "grpc.health.v1.Health",
                    "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"} <= names
            described = call(iter([reflection_pb2.ServerReflectionRequest(
                file_containing_symbol="metastore.v1.Catalog")]))
            assert [r.file_descriptor_response.file_descriptor_proto async for r in described][0]


async def test_an_unmapped_error_is_internal_with_a_request_id_in_reply_and_log(
        caplog: pytest.LogCaptureFixture) -> None:
    """A handler outside gateway/errors.py's mapping (a bug) still answers INTERNAL with a request id,
    the same id the log's traceback carries, and the call is counted as INTERNAL."""
    calls = CallStats()
    server = grpc.aio.server(interceptors=[ObservingInterceptor(CallObserver(calls, log_access=False))])

    async def broken(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        raise KeyError("a bug")

    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "test.Broken", {"Call": grpc.unary_unary_rpc_method_handler(broken)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await channel.unary_unary("/test.Broken/Call")(b"")
    finally:
        await server.stop(None)
    assert info.value.code() == grpc.StatusCode.INTERNAL
    request_id = re.search(r"request id (\w+)", info.value.details() or "")
    assert request_id, info.value.details()
    logged = [r for r in caplog.records if request_id.group(1) in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is not None and "/test.Broken/Call" in logged[0].getMessage()
    assert calls.count("grpc", "/test.Broken/Call", "INTERNAL") == 1


async def test_stop_closes_the_metrics_port(pg_dsn: str) -> None:
    gateway = Gateway(gateway_settings(pg_dsn, **{"metastore.gateway.metrics.port": "0"}))
    await gateway.start()
    port = gateway.metrics_port
    assert "metastore_ready 1.0" in await asyncio.to_thread(scrape, port)
    await gateway.stop()
    with pytest.raises(OSError):
        await asyncio.to_thread(scrape, port)


async def test_the_poller_failing_to_read_the_log_shows_in_a_metric(pg_cluster: PgCluster, gw: Gateway) -> None:
    """The poller's LISTEN connection lost while the database takes no new connections (max_connections
    taken by others, ALLOW_CONNECTIONS false): the cache answers what it held, and the lag gauges, which
    move only when events are applied, read 0 all the while. metastore_poller_failing_seconds says how
    long the poller has failed to read the log, and is 0 again once it reads it."""
    assert gw.poller is not None
    async with asyncio.timeout(10):
        while gw.poller._listener is None:  # the poller opens it once the cache is bootstrapped
            await asyncio.sleep(0.01)
    database = gw.dsn.split("?", 1)[0].rsplit("/", 1)[1]
    admin = await asyncpg.connect(pg_cluster.dsn("postgres"))
    try:
        assert sample(await asyncio.to_thread(scrape, gw.metrics_port), "metastore_poller_failing_seconds") == 0
        await admin.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS false")
        try:
            await admin.execute("SELECT pg_terminate_backend($1)", gw.poller._listener.get_server_pid())
            await asyncio.sleep(2.5)
            failing = sample(await asyncio.to_thread(scrape, gw.metrics_port), "metastore_poller_failing_seconds")
            assert 1.5 <= failing <= 10, failing
        finally:
            await admin.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS true")
        async with asyncio.timeout(10):
            while sample(await asyncio.to_thread(scrape, gw.metrics_port), "metastore_poller_failing_seconds"):
                await asyncio.sleep(0.1)
    finally:
        await admin.close()
