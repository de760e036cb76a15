"""A small transactional client for tests: open/commit, snapshots, reads and writes on db.t."""

from __future__ import annotations

from dataclasses import dataclass
from typing import AsyncIterator

import asyncpg

from gateway.app import Gateway
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import table
from tests.conftest import GatewayClient, connect, gateway_settings


@dataclass
class Txns:
    client: GatewayClient
    txn: transactions_pb2_grpc.TransactionsStub
    gw: Gateway
    dsn: str

    async def open(self, n: int = 1) -> list[int]:
        return list((await self.txn.OpenTxns(tpb.OpenTxnsRequest(num_txns=n, user="test", hostname="h"))).txn_ids)

    async def commit(self, txn_id: int) -> None:
        await self.txn.CommitTxn(tpb.CommitTxnRequest(txn_id=txn_id))

    async def txn_list(self, current_txn: int = 0) -> str:
        return (await self.txn.GetOpenTxns(tpb.GetOpenTxnsRequest(current_txn_id=current_txn))).valid_txn_list

    async def snapshot(self, current_txn: int = 0, name: str = "db.t", txn_list: str = "") -> pb.ReadContext:
        txn_list = txn_list or await self.txn_list(current_txn)
        got = (await self.txn.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
            full_table_names=[name], valid_txn_list=txn_list))).tables[0]
        return pb.ReadContext(valid_write_id_list=got.valid_write_id_list, table_id=got.table_id, txn_id=current_txn)

    async def names(self, read: pb.ReadContext, table_name: str = "t") -> list[str]:
        reply = await self.client.catalog.ListPartitionNames(pb.ListPartitionNamesRequest(
            db_name="db", table_name=table_name, read=read))
        return list(reply.names)

    async def add(self, txn_id: int, *values: str, table_name: str = "t") -> pb.AddPartitionsResponse:
        return await self.client.catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name="db", table_name=table_name, txn_id=txn_id, partitions=[pb.Partition(values=[v]) for v in values]))

    async def alter(self, txn_id: int, value: str, tag: str) -> pb.AlterPartitionsResponse:
        return await self.client.catalog.AlterPartitions(pb.AlterPartitionsRequest(
            db_name="db", table_name="t", txn_id=txn_id,
            partitions=[pb.Partition(values=[value], parameters={"tag": tag})]))

    async def tag(self, read: pb.ReadContext, value: str) -> str | None:
        reply = await self.client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
            db_name="db", table_name="t", names=[f"p={value}"], read=read))
        return reply.partitions[0].parameters.get("tag", "") if reply.partitions else None

    async def t2w_rows(self) -> list[tuple[int, int]]:
        conn = await asyncpg.connect(self.dsn)
        try:
            return [(r[0], r[1]) for r in await conn.fetch("SELECT txn_id, write_id FROM txn_to_write_id ORDER BY 1")]
        finally:
            await conn.close()


async def started_txns(pg_dsn: str, **conf: str) -> AsyncIterator[Txns]:
    """A gateway (settings `conf`) with db.t, transactional and partitioned by p, and a Txns client
    of it; stopped when the generator ends (`async for t in started_txns(...): yield t` in a fixture)."""
    gw = Gateway(gateway_settings(pg_dsn, **conf))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    t = Txns(client, transactions_pb2_grpc.TransactionsStub(client.channel), gw, pg_dsn)
    await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=(("p", "string"),),
                                                                       transactional=True)))
    try:
        yield t
    finally:
        await client.channel.close()
        await gw.stop()
