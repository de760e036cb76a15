"""The write side of Hive 4's transaction calls over Thrift, against what Hive 4's metastore answers
(standalone-metastore/metastore-server/.../txn/jdbc/functions/*Function.java) for what Hive 4's
clients send on their normal paths (ql/.../lockmgr/DbTxnManager.java, ql/.../DriverTxnHandler.java,
HiveMetaStoreClient.java)."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest

from gateway.app import Gateway
from gateway.thrift.idl import hms
from protos.metastore.v1 import catalog_pb2 as pb
from tests.builders import table
from tests.conftest import connect, gateway_settings
from tests.thrift_client import ThriftClient


@pytest.fixture
async def call(pg_dsn: str) -> AsyncIterator[ThriftClient]:
    gw = Gateway(gateway_settings(pg_dsn))
    await gw.start()
    grpc_client = await connect(f"127.0.0.1:{gw.port}")
    await grpc_client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await grpc_client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", transactional=True)))
    client = ThriftClient(gw.thrift_port)
    try:
        yield client
    finally:
        client.close()
        await grpc_client.channel.close()
        await gw.stop()


async def _open(call: ThriftClient, **fields: Any) -> int:
    (txn,) = (await call("open_txns", hms.OpenTxnRequest(num_txns=1, user="hive", hostname="hs2", **fields))).txn_ids
    return int(txn)


async def _allocate(call: ThriftClient, *txns: int, **fields: Any) -> dict[int, int]:
    answer = await call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
        dbName="db", tableName="t", txnIds=list(txns), **fields))
    return {a.txnId: a.writeId for a in answer.txnToWriteIds}


async def test_hive4_records_a_readers_write_ids_with_add_write_ids_to_min_history(call: ThriftClient) -> None:
    """Every Hive 4 query that reads a transactional table sends it once its snapshot is taken; Hive
    4's metastore answers it (and stores nothing) unless metastore.txn.use.minhistorywriteid is on."""
    txn = await _open(call)
    assert await call("add_write_ids_to_min_history", txn, {"db.t": 1}) is None
    assert await call("add_write_ids_to_min_history", txn, {}) is None
    assert await _allocate(call, txn) == {txn: 1}  # the txn goes on as before
    await call("commit_txn", hms.CommitTxnRequest(txnid=txn))
