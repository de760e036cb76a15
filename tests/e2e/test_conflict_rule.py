"""Issue 15 part 4: Hive's conflict rule (a write-write conflict aborts the writer's txn: the write
answers ABORTED, a later CommitTxn answers ABORTED, its writes and locks are gone), and the table-id
guard on AlterTable and DropTable."""

from __future__ import annotations

from typing import AsyncIterator

import grpc
import pytest

from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from tests.builders import table
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
    a, b = await txns.open(2)
    locks = locks_pb2_grpc.LocksStub(txns.client.channel)
    await locks.Lock(lpb.LockRequest(txn_id=b, user="b", components=[
        lpb.LockComponent(db_name="db", table_name="t", type=lpb.SHARED_WRITE)]))
    await txns.add(b, "mine")
    await txns.add(a, "x")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.add(b, "x")
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
