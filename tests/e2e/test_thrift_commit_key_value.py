"""Hive 4's commit_txn with keyValue (HiveStreamingConnection.commitTransaction(partitions, key, value):
a streaming source keeps its offsets in a `_meta` table parameter, committed with the data it ingested):
the commit and the parameter in one transaction, both or neither (store/catalog.py
commit_with_table_parameter). Two streaming txns of one table each commit their value, the later commit's
staying, whatever their write ids' order; every snapshot sees the value of the commits it sees, from a
cache as from PostgreSQL; what Hive refuses (a key without `_meta`, a parameter the table lacks, a table
id no table has) is refused, nothing committed and the txn still open."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest
from thriftpy2.thrift import TApplicationException

from gateway.app import Gateway
from gateway.thrift.idl import hms
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.conftest import GatewayClient, connect, running_gateway, wait_applied
from tests.thrift_client import ThriftClient, client_with_database, thrift_table

OFFSET = "_meta.kafka.offset"


class Env:
    """Writes through one gateway; reads from another one's cache (which applied them from the log) and
    from a gateway without a cache (PostgreSQL)."""

    def __init__(self, call: ThriftClient, watcher: Gateway, cached: GatewayClient, uncached: GatewayClient) -> None:
        self.call, self.watcher, self.cached, self.uncached = call, watcher, cached, uncached

    async def open(self, n: int = 1) -> list[int]:
        return list((await self.call("open_txns", hms.OpenTxnRequest(num_txns=n, user="u", hostname="h"))).txn_ids)

    async def allocate(self, txn: int, table: str = "s") -> int:
        (got,) = (await self.call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="db", tableName=table, txnIds=[txn]))).txnToWriteIds
        return int(got.writeId)

    async def commit(self, txn: int, value: str, table_id: int, key: str = OFFSET) -> None:
        await self.call("commit_txn", hms.CommitTxnRequest(txnid=txn, keyValue=hms.CommitTxnKeyValue(
            tableId=table_id, key=key, value=value)))

    async def snapshot(self) -> pb.ReadContext:
        txns = transactions_pb2_grpc.TransactionsStub(self.cached.channel)
        txn_list = (await txns.GetOpenTxns(tpb.GetOpenTxnsRequest())).valid_txn_list
        (ids,) = (await txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
            full_table_names=["db.s"], valid_txn_list=txn_list))).tables
        return pb.ReadContext(valid_write_id_list=ids.valid_write_id_list, table_id=ids.table_id)

    async def offset_seen(self, read: pb.ReadContext) -> str:
        """The parameter as the snapshot sees it, from the cache and from PostgreSQL: the same."""
        request = pb.GetTableRequest(db_name="db", table_name="s", read=read)
        await wait_applied(self.watcher)
        cache = self.watcher.cache
        assert cache is not None
        hits = cache.stats.hits
        cached = (await self.cached.catalog.GetTable(request)).table.parameters[OFFSET]
        assert cache.stats.hits == hits + 1  # answered by the cache
        assert (await self.uncached.catalog.GetTable(request)).table.parameters[OFFSET] == cached
        return cached


@pytest.fixture
async def env(pg_dsn: str) -> AsyncIterator[Env]:
    async with running_gateway(pg_dsn) as gw, running_gateway(pg_dsn) as watcher, \
            running_gateway(pg_dsn, **{"metastore.gateway.cache.enabled": "false"}) as plain, \
            client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("s", keys=("p",), transactional="true", **{OFFSET: "0"}))
        cached, uncached = await connect(f"127.0.0.1:{watcher.port}"), await connect(f"127.0.0.1:{plain.port}")
        try:
            yield Env(call, watcher, cached, uncached)
        finally:
            await cached.channel.close()
            await uncached.channel.close()


async def test_two_streaming_txns_commit_their_offsets_the_later_commit_staying(env: Env) -> None:
    table_id = (await env.call("get_table", "db", "s")).id
    first, second = await env.open(2)
    assert (await env.allocate(first), await env.allocate(second)) == (1, 2)
    before = await env.snapshot()
    await env.commit(second, "20", table_id)  # the later write id commits first
    between = await env.snapshot()
    await env.commit(first, "10", table_id)
    after = await env.snapshot()
    assert await env.offset_seen(before) == "0"
    assert await env.offset_seen(between) == "20"
    assert await env.offset_seen(after) == "10"  # the later commit's, as Hive's in-place update leaves it
    assert (await env.call("get_table", "db", "s")).parameters[OFFSET] == "10"
    (third,) = await env.open()  # a txn without a write id of the table: it takes one for the parameter
    await env.commit(third, "30", table_id)
    assert await env.offset_seen(await env.snapshot()) == "30"
    assert (await env.call("get_open_txns")).open_txns == []


async def test_what_hive_refuses_commits_nothing_and_leaves_the_txn_open(env: Env) -> None:
    table_id = (await env.call("get_table", "db", "s")).id
    (txn,) = await env.open()
    await env.allocate(txn)
    for key, tid, said in (("offset", table_id, "whose key starts with '_meta'"),
                           ("_meta.other", table_id, "which it does not have"),
                           (OFFSET, table_id + 1000, "which no table has")):
        with pytest.raises(TApplicationException, match=said):
            await env.commit(txn, "5", tid, key)
        assert (await env.call("get_open_txns")).open_txns == [txn]
    assert (await env.call("get_table", "db", "s")).parameters[OFFSET] == "0"
    await env.commit(txn, "5", table_id)
    assert (await env.call("get_table", "db", "s")).parameters[OFFSET] == "5"
    await env.commit(txn, "6", table_id)  # committed already: answered as a commit, the value left alone
    assert (await env.call("get_table", "db", "s")).parameters[OFFSET] == "5"
    with pytest.raises(hms.NoSuchTxnException):
        await env.commit(txn + 100, "7", table_id)


async def test_another_txns_open_alter_is_not_ended_by_a_commits_parameter(env: Env) -> None:
    table_id = (await env.call("get_table", "db", "s")).id
    altering, streaming = await env.open(2)
    write_id = await env.allocate(altering)
    table = await env.call("get_table", "db", "s")
    table.parameters["note"] = "altered"
    await env.call("alter_table_req", hms.AlterTableRequest(dbName="db", tableName="s", table=table,
                                                            writeId=write_id))
    with pytest.raises(TApplicationException, match="being altered by txn"):
        await env.commit(streaming, "9", table_id)
    await env.call("commit_txn", hms.CommitTxnRequest(txnid=altering))
    await env.commit(streaming, "9", table_id)  # once that one committed
    got: Any = await env.call("get_table", "db", "s")
    assert (got.parameters[OFFSET], got.parameters["note"]) == ("9", "altered")


async def test_a_table_that_takes_no_write_ids_is_set_in_place(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("plain", **{OFFSET: "0"}))
        table_id = (await call("get_table", "db", "plain")).id
        (txn,) = (await call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
        await call("commit_txn", hms.CommitTxnRequest(txnid=txn, keyValue=hms.CommitTxnKeyValue(
            tableId=table_id, key=OFFSET, value="3")))
        assert (await call("get_table", "db", "plain")).parameters[OFFSET] == "3"
