"""The gateway as a load-test target: processes, data, and the users that read it.

Everything here talks to the gateway through its public gRPC API only. Gateways run as their
own OS processes so the load generator never shares their event loop.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from typing import AsyncIterator, Sequence

import grpc

from loadtest import gateway_process
from loadtest.grpc_user import GrpcUser
from loadtest.users import constant, task
from protos.metastore.v1 import admin_pb2, admin_pb2_grpc
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc

DB, TABLE = "bench", "events"
GET_PARTITIONS = "/metastore.v1.Catalog/GetPartitionsByNames"
GET_TABLE = "/metastore.v1.Catalog/GetTable"


def partition_values(count: int, start: dt.date = dt.date(2024, 1, 1)) -> list[tuple[str, str]]:
    """`count` (ds, hr) pairs, 24 hours a day from `start` — the same for every target (loadtest.hms's
    hourly_values is this function)."""
    return [((start + dt.timedelta(days=i // 24)).isoformat(), str(i % 24)) for i in range(count)]


def partition_names(count: int) -> list[str]:
    return [f"ds={ds}/hr={hr}" for ds, hr in partition_values(count)]


def bench_table(name: str = TABLE) -> pb.Table:
    """A transactional ORC table of the `bench` database, partitioned by (ds string, hr int)."""
    return pb.Table(
        db_name=DB, name=name, table_type=pb.MANAGED, transactional=True,
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


def partitions_request(names: Sequence[str], read: pb.ReadContext) -> bytes:
    return pb.GetPartitionsByNamesRequest(db_name=DB, table_name=TABLE, names=list(names),
                                          read=read).SerializeToString()


class GatewayProcess(gateway_process.GatewayProcess):
    """`metastore-gateway serve ARGS` in its own process, serving (`address`) once constructed; its
    output in a temporary log file."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        super().__init__(args, env=env)
        self.wait_serving(120)


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


@contextlib.asynccontextmanager
async def gateway_target(dsn: str, *, cache: bool, names: Sequence[str],
                         extra: Sequence[str] = ()) -> AsyncIterator[str]:
    import asyncio

    conf = ["--conf", f"metastore.gateway.cache.enabled={'true' if cache else 'false'}"]
    gw = await asyncio.to_thread(GatewayProcess, "--dsn", dsn, *conf, *extra)
    try:
        if cache:
            await asyncio.to_thread(warm, gw.address, names)
        yield gw.address
    finally:
        await asyncio.to_thread(gw.stop)


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
        read = pb.ReadContext()
        if self.options.get("snapshot", True):
            import asyncio

            read = await asyncio.to_thread(_snapshot_at, self.host)
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


def _snapshot_at(address: str) -> pb.ReadContext:
    with grpc.insecure_channel(address) as channel:
        return snapshot(channel)
