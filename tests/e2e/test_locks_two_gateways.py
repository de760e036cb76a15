"""Locks across gateway processes on one database: each sees and respects the other's locks,
concurrent conflicting requests from both are never granted together, and a client that dies
without unlocking or heartbeating loses its locks after hive.txn.timeout, whichever gateway it used.

hive.txn.timeout is 1 s and the reaper runs every 200 ms here, so waiting requests are kept alive by
their CheckLock polls and held ones by Heartbeat, as a real client would.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import AsyncIterator

import grpc
import pytest

from protos.metastore.v1 import catalog_pb2_grpc
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import ensure_lockable
from tests.conftest import GatewayProcess, PgCluster
from tests.e2e.test_locks import comp

C = grpc.StatusCode
SR, X = lpb.SHARED_READ, lpb.EXCLUSIVE
FAST_TIMEOUTS = ("--conf", "hive.txn.timeout=1s", "--conf", "hive.timedout.txn.reaper.start=100ms",
                 "--conf", "hive.timedout.txn.reaper.interval=200ms")


@dataclass
class Node:
    process: GatewayProcess
    channel: grpc.aio.Channel
    locks: locks_pb2_grpc.LocksStub
    txns: transactions_pb2_grpc.TransactionsStub

    async def lock(self, *components: lpb.LockComponent, user: str = "test") -> lpb.LockResponse:
        await ensure_lockable(catalog_pb2_grpc.CatalogStub(self.channel), components)
        return await self.locks.Lock(lpb.LockRequest(components=components, user=user, hostname=self.process.address))

    async def check(self, lock_id: int) -> lpb.LockResponse:
        return await self.locks.CheckLock(lpb.CheckLockRequest(lock_id=lock_id))

    async def wait_acquired(self, lock_id: int, poll_s: float = 0.005, timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        while (await self.check(lock_id)).state != lpb.ACQUIRED:
            assert time.monotonic() < deadline, f"lock {lock_id} still waiting after {timeout_s}s"
            await asyncio.sleep(poll_s)


async def _node(process: GatewayProcess) -> Node:
    address = await asyncio.to_thread(process.wait_serving)
    channel = grpc.aio.insecure_channel(address)
    await asyncio.wait_for(channel.channel_ready(), 20)
    return Node(process, channel, locks_pb2_grpc.LocksStub(channel), transactions_pb2_grpc.TransactionsStub(channel))


@pytest.fixture(scope="module")
async def dsn(pg_cluster: PgCluster) -> str:
    return await pg_cluster.fresh_database()


@pytest.fixture(scope="module")
async def nodes(dsn: str) -> AsyncIterator[tuple[Node, Node]]:
    processes = [GatewayProcess("--dsn", dsn, *FAST_TIMEOUTS) for _ in range(2)]
    try:
        a, b = await asyncio.gather(*(_node(p) for p in processes))
        yield a, b
        for n in (a, b):
            await n.channel.close()
    finally:
        codes = [p.stop() for p in processes]
    assert codes == [0, 0], [p.output() for p in processes]


async def test_each_gateway_sees_and_respects_the_others_locks(nodes: tuple[Node, Node]) -> None:
    a, b = nodes
    held = await a.lock(comp("two.t/p=1", X), user="on-a")
    wanted = await b.lock(comp("two.t", SR), user="on-b")
    assert (held.state, wanted.state) == (lpb.ACQUIRED, lpb.WAITING)
    assert wanted.blocked_by_lock_id == held.lock_id
    shown = (await b.locks.ShowLocks(lpb.ShowLocksRequest(db_name="two"))).locks
    assert [(r.lock_id, r.user, r.state) for r in shown] == [
        (held.lock_id, "on-a", lpb.ACQUIRED), (wanted.lock_id, "on-b", lpb.WAITING)]
    await a.locks.Unlock(lpb.UnlockRequest(lock_id=held.lock_id))
    assert (await b.check(wanted.lock_id)).state == lpb.ACQUIRED
    assert (await a.lock(comp("two.t/p=2", X))).state == lpb.WAITING  # and a respects b's lock in turn
    await b.locks.Unlock(lpb.UnlockRequest(lock_id=wanted.lock_id))


async def test_conflicting_requests_from_two_gateways_are_never_granted_together(nodes: tuple[Node, Node]) -> None:
    """Writers (EXCLUSIVE) and readers (SHARED_READ) on one table, half on each gateway, each
    polling its own gateway: at no moment do two writers, or a writer and a reader, hold it."""
    writers_inside = readers_inside = 0
    violations: list[str] = []
    grants = 0

    async def worker(node: Node, lock_type: lpb.LockType, rounds: int) -> None:
        nonlocal writers_inside, readers_inside, grants
        for _ in range(rounds):
            r = await node.lock(comp("mutex.t", lock_type))
            await node.wait_acquired(r.lock_id, poll_s=0.002)
            grants += 1
            if lock_type == X:
                writers_inside += 1
                if writers_inside > 1 or readers_inside:
                    violations.append(f"writer {r.lock_id} with {writers_inside} writers, {readers_inside} readers")
            else:
                readers_inside += 1
                if writers_inside:
                    violations.append(f"reader {r.lock_id} beside a writer")
            await asyncio.sleep(0.003)
            if lock_type == X:
                writers_inside -= 1
            else:
                readers_inside -= 1
            await node.locks.Unlock(lpb.UnlockRequest(lock_id=r.lock_id))

    await asyncio.gather(*(worker(node, t, 5) for node in nodes for t in (X, X, X, SR, SR, SR)))
    assert violations == [] and grants == 2 * 6 * 5


async def test_a_client_that_dies_loses_its_locks_after_the_timeout_on_any_gateway(dsn: str,
                                                                                 nodes: tuple[Node, Node]) -> None:
    a, b = nodes
    # The dying client talks to a third gateway, which goes away with it: a or b must reap.
    doomed = await _node(GatewayProcess("--dsn", dsn, *FAST_TIMEOUTS))
    dead = await doomed.lock(comp("dies.t", X), comp("dies.u/p=1", SR), user="doomed")
    locked_at = time.monotonic()
    assert dead.state == lpb.ACQUIRED
    await doomed.channel.close()
    assert doomed.process.stop() == 0

    alive = await a.lock(comp("dies.kept", X), user="alive")  # heartbeated: must survive the time-out
    waiter = await b.lock(comp("dies.t", SR), user="waiter")
    if time.monotonic() - locked_at < 0.9:  # else a slow stop (a loaded machine) let the reaper be first
        assert waiter.state == lpb.WAITING and waiter.blocked_by_lock_id == dead.lock_id
    while (await b.check(waiter.lock_id)).state != lpb.ACQUIRED:  # CheckLock keeps the waiter alive
        assert time.monotonic() - locked_at < 10, "the dead client's lock was never timed out"
        await a.txns.Heartbeat(tpb.HeartbeatRequest(lock_ids=[alive.lock_id]))
        await asyncio.sleep(0.1)
    waited = time.monotonic() - locked_at
    # The server stamped the heartbeat a little before Lock returned here, hence 0.9 rather than 1.
    assert waited >= 0.9, f"released {waited:.2f}s after it was taken, before hive.txn.timeout (1s)"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await a.check(dead.lock_id)
    assert err.value.code() == C.NOT_FOUND and "timed out" in err.value.details()
    assert (await a.check(alive.lock_id)).state == lpb.ACQUIRED
    beat = await b.txns.Heartbeat(tpb.HeartbeatRequest(lock_ids=[alive.lock_id, dead.lock_id]))
    assert list(beat.nosuch_lock_ids) == [dead.lock_id]
    for node, lock_id in ((a, alive.lock_id), (b, waiter.lock_id)):
        await node.locks.Unlock(lpb.UnlockRequest(lock_id=lock_id))
