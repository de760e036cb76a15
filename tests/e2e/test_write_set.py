"""Hive's write-set check (store/write_set.py): of two txns that update or delete the same partition and
overlap in time, the second to commit is aborted, whether its client named the partition in its lock or
afterwards with add_dynamic_partitions, over Thrift (Hive 3's calls, as Trino's and Hive's clients send
them) and gRPC alike. SHARED_WRITE locks do not exclude each other (Hive 4's matrix), so without the check
both updaters would commit and the second would silently undo the first's changes.

Each test would fail if its rule broke: the conflicting commit would succeed, a harmless one would be
refused, or a refused add_dynamic_partitions would leave an entry that aborts a later commit."""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator

import asyncpg
import grpc
import pytest

from gateway.app import Gateway
from gateway.thrift.idl import hms
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from store import write_set
from store.db import Database
from store.sql import txns as txn_sql
from tests.builders import table
from tests.conftest import connect, gateway_settings
from tests.thrift_client import ThriftClient

SHARED_READ, SHARED_WRITE = 1, 2
TABLE, PARTITION = 2, 3
SELECT, INSERT, UPDATE, DELETE = 1, 2, 3, 4
ACQUIRED = 1


class Env:
    def __init__(self, gw: Gateway, hms_call: ThriftClient, grpc_channel: grpc.aio.Channel) -> None:
        self.gw, self.hms = gw, hms_call
        self.txns = transactions_pb2_grpc.TransactionsStub(grpc_channel)
        self.locks = locks_pb2_grpc.LocksStub(grpc_channel)
        self.write_ids: dict[int, int] = {}  # txn: its write id on the table it writes

    async def writer(self, part: str | None = "p=a", op: int = UPDATE, *, dynamic: bool = False,
                     acid: bool | None = True, table_name: str = "t") -> int:
        """A txn holding a write id on db.<table_name> and an acquired SHARED_WRITE lock for `op`."""
        txn = (await self.hms("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids[0]
        allocated = await self.hms("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="db", tableName=table_name, txnIds=[txn]))
        self.write_ids[txn] = allocated.txnToWriteIds[0].writeId
        lock = await self.hms("lock", hms.LockRequest(component=[hms.LockComponent(
            type=SHARED_WRITE, level=PARTITION if part else TABLE, dbname="db", tablename=table_name,
            partitionname=part, operationType=op, isAcid=acid, isDynamicPartitionWrite=dynamic)],
            txnid=txn, user="u", hostname="h"))
        assert lock.state == ACQUIRED  # SHARED_WRITEs share: only the write-set keeps them apart
        return txn

    async def commit(self, txn: int) -> None:
        await self.hms("commit_txn", hms.CommitTxnRequest(txnid=txn))

    async def aborted_at_commit(self, txn: int) -> str:
        with pytest.raises(hms.TxnAbortedException) as refused:
            await self.commit(txn)
        state = await self.hms("get_open_txns")
        assert txn in state.open_txns and txn not in _open_only(state), f"txn {txn} should be aborted"
        locks = (await self.hms("show_locks", hms.ShowLocksRequest(dbname="db"))).locks or []
        assert all(x.txnid != txn for x in locks), "an aborted txn's locks are released"
        return str(refused.value.message)


def _open_only(state: Any) -> list[int]:
    bits = int.from_bytes(state.abortedBits or b"", "little")
    return [t for i, t in enumerate(state.open_txns) if not bits >> i & 1]


@pytest.fixture
async def env(pg_dsn: str) -> AsyncIterator[Env]:
    gw = Gateway(gateway_settings(pg_dsn))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    catalog = client.catalog
    await catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    for name, keys in (("t", (("p", "string"),)), ("u", ()), ("typed", (("hr", "int"),))):
        await catalog.CreateTable(pb.CreateTableRequest(table=table("db", name, keys=keys, transactional=True)))
    await catalog.CreateTable(pb.CreateTableRequest(table=table("db", "plain", keys=(("p", "string"),))))
    txns = transactions_pb2_grpc.TransactionsStub(client.channel)
    setup = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="setup"))).txn_ids[0]
    for name, values in (("t", ["a", "b"]), ("typed", ["7"])):
        await txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(
            txn_ids=[setup], db_name="db", table_name=name))
        await catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name="db", table_name=name, txn_id=setup, partitions=[pb.Partition(values=[v]) for v in values]))
    await txns.CommitTxn(tpb.CommitTxnRequest(txn_id=setup))
    hms_call = ThriftClient(gw.thrift_port)
    try:
        yield Env(gw, hms_call, client.channel)
    finally:
        hms_call.close()
        await client.channel.close()
        await gw.stop()


async def test_the_second_of_two_overlapping_updaters_is_aborted_naming_the_first(env: Env) -> None:
    first, second = await env.writer(), await env.writer()
    await env.commit(first)
    message = await env.aborted_at_commit(second)
    assert f"txn {second} updated partition p=a of db.t, which txn {first} updated" in message
    assert "first committer wins" in message and "was aborted" in message
    # The same for deletes (Hive 4's pair; Hive 2.3 and 3.1 let two deletes through), and a delete
    # against an update (Hive 3.1's and 4's pairs).
    for ops in ((DELETE, DELETE), (UPDATE, DELETE), (DELETE, UPDATE)):
        a, b = await env.writer(op=ops[0]), await env.writer(op=ops[1])
        await env.commit(a)
        assert "deleted" in await env.aborted_at_commit(b)
    # An unpartitioned table is one target.
    a, b = await env.writer(None, table_name="u"), await env.writer(None, table_name="u")
    await env.commit(b)
    assert f"txn {a} updated table db.u, which txn {b} updated" in await env.aborted_at_commit(a)


async def test_writes_that_do_not_overlap_all_commit(env: Env) -> None:
    # Other partitions; inserts (which conflict with nothing); reads; a non-ACID component.
    txns = [await env.writer("p=a"), await env.writer("p=b"), await env.writer("p=a", INSERT),
            await env.writer("p=a", SELECT), await env.writer("p=a", acid=False)]
    for txn in txns:
        await env.commit(txn)
    # One that starts after the other committed does not overlap it.
    first = await env.writer()
    await env.commit(first)
    await env.commit(await env.writer())
    # A typed value names one partition whatever its spelling: hr=07 and hr=7 are the same target.
    a, b = await env.writer("hr=07", table_name="typed"), await env.writer("hr=7", table_name="typed")
    await env.commit(a)
    assert "partition hr=7 of db.typed" in await env.aborted_at_commit(b)


async def test_dynamic_partition_writes_conflict_on_the_partitions_they_name(env: Env) -> None:
    async def dynamic(op: int, names: list[str]) -> int:
        txn = await env.writer(None, op, dynamic=True)
        await env.hms("add_dynamic_partitions", hms.AddDynamicPartitions(
            txnid=txn, writeid=env.write_ids[txn], dbname="DB", tablename="T", partitionnames=names, operationType=op))
        return txn

    # A dynamic update of p=a and p=b against a static update of p=b.
    dyn = await dynamic(UPDATE, ["p=a", "P=b"])
    static = await env.writer("p=b")
    await env.commit(static)
    assert "partition p=b of db.t" in await env.aborted_at_commit(dyn)
    # Named partitions replace the table: a dynamic update of p=a only does not touch p=b.
    dyn = await dynamic(DELETE, ["p=a"])
    static = await env.writer("p=b")
    await env.commit(static)
    await env.commit(dyn)
    # A dynamic insert names nothing that conflicts, and removes its table's entry.
    dyn = await dynamic(INSERT, ["p=a"])
    other = await env.writer(None, dynamic=True)  # a dynamic update that never named its partitions
    await env.commit(other)
    await env.commit(dyn)
    # Two dynamic updaters that never name partitions conflict on the table, as in Hive.
    a, b = await env.writer(None, dynamic=True), await env.writer(None, dynamic=True)
    await env.commit(a)
    assert "table db.t" in await env.aborted_at_commit(b)


async def test_add_dynamic_partitions_refuses_bad_input_and_records_nothing(env: Env) -> None:
    txn = await env.writer(None, dynamic=True)
    write_id = env.write_ids[txn]

    def request(**change: Any) -> Any:
        fields = {"txnid": txn, "writeid": write_id, "dbname": "db", "tablename": "t", "partitionnames": ["p=b"],
                  "operationType": UPDATE, **change}
        return hms.AddDynamicPartitions(**fields)

    cases: list[tuple[dict[str, Any], type[Exception], str]] = [
        ({"txnid": txn + 1000}, hms.NoSuchTxnException, "does not exist"),
        ({"tablename": "missing"}, hms.NoSuchTxnException, "table db.missing does not exist"),
        ({"tablename": "plain"}, hms.NoSuchTxnException, "not a partitioned transactional table"),
        ({"tablename": "u"}, hms.NoSuchTxnException, "not a partitioned transactional table"),
        ({"tablename": "typed"}, hms.NoSuchTxnException, "holds no write id on db.typed"),
        ({"writeid": write_id + 5}, hms.NoSuchTxnException, f"it holds {write_id}"),
        ({"partitionnames": ["q=b"]}, hms.NoSuchTxnException, "partitionnames[0] 'q=b'"),
        ({"partitionnames": ["p=b/q=c"]}, hms.NoSuchTxnException, "has 2 components"),
        ({"operationType": SELECT}, hms.NoSuchTxnException, "must be INSERT, UPDATE or DELETE"),
        ({"operationType": 42}, hms.NoSuchTxnException, "unknown DataOperationType 42"),
        ({"partitionnames": ["p=x"] * 100_001}, hms.NoSuchTxnException,
         "more than metastore.gateway.max.lock.components"),
        ({"dbname": None}, hms.NoSuchTxnException, "needs dbname, tablename and partitionnames"),
    ]
    for change, error, text in cases:
        with pytest.raises(error) as refused:
            await env.hms("add_dynamic_partitions", request(**change))
        message = str(getattr(refused.value, "message", ""))
        assert text in message, (change, message)
    # Nothing was recorded: the txn's only entry is still its table's, which a p=b updater does not meet.
    static = await env.writer("p=b")
    await env.commit(static)
    await env.commit(txn)
    ended = await env.writer()
    await env.commit(ended)
    for state, error in ((ended, hms.NoSuchTxnException), (await _aborted(env), hms.TxnAbortedException)):
        with pytest.raises(error):
            await env.hms("add_dynamic_partitions", request(txnid=state))


async def _aborted(env: Env) -> int:
    txn = await env.writer()
    await env.hms("abort_txn", hms.AbortTxnRequest(txnid=txn))
    return txn


async def test_grpc_lock_add_dynamic_partitions_and_commit_follow_the_same_rule(env: Env) -> None:
    async def writer(component: lpb.LockComponent) -> int:
        txn = (await env.txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="g"))).txn_ids[0]
        await env.txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(
            txn_ids=[txn], db_name="db", table_name="t"))
        lock = await env.locks.Lock(lpb.LockRequest(components=[component], txn_id=txn, user="g"))
        assert lock.state == lpb.ACQUIRED
        return txn

    static = await writer(lpb.LockComponent(db_name="db", table_name="t", partition_name="p=a",
                                            type=lpb.SHARED_WRITE, operation=lpb.DATA_OPERATION_DELETE))
    dyn = await writer(lpb.LockComponent(db_name="db", table_name="t", type=lpb.SHARED_WRITE,
                                         operation=lpb.DATA_OPERATION_UPDATE, dynamic_partition_write=True))
    named = await env.txns.AddDynamicPartitions(tpb.AddDynamicPartitionsRequest(
        txn_id=dyn, db_name="db", table_name="t", partition_names=["P=a", "p=a"],
        operation=lpb.DATA_OPERATION_UPDATE))
    assert list(named.partition_names) == ["p=a"]  # canonical, once
    await env.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=dyn))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await env.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=static))
    assert refused.value.code() == grpc.StatusCode.ABORTED
    assert f"txn {static} deleted partition p=a of db.t, which txn {dyn} updated" in str(refused.value.details())
    with pytest.raises(grpc.aio.AioRpcError) as again:  # it stays aborted
        await env.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=static))
    assert again.value.code() == grpc.StatusCode.ABORTED
    for request, code in ((tpb.AddDynamicPartitionsRequest(txn_id=dyn, db_name="db", table_name="t"),
                           grpc.StatusCode.FAILED_PRECONDITION),  # committed
                          (tpb.AddDynamicPartitionsRequest(txn_id=0, db_name="db", table_name="t"),
                           grpc.StatusCode.INVALID_ARGUMENT),
                          (tpb.AddDynamicPartitionsRequest(txn_id=dyn + 99, db_name="db", table_name="t"),
                           grpc.StatusCode.NOT_FOUND)):
        with pytest.raises(grpc.aio.AioRpcError) as bad:
            await env.txns.AddDynamicPartitions(request)
        assert bad.value.code() == code, bad.value.details()


async def test_concurrent_commits_on_two_gateways_let_exactly_one_updater_through(env: Env, pg_dsn: str) -> None:
    """Two commits of overlapping updaters racing on two gateways (separate statements on separate
    connections): the write-set lock makes the second see the first's entries. Without it both checks
    could run before either commit, and both would pass."""
    other = Gateway(gateway_settings(pg_dsn))
    await other.start()
    other_hms = ThriftClient(other.thrift_port)
    try:
        for _ in range(25):
            a, b = await env.writer(), await env.writer()
            outcomes = await asyncio.gather(env.commit(a), other_hms("commit_txn", hms.CommitTxnRequest(txnid=b)),
                                            return_exceptions=True)
            assert sorted(type(o).__name__ for o in outcomes) == ["NoneType", "TxnAbortedException"], outcomes
    finally:
        other_hms.close()
        await other.stop()


async def test_a_commit_waits_for_an_overlapping_commit_in_flight_and_then_sees_it(env: Env, pg_dsn: str) -> None:
    """The same race made certain: the first commit's statement runs in a transaction held open, and
    the second must wait for it (the write-set lock), then find its entry. Without the lock the second
    would pass its check at once, against a write-set without the first's uncommitted entry."""
    first, second = await env.writer(), await env.writer()
    holder, waiter = await asyncpg.connect(pg_dsn), await asyncpg.connect(pg_dsn)
    try:
        held = holder.transaction()
        await held.start()
        assert (await holder.fetchrow(txn_sql.COMMIT_TXN_LOGGED, first, "COMMIT_TXN"))["write_conflict"] is None
        commit = asyncio.create_task(waiter.fetchrow(txn_sql.COMMIT_TXN_LOGGED, second, "COMMIT_TXN"))
        for _ in range(500):  # until it waits on a lock (bounded: 5 s), or it finished without waiting
            waiting = await holder.fetchval("SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $1",
                                            waiter.get_server_pid())
            if waiting or commit.done():
                break
            await asyncio.sleep(0.01)
        assert waiting and not commit.done(), "the second commit did not wait for the first"
        await held.commit()
        row = await asyncio.wait_for(commit, 10)
        assert row["prior_state"] == "o" and row["write_conflict"] is not None  # left open for the abort
    finally:
        await holder.close()
        await waiter.close()
    assert "which txn" in await env.aborted_at_commit(second)


async def test_housekeeping_forgets_what_no_open_txn_can_conflict_with(env: Env, pg_dsn: str) -> None:
    db = await Database.connect(pg_dsn)
    try:
        old = await env.writer("p=b", SELECT)  # open before the next commit: it could still conflict
        first = await env.writer()
        await env.commit(first)
        assert await db.transact(write_set.gc) == 0
        await env.commit(old)
        assert await db.transact(write_set.gc) == 1
        # With the entry gone, a txn opened later still commits (it never overlapped the first).
        await env.commit(await env.writer())
    finally:
        await db.close()


async def _updater_of(env: Env, first: int, count: int) -> int:
    """A txn whose lock names updates of `count` partitions of db.t from p=`first` on."""
    txn = (await env.hms("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids[0]
    lock = await env.hms("lock", hms.LockRequest(txnid=txn, user="u", hostname="h", component=[hms.LockComponent(
        type=SHARED_WRITE, level=PARTITION, dbname="db", tablename="t", partitionname=f"p={i}", operationType=UPDATE)
        for i in range(first, first + count)]))
    assert lock.state == ACQUIRED
    return txn


async def _commit_seconds(env: Env, txn: int) -> float:
    started = time.perf_counter()
    await env.commit(txn)
    return time.perf_counter() - started


async def test_the_check_costs_in_proportion_to_the_txns_updates(env: Env) -> None:
    """An update of 20,000 partitions commits after another's of 20,000, both in the write-set, at the cost
    per partition of 2,000 after none (store/schema/0038: before, each partition scanned the write-set's
    rows of its table, and 10,000 after 10,000 took 12.6 s to commit where 1,000 took 0.18 s)."""
    await env.commit(await _updater_of(env, 0, 100))  # the session's plans
    small = await _commit_seconds(env, await _updater_of(env, 100, 2_000)) / 2_000
    first, second = await _updater_of(env, 10_000, 20_000), await _updater_of(env, 30_000, 20_000)
    await env.commit(first)
    large = await _commit_seconds(env, second) / 20_000
    assert large < 4 * small + 20e-6, f"{large * 1e6:.1f} µs per partition against {small * 1e6:.1f}"
