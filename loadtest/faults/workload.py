"""The load that runs through every fault: ACID writers and snapshot readers, each call to a random
live gateway (a client of a load balancer), as a careful Hive client behaves.

Writers: OpenTxns, AllocateTableWriteIds, a SHARED_WRITE lock on the table, AddPartitions of new
partitions of their own (unique names: `ds=w<writer>/hr=<n>`), sometimes AlterPartitions of ones they
committed earlier, then CommitTxn (or, ~20%, AbortTxns); a heartbeat task keeps the txn alive through
any gateway. A write whose answer is lost (UNAVAILABLE) ends the txn with an abort, so it is never
committed. CommitTxn is retried on UNAVAILABLE until it answers (commit is idempotent: OK means
committed, ABORTED means reaped), and so is the abort; each outcome goes to the ledger.

Readers: a snapshot taken Hive's way (GetOpenTxns, GetValidWriteIds), then GetPartitionsByNames or
ListPartitionNames through a random caching gateway, and the same request to the oracle: equal answers
required. While the database is away, a reader keeps its last snapshot: a caching gateway may still
answer from its cache (no I/O on a hit); that answer is compared with the oracle's once the database
is back (`deferred`)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from dataclasses import dataclass, field
from typing import Any

import grpc

from loadtest.consistency.model import CALL_TIMEOUT_S, DB, KEYS, Outcome, one_line, table_message
from loadtest.faults.cluster import Cluster, Member
from loadtest.faults.ledger import ABORTED, COMMITTED, Ledger, TxnRecord
from hive import names as hive_names
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import transactions_pb2 as tpb

C = grpc.StatusCode
ACID_TABLES = ("a0", "a1")
GIVE_UP_S = 90.0  # a commit or abort retried this long without an answer stays UNKNOWN (resolved from data)
RETRYABLE = (C.UNAVAILABLE, C.DEADLINE_EXCEEDED)


def part_name(writer: int, n: int) -> str:
    return hive_names.make_partition_name(KEYS, (f"w{writer}", str(n)))


async def create_tables(cluster: Cluster) -> None:
    o = cluster.the_oracle.ep
    await o.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=DB)), timeout=CALL_TIMEOUT_S)
    for t in ACID_TABLES:
        await o.catalog.CreateTable(pb.CreateTableRequest(table=table_message(t, acid=True)), timeout=CALL_TIMEOUT_S)


@dataclass
class Workload:
    """The writers' and readers' shared state across phases."""

    cluster: Cluster
    ledger: Ledger = field(default_factory=Ledger)
    seed: int = 0
    abort_share: float = 0.2
    deferred: list[tuple[str, str, Any, Outcome]] = field(default_factory=list)  # gateway, method, request, got
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _mine: dict[tuple[int, str], list[str]] = field(default_factory=dict)  # (writer, table) -> committed names

    async def run(self, stop: asyncio.Event, writers: int, readers: int, phase: str) -> None:
        tasks = [asyncio.create_task(self._writer(i, stop, random.Random(f"{self.seed}/{phase}/w{i}")))
                 for i in range(writers)]
        tasks += [asyncio.create_task(self._reader(stop, random.Random(f"{self.seed}/{phase}/r{i}")))
                  for i in range(readers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- writers --------------------------------------------------------------------------------------

    async def _writer(self, i: int, stop: asyncio.Event, rng: random.Random, avoid: str | None = None) -> None:
        while not stop.is_set():
            if not await self._txn(i, rng, avoid):
                await asyncio.sleep(0.1)  # the database or the gateway is away: do not spin
            await asyncio.sleep(rng.uniform(0, 0.02))

    async def side_writer(self, i: int, stop: asyncio.Event, avoid: str) -> None:
        """A writer that never calls the gateway `avoid` (one the suite stopped): do the others keep
        committing meanwhile? Its commits count as `commits_avoiding_<avoid>`."""
        await self._writer(i, stop, random.Random(f"{self.seed}/side/{i}"), avoid)

    async def _txn(self, i: int, rng: random.Random, avoid: str | None = None) -> bool:
        calls, g = self.cluster.calls, self.cluster.any(rng, avoid=avoid)
        started = time.monotonic()
        try:
            opened = await calls(g.name, "OpenTxns", g.ep.txns.OpenTxns(tpb.OpenTxnsRequest(
                num_txns=1, user="faults", hostname="suite", agent_info=f"writer{i}"), timeout=CALL_TIMEOUT_S))
        except grpc.aio.AioRpcError:
            return False  # if it was opened after all, nobody heartbeats it: the reaper aborts it
        rec = TxnRecord(opened.txn_ids[0], rng.choice(ACID_TABLES))
        self.ledger.txns.append(rec)
        beat = asyncio.create_task(self._heartbeat(rec, rng, avoid))
        try:
            wrote = await self._write(i, rec, rng, avoid)
            await self._finish(rec, rng, avoid, commit=wrote and rng.random() >= self.abort_share)
        finally:
            beat.cancel()
            await asyncio.gather(beat, return_exceptions=True)
        calls.phase.counts[f"txns_{rec.outcome}"] += 1
        if rec.outcome == COMMITTED:
            self._mine.setdefault((i, rec.table), []).extend(rec.added)
            if avoid:
                calls.phase.counts[f"commits_avoiding_{avoid}"] += 1
                slowest = max(calls.phase.figures.get("slowest_txn_avoiding_s", 0.0), time.monotonic() - started)
                calls.phase.figures["slowest_txn_avoiding_s"] = slowest
        return True

    async def _write(self, i: int, rec: TxnRecord, rng: random.Random, avoid: str | None) -> bool:
        """Allocate, lock, add, maybe alter; False (the txn must not commit) once any step fails."""
        calls, table = self.cluster.calls, rec.table
        mine = self._mine.get((i, table), [])
        new = [part_name(i, next(self._seq)) for _ in range(rng.randint(1, 2))]
        altered = rng.sample(mine, min(len(mine), rng.randint(0, 2)))
        steps: list[tuple[str, list[str], Any]] = [
            ("AllocateTableWriteIds", [], lambda g: g.ep.txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(
                txn_ids=[rec.txn_id], db_name=DB, table_name=table), timeout=CALL_TIMEOUT_S)),
            ("Lock", [], lambda g: g.locks.Lock(lpb.LockRequest(
                components=[lpb.LockComponent(db_name=DB, table_name=table, type=lpb.SHARED_WRITE,
                                              operation=lpb.DATA_OPERATION_INSERT)],
                txn_id=rec.txn_id, user="faults", hostname="suite"), timeout=CALL_TIMEOUT_S)),
            ("AddPartitions", new, lambda g: g.ep.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=table, txn_id=rec.txn_id,
                partitions=[pb.Partition(values=list(hive_names.parse_partition_name(KEYS, n)),
                                         parameters={"tag": rec.tag}) for n in new]), timeout=CALL_TIMEOUT_S)),
        ]
        if altered:
            steps.append(("AlterPartitions", altered, lambda g: g.ep.catalog.AlterPartitions(pb.AlterPartitionsRequest(
                db_name=DB, table_name=table, txn_id=rec.txn_id,
                partitions=[pb.Partition(values=list(hive_names.parse_partition_name(KEYS, n)),
                                         parameters={"tag": rec.tag}) for n in altered]), timeout=CALL_TIMEOUT_S)))
        for what, names, invoke in steps:
            g = self.cluster.any(rng, avoid=avoid)
            try:
                reply = await calls(g.name, f"{what} (txn {rec.txn_id}: {names})", invoke(g))
            except grpc.aio.AioRpcError:
                # The txn ends with AbortTxns whatever the error (a no-op for one the gateway aborted
                # already): an ABORTED write does not always end its txn ("retry the write").
                rec.maybe += names
                return False
            if what == "Lock" and reply.state != lpb.ACQUIRED:
                calls.phase.violate(f"txn {rec.txn_id}: a SHARED_WRITE lock on {table} waits ({one_line(reply)}); "
                                    "only shared locks are taken on the writers' tables")
                return False
            (rec.added if what == "AddPartitions" else rec.altered).extend(names)
        return True

    async def _finish(self, rec: TxnRecord, rng: random.Random, avoid: str | None, *, commit: bool) -> None:
        """Commit or abort, retried through any gateway while the answer is lost."""
        calls, deadline = self.cluster.calls, time.monotonic() + GIVE_UP_S
        while time.monotonic() < deadline:
            g = self.cluster.any(rng, avoid=avoid)
            try:
                if commit:
                    await calls(g.name, f"CommitTxn {rec.txn_id}", g.ep.txns.CommitTxn(
                        tpb.CommitTxnRequest(txn_id=rec.txn_id), timeout=CALL_TIMEOUT_S))
                    rec.outcome = COMMITTED
                else:
                    await calls(g.name, f"AbortTxns {rec.txn_id}", g.ep.txns.AbortTxns(
                        tpb.AbortTxnsRequest(txn_ids=[rec.txn_id]), timeout=CALL_TIMEOUT_S))
                    rec.outcome = ABORTED
                return
            except grpc.aio.AioRpcError as exc:
                if exc.code() == C.ABORTED:
                    rec.outcome = ABORTED
                    return
                if exc.code() not in RETRYABLE:
                    return  # a violation, recorded by calls; the outcome is resolved from the data
                await asyncio.sleep(0.1)

    async def _heartbeat(self, rec: TxnRecord, rng: random.Random, avoid: str | None) -> None:
        """Hive's client heartbeat, once a tick through a random gateway, each call with the ordinary
        deadline and not awaited by the next tick: a heartbeat stuck on a stopped gateway (or behind a
        row lock such a gateway holds) does not hold the others back."""
        calls, timing = self.cluster.calls, self.cluster.timing
        out: set[asyncio.Task[None]] = set()

        async def beat() -> None:
            g = self.cluster.any(rng, avoid=avoid)
            with contextlib.suppress(grpc.aio.AioRpcError):  # counted and classified by calls
                await calls(g.name, f"Heartbeat {rec.txn_id}", g.ep.txns.Heartbeat(
                    tpb.HeartbeatRequest(txn_ids=[rec.txn_id]), timeout=CALL_TIMEOUT_S))

        try:
            while True:
                await asyncio.sleep(timing.heartbeat_s)
                if len(out) < 8:
                    task = asyncio.create_task(beat())
                    out.add(task)
                    task.add_done_callback(out.discard)
        finally:
            for task in out:
                task.cancel()
            await asyncio.gather(*out, return_exceptions=True)

    # -- readers --------------------------------------------------------------------------------------

    async def _reader(self, stop: asyncio.Event, rng: random.Random) -> None:
        snapshots: dict[str, pb.ReadContext] = {}
        while not stop.is_set():
            table = rng.choice(ACID_TABLES)
            try:
                snapshots[table] = await self.snapshot(rng, table)
            except grpc.aio.AioRpcError:
                if table not in snapshots:
                    await asyncio.sleep(0.1)
                    continue
                self.cluster.calls.phase.counts["reads_with_an_older_snapshot"] += 1
            method, request = self._request(rng, table, snapshots[table])
            g = self.cluster.any(rng, oracle=False)
            got = await self.read(g, method, request)
            if not got.ok:
                await asyncio.sleep(0.05)
                continue
            expected = await self.read(self.cluster.the_oracle, method, request)
            if expected.ok:
                self.judge(g.name, method, request, got, expected)
            else:
                self.deferred.append((g.name, method, request, got))
                self.cluster.calls.phase.counts["reads_answered_while_the_oracle_could_not"] += 1

    async def snapshot(self, rng: random.Random, table: str, via: Member | None = None) -> pb.ReadContext:
        calls, g = self.cluster.calls, via or self.cluster.any(rng)
        state = await calls(g.name, "GetOpenTxns", g.ep.txns.GetOpenTxns(tpb.GetOpenTxnsRequest(),
                                                                         timeout=CALL_TIMEOUT_S))
        g = via or self.cluster.any(rng)
        got = await calls(g.name, "GetValidWriteIds", g.ep.txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
            full_table_names=[f"{DB}.{table}"], valid_txn_list=state.valid_txn_list), timeout=CALL_TIMEOUT_S))
        (t,) = got.tables
        return pb.ReadContext(valid_write_id_list=t.valid_write_id_list, table_id=t.table_id)

    def _request(self, rng: random.Random, table: str, ctx: pb.ReadContext) -> tuple[str, Any]:
        if rng.random() < 0.4:
            return "ListPartitionNames", pb.ListPartitionNamesRequest(db_name=DB, table_name=table, read=ctx)
        known = self.ledger.names(table)
        names = rng.sample(known, min(len(known), 20)) + [part_name(99, 0)]  # and one that never exists
        return "GetPartitionsByNames", pb.GetPartitionsByNamesRequest(db_name=DB, table_name=table, names=names,
                                                                      read=ctx)

    async def read(self, g: Member, method: str, request: Any) -> Outcome:
        try:
            return Outcome(await self.cluster.calls(g.name, method, getattr(g.ep.catalog, method)(
                request, timeout=CALL_TIMEOUT_S)))
        except grpc.aio.AioRpcError as exc:
            return Outcome(code=exc.code(), details=exc.details() or "")

    def judge(self, gateway: str, method: str, request: Any, got: Outcome, expected: Outcome) -> None:
        phase = self.cluster.calls.phase
        if got.same(expected):
            phase.counts["reads_compared"] += 1
        elif expected.too_old:
            phase.counts["reads_gc_race"] += 1  # version GC ran between the two reads
        else:
            phase.violate(f"stale or wrong read on {gateway}: {method} {one_line(request)[:400]}\n"
                          f"  gateway: {got.render(400)}\n  oracle:  {expected.render(400)}")

    async def judge_deferred(self) -> None:
        """Reads a cache answered while the database was away, against the database now (same snapshot)."""
        pending, self.deferred = self.deferred, []
        for gateway, method, request, got in pending:
            expected = await self.read(self.cluster.the_oracle, method, request)
            self.cluster.calls.phase.counts["deferred_reads_compared"] += 1
            self.judge(gateway, method, request, got, expected)
