"""Every bad input answers the status DESIGN.md names, with a message, and changes nothing."""

from __future__ import annotations

from typing import Any, AsyncIterator

import grpc
import pytest

from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import events_pb2 as epb
from tests.builders import partitions, table
from tests.conftest import GatewayClient

C = grpc.StatusCode


async def _setup(client: GatewayClient) -> int:
    await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    created = await client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t")))
    await client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "flat", keys=())))
    await client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", partitions=partitions([("2024-01-01", "1"), ("2024-01-01", "2")])))
    return created.table.table_id


async def _snapshot(client: GatewayClient) -> tuple[Any, ...]:
    dbs = (await client.catalog.ListDatabases(pb.ListDatabasesRequest())).names
    tables = (await client.catalog.ListTables(pb.ListTablesRequest(db_name="db"))).names
    parts = (await client.catalog.ListPartitionNames(pb.ListPartitionNamesRequest(db_name="db", table_name="t"))).names
    t = (await client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t"))).table
    event_id = (await client.events.GetCurrentNotificationEventId(epb.GetCurrentNotificationEventIdRequest())).event_id
    return list(dbs), list(tables), list(parts), t.SerializeToString(deterministic=True), event_id


def _too_many(n: int) -> list[pb.Partition]:
    return partitions([("2030-01-01", str(i)) for i in range(n)])


CASES: list[tuple[str, str, Any, grpc.StatusCode, str]] = [
    ("bad db name", "CreateDatabase", pb.CreateDatabaseRequest(database=pb.Database(name="bad name")),
     C.INVALID_ARGUMENT, "not valid"),
    ("empty db name", "CreateDatabase", pb.CreateDatabaseRequest(), C.INVALID_ARGUMENT, "required"),
    ("db exists", "CreateDatabase", pb.CreateDatabaseRequest(database=pb.Database(name="DB")), C.ALREADY_EXISTS,
     "already exists"),
    ("missing db", "GetDatabase", pb.GetDatabaseRequest(name="nope"), C.NOT_FOUND, "nope does not exist"),
    ("rename db", "AlterDatabase", pb.AlterDatabaseRequest(name="db", database=pb.Database(name="db2")),
     C.INVALID_ARGUMENT, "cannot be renamed"),
    ("non-empty drop", "DropDatabase", pb.DropDatabaseRequest(name="db"), C.FAILED_PRECONDITION, "not empty"),
    ("bad db owner type", "AlterDatabase",
     pb.AlterDatabaseRequest(name="db", database=pb.Database(owner="x", owner_type="TEAM")), C.INVALID_ARGUMENT,
     "owner type 'TEAM' is not one of USER, ROLE, GROUP"),
    ("drop default", "DropDatabase", pb.DropDatabaseRequest(name="default", cascade=True), C.FAILED_PRECONDITION,
     "Can not drop default database"),
    ("table in missing db", "CreateTable", pb.CreateTableRequest(table=table("nope", "t")), C.NOT_FOUND,
     "database nope"),
    ("table exists", "CreateTable", pb.CreateTableRequest(table=table("db", "T")), C.ALREADY_EXISTS, "already exists"),
    ("bad table name", "CreateTable", pb.CreateTableRequest(table=table("db", "t-1")), C.INVALID_ARGUMENT, "not valid"),
    ("bad column type", "CreateTable",
     pb.CreateTableRequest(table=pb.Table(db_name="db", name="x", columns=[pb.FieldSchema(name="a", type="uuid")])),
     C.INVALID_ARGUMENT, "not a Hive type"),
    ("complex partition key", "CreateTable", pb.CreateTableRequest(table=table("db", "x", keys=(("k", "array<int>"),))),
     C.INVALID_ARGUMENT, "primitive"),
    ("key is also a column", "CreateTable", pb.CreateTableRequest(table=table("db", "x", keys=(("id", "int"),))),
     C.INVALID_ARGUMENT, "must not also be"),
    ("external transactional", "CreateTable",
     pb.CreateTableRequest(table=table("db", "x", external=True, transactional=True)), C.INVALID_ARGUMENT, "external"),
    ("missing table", "GetTable", pb.GetTableRequest(db_name="db", table_name="nope"), C.NOT_FOUND,
     "db.nope does not exist"),
    ("table id mismatch", "GetTable",
     pb.GetTableRequest(db_name="db", table_name="t", read=pb.ReadContext(table_id=999999)), C.FAILED_PRECONDITION,
     "999999"),
    ("change partition keys", "AlterTable",
     pb.AlterTableRequest(db_name="db", table_name="t", table=table("db", "t", keys=(("ds", "string"),))),
     C.INVALID_ARGUMENT, "partition keys"),
    ("rename onto existing", "AlterTable",
     pb.AlterTableRequest(db_name="db", table_name="t", table=table("db", "flat")), C.ALREADY_EXISTS, "already exists"),
    ("rename into missing db", "AlterTable",
     pb.AlterTableRequest(db_name="db", table_name="t", table=table("nope", "t")), C.NOT_FOUND, "database nope"),
    ("drop missing table", "DropTable", pb.DropTableRequest(db_name="db", table_name="nope"), C.NOT_FOUND,
     "does not exist"),
    ("wrong value count", "AddPartitions",
     pb.AddPartitionsRequest(db_name="db", table_name="t", partitions=partitions([("2024-01-03",)])),
     C.INVALID_ARGUMENT, "2 partition keys"),
    ("bad int value", "AddPartitions",
     pb.AddPartitionsRequest(db_name="db", table_name="t",
                             partitions=partitions([("2024-01-03", "1"), ("2024-01-03", "x")])),
     C.INVALID_ARGUMENT, "not a valid int"),
    ("empty value", "AddPartitions",
     pb.AddPartitionsRequest(db_name="db", table_name="t", partitions=partitions([("", "1")])), C.INVALID_ARGUMENT,
     "empty"),
    ("duplicate in batch", "AddPartitions",
     pb.AddPartitionsRequest(db_name="db", table_name="t",
                             partitions=partitions([("2024-01-03", "1"), ("2024-01-03", "1")])),
     C.INVALID_ARGUMENT, "twice"),
    ("one existing fails all", "AddPartitions",
     pb.AddPartitionsRequest(db_name="db", table_name="t",
                             partitions=partitions([("2024-01-03", "1"), ("2024-01-01", "1")])),
     C.ALREADY_EXISTS, "nothing was added"),
    ("empty batch", "AddPartitions", pb.AddPartitionsRequest(db_name="db", table_name="t"), C.INVALID_ARGUMENT,
     "empty"),
    ("batch too large", "AddPartitions",
     pb.AddPartitionsRequest(db_name="db", table_name="t", partitions=_too_many(101)), C.RESOURCE_EXHAUSTED,
     "max.batch.size"),
    ("unpartitioned table", "AddPartitions",
     pb.AddPartitionsRequest(db_name="db", table_name="flat", partitions=partitions([("x",)])), C.INVALID_ARGUMENT,
     "not partitioned"),
    ("stale table id on write", "AddPartitions",
     pb.AddPartitionsRequest(db_name="db", table_name="t", table_id=424242,
                        partitions=partitions([("2024-01-05", "1")])), C.FAILED_PRECONDITION, "424242"),
    ("malformed name", "GetPartitionsByNames",
     pb.GetPartitionsByNamesRequest(db_name="db", table_name="t", names=["hr=1/ds=2024-01-01"]), C.INVALID_ARGUMENT,
     "does not match"),
    ("too many names", "GetPartitionsByNames",
     pb.GetPartitionsByNamesRequest(db_name="db", table_name="t", names=[f"ds=a/hr={i}" for i in range(101)]),
     C.RESOURCE_EXHAUSTED, "split"),
    ("bad page token", "ListPartitionNames",
     pb.ListPartitionNamesRequest(db_name="db", table_name="t", page_token="%%%"), C.INVALID_ARGUMENT, "page_token"),
    ("alter missing partition", "AlterPartitions",
     pb.AlterPartitionsRequest(db_name="db", table_name="t",
                               partitions=partitions([("2024-01-01", "1"), ("2024-09-09", "9")])),
     C.NOT_FOUND, "nothing was altered"),
    ("drop missing partition", "DropPartitions",
     pb.DropPartitionsRequest(db_name="db", table_name="t", names=["ds=2024-01-01/hr=1", "ds=2099-01-01/hr=1"]),
     C.NOT_FOUND, "nothing was dropped"),
    ("negative max events", "GetNextNotification", epb.GetNextNotificationRequest(max_events=-1), C.INVALID_ARGUMENT,
     "negative"),
]


@pytest.fixture
async def gateway(pg_dsn: str) -> AsyncIterator[GatewayClient]:
    """A gateway with a small batch limit, so the limit is cheap to exceed."""
    from gateway.app import Gateway
    from tests.conftest import connect, gateway_settings

    gw = Gateway(gateway_settings(pg_dsn, **{"metastore.gateway.max.batch.size": "100"}))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    yield client
    await client.channel.close()
    await gw.stop()


@pytest.mark.parametrize("label, method, request_, code, phrase", CASES, ids=[c[0] for c in CASES])
async def test_bad_input_is_refused_and_changes_nothing(
    gateway: GatewayClient, label: str, method: str, request_: Any, code: grpc.StatusCode, phrase: str
) -> None:
    await _setup(gateway)
    before = await _snapshot(gateway)
    stub = gateway.events if isinstance(request_, epb.GetNextNotificationRequest) else gateway.catalog
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await getattr(stub, method)(request_)
    assert err.value.code() == code, err.value.details()
    assert phrase in err.value.details()
    assert "Traceback" not in err.value.details()
    assert await _snapshot(gateway) == before


async def test_oversized_message_is_refused_by_size(pg_dsn: str) -> None:
    from gateway.app import Gateway
    from tests.conftest import connect, gateway_settings

    gw = Gateway(gateway_settings(pg_dsn, **{"hive.metastore.server.max.message.size": "4096"}))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(
                database=pb.Database(name="x", description="d" * 10_000)))
        assert err.value.code() == C.RESOURCE_EXHAUSTED
        assert (await client.catalog.ListDatabases(pb.ListDatabasesRequest())).names == ["default"]
    finally:
        await client.channel.close()
        await gw.stop()
