"""Issue 15 part 4: Hive's conflict rule (a write-write conflict aborts the writer's txn: the write
answers ABORTED, a later CommitTxn answers ABORTED, its writes and locks are gone), and the table-id
guard on AlterTable and DropTable."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import asyncpg
import grpc
import pytest

from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from store import txn_waits
from store.catalog_store import CatalogStore
from store.errors import WriteConflict
from store.models import Partition
from tests.builders import table
from tests.clock import FakeClock
from tests.txn_helpers import Txns, started_txns

C = grpc.StatusCode


@pytest.fixture
async def txns(pg_dsn: str) -> AsyncIterator[Txns]:
    async for t in started_txns(pg_dsn):
        yield t


async def _loser_is_gone(txns: Txns, loser: int, its_other_partition: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.commit(loser)
    assert err.value.code() == C.ABORTED
    open_txns = await txns.txn.GetOpenTxns(tpb.GetOpenTxnsRequest())
    assert loser in open_txns.aborted_txn_ids
    locks = locks_pb2_grpc.LocksStub(txns.client.channel)
    assert not [lk for lk in (await locks.ShowLocks(lpb.ShowLocksRequest())).locks if lk.txn_id == loser]
    # Its other write is discarded: no snapshot, not even a later one, sees it.
    assert f"p={its_other_partition}" not in await txns.names(await txns.snapshot())


async def test_a_conflict_with_an_open_writer_aborts_the_writers_txn(txns: Txns) -> None:
    [creator] = await txns.open(1)
    await txns.add(creator, "x")
    await txns.commit(creator)
    a, b = await txns.open(2)
    locks = locks_pb2_grpc.LocksStub(txns.client.channel)
    await locks.Lock(lpb.LockRequest(txn_id=b, user="b", components=[
        lpb.LockComponent(db_name="db", table_name="t", type=lpb.SHARED_WRITE)]))
    await txns.add(b, "mine")
    await txns.alter(a, "x", "a")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.alter(b, "x", "b")
    assert err.value.code() == C.ABORTED
    assert f"txn {a}" in (err.value.details() or "") and f"txn {b} was aborted" in (err.value.details() or "")
    await _loser_is_gone(txns, b, "mine")
    await txns.commit(a)  # the first writer is unaffected
    assert "p=x" in await txns.names(await txns.snapshot())


async def test_a_conflict_with_a_later_committer_aborts_the_writers_txn(txns: Txns) -> None:
    a, b = await txns.open(2)
    await txns.add(b, "mine")
    await txns.add(a, "x")
    await txns.commit(a)  # committed after b started: first committer wins
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.alter(b, "x", "b")
    assert err.value.code() == C.ABORTED and "first committer wins" in (err.value.details() or "")
    await _loser_is_gone(txns, b, "mine")


async def test_alter_and_drop_table_honour_the_table_id_guard(txns: Txns) -> None:
    catalog = txns.client.catalog
    flat = table("db", "x", keys=())
    old_id = (await catalog.CreateTable(pb.CreateTableRequest(table=flat))).table.table_id
    await catalog.DropTable(pb.DropTableRequest(db_name="db", table_name="x", table_id=old_id))
    new_id = (await catalog.CreateTable(pb.CreateTableRequest(table=flat))).table.table_id
    changed = pb.Table()
    changed.CopyFrom(flat)
    changed.parameters["tag"] = "stale"
    for call in (catalog.AlterTable(pb.AlterTableRequest(db_name="db", table_name="x", table=changed,
                                                         table_id=old_id)),
                 catalog.DropTable(pb.DropTableRequest(db_name="db", table_name="x", table_id=old_id)),
                 catalog.DropTable(pb.DropTableRequest(db_name="db", table_name="x", table_id=old_id,
                                                       if_exists=True))):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call
        assert err.value.code() == C.FAILED_PRECONDITION and str(old_id) in (err.value.details() or "")
    current = (await catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="x"))).table
    assert current.table_id == new_id and "tag" not in current.parameters
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await catalog.DropTable(pb.DropTableRequest(db_name="db", table_name="x", table_id=-1))
    assert err.value.code() == C.INVALID_ARGUMENT
    altered = await catalog.AlterTable(pb.AlterTableRequest(db_name="db", table_name="x", table=changed,
                                                            table_id=new_id))
    assert altered.table.parameters["tag"] == "stale"
    await catalog.DropTable(pb.DropTableRequest(db_name="db", table_name="x", table_id=new_id))
    assert "x" not in (await catalog.ListTables(pb.ListTablesRequest(db_name="db"))).names


# Two txns adding one new partition: Hive's two INSERTs into one new partition both commit (each adds
# it unless it exists). The second add waits for the first txn to end, then finds it there (committed)
# or adds it itself (aborted); neither txn is aborted.


async def _add_if_absent(txns: Txns, txn_id: int, *values: str) -> list[str]:
    reply = await txns.client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", txn_id=txn_id, if_not_exists=True,
        partitions=[pb.Partition(values=[v]) for v in values]))
    return [p.name for p in reply.partitions]


async def _still_waiting(call: asyncio.Task[Any]) -> bool:
    await asyncio.sleep(0.5)
    return not call.done()


async def test_an_add_of_a_partition_an_open_txn_added_waits_and_skips_it_once_that_txn_commits(txns: Txns) -> None:
    a, b = await txns.open(2)
    await txns.add(a, "x")
    second = asyncio.create_task(_add_if_absent(txns, b, "x", "y"))
    assert await _still_waiting(second)
    await txns.commit(a)
    assert await asyncio.wait_for(second, 10) == ["p=y"]  # x exists (a's), y is b's
    await txns.commit(b)  # not aborted
    assert await txns.names(await txns.snapshot()) == ["p=x", "p=y"]
    assert [w for _, w in await txns.t2w_rows()] == [1, 2]


async def test_an_add_of_a_partition_an_open_txn_added_adds_it_once_that_txn_aborts(txns: Txns) -> None:
    a, b = await txns.open(2)
    await txns.add(a, "x")
    second = asyncio.create_task(_add_if_absent(txns, b, "x"))
    assert await _still_waiting(second)
    await txns.txn.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[a]))
    assert await asyncio.wait_for(second, 10) == ["p=x"]
    assert await txns.names(await txns.snapshot()) == []  # b's, not visible before its commit
    await txns.commit(b)
    assert await txns.names(await txns.snapshot()) == ["p=x"]


async def test_a_plain_add_of_a_partition_another_txn_added_answers_already_exists_and_aborts_nothing(
    txns: Txns,
) -> None:
    a, b, c = await txns.open(3)
    await txns.add(a, "x")
    second = asyncio.create_task(txns.add(b, "x"))
    assert await _still_waiting(second)
    await txns.commit(a)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await asyncio.wait_for(second, 10)
    assert err.value.code() == C.ALREADY_EXISTS
    with pytest.raises(grpc.aio.AioRpcError) as err:  # committed after c started: there all the same
        await txns.add(c, "x")
    assert err.value.code() == C.ALREADY_EXISTS
    await txns.commit(b)
    await txns.commit(c)


async def test_an_add_waits_for_the_other_txn_at_most_its_bound_then_is_the_write_conflict(txns: Txns) -> None:
    a, b = await txns.open(2)
    await txns.add(a, "x")
    await txns.add(b, "mine")
    store = CatalogStore(txns.gw.database, warehouse_dir=txns.gw.settings.warehouse_dir, creator_wait_s=0.3)
    with pytest.raises(WriteConflict) as err:
        await store.add_partitions("db", "t", [Partition(db_name="db", table_name="t", values=("x",))],
                                   if_not_exists=True, txn_id=b)
    assert f"txn {a}, which is still open" in str(err.value) and f"txn {b} was aborted" in str(err.value)
    await _loser_is_gone(txns, b, "mine")
    await txns.commit(a)
    assert await txns.names(await txns.snapshot()) == ["p=x"]


async def test_a_wait_for_the_creator_ends_as_soon_as_the_poller_applies_its_commit(txns: Txns) -> None:
    """The wait reads the creator's state between pauses of up to a second; the poller, which applies the
    creator's COMMIT_TXN moments after it, cuts the pause short. The store's clock here never moves, so
    only the poller can end the pause."""
    a, b = await txns.open(2)
    await txns.add(a, "x")
    assert txns.gw.poller is not None and txns.gw.poller.txn_ends is not None
    clock = FakeClock()
    store = CatalogStore(txns.gw.database, warehouse_dir=txns.gw.settings.warehouse_dir, clock=clock,
                         txn_ends=txns.gw.poller.txn_ends)
    second = asyncio.create_task(store.add_partitions(
        "db", "t", [Partition(db_name="db", table_name="t", values=("x",)), Partition(
            db_name="db", table_name="t", values=("y",))], if_not_exists=True, txn_id=b))
    assert await _still_waiting(second)
    await txns.commit(a)
    added, _ = await asyncio.wait_for(second, 10)
    assert [p.name for p in added] == ["p=y"] and clock.now == 0
    await txns.commit(b)
    assert await txns.names(await txns.snapshot()) == ["p=x", "p=y"]


async def test_a_new_partition_racing_an_open_drop_of_its_name_is_still_a_conflict(txns: Txns) -> None:
    [creator] = await txns.open(1)
    await txns.add(creator, "x")
    await txns.commit(creator)
    a, b = await txns.open(2)
    await txns.client.catalog.DropPartitions(pb.DropPartitionsRequest(
        db_name="db", table_name="t", txn_id=a, names=["p=x"]))
    await txns.add(b, "mine")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await _add_if_absent(txns, b, "x")
    assert err.value.code() == C.ABORTED and f"txn {a}" in (err.value.details() or "")
    await _loser_is_gone(txns, b, "mine")


async def test_two_adds_that_would_wait_for_each_other_abort_the_second_at_once(txns: Txns) -> None:
    """a adds x, b adds y, then a adds y (waits for b) and b adds x: b would wait for a, which waits
    for b. The second wait is refused as a write conflict (b aborted), and a's add then goes on."""
    a, b = await txns.open(2)
    await txns.add(a, "x")
    await txns.add(b, "y")
    first = asyncio.create_task(_add_if_absent(txns, a, "y"))
    assert await _still_waiting(first)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await asyncio.wait_for(_add_if_absent(txns, b, "x"), 10)  # not the hive.txn.timeout both would wait
    assert err.value.code() == C.ABORTED
    assert f"waits for txn {b}" in (err.value.details() or "") and f"txn {b} was aborted" in (err.value.details() or "")
    assert await asyncio.wait_for(first, 10) == ["p=y"]  # b's y was discarded with b: a adds it
    await txns.commit(a)
    assert await txns.names(await txns.snapshot()) == ["p=x", "p=y"]


async def test_a_wait_its_deadline_ended_leaves_no_trace_in_the_wait_graph(txns: Txns) -> None:
    """a's add waits for b until its gRPC deadline ends the call; b's later add waiting for a is
    then no deadlock (the cancelled wait unregistered itself, though cancelled by the deadline's
    time-out and by gRPC both). The client sees the deadline before the server has ended its side
    (on a loaded machine, a while before), so the graph is read until it is empty: it must be, soon."""
    a, b = await txns.open(2)
    await txns.add(a, "x")
    await txns.add(b, "y")
    for _ in range(3):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await txns.client.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name="db", table_name="t", txn_id=a, if_not_exists=True, partitions=[pb.Partition(values=["y"])]),
                timeout=0.3)
        assert err.value.code() == C.DEADLINE_EXCEEDED
    conn = await asyncpg.connect(txns.dsn)
    try:
        async with asyncio.timeout(10):
            while await conn.fetchval("SELECT count(*) FROM txn_waits"):
                await asyncio.sleep(0.02)
    finally:
        await conn.close()
    second = asyncio.create_task(_add_if_absent(txns, b, "x"))
    assert await _still_waiting(second)
    await txns.commit(a)
    assert await asyncio.wait_for(second, 10) == []
    await txns.commit(b)


async def test_a_stop_closes_the_pool_only_after_a_cut_waits_removal_from_the_wait_graph(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stop cuts a waiting add at the end of its grace; the wait's removal from the wait graph then
    runs in a task of its own, which needs the pool. The stop closes the pool only after it (here made
    slow, 2 s), so no wait row outlives the gateway (it would make a later wait look like a deadlock)."""
    slow_unregister = txn_waits.unregister

    async def unregister(conn: Any, waiter: int, holder: int) -> None:
        await asyncio.sleep(2.0)
        await slow_unregister(conn, waiter, holder)

    monkeypatch.setattr(txn_waits, "unregister", unregister)
    async for txns in started_txns(pg_dsn, **{"metastore.gateway.shutdown.grace": "0.5s"}):
        a, b = await txns.open(2)
        await txns.add(a, "x")
        waiting = asyncio.create_task(_add_if_absent(txns, b, "x"))
        assert await _still_waiting(waiting)
        await txns.gw.stop()  # cuts the wait (UNAVAILABLE or CANCELLED to the client)
        with pytest.raises(grpc.aio.AioRpcError):
            await waiting
        conn = await asyncpg.connect(pg_dsn)
        try:
            assert await conn.fetch("SELECT * FROM txn_waits") == []
        finally:
            await conn.close()


async def test_a_stop_ends_a_wait_for_another_txn_at_once_as_unavailable(pg_dsn: str) -> None:
    """A stop does not wait out its grace (10 s here) for an add waiting on another txn's end: the add
    answers UNAVAILABLE at once (its own txn stays open, so its client may retry it elsewhere)."""
    async for txns in started_txns(pg_dsn, **{"metastore.gateway.shutdown.grace": "10s"}):
        a, b = await txns.open(2)
        await txns.add(a, "x")
        waiting = asyncio.create_task(_add_if_absent(txns, b, "x"))
        assert await _still_waiting(waiting)
        started = asyncio.get_running_loop().time()
        await txns.gw.stop()
        assert asyncio.get_running_loop().time() - started < 5.0  # not the 10 s grace
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await waiting
        assert err.value.code() == C.UNAVAILABLE and "stopping" in (err.value.details() or "")
        conn = await asyncpg.connect(pg_dsn)
        try:
            assert [r["state"] for r in await conn.fetch("SELECT state FROM txns WHERE txn_id = $1", b)] == ["o"]
            assert await conn.fetch("SELECT * FROM txn_waits") == []
        finally:
            await conn.close()
