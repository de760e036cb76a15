"""The request forms the newest Hive client sends instead of the older calls (ThriftHiveMetaStoreClient
after HIVE-26537: createDatabase, alterDatabase, dropTable, dropPartition, appendPartition send only
these): each does what the older call does, database names as that client writes them (`@hive#db`
where it prepends the catalog), errors as the declared exceptions."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database, thrift_table


def _local(location: str) -> Path:
    return Path(urlparse(location).path)


async def test_create_and_alter_database_requests(pg_dsn: str, tmp_path: Path) -> None:
    async with running_gateway(pg_dsn, **{"metastore.gateway.data.roots": str(tmp_path)}) as gw:
        call = ThriftClient(gw.thrift_port)
        try:
            await call("create_database_req", hms.CreateDatabaseRequest(
                databaseName="Sales", description="orders", locationUri=str(tmp_path / "sales.db"),
                parameters={"team": "a"}, ownerName="alice", ownerType=1, catalogName="hive",
                managedLocationUri=str(tmp_path / "managed")))
            db = await call("get_database", "sales")
            assert (db.name, db.description, db.parameters, db.ownerName, db.ownerType) == (
                "sales", "orders", {"team": "a"}, "alice", 1)
            assert _local(db.locationUri) == tmp_path / "sales.db" and _local(db.locationUri).is_dir()
            with pytest.raises(hms.AlreadyExistsException, match="sales"):
                await call("create_database_req", hms.CreateDatabaseRequest(databaseName="sales"))
            with pytest.raises(hms.InvalidObjectException, match="catalog 'spark' does not exist"):
                await call("create_database_req", hms.CreateDatabaseRequest(databaseName="s2", catalogName="spark"))
            with pytest.raises(hms.InvalidObjectException, match="no data connectors"):
                await call("create_database_req", hms.CreateDatabaseRequest(databaseName="s3", type=2,
                                                                            dataConnectorName="mysql"))
            assert await call("get_all_databases") == ["default", "sales"]

            db.description, db.parameters = "all orders", {"team": "b"}
            await call("alter_database_req", hms.AlterDatabaseRequest(oldDbName="@hive#sales", newDb=db))
            altered = await call("get_database", "sales")
            assert (altered.description, altered.parameters) == ("all orders", {"team": "b"})
            with pytest.raises(hms.NoSuchObjectException, match="nope"):
                await call("alter_database_req", hms.AlterDatabaseRequest(oldDbName="@hive#nope", newDb=db))
        finally:
            call.close()


async def test_append_drop_partition_and_drop_table_requests(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["ds", "hr"]))
        by_values = await call("append_partition_req", hms.AppendPartitionsRequest(
            catalogName="hive", dbName="@hive#db", tableName="t", partVals=["1", "a"]))
        by_name = await call("append_partition_req", hms.AppendPartitionsRequest(dbName="db", tableName="t",
                                                                                 name="ds=2/hr=b"))
        assert (by_values.values, by_name.values) == (["1", "a"], ["2", "b"])
        assert _local(by_name.sd.location).is_dir()
        again = hms.AppendPartitionsRequest(dbName="db", tableName="t", name="ds=2/hr=b")
        with pytest.raises(hms.AlreadyExistsException):
            await call("append_partition_req", again)
        with pytest.raises(hms.InvalidObjectException, match="name or partVals"):
            await call("append_partition_req", hms.AppendPartitionsRequest(dbName="db", tableName="t"))

        assert await call("drop_partition_req", hms.DropPartitionRequest(
            catName="hive", dbName="@hive#db", tblName="t", partName="ds=2/hr=b", deleteData=True)) is True
        assert not _local(by_name.sd.location).exists()
        assert await call("drop_partition_req", hms.DropPartitionRequest(
            dbName="db", tblName="t", partVals=["1", "a"], deleteData=False)) is True
        assert _local(by_values.sd.location).is_dir()  # its files kept, as deleteData says
        assert await call("get_partition_names", "db", "t", -1) == []
        with pytest.raises(hms.NoSuchObjectException):
            await call("drop_partition_req", hms.DropPartitionRequest(dbName="db", tblName="t", partVals=["1", "a"]))

        location = _local((await call("get_table", "db", "t")).sd.location)
        with pytest.raises(hms.MetaException, match="no operation '7' to poll or cancel"):
            await call("drop_table_req", hms.DropTableRequest(dbName="db", tableName="t", id="7"))
        answer = await call("drop_table_req", hms.DropTableRequest(
            catalogName="hive", dbName="@hive#db", tableName="t", deleteData=True, dropPartitions=True,
            asyncDrop=True))  # done at once all the same
        assert answer.finished is True and answer.id
        assert await call("get_tables", "db", "*") == [] and not location.exists()
        with pytest.raises(hms.NoSuchObjectException, match="t"):
            await call("drop_table_req", hms.DropTableRequest(dbName="db", tableName="t", deleteData=True))
