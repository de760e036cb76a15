"""The gateway as a load-test target: the benchmark's data and the users that read and write it.

Everything here talks to the gateway through its public gRPC API only (the processes: loadtest.harness).
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Sequence

import grpc

from loadtest.users import GrpcUser, constant, task
from protos.metastore.v1 import admin_pb2, admin_pb2_grpc, catalog_pb2_grpc, transactions_pb2_grpc
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2 as tpb

DB, TABLE = "bench", "events"
GET_PARTITIONS = "/metastore.v1.Catalog/GetPartitionsByNames"
GET_TABLE = "/metastore.v1.Catalog/GetTable"


def partition_values(count: int, start: dt.date = dt.date(2024, 1, 1)) -> list[tuple[str, str]]:
    """`count` (ds, hr) pairs, 24 hours a day from `start` — the same for every target (loadtest.hms's
    hourly_values is this function)."""
    return [((start + dt.timedelta(days=i // 24)).isoformat(), str(i % 24)) for i in range(count)]


def partition_names(count: int) -> list[str]:
    return [f"ds={ds}/hr={hr}" for ds, hr in partition_values(count)]


def bench_table(name: str = TABLE, db: str = DB, *, external: bool = False) -> pb.Table:
    """An ORC table of the database `db`, partitioned by (ds string, hr int): transactional, or
    external (latest wins)."""
    return pb.Table(
        db_name=db, name=name, table_type=pb.EXTERNAL if external else pb.MANAGED, transactional=not external,
        columns=[pb.FieldSchema(name="id", type="bigint"), pb.FieldSchema(name="payload", type="string")],
        partition_keys=[pb.FieldSchema(name="ds", type="string"), pb.FieldSchema(name="hr", type="int")],
        sd=pb.StorageDescriptor(
            input_format="org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
            output_format="org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
            serde=pb.SerDeInfo(serialization_lib="org.apache.hadoop.hive.ql.io.orc.OrcSerde")),
    )


def load_gateway(address: str, partitions: int, batch: int = 2000) -> None:
    """Create bench.events (transactional) with `partitions` partitions, in one transaction."""
    with grpc.insecure_channel(address) as channel:
        catalog = catalog_pb2_grpc.CatalogStub(channel)
        txns = transactions_pb2_grpc.TransactionsStub(channel)
        catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=DB)))
        catalog.CreateTable(pb.CreateTableRequest(table=bench_table()))
        (txn,) = txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="bench", hostname="localhost")).txn_ids
        values = partition_values(partitions)
        for start in range(0, len(values), batch):
            catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=TABLE, txn_id=txn,
                partitions=[pb.Partition(values=list(v), parameters={"numRows": "1000", "totalSize": "123456"})
                            for v in values[start:start + batch]]))
        txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn))


def snapshot(channel: grpc.Channel) -> pb.ReadContext:
    """A fresh snapshot of bench.events, as a query would take it (outside a txn)."""
    txns = transactions_pb2_grpc.TransactionsStub(channel)
    txn_list = txns.GetOpenTxns(tpb.GetOpenTxnsRequest()).valid_txn_list
    t = txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(full_table_names=[f"{DB}.{TABLE}"],
                                                          valid_txn_list=txn_list)).tables[0]
    return pb.ReadContext(valid_write_id_list=t.valid_write_id_list, table_id=t.table_id)


async def read_context(txns: transactions_pb2_grpc.TransactionsStub, table: str = TABLE,
                       timeout_s: float = 60.0) -> pb.ReadContext:
    """A fresh snapshot of `bench.<table>` taken as a query takes it outside a txn (GetOpenTxns, then
    GetValidWriteIds), as the read context of the table's reads."""
    state = await txns.GetOpenTxns(tpb.GetOpenTxnsRequest(), timeout=timeout_s)
    got = (await txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
        full_table_names=[f"{DB}.{table}"], valid_txn_list=state.valid_txn_list), timeout=timeout_s)).tables[0]
    return pb.ReadContext(valid_write_id_list=got.valid_write_id_list, table_id=got.table_id)


def partitions_request(names: Sequence[str], read: pb.ReadContext) -> bytes:
    return pb.GetPartitionsByNamesRequest(db_name=DB, table_name=TABLE, names=list(names),
                                          read=read).SerializeToString()


def warm(address: str, names: Sequence[str]) -> None:
    """Read until the cache answers (the first read loads the table in the background)."""
    with grpc.insecure_channel(address) as channel:
        admin = admin_pb2_grpc.AdminStub(channel)
        read = snapshot(channel)
        call = channel.unary_unary(GET_PARTITIONS)
        for _ in range(600):
            before = admin.CacheStats(admin_pb2.CacheStatsRequest()).hits
            call(partitions_request(names[:10], read))
            if admin.CacheStats(admin_pb2.CacheStatsRequest()).hits > before:
                return
            time.sleep(0.1)
    raise RuntimeError(f"the cache at {address} did not warm up")


class GatewayReader(GrpcUser):
    """Reads bench.events by name in batches of `options["batch"]`, under one snapshot per user (a
    query's snapshot), cycling through pre-built requests so the generator spends little CPU per call.
    Responses are not parsed (the same for every target); the first one is, to count partitions."""

    wait_time = constant(0)

    async def on_start(self) -> None:
        await super().on_start()
        assert self.channel is not None
        batch = int(self.options.get("batch", 100))
        names = list(self.options["names"])
        read = await read_context(transactions_pb2_grpc.TransactionsStub(self.channel))
        self.requests = [partitions_request(self.rng.sample(names, batch), read) for _ in range(32)]
        self.table_request = pb.GetTableRequest(db_name=DB, table_name=TABLE, read=read).SerializeToString()
        self.call_partitions = self.channel.unary_unary(GET_PARTITIONS)
        self.call_table = self.channel.unary_unary(GET_TABLE)
        self.batch = batch
        self.i = 0
        reply = pb.GetPartitionsByNamesResponse.FromString(await self.call_partitions(self.requests[0]))
        if len(reply.partitions) != batch:
            raise RuntimeError(f"expected {batch} partitions, got {len(reply.partitions)}")

    @task
    async def read(self) -> None:
        op = self.options.get("op", "partitions")
        self.i += 1
        if op == "table":
            async with self.measure("GetTable") as m:
                await self.call_table(self.table_request, timeout=self.call_timeout_s)
                m.items = 1
        else:
            async with self.measure(f"GetPartitionsByNames({self.batch})") as m:
                await self.call_partitions(self.requests[self.i % len(self.requests)], timeout=self.call_timeout_s)
                m.items = self.batch


class MixedUser(GrpcUser):
    """The mixed workload: 95% batched partition reads, 5% small write transactions, on bench.events.
    Readers behave like queries, a snapshot (GetOpenTxns + GetValidWriteIds) every `reads_per_snapshot`
    reads; writers add one new partition in a transaction and commit, which makes every gateway's
    cache catch up from the notification log."""

    wait_time = constant(0)
    reads_per_snapshot = 20

    async def on_start(self) -> None:
        await super().on_start()
        assert self.channel is not None
        self.txns = transactions_pb2_grpc.TransactionsStub(self.channel)
        self.catalog = catalog_pb2_grpc.CatalogStub(self.channel)
        self.call_partitions = self.channel.unary_unary(GET_PARTITIONS)
        self.names = list(self.options["names"])
        self.batch = int(self.options.get("batch", 100))
        self.reads = 0
        self.read = pb.ReadContext()
        # Targets share one database: each run's writers start from their own base, so a later
        # target's new partitions never collide with an earlier target's (ALREADY_EXISTS).
        self.write_serial = time.time_ns() // 1000 % 10**9
        self.read = await read_context(self.txns)

    @task(95)
    async def read_partitions(self) -> None:
        self.reads += 1
        if self.reads % self.reads_per_snapshot == 0:
            async with self.measure("snapshot"):
                self.read = await read_context(self.txns)
        request = partitions_request(self.rng.sample(self.names, self.batch), self.read)
        async with self.measure(f"GetPartitionsByNames({self.batch})") as m:
            await self.call_partitions(request, timeout=self.call_timeout_s)
            m.items = self.batch

    @task(5)
    async def write_txn(self) -> None:
        self.write_serial += 1
        values = [f"2099-{self.user_id:04d}", str(self.write_serial)]
        async with self.measure("write txn (1 partition)"):
            (txn,) = (await self.txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="bench"))).txn_ids
            await self.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=TABLE, txn_id=txn, partitions=[pb.Partition(values=values)]))
            await self.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn))
