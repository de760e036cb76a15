"""Differences from Hive Metastore 2.3.10 that tests/spark/test_hive_engine_random_differential.py found through
Hive 2.3's own engine, each pinned here on the gateway alone at the Thrift level (Hive's answers, seen from the
real one, written in)."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
from hmsclient.genthrift.hive_metastore import ttypes as ht
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TType
from thrift.transport import TSocket, TTransport

from gateway.thrift.idl import hms as tp
from protos.metastore.v1 import catalog_pb2 as pb
from tests import builders
from tests.conftest import connect, running_gateway
from tests.e2e.test_thrift_api import Thrift, _partition, _table, thrift_with_database
from tests.e2e.test_thrift_partition_exprs import GOLDENS, by_expr, names_of
from tests.thrift_client import client_with_database, thrift_table

TABLE_TEMPORARY = 14  # Table.temporary's field id


@pytest.fixture
async def hms(pg_dsn: str) -> AsyncIterator[Thrift]:
    async with thrift_with_database(pg_dsn) as thrift:
        await thrift.call("create_table", _table("db", "t"))
        yield thrift


def _fields_of_the_table_answered(port: int, db: str, name: str) -> set[int]:
    """The ids of the fields get_table's answer sets in its Table, read off the wire (a generated struct cannot
    tell an unset field from one set to its default)."""
    transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
    transport.open()
    try:
        protocol = TBinaryProtocol.TBinaryProtocol(transport)
        ThriftHiveMetastore.Client(protocol).send_get_table(db, name)
        protocol.readMessageBegin()
        protocol.readStructBegin()
        _, kind, fid = protocol.readFieldBegin()
        assert (kind, fid) == (TType.STRUCT, 0), "get_table did not answer a table"
        protocol.readStructBegin()
        found: set[int] = set()
        while True:
            _, kind, fid = protocol.readFieldBegin()
            if kind == TType.STOP:
                return found
            found.add(fid)
            protocol.skip(kind)
    finally:
        transport.close()


async def test_a_table_is_answered_without_temporary_set(hms: Thrift) -> None:
    """Hive's metastore leaves Table.temporary unset (only its client sets it, for a session's temporary tables,
    which never reach the metastore), and Hive 2.3's DESCRIBE EXTENDED prints every field that is set: the
    gateway's `temporary:false` made every DESCRIBE EXTENDED of a table differ from Hive's."""
    fields = await asyncio.to_thread(_fields_of_the_table_answered, hms.port, "db", "t")
    assert 1 in fields and 7 in fields  # tableName, sd: the answer was read
    assert TABLE_TEMPORARY not in fields


async def test_a_view_without_a_serde_class_reads_back_without_one(hms: Thrift) -> None:
    """Hive 2.3's CREATE VIEW sends a SerDeInfo whose serializationLib is null, and Hive answers null; the
    gateway answered '', and Hive's engine, loading a class named '', failed DESCRIBE FORMATTED of the view
    ('ClassNotFoundException Class  not found')."""
    view: Any = _table("db", "v")
    view.tableType, view.partitionKeys = "VIRTUAL_VIEW", []
    view.viewOriginalText = view.viewExpandedText = "SELECT id, amount FROM db.t"
    view.sd.inputFormat, view.sd.outputFormat = ("org.apache.hadoop.mapred.SequenceFileInputFormat",
                                                 "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat")
    view.sd.serdeInfo = ht.SerDeInfo(None, None, {})
    await hms.call("create_table", view)
    got = await hms.call("get_table", "db", "v")
    assert got.sd.serdeInfo.serializationLib is None
    assert (await hms.call("get_table", "db", "t")).sd.serdeInfo.serializationLib == _table("db", "t").sd.serdeInfo \
        .serializationLib


def _acid_table(name: str) -> ht.Table:
    table: Any = _table("db", name, params={"transactional": "true"})
    table.partitionKeys = []
    return table


async def test_a_dropped_transactional_tables_compactions_go_with_it(hms: Thrift) -> None:
    """Hive's metastore deletes a transactional table's compaction requests and history when the table, or its
    database, is dropped (AcidEventListener, TxnHandler.cleanupRecords: Hive 2.3, 3 and 4); the gateway kept
    them, so SHOW COMPACTIONS went on listing requests of tables that no longer exist ('initiated')."""
    for name in ("a", "b"):
        await hms.call("create_table", _acid_table(name))
        await hms.call("compact", ht.CompactionRequest("db", name, None, ht.CompactionType.MAJOR))
    await hms.call("create_database", ht.Database("other", "", None, {}))
    other: Any = _acid_table("c")
    other.dbName = "other"
    await hms.call("create_table", other)
    await hms.call("compact", ht.CompactionRequest("other", "c", None, ht.CompactionType.MINOR))

    async def listed() -> list[tuple[str, str]]:
        shown = (await hms.call("show_compact", ht.ShowCompactRequest())).compacts
        return sorted((c.dbname, c.tablename) for c in shown)

    assert await listed() == [("db", "a"), ("db", "b"), ("other", "c")]
    await hms.call("drop_table", "db", "a", True)
    assert await listed() == [("db", "b"), ("other", "c")]
    await hms.call("drop_database", "other", True, True)
    assert await listed() == [("db", "b")]


async def test_a_location_without_a_scheme_is_stored_as_hive_stores_it(pg_dsn: str, tmp_path: Path) -> None:
    """Hive's metastore stores a location sent as a bare path with the default file system's scheme
    (Warehouse.getDnsPath), on create and on alter, of a database, a table and a partition, and prints
    `file:///p` as `file:/p`; seen from Hive Metastore 2.3.10 (`file:` is its fs.defaultFS there). The gateway
    kept `/p` as sent, so Hive 2.3's DESCRIBE and SHOW CREATE TABLE of such an object showed another location."""
    root = str(tmp_path)
    async with running_gateway(pg_dsn) as gw:
        thrift = Thrift(gw)
        try:
            await thrift.call("create_database", ht.Database("d", "", f"{root}/d", {}))
            assert (await thrift.call("get_database", "d")).locationUri == f"file:{root}/d"
            table = _table("d", "t", external=True)
            table.sd.location = f"{root}/t"
            await thrift.call("create_table", table)
            assert (await thrift.call("get_table", "d", "t")).sd.location == f"file:{root}/t"
            part = _partition("d", "t", "a")
            part.sd = copy.deepcopy(table.sd)
            part.sd.location = f"{root}/p"
            await thrift.call("add_partition", part)
            assert (await thrift.call("get_partition", "d", "t", ["a"])).sd.location == f"file:{root}/p"
            part = await thrift.call("get_partition", "d", "t", ["a"])
            part.sd.location = f"file://{root}/p2"
            await thrift.call("alter_partition", "d", "t", part)
            assert (await thrift.call("get_partition", "d", "t", ["a"])).sd.location == f"file:{root}/p2"
            table = await thrift.call("get_table", "d", "t")
            table.sd.location = f"{root}/t2"
            await thrift.call("alter_table", "d", "t", table)
            assert (await thrift.call("get_table", "d", "t")).sd.location == f"file:{root}/t2"
        finally:
            thrift.client.close()


async def test_a_location_without_a_scheme_takes_the_configured_default_file_system(pg_dsn: str) -> None:
    """fs.defaultFS names the file system a bare path is on, its authority included (no file is touched
    there: only local file systems are reached)."""
    async with running_gateway(pg_dsn, **{"fs.defaultFS": "hdfs://namenode:8020"}) as gw:
        thrift = Thrift(gw)
        try:
            await thrift.call("create_database", ht.Database("d", "", "/warehouse/d.db", {}))
            assert (await thrift.call("get_database", "d")).locationUri == "hdfs://namenode:8020/warehouse/d.db"
            await thrift.call("create_database", ht.Database("e", "", "s3a://bucket/e.db", {}))
            assert (await thrift.call("get_database", "e")).locationUri == "s3a://bucket/e.db"
        finally:
            thrift.client.close()


async def test_a_table_stored_with_a_bare_location_still_moves_with_its_rename(pg_dsn: str, tmp_path: Path) -> None:
    """Objects stored with a bare path before locations were qualified (or written over gRPC, which stores
    them as sent) are at their default place when a client sends the location back qualified: a rename
    over Thrift (Spark's ALTER TABLE ... RENAME TO sends the location it read) moves the directory as before."""
    warehouse = tmp_path / "w"
    async with running_gateway(pg_dsn, **{"hive.metastore.warehouse.dir": str(warehouse)}) as gw:
        grpc_client = await connect(f"127.0.0.1:{gw.port}")
        thrift = Thrift(gw)
        try:
            await grpc_client.catalog.CreateDatabase(pb.CreateDatabaseRequest(
                database=pb.Database(name="legacy", location=str(warehouse / "legacy.db"))))
            await grpc_client.catalog.CreateTable(pb.CreateTableRequest(table=builders.table("legacy", "t", keys=())))
            table = await thrift.call("get_table", "legacy", "t")
            assert table.sd.location == str(warehouse / "legacy.db" / "t")  # stored as gRPC sent it: bare
            data = warehouse / "legacy.db" / "t" / "part-0"
            data.parent.mkdir(parents=True, exist_ok=True)
            data.write_text("rows")
            table.tableName = "u"
            await thrift.call("alter_table", "legacy", "t", table)
            assert (warehouse / "legacy.db" / "u" / "part-0").read_text() == "rows" and not data.exists()
        finally:
            thrift.client.close()
            await grpc_client.channel.close()


async def test_a_drop_by_a_value_its_key_cannot_hold_is_pruned_as_hive_prunes_it(pg_dsn: str) -> None:
    """Hive 2.3's DROP PARTITION (hr='1.5', ds='a') of an int key hr sends ((hr = null) and (ds = 'a')): the
    value, converted to the key's type, is a null constant, and Hive's metastore evaluates a comparison with it
    as unknown for every partition, so the AND is false where ds is not 'a' and undecided where it is. The
    gateway answered UNKNOWN_METHOD for any null constant, on which Hive's engine refuses the statement
    ('Partition not found'), where with Hive's metastore a drop that selects nothing passes (the engine's
    hive.exec.drop.ignorenonexistent) and one of undecided partitions fails ('Unexpected unknown partitions').
    Found by test_hive_engine_random_differential.py, seed 6121 of 150 statements: ALTER TABLE d2.t1 DROP
    PARTITION (hr='1.5', cat='plain'), no partition with cat='plain', refused by the gateway only."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as client:
        for name, rows in (("t", [("a", "1"), ("b", "2")]), ("u", [("b", "2")])):
            table = thrift_table(name, keys=["ds", "hr"])
            table.partitionKeys[1].type = "int"
            await client("create_table", table)
            await client("add_partitions", [tp.Partition(values=list(v), dbName="db", tableName=name, parameters={})
                                            for v in rows])
        assert names_of(await client("get_partitions_by_expr", by_expr("hr_ge_null"))) == (["a/1", "b/2"], True)
        assert names_of(await client("get_partitions_by_expr", by_expr("hr_null_and_ds_a"))) == (["a/1"], True)
        assert names_of(await client("get_partitions_by_expr", by_expr("hr_null_and_ds_a", table="u"))) == ([], False)

        def drop(table: str) -> Any:
            return tp.DropPartitionsRequest(dbName="db", tblName=table, ifExists=True, parts=tp.RequestPartsSpec(
                exprs=[tp.DropPartitionsExpr(expr=GOLDENS["hr_null_and_ds_a"], partArchiveLevel=2)]))

        assert (await client("drop_partitions_req", drop("u"))).partitions == []
        with pytest.raises(tp.MetaException, match="Unexpected unknown partitions"):
            await client("drop_partitions_req", drop("t"))
        assert list(await client("get_partition_names", "db", "t", -1)) == ["ds=a/hr=1", "ds=b/hr=2"]
