"""Differences from Hive Metastore 2.3.10 that tests/spark/test_hive_engine_random_differential.py found through
Hive 2.3's own engine, each pinned here on the gateway alone at the Thrift level (Hive's answers, seen from the
real one, written in)."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import pytest
from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
from hmsclient.genthrift.hive_metastore import ttypes as ht
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TType
from thrift.transport import TSocket, TTransport

from tests.e2e.test_thrift_api import Thrift, _table, thrift_with_database

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
