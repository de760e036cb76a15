"""metastore.v1.Transactions."""

from __future__ import annotations

from typing import TypeAlias

import grpc

from gateway.auth import OPEN_AUTHENTICATOR, Authenticator, Ownership, shown
from gateway.config import Settings
from gateway.errors import rpc_methods
from gateway.servicers.locks import operation_from_pb
from gateway.servicers.validation import check_batch, reply_budget, require, within_reply_budget
from protos.metastore.v1 import transactions_pb2 as pb
from protos.metastore.v1 import transactions_pb2_grpc
from store.errors import InvalidArgument, ResourceExhausted
from store.cache.facade import CachedCatalog
from store.lock_store import LockStore
from store.txn_store import TxnStore
from store.write_set import DynamicPartitions
from store.txns import MAX_SHOW_ROWS
from hive.writeids import ValidTxnList

Ctx: TypeAlias = grpc.aio.ServicerContext


@rpc_methods
class TransactionsServicer(transactions_pb2_grpc.TransactionsServicer):
    def __init__(self, store: TxnStore, settings: Settings, locks: LockStore | None = None,
                 cached: CachedCatalog | None = None, auth: Authenticator = OPEN_AUTHENTICATOR) -> None:
        self._store = store
        self._settings = settings
        self._locks = locks
        self._cached = cached
        self._auth = auth
        self._owners = Ownership(store, locks)

    async def OpenTxns(self, request: pb.OpenTxnsRequest, context: Ctx) -> pb.OpenTxnsResponse:
        user = self._auth.context_identity(context).user_or(request.user)
        ids, event_id = await self._store.open_txns(request.num_txns, user=user, host=request.hostname,
                                                    agent_info=request.agent_info)
        return pb.OpenTxnsResponse(txn_ids=ids, event_id=event_id)

    async def CommitTxn(self, request: pb.CommitTxnRequest, context: Ctx) -> pb.CommitTxnResponse:
        _positive(request.txn_id, "txn_id")
        await self._owners.check_txns(self._auth.context_identity(context), [request.txn_id], "CommitTxn")
        event_id, written = await self._store.commit(request.txn_id)
        if self._cached is not None:
            self._cached.ended_txn(request.txn_id, event_id, written)
        return pb.CommitTxnResponse(event_id=event_id)

    async def AbortTxns(self, request: pb.AbortTxnsRequest, context: Ctx) -> pb.AbortTxnsResponse:
        check_batch(len(request.txn_ids), "AbortTxns", self._settings.txn_max_open_batch)
        for t in request.txn_ids:
            _positive(t, "txn_ids")
        await self._owners.check_txns(self._auth.context_identity(context), request.txn_ids, "AbortTxns")
        event_ids = await self._store.abort(list(request.txn_ids))
        if self._cached is not None and event_ids:
            self._cached.ended_txns(request.txn_ids, max(event_ids))
        return pb.AbortTxnsResponse(event_ids=event_ids)

    async def Heartbeat(self, request: pb.HeartbeatRequest, context: Ctx) -> pb.HeartbeatResponse:
        txn_ids = list(request.txn_ids)
        if request.HasField("txn_range"):
            lo, hi = request.txn_range.min_txn_id, request.txn_range.max_txn_id
            if lo <= 0 or hi < lo:
                raise InvalidArgument(f"txn_range [{lo}, {hi}] is not a range of txn ids")
            if hi - lo >= self._settings.txn_max_open_batch:
                raise ResourceExhausted(f"txn_range covers {hi - lo + 1} txns, more than hive.txn.max.open.batch")
            txn_ids += range(lo, hi + 1)
        check_batch(len(request.lock_ids) or 1, "Heartbeat (lock_ids)", self._settings.max_batch_size)
        identity = self._auth.context_identity(context)
        await self._owners.check_txns(identity, txn_ids, "Heartbeat")
        await self._owners.check_locks(identity, request.lock_ids, "Heartbeat")
        aborted, nosuch = await self._store.heartbeat(txn_ids) if txn_ids else ([], [])
        lock_ids = list(request.lock_ids)
        nosuch_locks = await self._locks.heartbeat(lock_ids) if lock_ids and self._locks else lock_ids
        return pb.HeartbeatResponse(aborted_txn_ids=aborted, nosuch_txn_ids=nosuch, nosuch_lock_ids=nosuch_locks)

    async def GetOpenTxns(self, request: pb.GetOpenTxnsRequest, context: Ctx) -> pb.GetOpenTxnsResponse:
        if request.current_txn_id < 0:
            raise InvalidArgument("current_txn_id must not be negative")
        snapshot = await self._store.get_open_txns(request.current_txn_id)
        return pb.GetOpenTxnsResponse(
            valid_txn_list=snapshot.to_string(),
            txn_high_water_mark=snapshot.high_watermark,
            open_txn_ids=[t for t in snapshot.exceptions if t not in snapshot.aborted],
            aborted_txn_ids=sorted(snapshot.aborted),
        )

    async def AllocateTableWriteIds(
        self, request: pb.AllocateTableWriteIdsRequest, context: Ctx
    ) -> pb.AllocateTableWriteIdsResponse:
        check_batch(len(request.txn_ids), "AllocateTableWriteIds", self._settings.txn_max_open_batch)
        await self._owners.check_txns(self._auth.context_identity(context), request.txn_ids, "AllocateTableWriteIds")
        ids = await self._store.allocate_write_ids(list(request.txn_ids), require(request.db_name, "db_name"),
                                                   require(request.table_name, "table_name"))
        return pb.AllocateTableWriteIdsResponse(
            txn_to_write_ids=[pb.TxnToWriteId(txn_id=t, write_id=w) for t, w in sorted(ids.items())])

    async def AddDynamicPartitions(
        self, request: pb.AddDynamicPartitionsRequest, context: Ctx
    ) -> pb.AddDynamicPartitionsResponse:
        _positive(request.txn_id, "txn_id")
        if request.write_id < 0:
            raise InvalidArgument(f"write_id must not be negative, got {request.write_id}")
        await self._owners.check_txns(self._auth.context_identity(context), [request.txn_id], "AddDynamicPartitions")
        names = await self._store.add_dynamic_partitions(DynamicPartitions(
            request.txn_id, request.write_id, require(request.db_name, "db_name"),
            require(request.table_name, "table_name"), tuple(request.partition_names),
            operation_from_pb(request.operation, "operation")), self._settings.max_batch_size)
        return pb.AddDynamicPartitionsResponse(partition_names=names)

    async def GetValidWriteIds(self, request: pb.GetValidWriteIdsRequest, context: Ctx) -> pb.GetValidWriteIdsResponse:
        check_batch(len(request.full_table_names), "GetValidWriteIds", self._settings.max_batch_size)
        txn_list = ValidTxnList.parse(require(request.valid_txn_list, "valid_txn_list"))
        tables = await self._store.get_valid_write_ids(list(request.full_table_names), txn_list)
        return pb.GetValidWriteIdsResponse(tables=[
            pb.TableValidWriteIds(full_table_name=t.full_table_name, valid_write_id_list=t.valid_write_ids.to_string(),
                                  table_id=t.table_id) for t in tables])

    async def ShowTransactions(self, request: pb.ShowTransactionsRequest, context: Ctx) -> pb.ShowTransactionsResponse:
        identity = self._auth.context_identity(context)
        rows = [pb.TxnInfo(txn_id=t.txn_id, state=t.state, started_time_ms=t.started_ms,
                           last_heartbeat_time_ms=t.last_heartbeat_ms, agent_info=t.agent_info, txn_type=t.txn_type,
                           **dict(zip(("user", "hostname"), shown(identity, t.user, t.host))))
                for t in await self._store.show_transactions(request.state.upper())]
        kept, truncated = within_reply_budget(rows, MAX_SHOW_ROWS, reply_budget(self._settings.max_message_bytes))
        return pb.ShowTransactionsResponse(transactions=kept, truncated=truncated)


def _positive(value: int, what: str) -> None:
    if value <= 0:
        raise InvalidArgument(f"{what} must be a txn id (positive), got {value}")
