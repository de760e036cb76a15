"""The compactor's queue, Initiator and Cleaner through a real gateway on a real PostgreSQL.

Data files here are opaque bytes (the Initiator and the Cleaner only list and size directories;
the Spark worker that reads them is tested in tests/spark/test_compactor.py). The loops are driven
round by round (`initiate_once`, `clean_once`) so each step is observable.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from pathlib import Path
from typing import Any, AsyncIterator

import asyncpg
import grpc
import pytest

from gateway.app import Gateway
from hive.writeids import ValidTxnList, ValidWriteIdList
from pipeline.acid import NotEnoughHistory, visible_files
from poller.compactor import Compactor
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc
from protos.metastore.v1 import compaction_pb2 as cpb
from protos.metastore.v1 import compaction_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from store import compaction, txns
from store.compaction_policy import MAJOR, MINOR, PartitionFacts, Thresholds, decide, thresholds_for
from store.db import Database
from store.events import Written, append_events
from store.migrations import known_migrations
from tests.builders import table
from tests.conftest import connect, gateway_settings, wait_applied

C = grpc.StatusCode


@dataclasses.dataclass
class World:
    gw: Gateway
    catalog: catalog_pb2_grpc.CatalogStub
    txn: transactions_pb2_grpc.TransactionsStub
    comp: compaction_pb2_grpc.CompactorStub
    root: Path

    @property
    def compactor(self) -> Compactor:
        assert self.gw.compactor is not None
        return self.gw.compactor

    async def write(self, part: str, size: int = 100, *, commit: bool = True, tbl: str = "t") -> tuple[int, int, Path]:
        """One txn appending a delta of `size` bytes to partition p=`part`; (txn, write id, dir)."""
        txn_id = (await self.txn.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="t", hostname="h"))).txn_ids[0]
        w = (await self.txn.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(
            txn_ids=[txn_id], db_name="db", table_name=tbl))).txn_to_write_ids[0].write_id
        location = self.root / tbl / f"p={part}"
        if not location.exists():
            await self.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name="db", table_name=tbl, txn_id=txn_id, partitions=[pb.Partition(values=[part])]))
        delta = location / f"delta_{w:07d}_{w:07d}"
        delta.mkdir(parents=True)
        (delta / "part-00000.parquet").write_bytes(os.urandom(size))
        (delta / ".part-00000.parquet.crc").write_bytes(b"x")  # hidden: never counted
        if commit:
            await self.txn.CommitTxn(tpb.CommitTxnRequest(txn_id=txn_id))
        else:
            await self.txn.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[txn_id]))
        return txn_id, w, delta

    async def show(self) -> list[cpb.CompactionInfo]:
        return list((await self.comp.ShowCompactions(cpb.ShowCompactionsRequest(db_name="db"))).compactions)


@pytest.fixture
async def world(pg_dsn: str, tmp_path: Path) -> AsyncIterator[World]:
    async with _world(pg_dsn, tmp_path, data_roots=str(tmp_path)) as w:
        yield w


@contextlib.asynccontextmanager
async def _world(pg_dsn: str, tmp_path: Path, *, data_roots: str) -> AsyncIterator[World]:
    """A gateway whose loops are driven by hand, with db.t (transactional, partitioned by p) at tmp_path/t."""
    gw = Gateway(gateway_settings(pg_dsn, **{"hive.compactor.cleaner.on": "false",
                                             "hive.compactor.initiator.on": "false",
                                             "metastore.gateway.data.roots": data_roots}))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        with contextlib.suppress(grpc.aio.AioRpcError):  # a second gateway on the database finds them
            await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
            t = table("db", "t", keys=(("p", "string"),), transactional=True, location=f"file://{tmp_path}/t")
            t.parameters["compactorthreshold.hive.compactor.delta.num.threshold"] = "3"
            await client.catalog.CreateTable(pb.CreateTableRequest(table=t))
        yield World(gw, client.catalog, transactions_pb2_grpc.TransactionsStub(client.channel),
                    compaction_pb2_grpc.CompactorStub(client.channel), tmp_path)
    finally:
        await client.channel.close()
        await gw.stop()


# -- the policy, pure -----------------------------------------------------------------------------


def test_policy_follows_hive_order() -> None:
    t = Thresholds()
    assert decide(PartitionFacts(), t, 0).type is None
    assert decide(PartitionFacts(delta_count=11, delta_bytes=11), t, 0).type == MAJOR  # no base
    assert decide(PartitionFacts(base_write_id=5, base_bytes=1000, delta_count=11, delta_bytes=50), t, 0).type == MINOR
    assert decide(PartitionFacts(base_write_id=5, base_bytes=1000, delta_count=2, delta_bytes=101), t, 0).type == MAJOR
    assert decide(PartitionFacts(base_write_id=5, base_bytes=1000, delta_count=2, delta_bytes=100), t, 0).type is None
    many_aborts = PartitionFacts(aborted_ended_s=tuple([0.0] * 1001))
    assert decide(many_aborts, t, 0).type == MAJOR
    old_abort = PartitionFacts(base_write_id=5, base_bytes=1000, aborted_ended_s=(0.0,))
    assert decide(old_abort, t, 12 * 3600 - 1).type is None
    assert decide(old_abort, t, 12 * 3600 + 1).type == MINOR


def test_table_properties_override_thresholds() -> None:
    t = thresholds_for(Thresholds(), {"COMPACTORTHRESHOLD.hive.compactor.delta.num.threshold": "3",
                                      "compactorthreshold.hive.compactor.aborted.txn.time.threshold": "5m"})
    assert (t.delta_num, t.delta_pct, t.aborted_age_s) == (3, 0.1, 300.0)
    with pytest.raises(Exception, match="compactorthreshold.hive.compactor.delta.pct.threshold='lots'"):
        thresholds_for(Thresholds(), {"compactorthreshold.hive.compactor.delta.pct.threshold": "lots"})


# -- the API --------------------------------------------------------------------------------------


async def test_compact_validates_and_does_not_double_queue(world: World) -> None:
    await world.write("a")
    bad = [
        (cpb.CompactRequest(db_name="db", table_name="t", partition_name="p=a"), C.INVALID_ARGUMENT, "MAJOR or MINOR"),
        (cpb.CompactRequest(db_name="db", table_name="t", type=cpb.MAJOR), C.INVALID_ARGUMENT, "name the partition"),
        (cpb.CompactRequest(db_name="db", table_name="nope", partition_name="p=a", type=cpb.MAJOR), C.NOT_FOUND,
         "db.nope"),
        (cpb.CompactRequest(db_name="db", table_name="t", partition_name="p=zz", type=cpb.MAJOR), C.NOT_FOUND,
         "p=zz"),
        (cpb.CompactRequest(table_name="t", type=cpb.MAJOR), C.INVALID_ARGUMENT, "db_name"),
    ]
    for request, code, text in bad:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await world.comp.Compact(request)
        assert err.value.code() == code and text in (err.value.details() or ""), err.value.details()
    first = await world.comp.Compact(cpb.CompactRequest(db_name="db", table_name="t", partition_name="p=a",
                                                        type=cpb.MAJOR, properties={"k": "v"}))
    again = await world.comp.Compact(cpb.CompactRequest(db_name="DB", table_name="T", partition_name="p=a",
                                                        type=cpb.MINOR))
    assert first.accepted and not again.accepted and again.id == first.id and again.state == "initiated"
    [row] = await world.show()
    assert (row.id, row.table_name, row.partition_name, row.type, row.state, row.hadoop_job_id) == (
        first.id, "t", "p=a", "MAJOR", "initiated", "None")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id=""))
    assert err.value.code() == C.INVALID_ARGUMENT


async def test_worker_protocol_and_timeout(world: World, pg_dsn: str) -> None:
    await world.write("a")
    queued = await world.comp.Compact(cpb.CompactRequest(db_name="db", table_name="t", partition_name="p=a",
                                                         type=cpb.MAJOR))
    claim = await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="host-1"))
    assert claim.found and claim.id == queued.id and claim.type == cpb.MAJOR
    assert not (await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="host-2"))).found
    with pytest.raises(grpc.aio.AioRpcError) as err:  # another worker cannot act on it
        await world.comp.StartCompaction(cpb.StartCompactionRequest(id=claim.id, worker_id="host-2"))
    assert err.value.code() == C.FAILED_PRECONDITION and "host-1" in (err.value.details() or "")
    started = await world.comp.StartCompaction(cpb.StartCompactionRequest(id=claim.id, worker_id="host-1"))
    assert started.location.endswith("/t/p=a") and started.valid_write_id_list == "db.t:1:9223372036854775807::"
    assert (await world.show())[0].state == "working"
    await world.comp.HeartbeatCompaction(cpb.HeartbeatCompactionRequest(id=claim.id, worker_id="host-1"))
    # The worker goes silent: after hive.compactor.worker.timeout the Initiator queues it again and aborts its txn.
    world.compactor.settings = dataclasses.replace(world.compactor.settings, worker_timeout_s=0.2)
    await asyncio.sleep(0.3)
    await world.compactor.initiate_once()
    [row] = await world.show()
    assert row.state == "initiated" and "timed out" in row.error_message
    txns = (await world.txn.GetOpenTxns(tpb.GetOpenTxnsRequest())).aborted_txn_ids
    assert started.txn_id in txns
    with pytest.raises(grpc.aio.AioRpcError) as err:  # the late worker cannot complete
        await world.comp.CompleteCompaction(cpb.CompleteCompactionRequest(
            id=claim.id, worker_id="host-1", txn_id=started.txn_id, highest_write_id=1))
    assert err.value.code() == C.FAILED_PRECONDITION and "worker.timeout" in (err.value.details() or "")
    # Retried by another worker: complete -> ready for cleaning -> (Cleaner) succeeded.
    claim2 = await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="host-2"))
    assert claim2.id == claim.id
    started2 = await world.comp.StartCompaction(cpb.StartCompactionRequest(id=claim.id, worker_id="host-2"))
    await world.comp.CompleteCompaction(cpb.CompleteCompactionRequest(
        id=claim.id, worker_id="host-2", txn_id=started2.txn_id, highest_write_id=1))
    [row] = await world.show()
    assert (row.state, row.highest_write_id, row.txn_id, row.worker_id) == ("ready for cleaning", 1,
                                                                            started2.txn_id, "host-2")
    assert row.next_txn_id > started2.txn_id
    assert await world.compactor.clean_once() == 1
    [row] = await world.show()
    assert row.state == "succeeded" and row.duration_ms >= 0 and row.end_ms >= row.start_ms
    # The timed-out attempt's txn is still known to have compacted db.t (the requeue cleared the
    # entry's link to it), so the Cleaner can end it; the committed one needs no link.
    assert await _fetch(pg_dsn, "SELECT txn_id FROM compaction_txns") == [(started.txn_id,)]


async def test_fail_and_refuse_go_to_history(world: World) -> None:
    await world.write("a")
    await world.write("b")
    for part, refused in (("p=a", False), ("p=b", True)):
        await world.comp.Compact(cpb.CompactRequest(db_name="db", table_name="t", partition_name=part, type=cpb.MINOR))
        claim = await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="w-1"))
        started = await world.comp.StartCompaction(cpb.StartCompactionRequest(id=claim.id, worker_id="w-1"))
        await world.comp.FailCompaction(cpb.FailCompactionRequest(id=claim.id, worker_id="w-1", error_message="boom",
                                                                  refused=refused))
        assert started.txn_id in (await world.txn.GetOpenTxns(tpb.GetOpenTxnsRequest())).aborted_txn_ids
    assert [(r.partition_name, r.state, r.error_message) for r in await world.show()] == [
        ("p=a", "failed", "boom"), ("p=b", "refused", "boom")]


# -- the Initiator --------------------------------------------------------------------------------


async def test_initiator_thresholds_no_auto_compaction_and_failures(world: World) -> None:
    for _ in range(3):
        await world.write("a")
    assert await world.compactor.initiate_once() == 0  # 3 deltas: not more than the table's threshold 3
    assert await world.compactor.initiate_once() == 0  # nothing new: the table is not even listed
    await world.write("a")
    assert await world.compactor.initiate_once() == 1
    [row] = await world.show()
    assert (row.type, row.state, row.partition_name) == ("MAJOR", "initiated", "p=a")  # no base yet: major
    assert row.initiator_id.endswith("-initiator")
    # The entry fails twice in a row (hive.compactor.initiator.failed.compacts.threshold = 2) ...
    for _ in range(2):
        claim = await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="w-1"))
        await world.comp.FailCompaction(cpb.FailCompactionRequest(id=claim.id, worker_id="w-1", error_message="x"))
        await world.write("a")  # a new write makes the Initiator look again
        await world.compactor.initiate_once()
    # ... so the next round records "did not initiate" instead of queueing.
    states = [r.state for r in await world.show()]
    assert states == ["failed", "failed", "did not initiate"], states
    # A manual compaction that succeeds ends the streak.
    queued = await world.comp.Compact(cpb.CompactRequest(db_name="db", table_name="t", partition_name="p=a",
                                                         type=cpb.MAJOR))
    claim = await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="w-1"))
    started = await world.comp.StartCompaction(cpb.StartCompactionRequest(id=queued.id, worker_id="w-1"))
    await world.comp.CompleteCompaction(cpb.CompleteCompactionRequest(id=claim.id, worker_id="w-1",
                                                                      txn_id=started.txn_id, highest_write_id=6))
    await world.compactor.clean_once()
    await world.write("a")
    for _ in range(4):
        await world.write("a")
    assert await world.compactor.initiate_once() == 1  # auto compaction is back

    # NO_AUTO_COMPACTION turns the Initiator off for the table.
    t = table("db", "quiet", keys=(("p", "string"),), transactional=True, location=f"file://{world.root}/quiet")
    t.parameters["no_auto_compaction"] = "TRUE"
    await world.catalog.CreateTable(pb.CreateTableRequest(table=t))
    for _ in range(12):  # more than the default delta.num.threshold (10) and no base
        await world.write("a", tbl="quiet")
    assert await world.compactor.initiate_once() == 0
    assert {r.table_name for r in await world.show()} == {"t"}


async def test_cleaner_waits_for_open_readers_and_removes_aborted_files(world: World) -> None:
    dirs = [(await world.write("a"))[2] for _ in range(2)]
    _, _, aborted_dir = await world.write("a", commit=False)
    dirs.append((await world.write("a"))[2])
    queued = await world.comp.Compact(cpb.CompactRequest(db_name="db", table_name="t", partition_name="p=a",
                                                         type=cpb.MAJOR))
    reader = (await world.txn.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="r", hostname="h"))).txn_ids[0]
    claim = await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="w-1"))
    started = await world.comp.StartCompaction(cpb.StartCompactionRequest(id=queued.id, worker_id="w-1"))
    assert started.valid_write_id_list == "db.t:4:9223372036854775807::3"  # the abort is listed, not read
    base = world.root / "t" / "p=a" / f"base_0000004_v{started.txn_id:07d}"
    base.mkdir()
    (base / "part-00000.parquet").write_bytes(b"compacted")
    await world.comp.CompleteCompaction(cpb.CompleteCompactionRequest(id=claim.id, worker_id="w-1",
                                                                      txn_id=started.txn_id, highest_write_id=4))
    # The reader's txn was open before the compaction committed: it may still read the deltas.
    assert await world.compactor.clean_once() == 0
    assert all(d.exists() for d in dirs + [aborted_dir])
    assert (await world.show())[0].state == "ready for cleaning"
    await world.txn.CommitTxn(tpb.CommitTxnRequest(txn_id=reader))
    assert await world.compactor.clean_once() == 1
    assert not any(d.exists() for d in dirs + [aborted_dir]) and base.exists()
    assert sorted(os.listdir(world.root / "t" / "p=a")) == [base.name]
    assert (await world.show())[0].state == "succeeded"


async def test_cleaner_waits_for_txns_whose_open_was_in_flight_when_the_compaction_committed(
        world: World, pg_dsn: str) -> None:
    """A group-commit batch of two OpenTxns has taken its ids (the counter row updated) but not
    committed when the worker's CompleteCompaction commits the compaction txn; the opens answer
    first, and one of the new txns, the reader, takes its snapshot before the compaction's commit is
    visible: it sees the compaction txn open, so it reads the deltas and not the new base. The
    Cleaner must keep the deltas until the reader ends, though the batch's other txn has ended and
    the reader is now the smallest open txn. The entry's horizon used to be the counter's committed
    value, which left both in-flight ids out (at or below the smallest open txn: cleaned at once)."""
    dirs = [(await world.write("a"))[2] for _ in range(2)]
    location = world.root / "t" / "p=a"
    queued = await world.comp.Compact(cpb.CompactRequest(db_name="db", table_name="t", partition_name="p=a",
                                                         type=cpb.MAJOR))
    await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="w-1"))
    started = await world.comp.StartCompaction(cpb.StartCompactionRequest(id=queued.id, worker_id="w-1"))
    base = location / f"base_0000002_v{started.txn_id:07d}"
    base.mkdir()
    (base / "part-00000.parquet").write_bytes(b"compacted")

    db = await Database.connect(pg_dsn)
    try:
        async with db.pool.acquire() as opener, db.pool.acquire() as completer:
            opening = opener.transaction()
            await opening.start()
            opened = await txns.open_txns_batch_logged(opener, [txns.OpenRequest(1, "s", "h", ""),
                                                                txns.OpenRequest(1, "r", "h", "")])
            ids = [o.value[0] for o in opened if isinstance(o, Written)]
            assert len(ids) == 2, opened
            other, reader = ids
            completing = completer.transaction()
            await completing.start()
            complete = asyncio.create_task(compaction.complete(completer, queued.id, "w-1", started.txn_id, 2))
            waited = False
            async with asyncio.timeout(10):  # until it waits on a lock, or it finished without waiting
                while not (waited or complete.done()):
                    await asyncio.sleep(0.01)
                    waited = await opener.fetchval("SELECT wait_event_type = 'Lock' FROM pg_stat_activity "
                                                   "WHERE pid = $1", completer.get_server_pid())
            await opening.commit()  # the opens answer
            completed = await asyncio.wait_for(complete, 10)
            snapshot = await world.gw.database.read(txns.get_open_txns, reader)
            await append_events(completer, completed.events)
            await completing.commit()
    finally:
        await db.close()

    assert not snapshot.is_txn_valid(started.txn_id)  # the compaction is open in the reader's snapshot ...
    write_ids = (await world.txn.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
        full_table_names=["db.t"], valid_txn_list=snapshot.to_string()))).tables[0].valid_write_id_list
    read = [Path(p).parent for p, _ in visible_files(str(location), ValidWriteIdList.parse(write_ids), snapshot)]
    assert read == dirs  # ... so it reads the deltas
    await world.txn.CommitTxn(tpb.CommitTxnRequest(txn_id=other))
    assert await world.compactor.clean_once() == 0
    assert all(d.exists() for d in dirs), "the Cleaner deleted the deltas an open txn's snapshot reads"
    assert waited, "CompleteCompaction did not wait for the OpenTxns in flight"
    assert (await world.show())[0].next_txn_id == reader + 1
    await world.txn.CommitTxn(tpb.CommitTxnRequest(txn_id=reader))
    assert await world.compactor.clean_once() == 1
    assert sorted(os.listdir(location)) == [base.name]


async def _snapshot_outside_txn(world: World) -> tuple[ValidWriteIdList, ValidTxnList]:
    """A reader's snapshot of db.t taken outside any txn (as read_table(snapshot=None) takes one)."""
    txn_list = (await world.txn.GetOpenTxns(tpb.GetOpenTxnsRequest())).valid_txn_list
    got = await world.txn.GetValidWriteIds(tpb.GetValidWriteIdsRequest(full_table_names=["db.t"],
                                                                       valid_txn_list=txn_list))
    return ValidWriteIdList.parse(got.tables[0].valid_write_id_list), ValidTxnList.parse(txn_list)


async def _start_compaction(world: World, kind: cpb.CompactionType, part: str = "a") -> tuple[int, int]:
    """Queue a compaction of p=`part`, claim and start it as a worker would: (its id, its txn)."""
    queued = await world.comp.Compact(cpb.CompactRequest(db_name="db", table_name="t", partition_name=f"p={part}",
                                                         type=kind))
    claim = await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="w-1"))
    assert claim.id == queued.id
    started = await world.comp.StartCompaction(cpb.StartCompactionRequest(id=queued.id, worker_id="w-1"))
    return queued.id, started.txn_id


async def _complete_compaction(world: World, compaction: tuple[int, int], output: Path, highest_write_id: int,
                               size: int = 200) -> None:
    """Write the started compaction's output directory (one file of `size` bytes) and complete it."""
    output.mkdir()
    (output / "part-00000.parquet").write_bytes(b"x" * size)
    await world.comp.CompleteCompaction(cpb.CompleteCompactionRequest(
        id=compaction[0], worker_id="w-1", txn_id=compaction[1], highest_write_id=highest_write_id))


async def _two_deltas_compacting(world: World, kind: cpb.CompactionType
                                 ) -> tuple[Path, tuple[int, int], tuple[ValidWriteIdList, ValidTxnList],
                                            list[tuple[str, int]]]:
    """Two appends to p=a, a compaction of them started, and a snapshot taken outside any txn while it runs:
    (the partition's directory, the compaction, the snapshot, the two deltas' files the snapshot reads)."""
    for _ in range(2):
        await world.write("a")
    loc = world.root / "t" / "p=a"
    compaction = await _start_compaction(world, kind)
    old = await _snapshot_outside_txn(world)
    deltas = sorted(visible_files(str(loc), *old))
    assert len(deltas) == 2
    return loc, compaction, old, deltas


async def test_a_snapshot_taken_before_a_cleaned_compaction_is_refused_not_read_empty(world: World) -> None:
    loc, compaction, old, deltas = await _two_deltas_compacting(world, cpb.MAJOR)
    base = loc / f"base_0000002_v{compaction[1]:07d}"
    await _complete_compaction(world, compaction, base, 2, size=10_000)
    assert sorted(visible_files(str(loc), *old)) == deltas  # committed, not yet cleaned: still served
    # No txn holds the old snapshot, so the Cleaner does not wait for it. Neither it nor the
    # Initiator fails on the directory (the Initiator sizes base_2: one small delta is not enough).
    await world.write("a")
    assert await world.compactor.clean_once() == 1 and (await world.show())[0].state == "succeeded"
    assert await world.compactor.initiate_once() == 0
    with pytest.raises(NotEnoughHistory, match=f"{base.name}.*retry with a new snapshot"):
        visible_files(str(loc), *old)
    now = await _snapshot_outside_txn(world)
    assert [os.path.basename(os.path.dirname(p)) for p, _ in visible_files(str(loc), *now)] == [
        base.name, "delta_0000003_0000003"]


async def test_a_snapshot_taken_before_a_cleaned_minor_compaction_is_refused_not_read_short(world: World) -> None:
    # The same with a minor compaction: its delta_1_2_vT is all that holds write ids 1 and 2 once the
    # Cleaner removed their deltas, and a snapshot from before T committed cannot use it.
    loc, compaction, old, deltas = await _two_deltas_compacting(world, cpb.MINOR)
    compacted = loc / f"delta_0000001_0000002_v{compaction[1]:07d}"
    await _complete_compaction(world, compaction, compacted, 2)
    assert sorted(visible_files(str(loc), *old)) == deltas  # committed, not yet cleaned: still served
    assert await world.compactor.clean_once() == 1 and not any(Path(p).parent.exists() for p, _ in deltas)
    with pytest.raises(NotEnoughHistory, match=f"{compacted.name}.*retry with a new snapshot"):
        visible_files(str(loc), *old)


async def test_a_snapshot_taken_before_an_overwrite_is_refused_once_a_later_compaction_cleaned_under_it(
        world: World) -> None:
    # Write ids 1 and 2, then an INSERT OVERWRITE (write id 3: base_3), then 4 and 5 and a minor
    # compaction of those two. The Cleaner's view of that compaction chooses base_3, so its cleaning
    # removes deltas 1 and 2 too: a snapshot from before write id 3 is left with nothing it can read.
    for _ in range(2):
        await world.write("a")
    loc = world.root / "t" / "p=a"
    old = await _snapshot_outside_txn(world)
    _, w, delta = await world.write("a")
    overwrite = delta.rename(loc / f"base_{w:07d}")  # (what the overwrite's txn wrote, committed)
    for _ in range(2):
        await world.write("a")
    compaction = await _start_compaction(world, cpb.MINOR)
    compacted = loc / f"delta_0000004_0000005_v{compaction[1]:07d}"
    await _complete_compaction(world, compaction, compacted, 5)
    assert [Path(p).parent.name for p, _ in sorted(visible_files(str(loc), *old))] == [
        "delta_0000001_0000001", "delta_0000002_0000002"]  # compacted, not yet cleaned: still served
    assert await world.compactor.clean_once() == 1
    assert sorted(n.name for n in loc.iterdir()) == [overwrite.name, compacted.name]
    with pytest.raises(NotEnoughHistory, match=f"{overwrite.name}.*retry with a new snapshot"):
        visible_files(str(loc), *old)
    assert [Path(p).parent.name for p, _ in visible_files(str(loc), *await _snapshot_outside_txn(world))] == [
        overwrite.name, compacted.name]


async def test_the_cleaner_keeps_what_a_reader_reads_though_a_newer_compaction_it_cannot_see_covers_it(
        world: World) -> None:
    # A minor compaction of write ids 1 and 2 (delta_1_2_vT1) is cleanable; then a snapshot is taken, 3 is
    # written, and a second minor compaction (delta_1_3_vT2) commits: invisible to the snapshot's reader,
    # whose txn is still open. Cleaning the first entry must judge by what that reader sees: delta_1_2_vT1
    # stays. The Cleaner used to judge by the txns committed now, took delta_1_3_vT2 for covering write ids
    # 1 and 2 and removed delta_1_2_vT1 (seed 9002 of tests/spark/test_acid_lifecycle_random.py).
    loc, first, _, _ = await _two_deltas_compacting(world, cpb.MINOR)
    first_output = loc / f"delta_0000001_0000002_v{first[1]:07d}"
    await _complete_compaction(world, first, first_output, 2)
    reader = (await world.txn.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="r", hostname="h"))).txn_ids[0]
    seen = await _snapshot_outside_txn(world)
    await world.write("a")
    second = await _start_compaction(world, cpb.MINOR)
    await _complete_compaction(world, second, loc / f"delta_0000001_0000003_v{second[1]:07d}", 3)
    assert await world.compactor.clean_once() == 1  # the first entry: its own inputs go
    assert [Path(p).parent.name for p, _ in visible_files(str(loc), *seen)] == [first_output.name]
    await world.txn.CommitTxn(tpb.CommitTxnRequest(txn_id=reader))
    assert await world.compactor.clean_once() == 1  # the second entry, now that the reader is gone
    assert sorted(n.name for n in loc.iterdir()) == [f"delta_0000001_0000003_v{second[1]:07d}"]


async def test_the_cleaner_deletes_nothing_outside_the_data_roots(pg_dsn: str, tmp_path: Path) -> None:
    """A transactional table placed outside metastore.gateway.data.roots: a compaction of it commits, but
    its Cleaner deletes neither the compacted deltas (the entry fails, saying why, in SHOW COMPACTIONS)
    nor an aborted write's delta (its write id stays listed), as the gateway's DDL deletes nothing there
    (tests/e2e/test_data_roots.py). Without the bound, any caller could place a table on a directory of
    someone else's and have the Cleaner delete its delta_ and base_ directories."""
    async with _world(pg_dsn, tmp_path, data_roots=str(tmp_path / "warehouse")) as world:
        deltas = [(await world.write("a"))[2] for _ in range(2)]
        loc = world.root / "t" / "p=a"
        compaction = await _start_compaction(world, cpb.MAJOR)
        await _complete_compaction(world, compaction, loc / f"base_0000002_v{compaction[1]:07d}", 2)
        assert await world.compactor.clean_once() == 0
        shown = (await world.show())[0]
        assert shown.state == "failed" and "outside the gateway's data roots" in shown.error_message
        assert all(d.exists() for d in deltas) and world.compactor.stats["dirs_removed"] == 0

        _, aborted_w, aborted_dir = await world.write("a", commit=False)
        await asyncio.sleep(0.01)
        assert await _clean_aborted_now(world) == 0
        assert aborted_dir.exists() and (await _read_now(world, "a"))[1].is_write_id_aborted(aborted_w)
    async with _world(pg_dsn, tmp_path, data_roots=str(tmp_path)) as world:  # inside the roots: cleaned
        assert await _clean_aborted_now(world) == 1 and not aborted_dir.exists()
        assert await world.compactor.clean_once() == 0  # the failed entry is history, not retried


async def _clean_aborted_now(world: World) -> int | None:
    """One abort clean-up round that finds every aborted write due (any count, ended 1 ms ago or more)."""
    world.compactor.settings = dataclasses.replace(world.compactor.settings, thresholds=Thresholds(aborted_num=0),
                                                   txn_timeout_s=0.001)
    return await world.compactor.clean_aborted_once()


async def test_history_retention(world: World) -> None:
    await world.write("a")
    for _ in range(5):
        await world.comp.Compact(cpb.CompactRequest(db_name="db", table_name="t", partition_name="p=a",
                                                    type=cpb.MINOR))
        claim = await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="w-1"))
        await world.comp.FailCompaction(cpb.FailCompactionRequest(id=claim.id, worker_id="w-1", error_message="x"))
    assert len(await world.show()) == 5
    assert await world.compactor.purge_once() == 2  # hive.compactor.history.retention.failed = 3
    assert [r.state for r in await world.show()] == ["failed"] * 3


# -- Thrift: compact2 and show_compact ------------------------------------------------------------


async def test_thrift_compact2_and_show_compact(world: World) -> None:
    import thriftpy2.rpc
    from thriftpy2.thrift import TApplicationException

    from gateway.thrift.idl import SERVICE, hms

    await world.write("a")
    client = thriftpy2.rpc.make_client(SERVICE, "127.0.0.1", world.gw.thrift_port, timeout=30_000)
    try:
        def call(method: str, *args: object) -> Any:
            return getattr(client, method)(*args)

        reply = await asyncio.to_thread(call, "compact2", hms.CompactionRequest(
            dbname="db", tablename="t", partitionname="p=a", type=2, properties={"k": "v"}))
        assert (reply.accepted, reply.state) == (True, "initiated")
        again = await asyncio.to_thread(call, "compact2", hms.CompactionRequest(
            dbname="db", tablename="t", partitionname="p=a", type=1))
        assert (again.accepted, again.id) == (False, reply.id)
        with pytest.raises(TApplicationException, match="does not exist"):
            await asyncio.to_thread(call, "compact2", hms.CompactionRequest(dbname="db", tablename="nope", type=2))
        shown = await asyncio.to_thread(call, "show_compact", hms.ShowCompactRequest())
        [row] = shown.compacts
        assert (row.id, row.dbname, row.tablename, row.partitionname, row.type, row.state, row.hadoopJobId) == (
            reply.id, "db", "t", "p=a", 2, "initiated", "None")
        grpc_rows = await world.show()  # the same queue through both protocols
        assert [(r.id, r.state) for r in grpc_rows] == [(row.id, row.state)]
        # Hive 2's compact: the same request, no answer, into the same queue.
        await world.write("b")
        assert await asyncio.to_thread(call, "compact", hms.CompactionRequest(
            dbname="db", tablename="t", partitionname="p=b", type=1)) is None
        with pytest.raises(TApplicationException, match="does not exist"):
            await asyncio.to_thread(call, "compact", hms.CompactionRequest(dbname="db", tablename="nope", type=2))
        shown = await asyncio.to_thread(call, "show_compact", hms.ShowCompactRequest())
        assert sorted((r.partitionname, r.type, r.state) for r in shown.compacts) == [
            ("p=a", 2, "initiated"), ("p=b", 1, "initiated")]
    finally:
        client.close()


async def test_bad_compactor_setting_names_its_key(pg_dsn: str) -> None:
    from gateway.config import ConfigError

    # Refused with the other settings, before the gateway connects to its database.
    with pytest.raises(ConfigError, match="hive.compactor.delta.num.threshold: must be at least 1, got 0"):
        gateway_settings(pg_dsn, **{"hive.compactor.delta.num.threshold": "0"})


async def test_initiator_aborted_txn_rules(world: World) -> None:
    await world.write("a")
    _, _, aborted_dir = await world.write("a", commit=False)
    s = world.compactor.settings
    # One aborted write id with files, over a threshold of 0: too many aborts -> MAJOR.
    world.compactor.settings = dataclasses.replace(s, thresholds=Thresholds(aborted_num=0))
    assert await world.compactor.initiate_once() == 1
    [row] = await world.show()
    assert (row.type, row.partition_name) == ("MAJOR", "p=a")
    await world.comp.FailCompaction(cpb.FailCompactionRequest(
        id=(await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="w-1"))).id, worker_id="w-1",
        error_message="x"))
    # An abort older than hive.compactor.aborted.txn.time.threshold -> MINOR (the table has aborted
    # write ids, so it is looked at every round even without new writes).
    world.compactor.settings = dataclasses.replace(s, thresholds=Thresholds(aborted_age_s=0.01))
    await asyncio.sleep(0.05)
    assert await world.compactor.initiate_once() == 1
    assert [(r.type, r.state) for r in await world.show()] == [("MAJOR", "failed"), ("MINOR", "initiated")]
    assert aborted_dir.exists()


# -- aborted txns and the TXN_TO_WRITE_ID cleaner -------------------------------------------------


async def _fetch(dsn: str, query: str) -> list[tuple[Any, ...]]:
    conn = await asyncpg.connect(dsn)
    try:
        return [tuple(r) for r in await conn.fetch(query)]
    finally:
        await conn.close()


async def _housekeeping_long_after_the_aborts(world: World, dsn: str) -> None:
    """Two housekeeping rounds, every abort so far dated a day back (past any retention)."""
    await _fetch(dsn, "UPDATE txns SET finished_at = finished_at - interval '1 day' WHERE state = 'a' RETURNING 1")
    hk = world.gw.housekeeper
    assert hk is not None
    await hk.clean_once()
    await hk.clean_once()


async def _read_now(world: World, part: str) -> tuple[ValidTxnList, ValidWriteIdList, list[str]]:
    """A new snapshot of db.t and the directories of p=`part` a reader with it reads."""
    txn_list = (await world.txn.GetOpenTxns(tpb.GetOpenTxnsRequest())).valid_txn_list
    got = (await world.txn.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
        full_table_names=["db.t"], valid_txn_list=txn_list))).tables[0]
    txns_now, write_ids = ValidTxnList.parse(txn_list), ValidWriteIdList.parse(got.valid_write_id_list)
    files = visible_files(str(world.root / "t" / f"p={part}"), write_ids, txns_now)
    return txns_now, write_ids, sorted({Path(f).parent.name for f, _ in files})


async def test_write_id_cleaner_moves_past_an_aborted_write_whose_delta_remains(world: World, pg_dsn: str) -> None:
    """The aborted write id stays listed as aborted while its delta is on disk (a reader skips it),
    and the TXN_TO_WRITE_ID cleaner no longer stops at it: the committed txns after it are cleaned."""
    _, _, first = await world.write("a")
    aborted_txn, aborted_w, aborted_dir = await world.write("a", commit=False)
    later = [(await world.write("a"))[2] for _ in range(2)]
    await _housekeeping_long_after_the_aborts(world, pg_dsn)
    assert await _fetch(pg_dsn, "SELECT txn_id, write_id FROM txn_to_write_id") == [(aborted_txn, aborted_w)]
    assert await _fetch(pg_dsn, "SELECT txn_id, state FROM txns") == [(aborted_txn, "a")]
    txn_list, write_ids, read = await _read_now(world, "a")
    assert txn_list.is_txn_aborted(aborted_txn) and write_ids.is_write_id_aborted(aborted_w)
    assert write_ids.high_watermark == aborted_w + 2
    assert aborted_dir.exists() and read == sorted(d.name for d in [first, *later])


async def test_an_aborted_compaction_txn_stays_aborted_while_its_base_remains(world: World, pg_dsn: str) -> None:
    """A failed worker's base_N_vT carries no write id: only txn T's aborted state keeps readers off
    it. T (a compaction txn) is kept while committed txns after it are cleaned, until the Cleaner's
    abort clean-up has deleted the base."""
    deltas = [(await world.write("a"))[2] for _ in range(2)]
    queued = await world.comp.Compact(cpb.CompactRequest(db_name="db", table_name="t", partition_name="p=a",
                                                         type=cpb.MAJOR))
    await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="w-1"))
    started = await world.comp.StartCompaction(cpb.StartCompactionRequest(id=queued.id, worker_id="w-1"))
    base = world.root / "t" / "p=a" / f"base_0000002_v{started.txn_id:07d}"
    base.mkdir()
    (base / "part-00000.parquet").write_bytes(b"half written")
    await world.comp.FailCompaction(cpb.FailCompactionRequest(id=queued.id, worker_id="w-1", error_message="died"))
    deltas += [(await world.write("a"))[2] for _ in range(2)]
    await _housekeeping_long_after_the_aborts(world, pg_dsn)
    assert await _fetch(pg_dsn, "SELECT txn_id, write_id FROM txn_to_write_id") == []
    assert await _fetch(pg_dsn, "SELECT txn_id, state FROM txns") == [(started.txn_id, "a")]
    txn_list, _, read = await _read_now(world, "a")
    assert txn_list.is_txn_aborted(started.txn_id)
    assert base.exists() and read == sorted(d.name for d in deltas)

    # The Cleaner's abort clean-up deletes the failed worker's output, and then forgets its txn.
    assert await world.compactor.clean_aborted_once() == 0  # no write id forgotten: a compaction txn has none
    assert not base.exists() and world.compactor.stats["aborted_compaction_txns_forgotten"] == 1
    assert await _fetch(pg_dsn, "SELECT txn_id FROM txns") == []
    assert await _fetch(pg_dsn, "SELECT txn_id FROM compaction_txns") == []
    txn_list, _, read = await _read_now(world, "a")
    assert not txn_list.exceptions and read == sorted(d.name for d in deltas)
    with pytest.raises(grpc.aio.AioRpcError) as err:  # its outcome is no longer kept: not answered as committed
        await world.txn.CommitTxn(tpb.CommitTxnRequest(txn_id=started.txn_id))
    assert err.value.code() == C.NOT_FOUND


# -- aborted writes: Hive 4's abort clean-up in the Cleaner ----------------------------------------


async def _cached_read(world: World, write_ids: ValidWriteIdList, names: list[str]) -> tuple[list[str], str]:
    """GetPartitionsByNames under a snapshot: the names found, and "cache" or the miss reasons."""
    txn_list = (await world.txn.GetOpenTxns(tpb.GetOpenTxnsRequest())).valid_txn_list
    table_id = (await world.txn.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
        full_table_names=["db.t"], valid_txn_list=txn_list))).tables[0].table_id
    cache = world.gw.cache
    assert cache is not None
    hits, misses = cache.stats.hits, dict(cache.stats.misses)
    got = await world.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
        db_name="db", table_name="t", names=names,
        read=pb.ReadContext(valid_write_id_list=write_ids.to_string(), table_id=table_id)))
    reasons = [r for r, n in cache.stats.misses.items() if n > misses.get(r, 0)]
    return sorted(p.name for p in got.partitions), "cache" if cache.stats.hits > hits else ",".join(reasons)


async def test_the_cleaner_deletes_aborted_writes_and_stops_listing_them_once_due(world: World, pg_dsn: str) -> None:
    """Aborted write ids are listed in every snapshot of their table until the Cleaner, once they are
    due by Hive's thresholds and older than hive.txn.timeout, has deleted what they wrote; then no
    snapshot lists them, every cache follows (a new snapshot is still answered from the cache), the
    txns are forgotten, and readers read what they read before."""
    _, _, first = await world.write("a")
    aborted = [await world.write("a", commit=False), await world.write("b", commit=False)]
    _, _, last = await world.write("a")
    _, write_ids, read = await _read_now(world, "a")
    assert write_ids.aborted == {w for _, w, _ in aborted} and read == sorted([first.name, last.name])
    assert (await _cached_read(world, write_ids, ["p=a"]))[0] == ["p=a"]
    assert world.gw.poller is not None
    await world.gw.poller.wait_loaded()
    await wait_applied(world.gw)  # this gateway's own writes: until applied, a read is behind their token
    assert await _cached_read(world, write_ids, ["p=a"]) == (["p=a"], "cache")

    s = world.compactor.settings
    assert await world.compactor.clean_aborted_once() == 0  # 2 aborts: not more than 1000, not 12 h old
    world.compactor.settings = dataclasses.replace(s, thresholds=Thresholds(aborted_num=1))
    assert await world.compactor.clean_aborted_once() == 0  # due, but aborted under hive.txn.timeout ago
    assert all(d.exists() for _, _, d in aborted)

    await _fetch(pg_dsn, "UPDATE txns SET finished_at = finished_at - interval '1 day' WHERE state = 'a' RETURNING 1")
    assert await world.compactor.clean_aborted_once() == 2
    assert not any(d.exists() for _, _, d in aborted) and first.exists() and last.exists()
    assert world.compactor.stats["aborted_dirs_removed"] == 2
    await wait_applied(world.gw)
    txn_list, write_ids, read = await _read_now(world, "a")
    assert write_ids.exceptions == () and read == sorted([first.name, last.name])
    assert all(txn_list.is_txn_aborted(t) for t, _, _ in aborted)  # until housekeeping forgets them
    assert await _cached_read(world, write_ids, ["p=a", "p=b"]) == (["p=a"], "cache")

    await _housekeeping_long_after_the_aborts(world, pg_dsn)
    assert await _fetch(pg_dsn, "SELECT txn_id FROM txns WHERE state = 'a'") == []
    txn_list, write_ids, read = await _read_now(world, "a")
    assert not txn_list.exceptions and write_ids.exceptions == () and read == sorted([first.name, last.name])


async def _forget_the_newest_write_id(world: World, dsn: str) -> int:
    """A committed write, then an aborted one that the abort clean-up forgets at once: its write id, the
    table's newest."""
    await world.write("a")
    _, forgotten, _ = await world.write("a", commit=False)
    world.compactor.settings = dataclasses.replace(world.compactor.settings, thresholds=Thresholds(aborted_num=0))
    await _fetch(dsn, "UPDATE txns SET finished_at = finished_at - interval '1 day' WHERE state = 'a' RETURNING 1")
    assert await world.compactor.clean_aborted_once() == 1
    return forgotten


async def test_a_forgotten_write_id_at_the_top_of_the_tables_ids_stays_committed_for_a_cache_loaded_later(
        world: World, pg_dsn: str) -> None:
    """The abort clean-up forgets the table's newest write id: from then on every list counts it committed,
    not only once a later id's row raises the lists' mark. A cache loaded in between took the mark from the
    lists, then the next commit raised it past the forgotten id, which it had never seen decided: it counted
    the id open for good, and missed every new snapshot of the table as stale (the model test, seed 2143)."""
    forgotten = await _forget_the_newest_write_id(world, pg_dsn)
    _, write_ids, _ = await _read_now(world, "a")
    assert (write_ids.high_watermark, write_ids.exceptions) == (forgotten, ())

    late = Gateway(gateway_settings(pg_dsn, **{"hive.compactor.cleaner.on": "false"}))  # its cache loads now
    await late.start()
    client = await connect(f"127.0.0.1:{late.port}")
    try:
        late_world = dataclasses.replace(world, gw=late, catalog=client.catalog,
                                         txn=transactions_pb2_grpc.TransactionsStub(client.channel))
        assert late.cache is not None and late.poller is not None and late.cache.by_name("db", "t") is None
        assert (await _cached_read(late_world, write_ids, ["p=a"]))[0] == ["p=a"]  # loads the table
        await late.poller.wait_loaded()
        await world.write("a")  # the next write id, committed
        await wait_applied(late)
        _, write_ids, _ = await _read_now(world, "a")
        entry = late.cache.by_name("db", "t")
        assert entry is not None and entry.committed_list.to_string() == write_ids.to_string()
        assert await _cached_read(late_world, write_ids, ["p=a"]) == (["p=a"], "cache")
    finally:
        await client.channel.close()
        await late.stop()


async def test_the_upgrade_counts_committed_the_ids_forgotten_at_the_top_before_it(world: World,
                                                                                    pg_dsn: str) -> None:
    forgotten = await _forget_the_newest_write_id(world, pg_dsn)
    await _fetch(pg_dsn, "UPDATE next_write_id SET cleaned_hwm = 0 RETURNING 1")  # as the clean-up left it before
    assert (await _read_now(world, "a"))[1].high_watermark == forgotten - 1
    (migration,) = [m for m in known_migrations() if m.name == "cleaned_hwm_over_forgotten_aborts"]
    conn = await asyncpg.connect(pg_dsn)
    try:
        await conn.execute(migration.sql)
    finally:
        await conn.close()
    assert (await _read_now(world, "a"))[1].high_watermark == forgotten


async def test_an_aborted_write_id_in_a_directory_beside_committed_ones_stays_listed(world: World,
                                                                                     pg_dsn: str) -> None:
    """A streaming writer's delta spanning a committed and an aborted write id cannot be deleted, so
    the aborted id stays listed (readers skip its rows by the list) until a compaction replaces it."""
    _, committed_w, committed_dir = await world.write("a")
    aborted_txn, aborted_w, aborted_dir = await world.write("a", commit=False)
    spanning = committed_dir.parent / f"delta_{committed_w:07d}_{aborted_w:07d}"
    aborted_dir.rename(spanning)
    world.compactor.settings = dataclasses.replace(world.compactor.settings, thresholds=Thresholds(aborted_num=0))
    await _fetch(pg_dsn, "UPDATE txns SET finished_at = finished_at - interval '1 day' WHERE state = 'a' RETURNING 1")
    assert await world.compactor.clean_aborted_once() == 0
    assert spanning.exists()
    assert await _fetch(pg_dsn, f"SELECT write_id FROM txn_to_write_id WHERE txn_id = {aborted_txn}") == [(aborted_w,)]
    assert (await _read_now(world, "a"))[1].is_write_id_aborted(aborted_w)


async def test_a_gateways_cleaner_loop_ends_aborted_writes_by_its_settings(pg_dsn: str, tmp_path: Path) -> None:
    """The abort clean-up runs in the Cleaner's loop of a gateway started with Hive's keys (the
    thresholds, hive.txn.timeout and the Cleaner's interval from the settings): an aborted write's
    delta goes and its write id stops being listed, with nothing called by hand."""
    gw = Gateway(gateway_settings(pg_dsn, **{
        "hive.compactor.initiator.on": "false", "hive.compactor.cleaner.run.interval": "100ms",
        "hive.compactor.abortedtxn.threshold": "0", "hive.txn.timeout": "1s",
        "metastore.gateway.data.roots": str(tmp_path)}))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await client.catalog.CreateTable(pb.CreateTableRequest(table=table(
            "db", "t", keys=(("p", "string"),), transactional=True, location=f"file://{tmp_path}/t")))
        world = World(gw, client.catalog, transactions_pb2_grpc.TransactionsStub(client.channel),
                      compaction_pb2_grpc.CompactorStub(client.channel), tmp_path)
        _, _, kept = await world.write("a")
        _, aborted_w, aborted_dir = await world.write("a", commit=False)
        async with asyncio.timeout(20):  # hive.txn.timeout after the abort, then a round of the loop
            while aborted_dir.exists() or (await _read_now(world, "a"))[1].is_write_id_aborted(aborted_w):
                await asyncio.sleep(0.1)
        assert kept.exists() and (await _read_now(world, "a"))[2] == [kept.name]
    finally:
        await client.channel.close()
        await gw.stop()


async def test_thrift_latest_committed_compaction_info(world: World) -> None:
    """Hive 4's get_latest_committed_compaction_info (what Impala's catalog asks before it reloads a
    transactional table's files): per partition the newest compaction a reader may use (succeeded, or
    ready for cleaning), newest first; initiated, working and failed ones are not."""
    import thriftpy2.rpc
    from thriftpy2.thrift import TApplicationException

    from gateway.thrift.idl import SERVICE, hms

    async def run(part: str, kind: cpb.CompactionType, *, fail: bool = False) -> int:
        queued = await world.comp.Compact(cpb.CompactRequest(db_name="db", table_name="t", partition_name=part,
                                                             type=kind))
        await world.comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="w-1"))
        started = await world.comp.StartCompaction(cpb.StartCompactionRequest(id=queued.id, worker_id="w-1"))
        if fail:
            await world.comp.FailCompaction(cpb.FailCompactionRequest(id=queued.id, worker_id="w-1",
                                                                      error_message="boom"))
        else:
            await world.comp.CompleteCompaction(cpb.CompleteCompactionRequest(
                id=queued.id, worker_id="w-1", txn_id=started.txn_id, highest_write_id=1))
        return queued.id

    for part in "abcd":
        await world.write(part)
    first_a = await run("p=a", cpb.MAJOR)  # ready for cleaning
    b = await run("p=b", cpb.MINOR)
    assert await world.compactor.clean_once() == 2  # both succeeded
    second_a = await run("p=a", cpb.MINOR)  # ready for cleaning, newer than the first
    await run("p=c", cpb.MAJOR, fail=True)  # failed: never read
    await world.comp.Compact(cpb.CompactRequest(db_name="db", table_name="t", partition_name="p=d", type=cpb.MAJOR))

    client = thriftpy2.rpc.make_client(SERVICE, "127.0.0.1", world.gw.thrift_port, timeout=30_000)
    try:
        async def latest(**fields: Any) -> list[tuple[int, str, str, str | None, int]]:
            request = hms.GetLatestCommittedCompactionInfoRequest(**{"dbname": "db", "tablename": "t", **fields})
            answer = await asyncio.to_thread(client.get_latest_committed_compaction_info, request)
            return [(c.id, c.dbname, c.tablename, c.partitionname, c.type) for c in answer.compactions]

        assert first_a < b < second_a
        assert await latest() == [(second_a, "db", "t", "p=a", 1), (b, "db", "t", "p=b", 1)]
        assert await latest(partitionnames=["p=b", "p=c"]) == [(b, "db", "t", "p=b", 1)]
        assert await latest(lastCompactionId=b) == [(second_a, "db", "t", "p=a", 1)]
        assert await latest(tablename="T") == await latest()
        assert await latest(tablename="nosuch") == []  # as Hive answers: none
        with pytest.raises(TApplicationException, match="Database name and table name cannot be null"):
            await asyncio.to_thread(client.get_latest_committed_compaction_info,
                                    hms.GetLatestCommittedCompactionInfoRequest(dbname="db"))
    finally:
        client.close()
