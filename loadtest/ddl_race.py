"""Table DDL racing partition writes, and the judge of the writes' answers: a part of the
multi-gateway consistency run (loadtest/consistency/) that checks writes as its readers check reads.

Churn tables (`c0`, ...) are ACID tables that the writers' own txns leave alone (the readers read them,
loadtest/consistency/reader.py). One churner per churn table loops, each call through a randomly chosen
gateway:

* alter the table's parameters under a txn, then commit (or abort, 30%): while its new version
  replaces the table's row, partition writes queue on that row (the race of issue 11);
* rename the table away and back, each rename in a txn of its own;
* drop the table and create it again.

Partition writers (a share of the driver's writers) meanwhile run txns on the churn tables: 1-3 of
AllocateTableWriteIds, AddPartitions (if_not_exists), AlterPartitions of partitions the txn added, and
DropPartitions (if_exists); then commit, or abort (20%, or after a refused write).

The judge. A table's name is *disrupted* from the start of a rename-away or a drop until the call that
brings the name back (the rename back's commit, the re-create, or the abort of the rename) has
returned; each disruption moves the table's epoch on when it starts and when it ends. A write whose
window (from its start, or for an alter from the start of the add it alters) saw no disruption and
one epoch ran while the table existed throughout: a NOT_FOUND for it is a violation,
`write_not_found`. ABORTED (a write conflict) is a right answer; NOT_FOUND in a disrupted window is
too. Any other failure is a driver error.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

import grpc

from loadtest.consistency.model import DB, UNIVERSE, Violation, part_name, table_message
from loadtest.harness import CALL_TIMEOUT_S, Endpoint
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2 as tpb

if TYPE_CHECKING:
    from loadtest.consistency.driver import Driver

C = grpc.StatusCode
RENAME_BACK_TRIES = 50


@dataclass
class ChurnTable:
    name: str
    epoch: int = 0
    disrupted: bool = False

    @property
    def away(self) -> str:
        """The name a rename moves the table to (and back from)."""
        return f"{self.name}_renamed"

    def disrupt(self) -> None:
        self.disrupted = True
        self.epoch += 1

    def restore(self) -> None:
        self.disrupted = False
        self.epoch += 1


@dataclass(frozen=True)
class Window:
    """What a write saw of its table's name when its window opened."""

    epoch: int
    disrupted: bool


class DdlRace:
    def __init__(self, driver: "Driver", tables: int) -> None:
        self.d = driver
        self.tables = {f"c{i}": ChurnTable(f"c{i}") for i in range(tables)}
        self.drops: dict[int, float] = {}  # table id -> when its drop started (time.monotonic())

    def read_names(self) -> list[str]:
        """Every name a churn table may have: its own and the one a rename moves it to (the readers read
        both, under snapshots that may be older than the last rename or re-creation)."""
        return [n for t in self.tables.values() for n in (t.name, t.away)]

    def other_name(self, name: str) -> str:
        """The churn table's other name (its own <-> the one it is renamed to)."""
        for t in self.tables.values():
            if name in (t.name, t.away):
                return t.away if name == t.name else t.name
        raise KeyError(name)

    # -- setup --------------------------------------------------------------------------------

    async def create(self, endpoint: Endpoint, table: str, rng: random.Random) -> None:
        """Create the table, then add a few partitions in a txn (aborted if an open writer holds one)."""
        await endpoint.catalog.CreateTable(pb.CreateTableRequest(table=table_message(table, acid=True)),
                                           timeout=CALL_TIMEOUT_S)
        (txn,) = (await endpoint.txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="consistency"),
                                               timeout=CALL_TIMEOUT_S)).txn_ids
        try:
            await endpoint.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=table, txn_id=txn, if_not_exists=True,
                partitions=[pb.Partition(values=list(v), parameters={"tag": "init"}) for v in rng.sample(UNIVERSE, 6)]),
                timeout=CALL_TIMEOUT_S)
        except grpc.aio.AioRpcError as exc:
            if exc.code() != C.ABORTED:  # a writer of the dropped table's txn wrote the new one meanwhile
                raise
            await endpoint.txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[txn]), timeout=CALL_TIMEOUT_S)
            return
        await endpoint.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), timeout=CALL_TIMEOUT_S)

    async def setup(self) -> None:
        rng = random.Random(f"{self.d.cfg.seed}/churn-setup")
        for name in self.tables:
            await self.create(self.d.oracle, name, rng)

    # -- the churner ----------------------------------------------------------------------------

    async def churner(self, table: str) -> None:
        rng = random.Random(f"{self.d.cfg.seed}/churner/{table}")
        while self.d.running():
            op = rng.choices(("alter", "rename", "recreate"), weights=(70, 15, 15))[0]
            try:
                await getattr(self, f"_{op}")(rng, self.tables[table])
                self.d.counts[f"churn_{op}"] += 1
            except grpc.aio.AioRpcError as exc:
                self.d.error(f"churner {op} of {table}: {exc.code().name}: {exc.details()}")
                self.tables[table].restore()
                return
            await asyncio.sleep(rng.uniform(0, 0.02))

    async def _in_txn(self, rng: random.Random, call: Callable[[int], Awaitable[Any]], *, abort_share: float) -> bool:
        """Run `call(txn)` in a txn of its own; commit it unless it was refused (ABORTED) or chosen to abort."""
        (txn,) = (await self.d.any_gateway(rng).txns.OpenTxns(tpb.OpenTxnsRequest(
            num_txns=1, user="consistency", agent_info="churner"), timeout=CALL_TIMEOUT_S)).txn_ids
        try:
            await call(txn)
        except grpc.aio.AioRpcError as exc:
            if exc.code() != C.ABORTED:
                raise
            self.d.counts["churn_conflicts"] += 1
            abort_share = 1.0
        if rng.random() < abort_share:
            await self.d.any_gateway(rng).txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[txn]), timeout=CALL_TIMEOUT_S)
            return False
        await self.d.any_gateway(rng).txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), timeout=CALL_TIMEOUT_S)
        return True

    def _alter_call(self, rng: random.Random, name: str, new_name: str, tag: str) -> Callable[[int], Awaitable[Any]]:
        message = table_message(new_name, acid=True, tag=tag)
        return lambda txn: self.d.any_gateway(rng).catalog.AlterTable(pb.AlterTableRequest(
            db_name=DB, table_name=name, txn_id=txn, table=message), timeout=CALL_TIMEOUT_S)

    async def _alter(self, rng: random.Random, t: ChurnTable) -> None:
        await self._in_txn(rng, self._alter_call(rng, t.name, t.name, f"churn{rng.randrange(10**6)}"), abort_share=0.3)

    async def _rename(self, rng: random.Random, t: ChurnTable) -> None:
        away = t.away
        t.disrupt()
        if await self._in_txn(rng, self._alter_call(rng, t.name, away, "away"), abort_share=0.2):
            for _ in range(RENAME_BACK_TRIES):  # a conflict refuses it: try again, a bounded number of times
                if await self._in_txn(rng, self._alter_call(rng, away, t.name, "back"), abort_share=0.0):
                    break
            else:
                self.d.error(f"churner: {away} could not be renamed back to {t.name} in {RENAME_BACK_TRIES} tries")
                return  # the name stays disrupted: no write to it is judged from now on
        t.restore()

    async def _recreate(self, rng: random.Random, t: ChurnTable) -> None:
        table_id = await self._table_id(rng, t.name)
        t.disrupt()
        self.drops[table_id] = time.monotonic()  # before the call: it may commit any time from now on
        await self.d.any_gateway(rng).catalog.DropTable(pb.DropTableRequest(
            db_name=DB, table_name=t.name, table_id=table_id), timeout=CALL_TIMEOUT_S)
        await self.create(self.d.any_gateway(rng), t.name, rng)
        t.restore()

    async def _table_id(self, rng: random.Random, name: str) -> int:
        """The id of the table that has `name` now (as a reader's snapshot would pin it)."""
        g = self.d.any_gateway(rng)
        state = await g.txns.GetOpenTxns(tpb.GetOpenTxnsRequest(), timeout=CALL_TIMEOUT_S)
        got = await g.txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
            full_table_names=[f"{DB}.{name}"], valid_txn_list=state.valid_txn_list), timeout=CALL_TIMEOUT_S)
        return int(got.tables[0].table_id)

    def dropped_lately(self, table_id: int, since: float) -> bool:
        """A drop of the table `table_id` started after `since` (time.monotonic()): a read pinned to it
        may have been answered before the drop by some and after it by others (a drop deletes the
        table's versions: a snapshot from before it reads otherwise once it committed, and a cache
        still answers the old versions until its poller applies the drop)."""
        return self.drops.get(table_id, -math.inf) > since

    # -- partition writers and the judge -----------------------------------------------------------

    async def write_txn(self, rng: random.Random) -> None:
        t = self.tables[rng.choice(sorted(self.tables))]
        (txn,) = (await self.d.any_gateway(rng).txns.OpenTxns(tpb.OpenTxnsRequest(
            num_txns=1, user="consistency", agent_info="churn-writer"), timeout=CALL_TIMEOUT_S)).txn_ids
        db = DB
        added: list[tuple[str, ...]] = []
        added_window = Window(t.epoch, t.disrupted)
        refused = False
        for _ in range(rng.randint(1, 3)):
            g = self.d.any_gateway(rng)
            op = rng.choice(("allocate", "add", "alter", "drop")) if added else rng.choice(("allocate", "add", "drop"))
            window = added_window if op == "alter" else Window(t.epoch, t.disrupted)
            if op == "add" and not added:
                # The alter's window opens with the earliest add among those it alters: a table dropped
                # and re-created after that add, before a later one, lost the earlier add's partitions.
                added_window = window
            if op == "allocate":
                call: Awaitable[Any] = g.txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(
                    txn_ids=[txn], db_name=db, table_name=t.name), timeout=CALL_TIMEOUT_S)
            elif op == "add":
                values = rng.sample(UNIVERSE, rng.randint(1, 3))
                call = g.catalog.AddPartitions(pb.AddPartitionsRequest(
                    db_name=db, table_name=t.name, txn_id=txn, if_not_exists=True,
                    partitions=[pb.Partition(values=list(v), parameters={"tag": f"w{txn}"}) for v in values]),
                    timeout=CALL_TIMEOUT_S)
            elif op == "alter":
                call = g.catalog.AlterPartitions(pb.AlterPartitionsRequest(
                    db_name=db, table_name=t.name, txn_id=txn,
                    partitions=[pb.Partition(values=list(v), parameters={"tag": f"w{txn}a"}) for v in added]),
                    timeout=CALL_TIMEOUT_S)
            else:
                dropped = [part_name(v) for v in rng.sample(UNIVERSE, rng.randint(1, 2))]
                call = g.catalog.DropPartitions(pb.DropPartitionsRequest(
                    db_name=db, table_name=t.name, txn_id=txn, if_exists=True, names=dropped), timeout=CALL_TIMEOUT_S)
                # A partition this txn added and then dropped is gone for its later alter too: a NOT_FOUND
                # for it would be right, so it is no longer among those the alter may touch.
                added = [v for v in added if part_name(v) not in dropped]
            try:
                reply = await call
            except grpc.aio.AioRpcError as exc:
                self.judge(g, op, t, window, exc)
                refused = True
                break
            if op == "add":
                # Once each: a table dropped and re-created between two adds of one name answers it twice
                # (the second add made it in the new table), and an alter naming it twice is refused.
                added += [v for v in dict.fromkeys(tuple(p.values) for p in reply.partitions) if v not in added]
            self.d.counts[f"churn_write_{op}"] += 1
            self.d.counts["churn_writes_judged" if self.throughout(t, window) else "churn_writes_disrupted"] += 1
        outcome = "abort" if refused or rng.random() < 0.2 else "commit"
        g = self.d.any_gateway(rng)
        if outcome == "commit":
            try:
                await g.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), timeout=CALL_TIMEOUT_S)
                return
            except grpc.aio.AioRpcError as exc:
                self.d.error(f"commit of churn writer txn {txn}: {exc.code().name}: {exc.details()}")
        await g.txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[txn]), timeout=CALL_TIMEOUT_S)

    @staticmethod
    def throughout(t: ChurnTable, window: Window) -> bool:
        """The table kept its name from the window's start until now."""
        return not window.disrupted and not t.disrupted and window.epoch == t.epoch

    def judge(self, g: Endpoint, op: str, t: ChurnTable, window: Window, exc: grpc.aio.AioRpcError) -> None:
        """A refused partition write: right as a conflict, or as NOT_FOUND while the name was disrupted."""
        throughout = self.throughout(t, window)
        self.d.counts["churn_writes_judged" if throughout else "churn_writes_disrupted"] += 1
        if exc.code() == C.ABORTED:
            self.d.counts["churn_write_conflicts"] += 1
        elif exc.code() == C.NOT_FOUND and not throughout:
            self.d.counts["churn_write_not_found_disrupted"] += 1
        elif exc.code() == C.NOT_FOUND:
            self.d.violate(Violation(
                "write_not_found", g.name, op, f"{op} on {DB}.{t.name}", f"NOT_FOUND: {exc.details()}",
                "OK or ABORTED", "the table existed under this name throughout the call", scope="churn_write"))
        else:
            self.d.error(f"churn writer {op} on {t.name}: {exc.code().name}: {exc.details()}")
