"""The mixed workload: 95% batched partition reads, 5% small write transactions, on one table.

Readers behave like queries: a snapshot (GetOpenTxns + GetValidWriteIds) every
`reads_per_snapshot` reads. Writers add one new partition in a transaction and commit, which
makes every gateway's cache catch up from the notification log.
"""

from __future__ import annotations


from loadtest.gateway_targets import DB, GET_PARTITIONS, TABLE, partitions_request
from loadtest.grpc_user import GrpcUser
from loadtest.users import constant, task
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc



class MixedUser(GrpcUser):
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
        self.write_serial = 0
        await self._snapshot()

    async def _snapshot(self) -> None:
        txn_list = (await self.txns.GetOpenTxns(tpb.GetOpenTxnsRequest())).valid_txn_list
        t = (await self.txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
            full_table_names=[f"{DB}.{TABLE}"], valid_txn_list=txn_list))).tables[0]
        self.read = pb.ReadContext(valid_write_id_list=t.valid_write_id_list, table_id=t.table_id)

    @task(95)
    async def read_partitions(self) -> None:
        self.reads += 1
        if self.reads % self.reads_per_snapshot == 0:
            async with self.measure("snapshot"):
                await self._snapshot()
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
