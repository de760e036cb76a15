"""Hive 4's request-shaped forms of calls older clients make by arguments, the only forms Hive 4's
HiveMetaStoreClient sends (standalone-metastore/metastore-common/.../HiveMetaStoreClient.java):
getDatabase -> get_database_req, createTable -> create_table_req, dropDatabase(cascade) ->
drop_database_req, renamePartition -> rename_partition_req. Each is answered as its older form."""

from __future__ import annotations

import pytest

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import client_with_database, thrift_table


async def test_hive4_reads_a_database_with_get_database_req(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        got = await call("get_database_req", hms.GetDatabaseRequest(name="DB", catalogName="hive",
                                                                    processorIdentifier="HMSClient-@h"))
        assert (got.name, got.locationUri) == ("db", (await call("get_database", "db")).locationUri)
        assert (await call("get_database_req", hms.GetDatabaseRequest(name="default"))).name == "default"
        with pytest.raises(hms.NoSuchObjectException, match="nope"):
            await call("get_database_req", hms.GetDatabaseRequest(name="nope", catalogName="hive"))
        with pytest.raises(hms.NoSuchObjectException, match="catalog 'spark' does not exist"):
            await call("get_database_req", hms.GetDatabaseRequest(name="db", catalogName="spark"))


async def test_hive4_creates_a_transactional_table_with_create_table_req(pg_dsn: str) -> None:
    """What Hive 4's CREATE TABLE t (id bigint) STORED AS ORC TBLPROPERTIES ('transactional'='true')
    sends: create_table_req with the table and no constraints; one that declares a constraint is refused
    as create_table_with_constraints refuses it (this gateway stores none)."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        table = thrift_table("acid", transactional="true", transactional_properties="default")
        await call("create_table_req", hms.CreateTableRequest(
            table=table, envContext=hms.EnvironmentContext(properties={}), processorIdentifier="HMSClient-@h"))
        got = (await call("get_table_req", hms.GetTableRequest(dbName="db", tblName="acid"))).table
        assert (got.tableType, got.parameters["transactional"]) == ("MANAGED_TABLE", "true")
        (txn,) = (await call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
        (allocated,) = (await call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="db", tableName="acid", txnIds=[txn]))).txnToWriteIds
        assert allocated.writeId == 1  # a transactional table: it takes write ids

        with pytest.raises(hms.AlreadyExistsException):
            await call("create_table_req", hms.CreateTableRequest(table=thrift_table("acid")))
        with pytest.raises(hms.InvalidObjectException, match="stores no table constraints"):
            await call("create_table_req", hms.CreateTableRequest(
                table=thrift_table("keyed"), primaryKeys=[hms.SQLPrimaryKey(
                    table_db="db", table_name="keyed", column_name="id", key_seq=1, pk_name="pk")]))
        with pytest.raises(hms.InvalidObjectException, match="nodb"):
            await call("create_table_req", hms.CreateTableRequest(table=thrift_table("t", db="nodb")))
        assert sorted(await call("get_all_tables", "db")) == ["acid"]


async def test_hive4_drops_a_database_cascade_with_drop_database_req(pg_dsn: str) -> None:
    """Hive 4's DROP DATABASE ... CASCADE: HiveMetaStoreClient.dropDatabase(DropDatabaseRequest) reads
    the database (get_database_req), lists its tables, then sends drop_database_req."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port, "gone") as call:
        await call("create_table_req", hms.CreateTableRequest(table=thrift_table("plain", db="gone")))
        await call("create_table_req", hms.CreateTableRequest(table=thrift_table("acid", db="gone",
                                                                                 transactional="true")))

        def drop(**fields: object) -> hms.DropDatabaseRequest:
            return hms.DropDatabaseRequest(**{"name": "gone", "catalogName": "hive", "ignoreUnknownDb": False,
                                              "deleteData": True, "cascade": True, **fields})

        with pytest.raises(hms.InvalidOperationException):  # not empty, and no cascade
            await call("drop_database_req", drop(cascade=False))
        await call("drop_database_req", drop(softDelete=False, txnId=0, deleteManagedDir=True))
        assert await call("get_databases", "@hive#") == ["default"]
        with pytest.raises(hms.NoSuchObjectException):
            await call("drop_database_req", drop())
        await call("drop_database_req", drop(ignoreUnknownDb=True))  # gone already: nothing to do
        with pytest.raises(hms.NoSuchObjectException, match="catalog 'spark' does not exist"):
            await call("drop_database_req", drop(catalogName="spark", ignoreUnknownDb=True))
