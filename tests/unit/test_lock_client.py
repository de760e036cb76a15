"""The client-side waiting helper with a fake stub and a fake clock: Hive's back-off, the give-up
path that releases the request, release on cancellation, the heartbeat of a held lock; and the same
rules in the blocking client the PySpark client uses. Nothing really waits."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

import grpc
import pytest

from gateway.config import load_settings
from pipeline.locking import (BlockingLockClient, LockAcquireTimeout, LockClient, RetryPolicy,
                              lock_policy_from_settings, to_request)
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import transactions_pb2 as tpb
from hive.lock_rules import LockPolicy, Statement, TableRef, statement_locks
from tests.clock import FakeClock
from tests.rpc_errors import RpcFailure


@dataclass
class FakeLocks:
    """Answers WAITING `waits` times (Lock included), then ACQUIRED."""

    waits: int
    calls: list[str] = field(default_factory=list)
    unlocked: list[int] = field(default_factory=list)
    timeouts: set[float | None] = field(default_factory=set)

    def _answer(self) -> lpb.LockResponse:
        if self.waits > 0:
            self.waits -= 1
            return lpb.LockResponse(lock_id=7, state=lpb.WAITING, blocked_by_lock_id=3, blocked_by_component_id=1)
        return lpb.LockResponse(lock_id=7, state=lpb.ACQUIRED)

    async def Lock(self, request: lpb.LockRequest, timeout: float | None = None) -> lpb.LockResponse:
        self.calls.append("Lock")
        self.timeouts.add(timeout)
        return self._answer()

    async def CheckLock(self, request: lpb.CheckLockRequest, timeout: float | None = None) -> lpb.LockResponse:
        self.calls.append("CheckLock")
        self.timeouts.add(timeout)
        return self._answer()

    async def Unlock(self, request: lpb.UnlockRequest, timeout: float | None = None) -> lpb.UnlockResponse:
        self.unlocked.append(request.lock_id)
        self.timeouts.add(timeout)
        return lpb.UnlockResponse()


REQUEST = lpb.LockRequest(components=[lpb.LockComponent(db_name="db", table_name="t", type=lpb.EXCLUSIVE)])


def _client(locks: FakeLocks, clock: FakeClock, **policy: float) -> LockClient:
    return LockClient(locks, RetryPolicy(**policy), clock=clock)  # type: ignore[arg-type]


async def test_acquired_at_once_does_not_sleep() -> None:
    locks, clock = FakeLocks(waits=0), FakeClock(autojump=True)
    assert (await _client(locks, clock).acquire(REQUEST)).state == lpb.ACQUIRED
    assert locks.calls == ["Lock"] and clock.sleeps == [] and locks.unlocked == []


async def test_backoff_starts_at_100ms_doubles_and_is_capped() -> None:
    locks, clock = FakeLocks(waits=9), FakeClock(autojump=True)
    response = await _client(locks, clock, max_sleep_s=3.0).acquire(REQUEST)
    assert response.state == lpb.ACQUIRED
    assert clock.sleeps == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 3.0, 3.0, 3.0, 3.0])
    assert locks.calls == ["Lock"] + ["CheckLock"] * 9


async def test_hive_defaults_give_the_documented_92_minutes_before_giving_up() -> None:
    # Seed 003: 100 retries, 60 s cap: 100ms + 200ms + ... + 51200ms + 60s + ... = 91m:42s:300ms.
    assert sum(RetryPolicy().sleeps()) == pytest.approx(91 * 60 + 42.3)


async def test_gives_up_after_numretries_releases_the_request_and_says_why() -> None:
    locks, clock = FakeLocks(waits=1000), FakeClock(autojump=True)
    with pytest.raises(LockAcquireTimeout) as err:
        await _client(locks, clock, num_retries=5, max_sleep_s=0.25).acquire(REQUEST)
    assert clock.sleeps == pytest.approx([0.1, 0.2, 0.25, 0.25, 0.25])
    assert locks.calls.count("CheckLock") == 5 and locks.unlocked == [7]
    assert err.value.lock_id == 7 and err.value.retries == 5 and err.value.waited_s == pytest.approx(1.05)
    message = str(err.value)
    assert "lock 3.1" in message and "hive.lock.numretries=5" in message and "released" in message


async def test_zero_retries_means_one_try() -> None:
    locks, clock = FakeLocks(waits=1), FakeClock(autojump=True)
    with pytest.raises(LockAcquireTimeout):
        await _client(locks, clock, num_retries=0).acquire(REQUEST)
    assert locks.calls == ["Lock"] and locks.unlocked == [7]


async def test_every_call_carries_the_clients_deadline() -> None:
    """A job's client bounds each Lock, CheckLock and Unlock by its call deadline: a gateway that
    stops answering ends the wait with an error (before, a waiter hung as long as the gateway did)."""
    locks, clock = FakeLocks(waits=3), FakeClock(autojump=True)
    client = LockClient(locks, RetryPolicy(num_retries=1), clock=clock, call_timeout_s=7.5)  # type: ignore[arg-type]
    with pytest.raises(LockAcquireTimeout):
        await client.acquire(REQUEST)
    assert locks.calls == ["Lock", "CheckLock"] and locks.unlocked == [7] and locks.timeouts == {7.5}


async def test_a_cancelled_waiter_withdraws_its_request() -> None:
    locks, clock = FakeLocks(waits=1000), FakeClock(autojump=True)
    client = LockClient(locks, RetryPolicy(max_sleep_s=0.01), clock=clock)  # type: ignore[arg-type]
    task = asyncio.create_task(client.acquire(REQUEST))
    while len(clock.sleeps) < 5:  # waiting, several retries in
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert locks.unlocked == [7]


async def test_hold_heartbeats_a_standalone_lock_and_unlocks_it() -> None:
    beats: list[list[int]] = []

    class FakeTxns:
        async def Heartbeat(self, request: tpb.HeartbeatRequest) -> tpb.HeartbeatResponse:
            beats.append(list(request.lock_ids))
            return tpb.HeartbeatResponse()

    locks, clock = FakeLocks(waits=0), FakeClock()
    client = LockClient(locks, clock=clock)  # type: ignore[arg-type]
    async with client.hold(REQUEST, FakeTxns(), heartbeat_interval_s=150.0) as held:  # type: ignore[arg-type]
        assert held.lock_id == 7
        await clock.advance(149.0)
        assert beats == []
        await clock.advance(1.0 + 2 * 150.0)
    assert beats and all(b == [7] for b in beats) and locks.unlocked == [7]
    assert len(beats) == 3 and clock.sleeps == [150.0] * 4  # the fourth sleep was cancelled by the exit


async def test_hold_leaves_txn_locks_to_the_txn() -> None:
    locks = FakeLocks(waits=0)
    client = LockClient(locks)  # type: ignore[arg-type]
    async with client.hold(lpb.LockRequest(components=REQUEST.components, txn_id=5)):
        pass
    assert locks.unlocked == []


async def test_release_errors_while_giving_up_do_not_hide_the_timeout() -> None:
    class GoneLocks(FakeLocks):
        async def Unlock(self, request: lpb.UnlockRequest, timeout: float | None = None) -> lpb.UnlockResponse:
            raise grpc.aio.AioRpcError(grpc.StatusCode.NOT_FOUND, grpc.aio.Metadata(), grpc.aio.Metadata(), "gone")

    clock = FakeClock(autojump=True)
    with pytest.raises(LockAcquireTimeout):
        await _client(GoneLocks(waits=1000), clock, num_retries=2).acquire(REQUEST)


def test_policies_come_from_the_gateway_settings_with_hive_names() -> None:
    settings = load_settings(environ={}, overrides={"hive.lock.numretries": "7",
                                                    "hive.lock.sleep.between.retries": "2s",
                                                    "hive.txn.strict.locking.mode": "false"})
    assert RetryPolicy.from_settings(settings) == RetryPolicy(num_retries=7, max_sleep_s=2.0)
    assert lock_policy_from_settings(settings) == LockPolicy(strict_locking_mode=False)
    defaults = load_settings(environ={})
    assert RetryPolicy.from_settings(defaults) == RetryPolicy(num_retries=100, max_sleep_s=60.0)
    assert lock_policy_from_settings(defaults) == LockPolicy()


def test_plans_become_grpc_requests() -> None:
    plan = statement_locks(Statement.INSERT, TableRef("db", "T2", "p=2"), [TableRef("db", "T1")])
    request = to_request(plan, txn_id=4, user="u", hostname="h", agent_info="a")
    assert [(c.table_name, c.partition_name, c.type, c.operation) for c in request.components] == [
        ("t1", "", lpb.SHARED_READ, lpb.DATA_OPERATION_SELECT), ("t2", "p=2", lpb.EXCLUSIVE, lpb.DATA_OPERATION_INSERT)]
    assert (request.txn_id, request.user, request.hostname, request.agent_info) == (4, "u", "h", "a")


@dataclass
class BlockingFakeLocks(FakeLocks):
    """FakeLocks for the blocking client: the same answers, from plain methods."""

    def Lock(self, request: lpb.LockRequest, timeout: float | None = None) -> lpb.LockResponse:  # type: ignore[override]
        self.calls.append("Lock")
        self.timeouts.add(timeout)
        return self._answer()

    def CheckLock(self, request: lpb.CheckLockRequest,  # type: ignore[override]
                  timeout: float | None = None) -> lpb.LockResponse:
        self.calls.append("CheckLock")
        self.timeouts.add(timeout)
        return self._answer()

    def Unlock(self, request: lpb.UnlockRequest, timeout: float | None = None) -> lpb.UnlockResponse:  # type: ignore[override]
        self.unlocked.append(request.lock_id)
        self.timeouts.add(timeout)
        return lpb.UnlockResponse()


@dataclass
class JumpingThreadClock:
    """A ThreadClock whose wait() moves time to its end at once; `interrupt_after` waits, it raises
    KeyboardInterrupt instead (a Ctrl-C in the driver while it waits for a lock)."""

    now: float = 0.0
    sleeps: list[float] = field(default_factory=list)
    interrupt_after: int | None = None

    def monotonic(self) -> float:
        return self.now

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        if self.interrupt_after is not None and len(self.sleeps) == self.interrupt_after:
            raise KeyboardInterrupt
        self.sleeps.append(seconds)
        self.now += seconds
        return stop.is_set()


def _blocking(locks: BlockingFakeLocks, clock: JumpingThreadClock, **policy: float) -> BlockingLockClient:
    return BlockingLockClient(locks, RetryPolicy(**policy), clock=clock)  # type: ignore[arg-type]


def test_blocking_client_backs_off_as_the_async_one() -> None:
    locks, clock = BlockingFakeLocks(waits=9), JumpingThreadClock()
    assert _blocking(locks, clock, max_sleep_s=3.0).acquire(REQUEST).state == lpb.ACQUIRED
    assert clock.sleeps == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 3.0, 3.0, 3.0, 3.0])
    assert locks.calls == ["Lock"] + ["CheckLock"] * 9 and locks.unlocked == []
    at_once = BlockingFakeLocks(waits=0)
    assert _blocking(at_once, JumpingThreadClock()).acquire(REQUEST).state == lpb.ACQUIRED
    assert at_once.calls == ["Lock"]


async def test_blocking_client_gives_up_releases_and_says_what_the_async_one_says() -> None:
    locks, clock = BlockingFakeLocks(waits=1000), JumpingThreadClock()
    with pytest.raises(LockAcquireTimeout) as err:
        _blocking(locks, clock, num_retries=5, max_sleep_s=0.25).acquire(REQUEST)
    assert clock.sleeps == pytest.approx([0.1, 0.2, 0.25, 0.25, 0.25])
    assert locks.calls.count("CheckLock") == 5 and locks.unlocked == [7]
    with pytest.raises(LockAcquireTimeout) as async_err:
        await _client(FakeLocks(waits=1000), FakeClock(autojump=True), num_retries=5, max_sleep_s=0.25).acquire(REQUEST)
    assert str(err.value) == str(async_err.value)
    assert (err.value.lock_id, err.value.retries, err.value.blocked_by) == (7, 5, "3.1")
    assert err.value.waited_s == pytest.approx(1.05)
    zero = BlockingFakeLocks(waits=1)
    with pytest.raises(LockAcquireTimeout):
        _blocking(zero, JumpingThreadClock(), num_retries=0).acquire(REQUEST)
    assert zero.calls == ["Lock"] and zero.unlocked == [7]


def test_blocking_client_bounds_every_call_by_the_clients_deadline() -> None:
    locks = BlockingFakeLocks(waits=3)
    client = BlockingLockClient(locks, RetryPolicy(num_retries=1), clock=JumpingThreadClock(),  # type: ignore[arg-type]
                                call_timeout_s=7.5)
    with pytest.raises(LockAcquireTimeout):
        client.acquire(REQUEST)
    assert locks.calls == ["Lock", "CheckLock"] and locks.unlocked == [7] and locks.timeouts == {7.5}


def test_an_interrupted_blocking_waiter_withdraws_its_request() -> None:
    locks, clock = BlockingFakeLocks(waits=1000), JumpingThreadClock(interrupt_after=5)
    with pytest.raises(KeyboardInterrupt):
        _blocking(locks, clock).acquire(REQUEST)
    assert locks.calls == ["Lock"] + ["CheckLock"] * 5 and locks.unlocked == [7]


def test_blocking_release_errors_while_giving_up_do_not_hide_the_timeout() -> None:
    class GoneLocks(BlockingFakeLocks):
        def Unlock(self, request: lpb.UnlockRequest, timeout: float | None = None) -> lpb.UnlockResponse:  # type: ignore[override]
            raise RpcFailure(grpc.StatusCode.NOT_FOUND, "gone")

    with pytest.raises(LockAcquireTimeout):
        _blocking(GoneLocks(waits=1000), JumpingThreadClock(), num_retries=2).acquire(REQUEST)
