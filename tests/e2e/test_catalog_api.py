"""Catalog behaviours a Hive user relies on, through the real gRPC API."""

from __future__ import annotations

import json

import grpc
import pytest

from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import events_pb2 as epb
from tests.builders import partitions, table
from tests.conftest import GatewayClient, connect, running_gateway


async def _events(client: GatewayClient, after: int = 0) -> list[epb.NotificationEvent]:
    return list((await client.events.GetNextNotification(epb.GetNextNotificationRequest(last_event_id=after))).events)


async def test_names_are_case_insensitive_and_stored_lower_case(gateway: GatewayClient) -> None:
    await gateway.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="Sales")))
    created = await gateway.catalog.CreateTable(pb.CreateTableRequest(table=table("SALES", "Orders",
                                                                                  keys=(("DS", "string"),))))
    assert (created.table.db_name, created.table.name, created.table.partition_keys[0].name) == ("sales", "orders",
                                                                                                 "ds")
    got = await gateway.catalog.GetTable(pb.GetTableRequest(db_name="sAlEs", table_name="ORDERS"))
    assert got.table.table_id == created.table.table_id


async def test_every_write_appends_one_event_and_returns_its_id(gateway: GatewayClient) -> None:
    c = gateway.catalog
    ids = [
        (await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))).event_id,
        (await c.AlterDatabase(pb.AlterDatabaseRequest(name="db", database=pb.Database(description="d")))).event_id,
        (await c.CreateTable(pb.CreateTableRequest(table=table("db", "t")))).event_id,
        (await c.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="t",
                                                       partitions=partitions([("a", "1"), ("a", "2")])))).event_id,
        (await c.AlterPartitions(pb.AlterPartitionsRequest(db_name="db", table_name="t",
                                                           partitions=partitions([("a", "1")])))).event_id,
        (await c.AlterTable(pb.AlterTableRequest(db_name="db", table_name="t", table=table("db", "t2")))).event_id,
        (await c.DropPartitions(pb.DropPartitionsRequest(db_name="db", table_name="t2", names=["ds=a/hr=2"]))).event_id,
        (await c.DropTable(pb.DropTableRequest(db_name="db", table_name="t2"))).event_id,
        (await c.DropDatabase(pb.DropDatabaseRequest(name="db"))).event_id,
    ]
    default, *events = await _events(gateway)
    assert (default.event_id, default.event_type, default.db_name) == (1, "CREATE_DATABASE", "default")  # at start
    assert ids == [e.event_id for e in events] == list(range(2, 11))
    assert [e.event_type for e in events] == [
        "CREATE_DATABASE", "ALTER_DATABASE", "CREATE_TABLE", "ADD_PARTITION", "ALTER_PARTITION", "ALTER_TABLE",
        "DROP_PARTITION", "DROP_TABLE", "DROP_DATABASE"]
    table_id = events[2].table_id
    assert table_id and all(e.table_id == table_id for e in events[2:8])
    assert [p["part_name"] for p in json.loads(events[3].message)["partitions"]] == ["ds=a/hr=1", "ds=a/hr=2"]
    assert json.loads(events[5].message)["table"]["tbl_name"] == "t2"
    filtered = await gateway.events.GetNextNotification(epb.GetNextNotificationRequest(db_name="db", table_name="t2"))
    assert [e.event_type for e in filtered.events] == ["ALTER_TABLE", "DROP_PARTITION", "DROP_TABLE"]


async def test_if_not_exists_skips_existing_and_reports_only_what_was_added(gateway: GatewayClient) -> None:
    c = gateway.catalog
    await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await c.CreateTable(pb.CreateTableRequest(table=table("db", "t")))
    await c.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="t", partitions=partitions([("a", "1")])))
    again = await c.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", if_not_exists=True, partitions=partitions([("a", "1"), ("a", "2")])))
    assert [p.name for p in again.partitions] == ["ds=a/hr=2"] and again.event_id > 0
    none = await c.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", if_not_exists=True, partitions=partitions([("a", "1")])))
    assert list(none.partitions) == [] and none.event_id == 0


async def test_partition_defaults_come_from_the_table_and_alter_keeps_location(gateway: GatewayClient) -> None:
    c = gateway.catalog
    await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db", location="s3://lake/db")))
    t = (await c.CreateTable(pb.CreateTableRequest(table=table("db", "t")))).table
    assert t.sd.location == "s3://lake/db/t"
    added = (await c.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="t", partitions=[
        pb.Partition(values=["x y", "1"]), pb.Partition(values=["b", "2"],
                                                        sd=pb.StorageDescriptor(location="s3://else/b"))]))).partitions
    assert added[0].sd.location == "s3://lake/db/t/ds=x y/hr=1"
    assert added[0].sd.input_format == t.sd.input_format
    assert added[0].sd.serde.serialization_lib == t.sd.serde.serialization_lib
    assert added[1].sd.location == "s3://else/b"
    await c.AlterPartitions(pb.AlterPartitionsRequest(db_name="db", table_name="t", partitions=[
        pb.Partition(values=["b", "2"], parameters={"numRows": "10"})]))
    got = (await c.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(db_name="db", table_name="t",
                                                                       names=["ds=b/hr=2"]))).partitions[0]
    assert got.sd.location == "s3://else/b" and dict(got.parameters) == {"numRows": "10"}


async def test_get_partitions_by_names_keeps_request_order_and_skips_missing(gateway: GatewayClient) -> None:
    c = gateway.catalog
    await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await c.CreateTable(pb.CreateTableRequest(table=table("db", "t")))
    await c.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="t",
                                                  partitions=partitions([("a", str(i)) for i in range(5)])))
    reply = await c.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
        db_name="db", table_name="t", names=["ds=a/hr=3", "ds=zz/hr=1", "ds=a/hr=0", "DS=a/HR=3"]))
    assert [p.name for p in reply.partitions] == ["ds=a/hr=3", "ds=a/hr=0"]
    assert [list(p.values) for p in reply.partitions] == [["a", "3"], ["a", "0"]]


async def test_the_default_database_is_there_from_the_start_and_stays(gateway: GatewayClient) -> None:
    c = gateway.catalog
    default = (await c.GetDatabase(pb.GetDatabaseRequest(name="default"))).database
    assert (default.name, default.description, default.owner, default.owner_type) == (
        "default", "Default Hive database", "public", "ROLE")
    await c.CreateTable(pb.CreateTableRequest(table=table("default", "t")))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await c.DropDatabase(pb.DropDatabaseRequest(name="DEFAULT", cascade=True))
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "Can not drop default database" in (refused.value.details() or "")
    assert (await c.GetTable(pb.GetTableRequest(db_name="default", table_name="t"))).table.name == "t"  # untouched
    with pytest.raises(grpc.aio.AioRpcError) as exists:
        await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="default")))
    assert exists.value.code() == grpc.StatusCode.ALREADY_EXISTS


async def test_drop_database_cascade_drops_tables_and_partitions(gateway: GatewayClient) -> None:
    c = gateway.catalog
    await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    for name in ("a", "b"):
        await c.CreateTable(pb.CreateTableRequest(table=table("db", name)))
        await c.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name=name, partitions=partitions([("x",
                                                                                                             "1")])))
    before = (await c.GetTable(pb.GetTableRequest(db_name="db", table_name="a"))).table.table_id
    dropped = await c.DropDatabase(pb.DropDatabaseRequest(name="db", cascade=True))
    types = [e.event_type for e in await _events(gateway, after=dropped.event_id - 3)]
    assert types == ["DROP_TABLE", "DROP_TABLE", "DROP_DATABASE"]
    assert (await c.ListDatabases(pb.ListDatabasesRequest())).names == ["default"]
    await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    recreated = (await c.CreateTable(pb.CreateTableRequest(table=table("db", "a")))).table
    assert recreated.table_id != before
    assert (await c.ListPartitionNames(pb.ListPartitionNamesRequest(db_name="db", table_name="a"))).names == []
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await c.GetTable(pb.GetTableRequest(db_name="db", table_name="a", read=pb.ReadContext(table_id=before)))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


async def test_list_with_hive_patterns(gateway: GatewayClient) -> None:
    c = gateway.catalog
    for name in ("sales", "sales_eu", "web"):
        await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=name)))
    assert list((await c.ListDatabases(pb.ListDatabasesRequest(pattern="sales*|web"))).names) == ["sales", "sales_eu",
                                                                                                  "web"]
    assert list((await c.ListDatabases(pb.ListDatabasesRequest(pattern="*_eu"))).names) == ["sales_eu"]


async def test_transactional_flag_cannot_be_unset_and_mirrors_the_parameter(gateway: GatewayClient) -> None:
    c = gateway.catalog
    await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    t = table("db", "acid")
    t.parameters["transactional"] = "TRUE"
    created = (await c.CreateTable(pb.CreateTableRequest(table=t))).table
    assert created.transactional and created.parameters["transactional"] == "true"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await c.AlterTable(pb.AlterTableRequest(db_name="db", table_name="acid", table=table("db", "acid")))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "cannot be made non-transactional" in err.value.details()


async def test_views_owner_types_and_their_rules(gateway: GatewayClient) -> None:
    c = gateway.catalog
    await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    view = pb.Table(db_name="db", name="v", table_type=pb.VIRTUAL_VIEW, owner_type="ROLE",
                    columns=[pb.FieldSchema(name="id", type="bigint")],
                    view_original_text="SELECT id FROM t", view_expanded_text="SELECT `t`.`id` FROM `db`.`t`")
    created = (await c.CreateTable(pb.CreateTableRequest(table=view))).table
    assert (created.table_type, created.owner_type, created.sd.location) == (pb.VIRTUAL_VIEW, "ROLE", "")
    got = (await c.GetTable(pb.GetTableRequest(db_name="db", table_name="v"))).table
    assert (got.view_original_text, got.view_expanded_text) == (view.view_original_text, view.view_expanded_text)
    refused = {
        "needs its text": pb.Table(db_name="db", name="v2", table_type=pb.VIRTUAL_VIEW),
        "cannot be transactional": pb.Table(db_name="db", name="v3", table_type=pb.VIRTUAL_VIEW, transactional=True,
                                            view_original_text="SELECT 1"),
        "is not a view": pb.Table(db_name="db", name="t4", view_original_text="SELECT 1"),
        "owner type": pb.Table(db_name="db", name="t5", owner_type="SOMEONE"),
    }
    for message, bad in refused.items():
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await c.CreateTable(pb.CreateTableRequest(table=bad))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and message in err.value.details()
    assert list((await c.ListTables(pb.ListTablesRequest(db_name="db"))).names) == ["v"]


async def test_a_tables_retention_is_kept_as_set_and_an_alter_sets_it_as_sent(gateway: GatewayClient) -> None:
    """Hive's Table.retention, which a Thrift client sets too: a read answers it, an alter that sends back
    the table it read keeps it, one that sends none (0) clears it, as Hive's alter does."""
    c = gateway.catalog
    await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    kept = table("db", "kept")
    kept.retention = 30
    assert (await c.CreateTable(pb.CreateTableRequest(table=kept))).table.retention == 30
    read = (await c.GetTable(pb.GetTableRequest(db_name="db", table_name="kept"))).table
    assert read.retention == 30
    read.parameters["k"] = "v"
    await c.AlterTable(pb.AlterTableRequest(db_name="db", table_name="kept", table=read))
    assert (await c.GetTable(pb.GetTableRequest(db_name="db", table_name="kept"))).table.retention == 30
    await c.AlterTable(pb.AlterTableRequest(db_name="db", table_name="kept", table=table("db", "kept")))
    assert (await c.GetTable(pb.GetTableRequest(db_name="db", table_name="kept"))).table.retention == 0


async def test_a_column_only_changes_to_a_type_its_data_converts_to(gateway: GatewayClient, pg_dsn: str) -> None:
    """hive.metastore.disallow.incompatible.col.type.changes (on, as in Hive): bigint may become string
    or decimal, not int; a refused alter changes nothing. Off, any change goes through."""
    c = gateway.catalog
    await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await c.CreateTable(pb.CreateTableRequest(table=table("db", "t")))

    def retyped(id_type: str) -> pb.AlterTableRequest:
        t = table("db", "t")
        t.columns[0].type = id_type
        return pb.AlterTableRequest(db_name="db", table_name="t", table=t)

    with pytest.raises(grpc.aio.AioRpcError) as err:
        await c.AlterTable(retyped("int"))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "id (bigint to int)" in err.value.details()
    assert (await c.GetTable(pb.GetTableRequest(db_name="db", table_name="t"))).table.columns[0].type == "bigint"
    await c.AlterTable(retyped("decimal(20,0)"))
    assert (await c.GetTable(pb.GetTableRequest(db_name="db", table_name="t"))).table.columns[0].type == "decimal(20,0)"

    async with running_gateway(pg_dsn, **{"hive.metastore.disallow.incompatible.col.type.changes": "false"}) as gw:
        lenient = await connect(f"127.0.0.1:{gw.port}")
        try:
            await lenient.catalog.AlterTable(retyped("boolean"))
            got = (await lenient.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t"))).table
            assert got.columns[0].type == "boolean"
        finally:
            await lenient.channel.close()
