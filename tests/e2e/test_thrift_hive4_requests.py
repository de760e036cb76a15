"""Hive 4's request-shaped forms of calls older clients make by arguments, the only forms Hive 4's
HiveMetaStoreClient sends (standalone-metastore/metastore-common/.../HiveMetaStoreClient.java):
getDatabase -> get_database_req, createTable -> create_table_req, dropDatabase(cascade) ->
drop_database_req, renamePartition -> rename_partition_req. Each is answered as its older form."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import thriftpy2
import thriftpy2.rpc

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
    sends: create_table_req with the table and no constraints; one that declares a constraint is stored
    with it, as create_table_with_constraints stores it."""
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
        await call("create_table_req", hms.CreateTableRequest(
            table=thrift_table("keyed"), primaryKeys=[hms.SQLPrimaryKey(
                table_db="db", table_name="keyed", column_name="id", key_seq=1, pk_name="pk")]))
        keys = (await call("get_primary_keys", hms.PrimaryKeysRequest(db_name="db", tbl_name="keyed"))).primaryKeys
        assert [(k.pk_name, k.column_name) for k in keys] == [("pk", "id")]
        with pytest.raises(hms.InvalidObjectException, match="nodb"):
            await call("create_table_req", hms.CreateTableRequest(table=thrift_table("t", db="nodb")))
        assert sorted(await call("get_all_tables", "db")) == ["acid", "keyed"]


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
        answer = await call("drop_database_req", drop(softDelete=False, txnId=0, deleteManagedDir=True))
        # The newest Hive's answer (an operation it may run asynchronously), finished: Hive 4.0's client,
        # which declares the call void, skips it; the newest fails on a void answer ("unknown result").
        assert (answer.finished, len(answer.id)) == (True, 32)
        assert await call("get_databases", "@hive#") == ["default"]
        with pytest.raises(hms.NoSuchObjectException):
            await call("drop_database_req", drop())
        await call("drop_database_req", drop(ignoreUnknownDb=True))  # gone already: nothing to do
        with pytest.raises(hms.NoSuchObjectException, match="catalog 'spark' does not exist"):
            await call("drop_database_req", drop(catalogName="spark", ignoreUnknownDb=True))
        with pytest.raises(hms.InvalidOperationException, match="no operation '0f' to poll or cancel"):
            await call("drop_database_req", drop(id="0f", cancel=True))


async def test_hive4s_ctas_asks_how_the_table_would_be_created_with_translate_table_dryrun(pg_dsn: str) -> None:
    """Hive 4's CREATE TABLE ... AS SELECT (SemanticAnalyzer and TaskCompiler: Hive.getTranslateTableDryrun)
    sends translate_table_dryrun before it writes any data, and fails the statement on an error: answered
    the table as this metastore would create it, as sent (it has no transformer), in catalog `hive`, with
    nothing created."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        ctas = thrift_table("made", keys=["ds"], transactional="true", transactional_properties="insert_only")
        ctas.txnId = 12
        answer = await call("translate_table_dryrun", hms.CreateTableRequest(
            table=ctas, processorCapabilities=["HIVEMANAGEDINSERTWRITE"], processorIdentifier="HMSClient-@h"))
        ctas.catName = "hive"
        assert answer == ctas
        assert await call("get_all_tables", "db") == []
        ctas.catName = "spark"
        with pytest.raises(hms.NoSuchObjectException, match="catalog 'spark' does not exist"):
            await call("translate_table_dryrun", hms.CreateTableRequest(table=ctas))
        with pytest.raises(hms.InvalidObjectException, match="table is required"):
            await call("translate_table_dryrun", hms.CreateTableRequest())


_HIVE40_DROP_DATABASE = """
struct DropDatabaseRequest {
  1: required string name, 2: optional string catalogName, 3: required bool ignoreUnknownDb,
  4: required bool deleteData, 5: required bool cascade, 6: optional bool softDelete = false,
  7: optional i64 txnId = 0, 8: optional bool deleteManagedDir = true
}
exception NoSuchObjectException { 1: string message }
exception InvalidOperationException { 1: string message }
exception MetaException { 1: string message }
service ThriftHiveMetastore {
  void drop_database_req(1: DropDatabaseRequest req)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3),
}
"""


async def test_hive40s_client_which_declares_drop_database_req_void_reads_the_newer_answer(
        pg_dsn: str, tmp_path: Path) -> None:
    """Hive 4.0's IDL declares drop_database_req void; the answer the newest Hive's declares (an
    AsyncOperationResp) is a field that client does not know, which a Thrift decoder skips."""
    idl = tmp_path / "hive40_drop.thrift"
    idl.write_text(_HIVE40_DROP_DATABASE)
    hive40 = thriftpy2.load(str(idl), module_name="hive40_drop_thrift")
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port, "gone") as call:
        raw = thriftpy2.rpc.make_client(hive40.ThriftHiveMetastore, "127.0.0.1", gw.thrift_port, timeout=30_000)
        try:
            request = hive40.DropDatabaseRequest(name="gone", catalogName="hive", ignoreUnknownDb=False,
                                                 deleteData=True, cascade=True)
            assert await asyncio.to_thread(raw.drop_database_req, request) is None  # the gateway runs on this loop
        finally:
            raw.close()
        assert await call("get_all_databases") == ["default"]


async def test_hive4_renames_a_partition_with_rename_partition_req(pg_dsn: str) -> None:
    """Hive 4's ALTER TABLE t PARTITION (p='a') RENAME TO PARTITION (p='b'): rename_partition_req, with
    the txn and the new partition's write id for a transactional table, which is refused here."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        for name, params in (("t", {}), ("acid", {"transactional": "true"})):
            await call("create_table_req", hms.CreateTableRequest(table=thrift_table(name, keys=["p"], **params)))
        await call("add_partitions", [hms.Partition(values=["a"], dbName="db", tableName="t", parameters={})])
        old = await call("get_partition", "db", "t", ["a"])
        old.values = ["b"]
        await call("rename_partition_req", hms.RenamePartitionRequest(
            catName="hive", dbName="db", tableName="t", partVals=["a"], newPart=old, txnId=0, clonePart=False))
        assert await call("get_partition_names", "db", "t", -1) == ["p=b"]
        assert (await call("get_partition", "db", "t", ["b"])).sd.location.endswith("/t/p=b")  # moved along

        (txn,) = (await call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
        (allocated,) = (await call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="db", tableName="acid", txnIds=[txn]))).txnToWriteIds
        await call("add_partitions", [hms.Partition(values=["x"], dbName="db", tableName="acid", parameters={},
                                                    writeId=allocated.writeId)])
        await call("commit_txn", hms.CommitTxnRequest(txnid=txn))
        (txn,) = (await call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
        (allocated,) = (await call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="db", tableName="acid", txnIds=[txn]))).txnToWriteIds
        with pytest.raises(hms.InvalidOperationException, match="db.acid is transactional"):
            await call("rename_partition_req", hms.RenamePartitionRequest(
                dbName="db", tableName="acid", partVals=["x"], txnId=txn,
                newPart=hms.Partition(values=["y"], dbName="db", tableName="acid", parameters={},
                                      writeId=allocated.writeId)))
        assert await call("get_partition_names", "db", "acid", -1) == ["p=x"]


async def test_hive4_reads_a_tables_columns_with_get_fields_req_and_get_schema_req(pg_dsn: str) -> None:
    """Hive 4's HiveMetaStoreClient.getFields and getSchema (DESCRIBE of a table whose serde answers
    for the columns, Hive's schema tools) send only these: answered as get_fields and get_schema, with
    the declared exceptions for what does not exist."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table_req", hms.CreateTableRequest(table=thrift_table("t", keys=["ds"])))
        fields = await call("get_fields_req", hms.GetFieldsRequest(catName="hive", dbName="db", tblName="T",
                                                                    validWriteIdList="db.t:0:9223372036854775807::"))
        assert [(f.name, f.type) for f in fields.fields] == [("id", "bigint")]
        assert fields.fields == await call("get_fields", "db", "t")
        schema = await call("get_schema_req", hms.GetSchemaRequest(dbName="db", tblName="t", id=-1))
        assert [(f.name, f.type) for f in schema.fields] == [("id", "bigint"), ("ds", "string")]
        assert schema.fields == await call("get_schema", "db", "t")

        with pytest.raises(hms.UnknownTableException, match="db.missing"):
            await call("get_fields_req", hms.GetFieldsRequest(dbName="db", tblName="missing"))
        with pytest.raises(hms.UnknownTableException, match="nodb"):
            await call("get_schema_req", hms.GetSchemaRequest(dbName="nodb", tblName="t"))
        with pytest.raises(hms.UnknownTableException, match="catalog 'spark' does not exist"):
            await call("get_schema_req", hms.GetSchemaRequest(catName="spark", dbName="db", tblName="t"))
        with pytest.raises(hms.MetaException, match="tblName"):
            await call("get_fields_req", hms.GetFieldsRequest(dbName="db"))
