"""The lock manager through the real gRPC API on one gateway: the matrix cell by cell, seed 002's
rows and their implied parent locks, FIFO without starvation, all-or-nothing, txn locks, SHOW
LOCKS, heartbeats, the DDL guard, the client helper, and bad inputs.

One gateway serves the whole module; every test locks objects of its own (own database names), and
releases what it took, so tests do not wait on each other.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import AsyncIterator, cast

import grpc
import pytest

from gateway.app import Gateway
from pipeline.locking import LockAcquireTimeout, LockClient, RetryPolicy, to_request
from protos.metastore.v1 import catalog_pb2 as cpb
from protos.metastore.v1 import catalog_pb2_grpc
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from hive.lock_rules import LockType
from tests.builders import ensure_lockable, table
from tests.conftest import PgCluster, gateway_settings
from tests.unit.test_lock_rules import CELLS, SEED_002_ROWS

C = grpc.StatusCode
SR, SW, XW, X = lpb.SHARED_READ, lpb.SHARED_WRITE, lpb.EXCL_WRITE, lpb.EXCLUSIVE


def comp(scope: str, lock_type: lpb.LockType,
         operation: lpb.DataOperationType = lpb.DATA_OPERATION_UNSET) -> lpb.LockComponent:
    """"db", "db.t" or "db.t/k=v/..." -> a component."""
    db, _, rest = scope.partition(".")
    tbl, _, part = rest.partition("/")
    return lpb.LockComponent(db_name=db, table_name=tbl, partition_name=part, type=lock_type, operation=operation)


@dataclass
class Api:
    locks: locks_pb2_grpc.LocksStub
    txns: transactions_pb2_grpc.TransactionsStub
    catalog: catalog_pb2_grpc.CatalogStub
    dsn: str

    async def lock(self, *components: lpb.LockComponent, txn_id: int = 0, user: str = "test",
                   host: str = "h") -> lpb.LockResponse:
        await ensure_lockable(self.catalog, components)
        return await self.locks.Lock(lpb.LockRequest(components=components, txn_id=txn_id, user=user, hostname=host,
                                                     agent_info="test-agent"))

    async def check(self, lock_id: int) -> lpb.LockResponse:
        return await self.locks.CheckLock(lpb.CheckLockRequest(lock_id=lock_id))

    async def unlock(self, *lock_ids: int) -> None:
        for lock_id in lock_ids:
            await self.locks.Unlock(lpb.UnlockRequest(lock_id=lock_id))

    async def show(self, db: str = "", tbl: str = "", part: str = "", extended: bool = False,
                   txn_id: int = 0) -> lpb.ShowLocksResponse:
        return await self.locks.ShowLocks(lpb.ShowLocksRequest(db_name=db, table_name=tbl, partition_name=part,
                                                               extended=extended, txn_id=txn_id))

    async def open_txn(self) -> int:
        return (await self.txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="test"))).txn_ids[0]

    async def wait_acquired(self, lock_id: int, timeout_s: float = 10.0, poll_s: float = 0.005) -> None:
        deadline = time.monotonic() + timeout_s
        while (await self.check(lock_id)).state != lpb.ACQUIRED:
            assert time.monotonic() < deadline, f"lock {lock_id} still waiting after {timeout_s}s"
            await asyncio.sleep(poll_s)


@pytest.fixture(scope="module")
async def api(pg_cluster: PgCluster) -> AsyncIterator[Api]:
    dsn = await pg_cluster.fresh_database()
    gw = Gateway(gateway_settings(dsn, **{"metastore.gateway.max.lock.components": "50"}))
    await gw.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{gw.port}")
    try:
        yield Api(locks_pb2_grpc.LocksStub(channel), transactions_pb2_grpc.TransactionsStub(channel),
                  catalog_pb2_grpc.CatalogStub(channel), dsn)
    finally:
        await channel.close()
        await gw.stop()


async def _assert_no_locks(api: Api, db: str) -> None:
    assert list((await api.show(db, extended=True)).locks) == []


# -- the matrix, every cell, through gRPC ------------------------------------------------------

@pytest.mark.parametrize("requested,existing,blocked", CELLS, ids=[f"{r.name}-after-{e.name}" for r, e, _ in CELLS])
async def test_matrix_cell(api: Api, requested: LockType, existing: LockType, blocked: bool) -> None:
    to_pb = {"SHARED_READ": SR, "SHARED_WRITE": SW, "EXCL_WRITE": XW, "EXCLUSIVE": X}
    db = f"mx_{requested.name}_{existing.name}".lower()
    first = await api.lock(comp(f"{db}.t", to_pb[existing.name]))
    assert first.state == lpb.ACQUIRED
    second = await api.lock(comp(f"{db}.t", to_pb[requested.name]))
    assert second.state == (lpb.WAITING if blocked else lpb.ACQUIRED)
    if blocked:
        assert (second.blocked_by_lock_id, second.blocked_by_component_id) == (first.lock_id, 1)
        assert (await api.check(second.lock_id)).state == lpb.WAITING
        await api.unlock(first.lock_id)
        assert (await api.check(second.lock_id)).state == lpb.ACQUIRED
        await api.unlock(second.lock_id)
    else:
        await api.unlock(first.lock_id, second.lock_id)
    await _assert_no_locks(api, db)


@pytest.mark.parametrize("existing,requested,blocked", [
    (comp("lv1.t", X), comp("lv1", SR), False),          # Hive's exception, both ways
    (comp("lv2", SR), comp("lv2.t/p=1", X), False),
    (comp("lv3", X), comp("lv3.t/p=1", SR), True),       # a database lock covers its tables
    (comp("lv4.t/p=1", SR), comp("lv4.t", X), True),     # a partition lock implies S on the table
    (comp("lv5.t/p=1", SR), comp("lv5", X), True),       # ... and on the database
    (comp("lv6.t/p=1", X), comp("lv6.t", SR), True),
    (comp("lv7.t/p=1", X), comp("lv7.t/p=2", X), False),  # partitions are independent
    (comp("lv8.t/p=1", X), comp("lv8.t/p=1/q=2", SR), True),  # a name prefix covers what is below it
    (comp("lv9.t/p=1", X), comp("lv9.t/p=10", SR), False),
    (comp("lv10.t", X), comp("lv10.u", X), False),
])
async def test_matrix_across_levels(api: Api, existing: lpb.LockComponent, requested: lpb.LockComponent,
                                    blocked: bool) -> None:
    first = await api.lock(existing)
    second = await api.lock(requested)
    assert (first.state, second.state) == (lpb.ACQUIRED, lpb.WAITING if blocked else lpb.ACQUIRED)
    await api.unlock(first.lock_id, second.lock_id)


# -- seed 002's rows: each plan's locks, and the shared locks they imply -------------------------

@pytest.mark.parametrize("index", range(len(SEED_002_ROWS)), ids=[r[0] for r in SEED_002_ROWS])
async def test_seed_002_row_through_grpc(api: Api, index: int) -> None:
    _, plan, _ = SEED_002_ROWS[index]
    db = f"seed{index}"
    request = to_request(plan, user="test")
    for c in request.components:
        c.db_name = db
    await ensure_lockable(api.catalog, request.components)
    held = await api.locks.Lock(request)
    assert held.state == lpb.ACQUIRED
    granted, waiting = [], []
    # Partition locks leave the table's other partitions free.
    for c in request.components:
        if c.partition_name:
            granted.append(await api.lock(comp(f"{db}.{c.table_name}/p=OTHER", X)))
    granted.append(await api.lock(comp(db, SR)))  # a database read lock never waits for table locks
    tables = sorted({c.table_name for c in request.components})
    for t in tables:  # the implied shared lock on each table: DROP TABLE waits
        waiting.append(await api.lock(comp(f"{db}.{t}", X)))
    waiting.append(await api.lock(comp(db, X)))  # ... and on the database: DROP DATABASE waits
    assert [r.state for r in granted] == [lpb.ACQUIRED] * len(granted)
    assert [r.state for r in waiting] == [lpb.WAITING] * len(waiting)
    await api.unlock(*(r.lock_id for r in [*waiting, *granted, held]))
    await _assert_no_locks(api, db)


# -- FIFO, starvation, atomicity --------------------------------------------------------------

async def test_a_reader_arriving_after_a_waiting_writer_waits_behind_it(api: Api) -> None:
    r1 = await api.lock(comp("fifo.t", SR))
    w = await api.lock(comp("fifo.t", X))
    r2 = await api.lock(comp("fifo.t", SR))  # compatible with r1, but the writer came first
    assert (r1.state, w.state, r2.state) == (lpb.ACQUIRED, lpb.WAITING, lpb.WAITING)
    assert r2.blocked_by_lock_id == w.lock_id
    await api.unlock(r1.lock_id)
    assert (await api.check(r2.lock_id)).state == lpb.WAITING  # order of CheckLock calls does not matter
    assert (await api.check(w.lock_id)).state == lpb.ACQUIRED
    await api.unlock(w.lock_id)
    assert (await api.check(r2.lock_id)).state == lpb.ACQUIRED
    await api.unlock(r2.lock_id)


async def test_continuous_readers_do_not_starve_a_writer(api: Api) -> None:
    """16 readers cycle (lock, hold 30 ms, unlock, again) on one table; a writer arriving among
    them waits only for the readers that were there before it, while later readers queue behind it."""
    stop = asyncio.Event()
    acquisitions: list[tuple[int, float, float]] = []  # (lock id, requested at, acquired at)

    async def reader() -> None:
        while not stop.is_set():
            asked = time.monotonic()
            r = await api.lock(comp("starve.t", SR), user="reader")
            if r.state != lpb.ACQUIRED:
                await api.wait_acquired(r.lock_id)
            acquisitions.append((r.lock_id, asked, time.monotonic()))
            await asyncio.sleep(0.03)
            await api.unlock(r.lock_id)

    readers = [asyncio.create_task(reader()) for _ in range(16)]
    await asyncio.sleep(0.3)
    asked = time.monotonic()
    w = await api.lock(comp("starve.t", X), user="writer")
    await api.wait_acquired(w.lock_id)
    acquired = time.monotonic()
    await asyncio.sleep(0.05)
    await api.unlock(w.lock_id)
    await asyncio.sleep(0.2)
    stop.set()
    await asyncio.gather(*readers)

    assert acquired - asked < 1.0, f"the writer waited {acquired - asked:.3f}s behind 30 ms readers"
    later = [(i, a, t) for i, a, t in acquisitions if i > w.lock_id]
    assert any(a < acquired for _, a, _ in later), "no reader arrived while the writer waited"
    assert all(t > acquired for _, _, t in later), "a reader that came after the writer overtook it"
    assert any(t > acquired for _, _, t in later), "readers did not resume after the writer"
    await _assert_no_locks(api, "starve")


async def test_a_multi_component_request_that_conflicts_on_one_component_holds_none(api: Api) -> None:
    await api.catalog.CreateDatabase(cpb.CreateDatabaseRequest(database=cpb.Database(name="atom")))
    await api.catalog.CreateTable(cpb.CreateTableRequest(table=table("atom", "a")))
    holder = await api.lock(comp("atom.b", X), user="holder")
    multi = await api.lock(comp("atom.b", X), comp("atom.a", X), comp("atom.c/ds=1/hr=1", SW), user="multi")
    assert multi.state == lpb.WAITING
    rows = [r for r in (await api.show("atom")).locks if r.lock_id == multi.lock_id]
    # Components are numbered in lexicographic order; none is acquired; the blocker is named.
    assert [(r.component_id, r.table_name, r.state, r.acquired_at_ms) for r in rows] == [
        (1, "a", lpb.WAITING, 0), (2, "b", lpb.WAITING, 0), (3, "c", lpb.WAITING, 0)]
    assert [(r.blocked_by_lock_id, r.blocked_by_component_id) for r in rows if r.blocked_by_lock_id] == [
        (holder.lock_id, 1)]
    # Nothing is held on atom.a: dropping it is not refused.
    await api.catalog.DropTable(cpb.DropTableRequest(db_name="atom", table_name="a"))
    await api.unlock(holder.lock_id)
    assert (await api.check(multi.lock_id)).state == lpb.ACQUIRED
    rows = [r for r in (await api.show("atom")).locks if r.lock_id == multi.lock_id]
    assert {r.state for r in rows} == {lpb.ACQUIRED} and len({r.acquired_at_ms for r in rows}) == 1
    await api.unlock(multi.lock_id)


# -- txn locks -----------------------------------------------------------------------------------

async def test_txn_locks_are_released_at_commit_and_abort_and_not_by_unlock(api: Api) -> None:
    t1, t2 = await api.open_txn(), await api.open_txn()
    held = await api.lock(comp("txl.t", X), txn_id=t1)
    other = await api.lock(comp("txl.t", SR))
    assert (held.state, other.state) == (lpb.ACQUIRED, lpb.WAITING)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await api.unlock(held.lock_id)
    assert err.value.code() == C.FAILED_PRECONDITION and f"txn {t1}" in err.value.details()
    shown = (await api.show("txl", txn_id=t1)).locks
    assert [(r.lock_id, r.txn_id, r.last_heartbeat_ms) for r in shown] == [(held.lock_id, t1, 0)]
    await api.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=t1))
    assert list((await api.show("txl", txn_id=t1)).locks) == []
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await api.check(held.lock_id)
    assert err.value.code() == C.NOT_FOUND
    assert (await api.check(other.lock_id)).state == lpb.ACQUIRED

    waiting = await api.lock(comp("txl.t", X), txn_id=t2)  # waits for `other`
    assert waiting.state == lpb.WAITING
    await api.txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[t2]))
    assert [r.lock_id for r in (await api.show("txl")).locks] == [other.lock_id]
    await api.unlock(other.lock_id)


async def test_locks_of_one_txn_do_not_block_each_other_and_its_waiting_request_can_be_withdrawn(api: Api) -> None:
    t = await api.open_txn()
    first = await api.lock(comp("same.t", X), txn_id=t)
    second = await api.lock(comp("same.t/p=1", XW), comp("same", SR), txn_id=t)
    assert (first.state, second.state) == (lpb.ACQUIRED, lpb.ACQUIRED)
    outsider = await api.lock(comp("same.t/p=2", SR))
    assert outsider.state == lpb.WAITING
    u = await api.open_txn()
    queued = await api.lock(comp("same.t", SR), txn_id=u)
    assert queued.state == lpb.WAITING
    await api.unlock(queued.lock_id)  # a waiting txn request holds nothing: Unlock withdraws it
    await api.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=t))
    assert (await api.check(outsider.lock_id)).state == lpb.ACQUIRED
    await api.unlock(outsider.lock_id)
    await api.txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[u]))


async def test_locking_under_a_txn_that_is_not_open_is_refused(api: Api) -> None:
    done, gone = await api.open_txn(), await api.open_txn()
    await api.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=done))
    await api.txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[gone]))
    for txn_id, code in ((done, C.FAILED_PRECONDITION), (gone, C.ABORTED), (10**9, C.NOT_FOUND)):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await api.lock(comp("closed.t", SR), txn_id=txn_id)
        assert err.value.code() == code, (txn_id, err.value.details())
    await _assert_no_locks(api, "closed")


# -- SHOW LOCKS and heartbeats -------------------------------------------------------------------

async def test_show_locks_has_hives_columns_and_filters(api: Api) -> None:
    t = await api.open_txn()
    a = await api.lock(comp("show.t/ds=1", SR, lpb.DATA_OPERATION_SELECT), user="alice", host="h1")
    b = await api.lock(comp("show.t", X, lpb.DATA_OPERATION_NO_TXN), comp("show", SR), txn_id=t, user="bob", host="h2")
    c = await api.lock(comp("show.u", SW))
    reply = await api.show("show")
    assert [(r.lock_id, r.component_id, r.table_name, r.partition_name) for r in reply.locks] == [
        (a.lock_id, 1, "t", "ds=1"), (b.lock_id, 1, "", ""), (b.lock_id, 2, "t", ""), (c.lock_id, 1, "u", "")]
    lines = reply.text.splitlines()
    assert lines[0].split("\t") == ["Lock ID", "Database", "Table", "Partition", "State", "Blocked By", "Type",
                                    "Transaction ID", "Last Heartbeat", "Acquired At", "User", "Hostname",
                                    "Agent Info"]
    alice = lines[1].split("\t")
    assert alice[:5] == [f"{a.lock_id}.1", "show", "t", "ds=1", "ACQUIRED"] and alice[6:8] == ["SHARED_READ", "NULL"]
    assert int(alice[8]) > 0 and int(alice[9]) > 0 and alice[10:] == ["alice", "h1", "test-agent"]
    bob_db = lines[2].split("\t")
    assert bob_db[:5] == [f"{b.lock_id}.1", "show", "NULL", "NULL", "WAITING"]
    assert bob_db[5] == " " * 12 and bob_db[6:10] == ["SHARED_READ", str(t), "0", "NULL"]
    bob_t = lines[3].split("\t")  # the component that is blocked names its blocker
    assert bob_t[2:7] == ["t", "NULL", "WAITING", f"{a.lock_id}.1", "EXCLUSIVE"]
    # Exact filters, as Hive; EXTENDED adds everything overlapping (database and table locks).
    assert [r.lock_id for r in (await api.show("show", "t")).locks] == [a.lock_id, b.lock_id]
    assert [(r.lock_id, r.component_id) for r in (await api.show("show", "t", "ds=1")).locks] == [(a.lock_id, 1)]
    assert [(r.lock_id, r.component_id) for r in (await api.show("show", "t", "ds=1", extended=True)).locks] == [
        (a.lock_id, 1), (b.lock_id, 1), (b.lock_id, 2)]
    assert {r.lock_id for r in (await api.show()).locks} >= {a.lock_id, b.lock_id, c.lock_id}
    assert (await api.show("show", "u")).locks[0].operation == lpb.DATA_OPERATION_UNSET
    await api.txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[t]))
    await api.unlock(a.lock_id, c.lock_id)


async def test_heartbeat_refreshes_standalone_locks_and_reports_unknown_ids(api: Api) -> None:
    t = await api.open_txn()
    standalone = await api.lock(comp("beat.t", SR))
    under_txn = await api.lock(comp("beat.u", SR), txn_id=t)
    before = (await api.show("beat", "t")).locks[0].last_heartbeat_ms
    await asyncio.sleep(0.02)
    reply = await api.txns.Heartbeat(tpb.HeartbeatRequest(
        lock_ids=[standalone.lock_id, under_txn.lock_id, 987654321]))
    assert list(reply.nosuch_lock_ids) == [987654321] and list(reply.nosuch_txn_ids) == []
    assert (await api.show("beat", "t")).locks[0].last_heartbeat_ms > before
    await api.unlock(standalone.lock_id)
    await api.txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[t]))


# -- the DDL guard -------------------------------------------------------------------------------

async def test_drop_table_and_database_are_refused_while_others_hold_conflicting_locks(api: Api) -> None:
    await api.catalog.CreateDatabase(cpb.CreateDatabaseRequest(database=cpb.Database(name="guard")))
    for name in ("t", "u"):
        await api.catalog.CreateTable(cpb.CreateTableRequest(table=table("guard", name)))
    reader = await api.lock(comp("guard.t/ds=2024-01-01/hr=1", SR), user="alice", host="node7")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await api.catalog.DropTable(cpb.DropTableRequest(db_name="guard", table_name="t"))
    details = err.value.details()
    assert err.value.code() == C.FAILED_PRECONDITION
    assert f"lock {reader.lock_id}.1 SHARED_READ" in details and "alice@node7" in details and "test-agent" in details
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await api.catalog.DropDatabase(cpb.DropDatabaseRequest(name="guard", cascade=True))
    assert err.value.code() == C.FAILED_PRECONDITION and "alice@node7" in err.value.details()
    await api.catalog.GetTable(cpb.GetTableRequest(db_name="guard", table_name="t"))  # nothing was dropped

    keeper = await api.lock(comp("guard", SR), user="bob")  # a database read lock does not guard its tables
    await api.catalog.DropTable(cpb.DropTableRequest(db_name="guard", table_name="u"))
    await api.unlock(reader.lock_id, keeper.lock_id)

    # Hive's flow: take the exclusive lock (waiting its turn), then drop under it.
    other = await api.lock(comp("guard.t", SR), user="carol")
    mine = await api.lock(comp("guard.t", X), user="dropper")
    assert mine.state == lpb.WAITING
    await api.unlock(other.lock_id)
    await api.wait_acquired(mine.lock_id)
    await api.catalog.DropTable(cpb.DropTableRequest(db_name="guard", table_name="t"))
    await api.unlock(mine.lock_id)
    await api.catalog.DropDatabase(cpb.DropDatabaseRequest(name="guard"))


# -- the client helper against the real server --------------------------------------------------

async def test_client_helper_waits_its_turn_or_gives_up_and_withdraws(api: Api) -> None:
    holder = await api.lock(comp("helper.t", X))
    impatient = LockClient(api.locks, RetryPolicy(num_retries=3, max_sleep_s=0.02))
    with pytest.raises(LockAcquireTimeout) as err:
        await impatient.acquire(lpb.LockRequest(components=[comp("helper.t", SR)], user="impatient"))
    assert f"waiting (for lock {holder.lock_id}.1)" in str(err.value)
    assert [r.lock_id for r in (await api.show("helper")).locks] == [holder.lock_id]  # nothing left behind

    patient = LockClient(api.locks, RetryPolicy(num_retries=50, max_sleep_s=0.02))
    asyncio.get_running_loop().call_later(0.1, lambda: asyncio.ensure_future(api.unlock(holder.lock_id)))
    async with patient.hold(lpb.LockRequest(components=[comp("helper.t", SR)]), api.txns, 0.01) as held:
        assert held.state == lpb.ACQUIRED
        await asyncio.sleep(0.03)
    await _assert_no_locks(api, "helper")


# -- bad inputs ----------------------------------------------------------------------------------

@pytest.mark.parametrize("request_,code,text", [
    (lpb.LockRequest(), C.INVALID_ARGUMENT, "batch is empty"),
    (lpb.LockRequest(components=[comp(".t", SR)]), C.INVALID_ARGUMENT, "needs a database"),
    (lpb.LockRequest(components=[lpb.LockComponent(db_name="d", partition_name="p=1", type=SR)]),
     C.INVALID_ARGUMENT, "has no table"),
    (lpb.LockRequest(components=[comp("bad-name.t", SR)]), C.INVALID_ARGUMENT, "not valid"),
    (lpb.LockRequest(components=[comp("d.t", lpb.LOCK_TYPE_UNSPECIFIED)]), C.INVALID_ARGUMENT, "type must be"),
    (lpb.LockRequest(components=[comp("d.t", SR, cast(lpb.DataOperationType, 99))]), C.INVALID_ARGUMENT,
     "unknown operation"),
    (lpb.LockRequest(components=[comp("d.t/p", SR)]), C.INVALID_ARGUMENT, "k1=v1/k2=v2"),
    (lpb.LockRequest(components=[comp("d.t", SR)], txn_id=-1), C.INVALID_ARGUMENT, "must not be negative"),
    (lpb.LockRequest(components=[comp(f"d.t{i}", SR) for i in range(51)]), C.RESOURCE_EXHAUSTED, "max.lock.components"),
])
async def test_bad_lock_requests_get_clear_statuses(api: Api, request_: lpb.LockRequest, code: grpc.StatusCode,
                                                    text: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await api.locks.Lock(request_)
    assert err.value.code() == code and text in err.value.details(), err.value.details()


async def test_bad_lock_ids_and_filters_get_clear_statuses(api: Api) -> None:
    cases = [
        (api.locks.CheckLock(lpb.CheckLockRequest(lock_id=0)), C.INVALID_ARGUMENT, "positive"),
        (api.locks.CheckLock(lpb.CheckLockRequest(lock_id=10**12)), C.NOT_FOUND, "does not exist"),
        (api.locks.Unlock(lpb.UnlockRequest(lock_id=-3)), C.INVALID_ARGUMENT, "positive"),
        (api.locks.Unlock(lpb.UnlockRequest(lock_id=10**12)), C.NOT_FOUND, "does not exist"),
        (api.locks.ShowLocks(lpb.ShowLocksRequest(table_name="t")), C.INVALID_ARGUMENT, "needs its db_name"),
        (api.locks.ShowLocks(lpb.ShowLocksRequest(db_name="d", partition_name="p=1")), C.INVALID_ARGUMENT, "no table"),
        (api.locks.ShowLocks(lpb.ShowLocksRequest(db_name="d", txn_id=-1)), C.INVALID_ARGUMENT, "negative"),
        (api.txns.Heartbeat(tpb.HeartbeatRequest(lock_ids=[0])), C.INVALID_ARGUMENT, "positive"),
    ]
    for call, code, text in cases:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call
        assert err.value.code() == code and text in err.value.details(), err.value.details()


async def test_locks_name_objects_that_need_not_exist_as_in_hive(api: Api) -> None:
    """Hive's TxnHandler.lock checks no object (Hive 4's CTAS locks its target before creating it,
    HIVE-26244; Hive 2.3 locks a new partition's name before a static insert writes it): a lock on a
    missing database, table or partition is granted, conflicts with the locks on the same names,
    holds across the object's creation and is released as any lock (HMS 2.3.10's answers:
    tests/e2e/test_thrift_lock_differential.py)."""
    await ensure_lockable(api.catalog, [comp("real.t/ds=2024-01-01/hr=1", SR)])
    missing = [comp("nosuchdb", X), comp("real.nosuch", X), comp("real.t/ds=2024-01-02/hr=1", X),
               comp("real.gone/p=1", X), comp("nosuchdb2.t", X)]
    held = [await api.locks.Lock(lpb.LockRequest(components=[c], user="u")) for c in missing]
    assert [r.state for r in held] == [lpb.ACQUIRED] * len(missing)
    behind = [await api.locks.Lock(lpb.LockRequest(components=[c], user="u")) for c in (
        comp("nosuchdb.t", SR), comp("real.nosuch", SR), comp("real.t/ds=2024-01-02", SR), comp("real.gone", SR))]
    assert [(r.state, r.blocked_by_lock_id) for r in behind] == [(lpb.WAITING, h.lock_id) for h in held[:4]]
    free = await api.locks.Lock(lpb.LockRequest(components=[comp("real.gone/p=2", SR), comp("real.other", X)]))
    assert free.state == lpb.ACQUIRED
    shown = [(r.table_name, r.partition_name, r.state) for r in (await api.show("real", "nosuch")).locks]
    assert shown == [("nosuch", "", lpb.ACQUIRED), ("nosuch", "", lpb.WAITING)]

    # The table created under its lock is the name locked: the queue on it goes on as before.
    await api.catalog.CreateTable(cpb.CreateTableRequest(table=table("real", "nosuch", keys=(("p", "string"),))))
    again = await api.locks.Lock(lpb.LockRequest(components=[comp("real.nosuch", X)], user="u"))
    assert (again.state, again.blocked_by_lock_id) == (lpb.WAITING, held[1].lock_id)
    await api.unlock(held[1].lock_id)
    assert [(await api.check(r.lock_id)).state for r in (behind[1], again)] == [lpb.ACQUIRED, lpb.WAITING]
    await api.unlock(behind[1].lock_id)
    assert (await api.check(again.lock_id)).state == lpb.ACQUIRED
    await api.unlock(*(h.lock_id for h in held if h is not held[1]), *(b.lock_id for b in behind if b is not behind[1]),
                     free.lock_id, again.lock_id)
    await _assert_no_locks(api, "real")
    await _assert_no_locks(api, "nosuchdb")

    # Under a txn: released at commit; an update of a missing table's partition enters the write-set.
    t = await api.open_txn()
    mine = await api.locks.Lock(lpb.LockRequest(components=[
        comp("real.ctas", SW, lpb.DATA_OPERATION_INSERT), comp("real.later/p=1", SW, lpb.DATA_OPERATION_UPDATE)],
        txn_id=t, user="u"))
    waiting = await api.locks.Lock(lpb.LockRequest(components=[comp("real.ctas", X)], user="u"))
    assert (mine.state, waiting.state) == (lpb.ACQUIRED, lpb.WAITING)
    await api.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=t))
    assert (await api.check(waiting.lock_id)).state == lpb.ACQUIRED
    await api.unlock(waiting.lock_id)
    await _assert_no_locks(api, "real")

    with pytest.raises(grpc.aio.AioRpcError) as err:  # more keys than an existing table has: still refused
        await api.locks.Lock(lpb.LockRequest(components=[comp("real.t/ds=a/hr=1/x=2", SR)]))
    assert err.value.code() == C.INVALID_ARGUMENT
    await _assert_no_locks(api, "real")


async def test_a_typed_partition_value_locks_its_canonical_partition(api: Api) -> None:
    """`hr=01` and `hr=1` name one partition of an int key, so their locks conflict."""
    await ensure_lockable(api.catalog, [comp("canon.t/ds=2024-01-01/hr=1", SR)])
    first = await api.locks.Lock(lpb.LockRequest(components=[comp("canon.t/ds=2024-01-01/hr=01", X)]))
    second = await api.locks.Lock(lpb.LockRequest(components=[comp("canon.t/ds=2024-01-01/hr=+1", X)]))
    assert (first.state, second.state) == (lpb.ACQUIRED, lpb.WAITING)
    assert [r.partition_name for r in (await api.show("canon", extended=True)).locks] == ["ds=2024-01-01/hr=1"] * 2
    await api.unlock(first.lock_id, second.lock_id)
