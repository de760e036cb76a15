"""Client-side lock waiting, as Hive's DbLockManager does it (hive-reference §6.7, seed 003).

`LockClient.acquire` sends Lock; while the answer is WAITING it backs off and asks CheckLock again:
100 ms, doubling, each sleep capped at hive.lock.sleep.between.retries (60 s), at most
hive.lock.numretries (100) times. Still waiting then (or on any error or cancellation while
waiting), it releases the request with Unlock, so an abandoned request does not block every later
conflicting one (the FIFO rule counts waiting requests), and raises `LockAcquireTimeout`. Hive also
floors the cap at 15 s; here the setting is the cap, so short waits can be configured and tested.

`LockClient.hold` is the whole life of a standalone lock: acquire, heartbeat it every
`heartbeat_interval_s` (use hive.txn.timeout / 2, as Hive's client does) while the body runs, then
Unlock. Locks under a txn are neither heartbeated nor unlocked here: the txn's own heartbeat keeps
them, and its commit or abort releases them.

`BlockingLockClient.acquire` is the same wait for synchronous code over a blocking stub (the PySpark
client's `GatewayClient.lock`), sleeping in the caller's thread.

The clock (`hive.clock.Clock`: monotonic time and sleep; `ThreadClock` for the blocking client) is
injectable so tests never really wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from dataclasses import dataclass
from typing import Any, AsyncIterator, Iterator

import grpc

from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from hive.backoff import Backoff
from hive.clock import SYSTEM_CLOCK, Clock, ThreadClock
from hive.lock_rules import DataOperationType, LockPlan, LockPolicy, LockType

_log = logging.getLogger(__name__)

_TYPE_TO_PB = {LockType.SHARED_READ: lpb.SHARED_READ, LockType.SHARED_WRITE: lpb.SHARED_WRITE,
               LockType.EXCL_WRITE: lpb.EXCL_WRITE, LockType.EXCLUSIVE: lpb.EXCLUSIVE}
_OP_TO_PB = {DataOperationType.SELECT: lpb.DATA_OPERATION_SELECT, DataOperationType.INSERT: lpb.DATA_OPERATION_INSERT,
             DataOperationType.UPDATE: lpb.DATA_OPERATION_UPDATE, DataOperationType.DELETE: lpb.DATA_OPERATION_DELETE,
             DataOperationType.UNSET: lpb.DATA_OPERATION_UNSET, DataOperationType.NO_TXN: lpb.DATA_OPERATION_NO_TXN}


class LockAcquireTimeout(Exception):
    """Hive's LOCK_ACQUIRE_TIMEDOUT: the request kept waiting through every retry and was released."""

    def __init__(self, message: str, *, lock_id: int, retries: int, waited_s: float, blocked_by: str) -> None:
        super().__init__(message)
        self.lock_id = lock_id
        self.retries = retries
        self.waited_s = waited_s
        self.blocked_by = blocked_by


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    num_retries: int = 100           # hive.lock.numretries
    max_sleep_s: float = 60.0        # hive.lock.sleep.between.retries
    initial_sleep_s: float = 0.1

    def __post_init__(self) -> None:
        if self.num_retries < 0:
            raise ValueError(f"hive.lock.numretries must not be negative, got {self.num_retries}")
        if self.max_sleep_s <= 0 or self.initial_sleep_s <= 0:
            raise ValueError("back-off sleeps must be positive")

    @classmethod
    def from_settings(cls, settings: Any) -> RetryPolicy:
        """From the gateway's Settings (gateway/config.py), which carries Hive's keys."""
        return cls(num_retries=settings.lock_num_retries, max_sleep_s=settings.lock_sleep_between_retries_s)

    def sleeps(self) -> Iterator[float]:
        """The sleep before each retry: 0.1, 0.2, 0.4 ... s, each at most max_sleep_s (no jitter, as Hive)."""
        return Backoff(initial_s=self.initial_sleep_s, max_s=self.max_sleep_s).delays(self.num_retries)


def lock_policy_from_settings(settings: Any) -> LockPolicy:
    return LockPolicy(strict_locking_mode=settings.txn_strict_locking_mode, xlock_write=settings.txn_xlock_write,
                      xlock_iow=settings.txn_xlock_iow)


def to_request(plan: LockPlan, *, txn_id: int = 0, user: str = "", hostname: str = "",
               agent_info: str = "") -> lpb.LockRequest:
    """The gRPC request for a plan from `hive.lock_rules.statement_locks`."""
    return lpb.LockRequest(
        components=[lpb.LockComponent(db_name=c.scope.db, table_name=c.scope.table or "",
                                      partition_name=c.scope.partition or "", type=_TYPE_TO_PB[c.type],
                                      operation=_OP_TO_PB[c.operation]) for c in plan.components],
        txn_id=txn_id, user=user, hostname=hostname, agent_info=agent_info)


def _gave_up(policy: RetryPolicy, response: lpb.LockResponse, retries: int, waited: float) -> LockAcquireTimeout:
    lock_id = response.lock_id
    blocked_by = f"{response.blocked_by_lock_id}.{response.blocked_by_component_id}"
    return LockAcquireTimeout(
        f"could not acquire lock {lock_id}: still waiting (for lock {blocked_by}) after {retries} retries over "
        f"{waited:.1f}s (hive.lock.numretries={policy.num_retries}, hive.lock.sleep.between.retries="
        f"{policy.max_sleep_s:g}s); the request was released. Locks.ShowLocks names the holders.",
        lock_id=lock_id, retries=retries, waited_s=waited, blocked_by=blocked_by)


class LockClient:
    """Lock, CheckLock and Unlock with Hive's waiting rules. `call_timeout_s` bounds each call (a
    job's client passes its call deadline, so a gateway that stops answering ends the wait with an
    error instead of holding the job for good); None leaves calls unbounded (the gateway's own)."""

    def __init__(
        self,
        locks: locks_pb2_grpc.LocksStub,
        policy: RetryPolicy = RetryPolicy(),
        *,
        clock: Clock = SYSTEM_CLOCK,
        call_timeout_s: float | None = None,
    ) -> None:
        self._locks = locks
        self.policy = policy
        self._clock = clock
        self.call_timeout_s = call_timeout_s

    async def acquire(self, request: lpb.LockRequest) -> lpb.LockResponse:
        """Lock, waiting with Hive's back-off; ACQUIRED or `LockAcquireTimeout` (request released)."""
        started = self._clock.monotonic()
        response = await self._locks.Lock(request, timeout=self.call_timeout_s)
        lock_id = response.lock_id
        retries = 0
        try:
            for delay in self.policy.sleeps():
                if response.state == lpb.ACQUIRED:
                    return response
                await self._clock.sleep(delay)
                retries += 1
                response = await self._locks.CheckLock(lpb.CheckLockRequest(lock_id=lock_id),
                                                       timeout=self.call_timeout_s)
        except BaseException:
            await self._release_quietly(lock_id)
            raise
        if response.state == lpb.ACQUIRED:
            return response
        await self._release_quietly(lock_id)
        raise _gave_up(self.policy, response, retries, self._clock.monotonic() - started)

    async def release(self, lock_id: int) -> None:
        await self._locks.Unlock(lpb.UnlockRequest(lock_id=lock_id), timeout=self.call_timeout_s)

    async def _release_quietly(self, lock_id: int) -> None:
        try:  # shielded: a cancelled waiter must still withdraw its request
            await asyncio.shield(self.release(lock_id))
        except grpc.aio.AioRpcError as exc:  # gone already (timed out), or acquired under a txn
            _log.info("releasing lock %d: %s", lock_id, exc.details())

    @contextlib.asynccontextmanager
    async def hold(
        self, request: lpb.LockRequest, txns: transactions_pb2_grpc.TransactionsStub | None = None,
        heartbeat_interval_s: float = 150.0,
    ) -> AsyncIterator[lpb.LockResponse]:
        """Acquire; for a standalone lock, heartbeat it through `txns` while the body runs and
        Unlock it after. Txn locks are left to the txn (heartbeat, commit/abort)."""
        response = await self.acquire(request)
        if request.txn_id:
            yield response
            return
        beat = asyncio.create_task(self._heartbeat(txns, response.lock_id, heartbeat_interval_s)) if txns else None
        try:
            yield response
        finally:
            if beat is not None:
                beat.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await beat
            await self._release_quietly(response.lock_id)

    async def _heartbeat(self, txns: transactions_pb2_grpc.TransactionsStub, lock_id: int, interval_s: float) -> None:
        while True:
            await self._clock.sleep(interval_s)
            try:
                reply = await txns.Heartbeat(tpb.HeartbeatRequest(lock_ids=[lock_id]))
            except grpc.aio.AioRpcError as exc:  # keep trying: the lock lives until hive.txn.timeout
                _log.warning("heartbeat of lock %d failed: %s", lock_id, exc.details())
                continue
            if lock_id in reply.nosuch_lock_ids:
                _log.error("lock %d is gone (timed out?) while still held by this client", lock_id)
                return


class BlockingLockClient:
    """`LockClient.acquire` for synchronous code, over a blocking stub (a `grpc.Channel`'s): the same
    rules (Lock, CheckLock with Hive's back-off, Unlock when giving up or interrupted), each call
    bounded by `call_timeout_s`, the back-off slept in the caller's thread. The PySpark client's
    `GatewayClient.lock` uses it on its own channel: no event loop, no grpc.aio (see that module's
    design note for why not)."""

    def __init__(
        self,
        locks: locks_pb2_grpc.LocksStub,
        policy: RetryPolicy = RetryPolicy(),
        *,
        clock: ThreadClock = SYSTEM_CLOCK,
        call_timeout_s: float | None = None,
    ) -> None:
        self._locks = locks
        self.policy = policy
        self._clock = clock
        self.call_timeout_s = call_timeout_s
        self._never = threading.Event()  # the back-off sleeps its whole time; an interrupt still ends it

    def acquire(self, request: lpb.LockRequest) -> lpb.LockResponse:
        """Lock, waiting with Hive's back-off; ACQUIRED or `LockAcquireTimeout` (request released).
        An exception while waiting (an RPC error, KeyboardInterrupt) releases the request, then is raised."""
        started = self._clock.monotonic()
        response = self._locks.Lock(request, timeout=self.call_timeout_s)
        lock_id = response.lock_id
        retries = 0
        try:
            for delay in self.policy.sleeps():
                if response.state == lpb.ACQUIRED:
                    return response
                self._clock.wait(self._never, delay)
                retries += 1
                response = self._locks.CheckLock(lpb.CheckLockRequest(lock_id=lock_id), timeout=self.call_timeout_s)
        except BaseException:
            self._release_quietly(lock_id)
            raise
        if response.state == lpb.ACQUIRED:
            return response
        self._release_quietly(lock_id)
        raise _gave_up(self.policy, response, retries, self._clock.monotonic() - started)

    def release(self, lock_id: int) -> None:
        self._locks.Unlock(lpb.UnlockRequest(lock_id=lock_id), timeout=self.call_timeout_s)

    def _release_quietly(self, lock_id: int) -> None:
        try:
            self.release(lock_id)
        except grpc.RpcError as exc:  # gone already (timed out), or acquired under a txn
            _log.info("releasing lock %d: %s", lock_id, exc.details() if isinstance(exc, grpc.Call) else exc)
