"""Permanent functions over Thrift (gateway/thrift/function_methods.py, store/functions.py): stored in
PostgreSQL and read from it by every gateway, logged as Hive logs them, dropped with their database only
by cascade (over either protocol), case-insensitive, refused whole when malformed, and safe against
concurrent writers. Hive 2.3's answers call by call are compared in tests/e2e/test_thrift_differential.py
(FUNCTION_STEPS); what Spark SQL's CREATE / SHOW / DESCRIBE / DROP FUNCTION do with them, in
tests/spark/test_hive_thrift.py."""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator

import grpc
import pytest
from thriftpy2.thrift import TException

from gateway.app import Gateway
from gateway.thrift.idl import hms
from protos.metastore.v1 import catalog_pb2 as pb
from tests.conftest import connect, running_gateway
from tests.thrift_client import ThriftClient, client_with_database

JAR = 1
# The tests read the log's messages as the gateway writes them (Hive's form: test_thrift_hive_json_events.py).
GATEWAY_EVENTS = {"hive.metastore.event.message.factory": "metastore-gateway-json-1"}


def _function(name: str, db: str = "db", cls: str | None = "com.example.udf.Upper", **fields: Any) -> Any:
    return hms.Function(**{"functionName": name, "dbName": db, "className": cls, "ownerName": "alice",
                           "ownerType": 1, "createTime": 0, "functionType": 1,
                           "resourceUris": [hms.ResourceUri(resourceType=JAR, uri="file:///opt/udfs/u.jar")],
                           **fields})


@pytest.fixture
async def env(pg_dsn: str) -> AsyncIterator[tuple[Gateway, ThriftClient]]:
    async with running_gateway(pg_dsn, **GATEWAY_EVENTS) as gw, client_with_database(gw.thrift_port) as client:
        yield gw, client


async def _refused(client: ThriftClient, method: str, *args: Any) -> TException:
    with pytest.raises(TException) as refused:
        await client(method, *args)
    return refused.value


async def _events_since(client: ThriftClient, last: int) -> list[tuple[str, str, dict[str, Any]]]:
    got = await client("get_next_notification", hms.NotificationEventRequest(lastEvent=last, maxEvents=100))
    return [(e.eventType, e.dbName, json.loads(e.message)) for e in got.events]


async def test_a_function_written_on_one_gateway_is_read_on_another_and_logged(
        env: tuple[Gateway, ThriftClient], pg_dsn: str) -> None:
    """Create, alter (a rename), drop: every gateway reads each step at once (functions are not cached),
    and the log holds CREATE_FUNCTION / DROP_FUNCTION as Hive's does, an alter as a drop and a create; a
    second gateway's poller passes over them. An alter that changes nothing logs nothing."""
    _, client = env
    async with running_gateway(pg_dsn) as other_gw:
        other = ThriftClient(other_gw.thrift_port)
        try:
            start = (await client("get_current_notificationEventId")).eventId
            await client("create_function", _function("Shout"))
            made = await other("get_function", "DB", "SHOUT")
            assert (made.functionName, made.dbName, made.className, made.ownerName) == (
                "shout", "db", "com.example.udf.Upper", "alice")
            assert made.createTime > 0  # the metastore stamps it, as Hive's does
            assert await other("get_functions", "db", "sh*") == ["shout"]
            assert (await other("get_all_functions")).functions == [made]

            await client("alter_function", "db", "shout", _function("yell", cls="com.example.udf.Yell",
                                                                     resourceUris=[]))
            moved = await other("get_function", "db", "yell")
            assert (moved.className, moved.resourceUris, moved.createTime) == (
                "com.example.udf.Yell", [], made.createTime)
            assert type(await _refused(other, "get_function", "db", "shout")).__name__ == "NoSuchObjectException"
            head = (await client("get_current_notificationEventId")).eventId
            await client("alter_function", "db", "yell", _function("yell", cls="com.example.udf.Yell",
                                                                    resourceUris=[]))
            assert (await client("get_current_notificationEventId")).eventId == head  # nothing changed

            await other("drop_function", "db", "yell")
            assert await client("get_functions", "db", "*") == []
            logged = await _events_since(client, start)
            assert [(kind, db, m["function"]["name"]) for kind, db, m in logged] == [
                ("CREATE_FUNCTION", "db", "shout"), ("DROP_FUNCTION", "db", "shout"), ("CREATE_FUNCTION", "db", "yell"),
                ("DROP_FUNCTION", "db", "yell")]
            assert logged[2][2]["function"]["class_name"] == "com.example.udf.Yell"

            last = (await client("get_current_notificationEventId")).eventId
            poller = other_gw.poller
            assert poller is not None
            for _ in range(200):  # the other gateway's poller applied the function events and moved on
                if poller.position >= last:
                    break
                await asyncio.sleep(0.02)
            assert poller.position >= last
        finally:
            other.close()


async def test_a_database_with_functions_is_dropped_only_with_cascade_over_either_protocol(
        env: tuple[Gateway, ThriftClient]) -> None:
    gw, client = env
    await client("create_function", _function("a"))
    await client("create_function", _function("b"))
    refused = await _refused(client, "drop_database", "db", True, False)
    assert type(refused).__name__ == "InvalidOperationException" and "2 function(s) (a, b)" in str(refused)
    grpc_client = await connect(f"127.0.0.1:{gw.port}")
    try:
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await grpc_client.catalog.DropDatabase(pb.DropDatabaseRequest(name="db"))
        assert failed.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "function(s)" in (failed.value.details() or "")
        assert await client("get_functions", "db", "*") == ["a", "b"]  # the refusals dropped nothing
        start = (await client("get_current_notificationEventId")).eventId
        await grpc_client.catalog.DropDatabase(pb.DropDatabaseRequest(name="db", cascade=True))
    finally:
        await grpc_client.channel.close()
    assert (await client("get_all_functions")).functions == []
    assert [(kind, m.get("function", {}).get("name")) for kind, _, m in await _events_since(client, start)] == [
        ("DROP_FUNCTION", "a"), ("DROP_FUNCTION", "b"), ("DROP_DATABASE", None)]
    # A database of the same name later starts without them.
    await client("create_database", hms.Database(name="db", description="", parameters={}))
    assert await client("get_functions", "db", "*") == []


async def test_malformed_functions_are_refused_with_a_declared_exception_and_store_nothing(
        env: tuple[Gateway, ThriftClient]) -> None:
    _, client = env
    cases = {
        "no class": _function("f", cls=None),  # a null one: Hive stores '' as sent (Spark's AS '')
        "bad name": _function("to upper"),
        "long name": _function("f" * 129),
        "unknown function type": _function("f", functionType=7),
        "unknown owner type": _function("f", ownerType=9),
        "unknown resource type": _function("f", resourceUris=[hms.ResourceUri(resourceType=9, uri="x.jar")]),
        "resource without a URI": _function("f", resourceUris=[hms.ResourceUri(resourceType=JAR, uri="")]),
        "too many resources": _function("f", resourceUris=[hms.ResourceUri(resourceType=JAR, uri=f"{i}.jar")
                                                           for i in range(1001)]),
    }
    for case, function in cases.items():
        refused = await _refused(client, "create_function", function)
        assert type(refused).__name__ == "InvalidObjectException", (case, refused)
        assert len(str(refused)) <= 1100, case
    missing_db = await _refused(client, "create_function", _function("f", db="nope"))
    assert type(missing_db).__name__ == "NoSuchObjectException" and "database nope" in str(missing_db)
    await client("create_function", _function("f"))
    refused = await _refused(client, "alter_function", "db", "f", _function("f", cls=None))
    assert type(refused).__name__ == "InvalidOperationException"
    assert (await client("get_function", "db", "f")).className == "com.example.udf.Upper"
    assert await client("get_functions", "db", "*") == ["f"]


async def test_concurrent_creates_of_one_name_store_one_and_a_racing_cascade_leaves_no_orphan(
        env: tuple[Gateway, ThriftClient]) -> None:
    """Eight creates of one name at once: one wins, the others answer AlreadyExistsException. Creates
    racing a DROP DATABASE ... CASCADE either land before it (and go with the database) or find no
    database: never a function left behind in a database that is gone, never an internal error."""
    gw, client = env
    clients = [ThriftClient(gw.thrift_port) for _ in range(8)]
    try:
        outcomes = await asyncio.gather(*(c("create_function", _function("same", cls=f"c.C{i}"))
                                          for i, c in enumerate(clients)), return_exceptions=True)
        assert sum(o is None for o in outcomes) == 1
        assert {type(o).__name__ for o in outcomes if o is not None} == {"AlreadyExistsException"}

        for round_ in range(20):
            await client("create_database", hms.Database(name=f"race{round_}", description="", parameters={}))
            creates = [c("create_function", _function(f"f{i}", db=f"race{round_}")) for i, c in enumerate(clients[1:])]
            raced = await asyncio.gather(clients[0]("drop_database", f"race{round_}", True, True), *creates,
                                         return_exceptions=True)
            assert raced[0] is None
            assert {type(o).__name__ for o in raced[1:] if o is not None} <= {"NoSuchObjectException"}
        assert (await client("get_all_functions")).functions == [await client("get_function", "db", "same")]
    finally:
        for c in clients:
            c.close()
