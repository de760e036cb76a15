"""metastore.v1.Locks: convert, check limits, call the lock store, convert back."""

from __future__ import annotations

from dataclasses import replace
from typing import TypeAlias

import grpc

from gateway.auth import OPEN_AUTHENTICATOR, Authenticator, Identity, Ownership, shown
from gateway.config import Settings
from gateway.errors import rpc_methods
from gateway.servicers.validation import check_batch, reply_budget, within_reply_budget
from protos.metastore.v1 import locks_pb2 as pb
from protos.metastore.v1 import locks_pb2_grpc
from store.errors import InvalidArgument
from hive.lock_rules import DataOperationType, LockComponent, LockState, LockType, make_scope
from store.lock_store import LockStore
from store.locks import LockInfo, LockRequest, LockResult
from store.txns import MAX_SHOW_ROWS

Ctx: TypeAlias = grpc.aio.ServicerContext

_TYPE_FROM_PB = {pb.SHARED_READ: LockType.SHARED_READ, pb.SHARED_WRITE: LockType.SHARED_WRITE,
                 pb.EXCL_WRITE: LockType.EXCL_WRITE, pb.EXCLUSIVE: LockType.EXCLUSIVE}
_TYPE_TO_PB = {v: k for k, v in _TYPE_FROM_PB.items()}
_OP_FROM_PB = {pb.DATA_OPERATION_TYPE_UNSPECIFIED: DataOperationType.UNSET,
               pb.DATA_OPERATION_SELECT: DataOperationType.SELECT, pb.DATA_OPERATION_INSERT: DataOperationType.INSERT,
               pb.DATA_OPERATION_UPDATE: DataOperationType.UPDATE, pb.DATA_OPERATION_DELETE: DataOperationType.DELETE,
               pb.DATA_OPERATION_UNSET: DataOperationType.UNSET, pb.DATA_OPERATION_NO_TXN: DataOperationType.NO_TXN}
_OP_TO_PB = {v: k for k, v in _OP_FROM_PB.items() if k != pb.DATA_OPERATION_TYPE_UNSPECIFIED}
_STATE_TO_PB = {LockState.ACQUIRED: pb.ACQUIRED, LockState.WAITING: pb.WAITING}

_SHOW_LOCKS_HEADER = ("Lock ID", "Database", "Table", "Partition", "State", "Blocked By", "Type", "Transaction ID",
                      "Last Heartbeat", "Acquired At", "User", "Hostname", "Agent Info")


@rpc_methods
class LocksServicer(locks_pb2_grpc.LocksServicer):
    def __init__(self, store: LockStore, settings: Settings, owners: Ownership | None = None,
                 auth: Authenticator = OPEN_AUTHENTICATOR) -> None:
        self._store = store
        self._settings = settings
        self._owners = owners
        self._auth = auth

    async def _check(self, context: Ctx, lock_id: int, what: str) -> None:
        if self._owners is not None:
            await self._owners.check_locks(self._auth.context_identity(context), [lock_id], what)

    async def Lock(self, request: pb.LockRequest, context: Ctx) -> pb.LockResponse:
        check_batch(len(request.components), "Lock (components)", self._settings.max_lock_components,
                    setting="metastore.gateway.max.lock.components")
        identity = self._auth.context_identity(context)
        if request.txn_id and self._owners is not None:
            await self._owners.check_txns(identity, [request.txn_id], "Lock")
        result = await self._store.lock(LockRequest(
            tuple(_component(i, c) for i, c in enumerate(request.components)), request.txn_id,
            identity.user_or(request.user), request.hostname, request.agent_info))
        return _response(result)

    async def CheckLock(self, request: pb.CheckLockRequest, context: Ctx) -> pb.LockResponse:
        await self._check(context, request.lock_id, "CheckLock")
        return _response(await self._store.check_lock(request.lock_id))

    async def Unlock(self, request: pb.UnlockRequest, context: Ctx) -> pb.UnlockResponse:
        await self._check(context, request.lock_id, "Unlock")
        await self._store.unlock(request.lock_id)
        return pb.UnlockResponse()

    async def ShowLocks(self, request: pb.ShowLocksRequest, context: Ctx) -> pb.ShowLocksResponse:
        if request.table_name and not request.db_name:
            raise InvalidArgument("ShowLocks: a table_name needs its db_name")
        scope = (make_scope(request.db_name, request.table_name or None, request.partition_name or None)
                 if request.db_name else None)
        if request.partition_name and scope is None:
            raise InvalidArgument("ShowLocks: a partition_name needs its db_name and table_name")
        infos = [_shown(self._auth.context_identity(context), i)
                 for i in await self._store.show_locks(scope, extended=request.extended, txn_id=request.txn_id)]
        # The text repeats each row: half the budget for the rows, half for the text.
        kept, truncated = within_reply_budget([_info_to_pb(i) for i in infos], MAX_SHOW_ROWS,
                                              reply_budget(self._settings.max_message_bytes) // 2)
        return pb.ShowLocksResponse(locks=kept, text=show_locks_text(infos[:len(kept)]), truncated=truncated)


def _shown(identity: Identity, info: LockInfo) -> LockInfo:
    user, host = shown(identity, info.user, info.host)
    return info if (user, host) == (info.user, info.host) else replace(info, user=user, host=host)


def _component(index: int, c: pb.LockComponent) -> LockComponent:
    if c.type not in _TYPE_FROM_PB:
        raise InvalidArgument(f"components[{index}]: type must be SHARED_READ, SHARED_WRITE, EXCL_WRITE or EXCLUSIVE")
    operation = operation_from_pb(c.operation, f"components[{index}]")
    scope = make_scope(c.db_name, c.table_name or None, c.partition_name or None)
    return LockComponent(scope, _TYPE_FROM_PB[c.type], operation,
                         dynamic_partition_write=c.dynamic_partition_write)


def operation_from_pb(value: pb.DataOperationType, what: str) -> DataOperationType:
    operation = _OP_FROM_PB.get(value)
    if operation is None:
        raise InvalidArgument(f"{what}: unknown operation {value}")
    return operation


def _response(result: LockResult) -> pb.LockResponse:
    ext, comp = result.blocked_by or (0, 0)
    return pb.LockResponse(lock_id=result.lock_id, state=_STATE_TO_PB[result.state], blocked_by_lock_id=ext,
                           blocked_by_component_id=comp)


def _info_to_pb(i: LockInfo) -> pb.LockInfo:
    ext, comp = i.blocked_by or (0, 0)
    return pb.LockInfo(
        lock_id=i.lock_id, component_id=i.component_id, db_name=i.scope.db, table_name=i.scope.table or "",
        partition_name=i.scope.partition or "", state=_STATE_TO_PB[i.state], blocked_by_lock_id=ext,
        blocked_by_component_id=comp, type=_TYPE_TO_PB[i.type], txn_id=i.txn_id,
        last_heartbeat_ms=i.last_heartbeat_ms, acquired_at_ms=i.acquired_at_ms, user=i.user, hostname=i.host,
        agent_info=i.agent_info, operation=_OP_TO_PB[i.operation],
    )


def show_locks_text(infos: list[LockInfo]) -> str:
    """Hive's SHOW LOCKS output (ShowLocksOperation.dumpLockInfo): header, then tab-separated rows."""
    lines = ["\t".join(_SHOW_LOCKS_HEADER)]
    for i in infos:
        blocked = f"{i.blocked_by[0]}.{i.blocked_by[1]}" if i.blocked_by else " " * 12
        lines.append("\t".join((
            f"{i.lock_id}.{i.component_id}", i.scope.db, i.scope.table or "NULL", i.scope.partition or "NULL",
            i.state.name, blocked, i.type.name, str(i.txn_id) if i.txn_id else "NULL", str(i.last_heartbeat_ms),
            str(i.acquired_at_ms) if i.acquired_at_ms else "NULL", i.user, i.host, i.agent_info or "NULL")))
    return "\n".join(lines) + "\n"
