"""Transactions, write ids and snapshot-versioned metadata through the real gRPC API."""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator

import asyncpg
import grpc
import pytest

from gateway import convert
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import events_pb2 as evpb
from protos.metastore.v1 import events_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from hive.writeids import ValidTxnList, ValidWriteIdList
from store.catalog_store import CatalogStore
from tests.builders import table
from tests.conftest import wait_applied
from tests.txn_helpers import Txns, started_txns

C = grpc.StatusCode


@pytest.fixture
async def txns(pg_dsn: str) -> AsyncIterator[Txns]:
    async for t in started_txns(pg_dsn):
        yield t


async def test_open_allocate_commit_and_hive_strings(txns: Txns) -> None:
    a, b, c = await txns.open(3)
    alloc = await txns.txn.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(txn_ids=[b, a], db_name="db",
                                                                                  table_name="t"))
    assert [(x.txn_id, x.write_id) for x in alloc.txn_to_write_ids] == [(a, 1), (b, 2)]
    again = await txns.txn.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(txn_ids=[a], db_name="db",
                                                                                  table_name="t"))
    assert [(x.txn_id, x.write_id) for x in again.txn_to_write_ids] == [(a, 1)]  # idempotent
    await txns.commit(a)
    await txns.txn.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[b]))
    state = await txns.txn.GetOpenTxns(tpb.GetOpenTxnsRequest())
    assert state.valid_txn_list == f"{c}:{c}:{c}:{b}"
    assert ValidTxnList.parse(state.valid_txn_list).is_txn_aborted(b)
    wids = await txns.snapshot()
    assert wids.valid_write_id_list == "db.t:2:9223372036854775807::2"
    await txns.commit(a)  # idempotent
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.commit(b)
    assert err.value.code() == C.ABORTED and f"txn {b} was aborted" in err.value.details()
    shown = (await txns.txn.ShowTransactions(tpb.ShowTransactionsRequest())).transactions
    assert [(t.txn_id, t.state, t.user) for t in shown] == [(b, "ABORTED", "test"), (c, "OPEN", "test")]


async def test_snapshot_isolation_and_read_your_own_writes(txns: Txns) -> None:
    (w1,) = await txns.open()
    await txns.add(w1, "a")
    await txns.commit(w1)
    (reader,) = await txns.open()
    old = await txns.snapshot(reader)

    (w2,) = await txns.open()
    mine_before_writing = await txns.snapshot(w2)
    await txns.alter(w2, "a", "v2")
    await txns.add(w2, "b")
    # The writer sees its own uncommitted writes, even with a snapshot taken before it wrote.
    assert await txns.names(mine_before_writing) == ["p=a", "p=b"]
    assert await txns.tag(mine_before_writing, "a") == "v2"
    # Nobody else does.
    assert await txns.names(await txns.snapshot()) == ["p=a"]
    await txns.commit(w2)

    assert await txns.names(old) == ["p=a"] and await txns.tag(old, "a") == ""
    new = await txns.snapshot()
    assert await txns.names(new) == ["p=a", "p=b"] and await txns.tag(new, "a") == "v2"


async def test_second_writer_of_a_partition_gets_aborted_naming_the_holder(txns: Txns) -> None:
    (w0,) = await txns.open()
    await txns.add(w0, "a")
    await txns.commit(w0)
    a, late = await txns.open(2)
    await txns.alter(a, "a", "from-a")
    writes = (lambda b: txns.alter(b, "a", "from-b"),
              lambda b: txns.client.catalog.DropPartitions(pb.DropPartitionsRequest(
                  db_name="db", table_name="t", txn_id=b, names=["p=a"])))
    # An add writes nothing to a partition that exists whoever is changing it: ALREADY_EXISTS, as Hive.
    (b,) = await txns.open()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.add(b, "a")
    assert err.value.code() == C.ALREADY_EXISTS
    await txns.commit(b)
    for attempt in writes:
        (b,) = await txns.open()
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await attempt(b)
        assert err.value.code() == C.ABORTED and f"txn {a}" in err.value.details()
        # Hive's rule: the conflict aborted b itself; its commit says so.
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await txns.commit(b)
        assert err.value.code() == C.ABORTED
    await txns.commit(a)
    # a committed after `late` started: its snapshot cannot see a's change, so writing over it would
    # lose it. First committer wins: `late` is refused and aborted, and retries in a new transaction.
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.alter(late, "a", "from-b")
    assert err.value.code() == C.ABORTED
    assert f"txn {a}, which committed after txn {late} started" in err.value.details()
    (retry,) = await txns.open()
    await txns.alter(retry, "a", "from-b")
    await txns.commit(retry)
    assert await txns.tag(await txns.snapshot(), "a") == "from-b"


async def test_a_drop_in_a_txn_asked_for_the_partitions_whole_answers_the_versions_it_dropped(txns: Txns) -> None:
    """What Thrift's drop_partitions_req answers, for a transactional table: a committed version (its end
    stamped) and the txn's own (deleted), each as the txn read it before the drop, in the order asked."""
    (w1,) = await txns.open()
    await txns.add(w1, "a")
    await txns.alter(w1, "a", "committed")
    await txns.commit(w1)
    (w2,) = await txns.open()
    await txns.add(w2, "b")
    read = await txns.snapshot(w2)
    before = list((await txns.client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
        db_name="db", table_name="t", names=["p=b", "p=a"], read=read))).partitions)
    assert [(p.name, p.write_id, p.parameters.get("tag")) for p in before] == [("p=b", 2, None),
                                                                                ("p=a", 1, "committed")]
    store = CatalogStore(txns.gw.database, warehouse_dir=txns.gw.settings.warehouse_dir)
    dropped, _ = await store.drop_partitions("db", "t", ["p=b", "p=a"], if_exists=False, txn_id=w2, whole=True)
    assert [convert.partition_to_pb(p) for p in dropped.whole] == before
    assert await txns.names(await txns.snapshot(w2)) == []


async def test_abort_discards_partitions_alters_and_renames(txns: Txns) -> None:
    (w0,) = await txns.open()
    await txns.add(w0, "a")
    await txns.commit(w0)
    (x,) = await txns.open()
    await txns.add(x, "b")
    await txns.alter(x, "a", "doomed")
    await txns.client.catalog.AlterTable(pb.AlterTableRequest(
        db_name="db", table_name="t", txn_id=x, table=table("db", "t_renamed", keys=(("p", "string"),),
                                                            transactional=True)))
    await txns.txn.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[x]))
    after = await txns.snapshot()
    assert await txns.names(after) == ["p=a"] and await txns.tag(after, "a") == ""
    got = await txns.client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t", read=after))
    assert got.table.name == "t"


async def test_rename_is_seen_by_name_per_snapshot_and_table_id_is_kept(txns: Txns) -> None:
    (w0,) = await txns.open()
    await txns.add(w0, "a")
    await txns.commit(w0)
    (reader,) = await txns.open()
    before = await txns.snapshot(reader)
    (w,) = await txns.open()
    renamed = await txns.client.catalog.AlterTable(pb.AlterTableRequest(
        db_name="db", table_name="t", txn_id=w, table=table("db", "t2", keys=(("p", "string"),), transactional=True)))
    await txns.commit(w)
    old = await txns.client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t", read=before))
    assert old.table.name == "t" and old.table.table_id == renamed.table.table_id
    new = await txns.snapshot(name="db.t2")
    assert new.table_id == renamed.table.table_id
    assert await txns.names(new, table_name="t2") == ["p=a"]
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t", read=pb.ReadContext(
            valid_write_id_list=new.valid_write_id_list.replace("db.t2:", "db.t:"), table_id=new.table_id)))
    assert err.value.code() == C.NOT_FOUND


async def test_acid_reads_need_a_snapshot_and_writes_need_a_txn(txns: Txns) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(db_name="db", table_name="t",
                                                                                      names=["p=a"]))
    assert err.value.code() == C.FAILED_PRECONDITION and "ValidWriteIdList" in err.value.details()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.add(0, "a")
    assert err.value.code() == C.FAILED_PRECONDITION and "txn_id" in err.value.details()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t", read=pb.ReadContext(
            valid_write_id_list="db.t:5:oops::")))
    assert err.value.code() == C.INVALID_ARGUMENT
    snap = await txns.snapshot()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t", read=pb.ReadContext(
            valid_write_id_list=snap.valid_write_id_list, table_id=snap.table_id + 1)))
    assert err.value.code() == C.FAILED_PRECONDITION and str(snap.table_id + 1) in err.value.details()


async def test_limits_answer_resource_exhausted(pg_dsn: str) -> None:
    async for t in started_txns(pg_dsn, **{"hive.max.open.txns": "5", "hive.count.open.txns.interval": "50ms"}):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await t.open(1001)
        assert err.value.code() == C.RESOURCE_EXHAUSTED and "hive.txn.max.open.batch" in err.value.details()
        await t.open(5)
        await asyncio.sleep(0.3)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await t.open(1)
        assert err.value.code() == C.RESOURCE_EXHAUSTED and "hive.max.open.txns" in err.value.details()


async def test_reaper_aborts_silent_txns_discards_their_writes_and_refuses_their_commit(pg_dsn: str) -> None:
    conf = {"hive.txn.timeout": "1s", "hive.timedout.txn.reaper.start": "100ms",
            "hive.timedout.txn.reaper.interval": "200ms"}
    async for t in started_txns(pg_dsn, **conf):
        silent, alive = await t.open(2)
        await t.add(silent, "lost")
        await t.add(alive, "kept")
        for _ in range(12):
            await asyncio.sleep(0.25)
            beat = await t.txn.Heartbeat(tpb.HeartbeatRequest(txn_ids=[alive]))
            assert list(beat.aborted_txn_ids) == []
        beat = await t.txn.Heartbeat(tpb.HeartbeatRequest(txn_ids=[silent]))
        assert list(beat.aborted_txn_ids) == [silent]
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await t.commit(silent)
        assert err.value.code() == C.ABORTED and "hive.txn.timeout" in err.value.details()
        await t.commit(alive)
        assert await t.names(await t.snapshot()) == ["p=kept"]
        assert t.gw.housekeeper is not None and t.gw.housekeeper.stats["reaped_txns"] == 1


async def test_hive_18747_cleaner_keeps_what_an_open_snapshot_needs(txns: Txns) -> None:
    (setup,) = await txns.open()
    await txns.add(setup, "a")
    await txns.commit(setup)
    x, reader = await txns.open(2)
    reader_txn_list = await txns.txn_list(reader)  # the reader's snapshot, taken while x is open
    snap = await txns.snapshot(reader, txn_list=reader_txn_list)
    await txns.alter(x, "a", "by-x")
    await txns.commit(x)
    for _ in range(3):  # later committed txns move the low-water mark forward, if nothing holds it
        (later,) = await txns.open()
        await txns.add(later, f"later{_}")
        await txns.commit(later)
    hk = txns.gw.housekeeper
    assert hk is not None
    await hk.clean_once()
    # The reader's MIN_HISTORY_LEVEL row (min open txn = x) keeps x's mapping: it is still an exception.
    assert x in [txn for txn, _ in await txns.t2w_rows()] and setup not in [txn for txn, _ in await txns.t2w_rows()]
    # The same ValidTxnList maps to write ids that still exclude x's write, after cleaning.
    recomputed = await txns.snapshot(reader, txn_list=reader_txn_list)
    assert not ValidWriteIdList.parse(recomputed.valid_write_id_list).is_write_id_valid(2)
    assert await txns.tag(recomputed, "a") == ""
    assert await txns.tag(snap, "a") == "" and await txns.names(snap) == ["p=a"]
    await txns.commit(reader)
    await hk.clean_once()
    assert await txns.t2w_rows() == []  # nothing left that an open snapshot needs
    with pytest.raises(grpc.aio.AioRpcError) as err:  # the reader is gone; its old list can no longer be mapped
        await txns.snapshot(txn_list=reader_txn_list)
    assert err.value.code() == C.FAILED_PRECONDITION and "snapshot too old" in err.value.details()
    current = await txns.snapshot()
    assert await txns.tag(current, "a") == "by-x" and len(await txns.names(current)) == 4


@pytest.fixture
async def txns_without_cleaner(pg_dsn: str) -> AsyncIterator[Txns]:
    """As `txns`, without the compactor's Cleaner, which would end old aborted writes on its own."""
    async for t in started_txns(pg_dsn, **{"hive.compactor.cleaner.on": "false"}):
        yield t


async def test_housekeeping_forgets_aborted_txns_that_wrote_nothing_and_cleans_past_them(
        txns_without_cleaner: Txns) -> None:
    """An aborted txn without write ids (not a compaction's) is deleted once hive.txn.timeout has
    passed since its abort; one with a write id is kept (its write id stays aborted: only the
    Cleaner ends it, tests/e2e/test_compaction.py). The committed txns around them are cleaned. A
    forgotten txn is answered NOT_FOUND, not as committed."""
    txns = txns_without_cleaner
    empty, wrote = await txns.open(2)
    await txns.add(wrote, "a")
    await txns.txn.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[empty, wrote]))
    (w,) = await txns.open()
    await txns.add(w, "b")
    await txns.commit(w)
    conn = await asyncpg.connect(txns.dsn)
    try:
        await conn.execute("UPDATE txns SET finished_at = finished_at - interval '1 day' WHERE state = 'a'")
        (recent,) = await txns.open()  # aborted now: kept for hive.txn.timeout
        await txns.txn.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[recent]))
        hk = txns.gw.housekeeper
        assert hk is not None
        await hk.clean_once()
        assert [tuple(r) for r in await conn.fetch("SELECT txn_id, state FROM txns ORDER BY 1")] == [
            (wrote, "a"), (recent, "a")]
        assert hk.stats.get("aborted_txns_forgotten") == 1
        assert await txns.t2w_rows() == [(wrote, 1)]
    finally:
        await conn.close()
    state = await txns.txn.GetOpenTxns(tpb.GetOpenTxnsRequest())
    assert list(state.aborted_txn_ids) == [wrote, recent]
    assert ValidWriteIdList.parse((await txns.snapshot()).valid_write_id_list).is_write_id_aborted(1)
    assert await txns.names(await txns.snapshot()) == ["p=b"]
    for call in (txns.commit(empty), txns.txn.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[empty])),
                 txns.add(empty, "c")):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call
        assert err.value.code() == C.NOT_FOUND, err.value.details()
        assert f"txn {empty} ended long ago and is forgotten" in err.value.details()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.txn.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[empty, 10**9]))
    assert err.value.details() == (f"txn {empty} ended long ago and is forgotten: it committed, or it was aborted "
                                   "having written nothing; its outcome is no longer kept (hive.txn.timeout after "
                                   f"an abort); txn {10**9} does not exist; nothing was aborted")
    await txns.commit(w)  # committed after the forgotten one: still answered as committed (idempotent)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.commit(recent)
    assert err.value.code() == C.ABORTED


async def test_a_snapshot_outside_any_txn_is_refused_once_its_versions_were_collected(txns: Txns) -> None:
    (w0,) = await txns.open()
    await txns.add(w0, "a")
    await txns.commit(w0)
    loose = await txns.snapshot()  # no txn: nothing protects it from garbage collection
    (w,) = await txns.open()
    await txns.alter(w, "a", "new")
    await txns.commit(w)
    assert await txns.tag(loose, "a") == ""  # still answered right while the old version exists
    hk = txns.gw.housekeeper
    assert hk is not None
    assert await hk.clean_once() == 1
    await wait_applied(txns.gw)  # the cache prunes when its poller applies the VERSIONS_GC event
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await txns.tag(loose, "a")
    assert err.value.code() == C.FAILED_PRECONDITION and "snapshot too old" in err.value.details()
    assert await txns.tag(await txns.snapshot(), "a") == "new"


async def test_a_write_id_allocated_while_its_txn_commits_is_in_the_commit(txns: Txns) -> None:
    """Allocation and commit of one txn racing (a client's threads): either the allocation comes
    first and the commit records the write id (in its COMMIT_TXN event, and as a writer that later
    txns conflict with), or the commit comes first and the allocation is refused. Never a write id
    the commit did not see: the commit function reads the txn's write ids after it holds the txn's
    row, in a fresh snapshot, not in the one its statement started with."""
    events = events_pb2_grpc.EventsStub(txns.client.channel)
    for _ in range(25):
        (t,) = await txns.open()
        outcomes: tuple[Any, ...] = await asyncio.gather(
            txns.txn.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(txn_ids=[t], db_name="db", table_name="t")),
            txns.txn.CommitTxn(tpb.CommitTxnRequest(txn_id=t)), return_exceptions=True)
        allocated, committed = outcomes
        assert not isinstance(committed, BaseException), committed
        (commit_event,) = (await events.GetNextNotification(
            evpb.GetNextNotificationRequest(last_event_id=committed.event_id - 1, max_events=1))).events
        recorded = [w["write_id"] for w in json.loads(commit_event.message)["write_ids"]]
        if isinstance(allocated, BaseException):
            assert isinstance(allocated, grpc.aio.AioRpcError) and allocated.code() == C.FAILED_PRECONDITION
            assert recorded == []
        else:
            assert recorded == [allocated.txn_to_write_ids[0].write_id]
