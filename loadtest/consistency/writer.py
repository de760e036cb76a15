"""The writers of the consistency run: ACID txns (reads of their own writes, both ways, then commit or
abort; the commits of a table serialized, each followed by the oracle's reading of the committed state:
the ACID tables' history) and serialized external writes, whose resulting states make the external
tables' history; a share of the iterations runs the DDL race's partition-write txns
(loadtest/ddl_race.py)."""

from __future__ import annotations

import asyncio
import itertools
import random
from typing import TYPE_CHECKING, Any

import grpc

from loadtest.consistency.model import (
    CALL_TIMEOUT_S, DB, UNIVERSE, C, ExtObservation, ExtState, Violation, part_values, random_names, table_message,
)
from loadtest.consistency.thrift_side import (
    HIVE2_METHODS, THRIFT_METHODS, THRIFT_ONLY_METHODS, grpc_twin, latest_projection, random_partial,
    render_request, thrift_request,
)
from loadtest.harness import Endpoint
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2 as tpb

if TYPE_CHECKING:
    from loadtest.consistency.driver import Driver


class Writer:
    """The writer loops (`loop(i)`, several at once) of one run."""

    def __init__(self, driver: Driver) -> None:
        self.d = driver
        self.judge = driver.judge
        self._tags = itertools.count(1)

    async def loop(self, i: int) -> None:
        rng = random.Random(f"{self.d.cfg.seed}/writer/{i}")
        while self.d.running():
            choice = rng.random()
            if self.d.ddl.tables and choice < self.d.cfg.churn_write_share:
                await self.d.ddl.write_txn(rng)
            elif self.d.ext and choice < self.d.cfg.churn_write_share + self.d.cfg.external_write_share:
                await self.ext_write(rng)
            else:
                await self.acid_txn(rng, i)
            await asyncio.sleep(rng.uniform(0, 0.02))

    async def own_read(self, rng: random.Random, table: str, ctx: pb.ReadContext,
                       kind: str = "own_writes") -> list[str]:
        """Read-your-own-writes: the txn's view through a random gateway and the oracle; the names it sees."""
        g = self.d.any_gateway(rng)
        if rng.random() < 0.3:
            await self.judge.compare(kind, "GetPartitionsByNames", pb.GetPartitionsByNamesRequest(
                db_name=DB, table_name=table, names=random_names(rng, variants=False), read=ctx),
                in_txn=True, gateways=[g])
        listed = await self.judge.compare(kind, "ListPartitionNames", pb.ListPartitionNamesRequest(
            db_name=DB, table_name=table, read=ctx), in_txn=True, gateways=[g])
        if rng.random() < 0.2:
            await self.judge.compare(kind, "GetTable", pb.GetTableRequest(db_name=DB, table_name=table, read=ctx),
                               in_txn=True, gateways=[g])
        if kind == "own_writes" and self.d.thrift and rng.random() < self.d.cfg.thrift_read_share:
            # Hive 4 inside its txn: the request carries the snapshot in which its own write id is valid,
            # and no txn id; it sees what the gRPC read with the txn id sees.
            method = rng.choices(THRIFT_METHODS, weights=(1, 3, 2, 1))[0]
            request = thrift_request(method, table, ctx, names=random_names(rng, variants=True))
            await self.judge.compare_thrift(kind, method, request, in_txn=True, gateways=[g],
                                            twin=grpc_twin(method, request, ctx))
        return list(listed.reply.names) if listed.ok else []

    async def own_reads(self, rng: random.Random, table: str, txn: int, early: pb.ReadContext,
                        wrote: bool) -> list[str]:
        """Before its first write a txn reads with the snapshot taken when it opened. After writing, it
        reads twice: Hive's way, with a snapshot taken after its write id was allocated (its own write
        id is valid in it: `own_writes`), and with the snapshot taken before it wrote plus its txn id
        (`own_writes_early_snapshot`: the gateway must still show the txn its own writes)."""
        if not wrote:
            return await self.own_read(rng, table, early)
        await self.own_read(rng, table, early, "own_writes_early_snapshot")
        fresh = (await self.d.snapshot(rng, txn, [table]))[table]
        return await self.own_read(rng, table, fresh)

    async def acid_txn(self, rng: random.Random, writer: int) -> None:
        table = rng.choice(self.d.acid)
        opened = await self.d.any_gateway(rng).txns.OpenTxns(tpb.OpenTxnsRequest(
            num_txns=1, user="consistency", hostname="driver", agent_info=f"writer{writer}"), timeout=CALL_TIMEOUT_S)
        txn = opened.txn_ids[0]
        self.d.open_txns.add(txn)
        outcome = "commit"
        try:
            ctx = (await self.d.snapshot(rng, txn, [table]))[table]
            wrote = False
            for _ in range(rng.randint(1, 3)):
                visible = await self.own_reads(rng, table, txn, ctx, wrote)
                try:
                    await self.acid_write(rng, table, txn, ctx.table_id, visible)
                    wrote = True
                except grpc.aio.AioRpcError as exc:
                    if exc.code() == C.ABORTED:
                        self.judge.counts["write_conflicts"] += 1
                    elif exc.code() == C.NOT_FOUND and (exc.details() or "").startswith("table "):
                        # The ACID tables are never dropped or renamed: a write must always find them.
                        self.judge.violate(Violation("write_not_found", "?", "acid_write", f"txn {txn} on {DB}.{table}",
                                               f"NOT_FOUND: {exc.details()}", "OK or ABORTED",
                                               "the table existed throughout the run", scope="acid_write"))
                    elif exc.code() in (C.NOT_FOUND, C.ALREADY_EXISTS):
                        self.judge.counts["write_races"] += 1  # altered/dropped what another txn just dropped
                    else:
                        self.judge.error(f"txn {txn} write to {table}: {exc.code().name}: {exc.details()}")
                    outcome = "abort"
                    break
            if outcome == "commit":
                await self.own_reads(rng, table, txn, ctx, wrote)
                # Drawn always (a seed's choices stay the same); a run that has committed 3 txns and aborted none
                # aborts this one, so that even a short run on a loaded machine judges an abort.
                drawn_abort = rng.random() < self.d.cfg.abort_share
                if drawn_abort or (self.judge.counts["txns_committed"] >= 3 and not self.judge.counts["txns_aborted"]):
                    outcome = "abort"
            if outcome == "commit":
                await self.commit(rng, table, txn)
            if outcome == "abort":
                await self.d.any_gateway(rng).txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[txn]),
                                                             timeout=CALL_TIMEOUT_S)
                self.judge.counts["txns_aborted"] += 1
        finally:
            self.d.open_txns.discard(txn)

    async def commit(self, rng: random.Random, table: str, txn: int) -> None:
        """Commit `txn` (it wrote `table` only), then record the table's committed state, read from the
        oracle under a fresh snapshot: the commits of a table are serialized (its history's lock), so the
        states recorded are every committed state the table had, in order. Now and then the committer's
        gateway then reads the table without a snapshot over Thrift (scope `own_commit`): the gateway
        promises a read of a table a txn wrote, committed there, shows the commit at once (no older state)."""
        history = self.d.committed[table]
        g = self.d.any_gateway(rng)
        async with history.lock:
            try:
                reply = await g.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), timeout=CALL_TIMEOUT_S)
                self.judge.counts["txns_committed"] += 1
            except grpc.aio.AioRpcError as exc:
                self.judge.error(f"commit of txn {txn}: {exc.code().name}: {exc.details()}")
                reply = tpb.CommitTxnResponse()
            history.history.append((reply.event_id, await self.acid_state(table)))
            index = len(history.history) - 1
        if self.d.thrift and rng.random() < self.d.cfg.own_commit_read_share:
            endpoint = next(t for t in self.d.thrift if t.name == g.name)
            method = rng.choice((*THRIFT_METHODS, *THRIFT_ONLY_METHODS, *HIVE2_METHODS))
            request = thrift_request(method, table, None, names=random_names(rng, variants=False),
                                     max_parts=rng.choice((-1, 0, 3, 7, 20)),
                                     part_values=random_partial(rng) if method == THRIFT_ONLY_METHODS[0] else ())
            self.judge.counts["thrift_reads"] += 1
            got = await endpoint.call(method, request)
            who = f"{g.name}/thrift"
            if not got.ok:
                self.judge.violate(Violation("error", who, method, render_request(method, request), got.render(),
                                             "an answer", "(a read without a snapshot after a commit there)",
                                             scope="own_commit"))
                return
            self.judge.counts["own_commit_reads"] += 1
            self.judge.observations.append(ExtObservation(who, table, method, render_request(method, request),
                                                          latest_projection(method, request, got.reply), index,
                                                          next(self.judge.seq)))

    async def acid_state(self, table: str) -> ExtState:
        """The ACID table's committed state, as the oracle answers it under a fresh snapshot of its own."""
        o = self.d.oracle
        state = await o.txns.GetOpenTxns(tpb.GetOpenTxnsRequest(), timeout=CALL_TIMEOUT_S)
        (ids,) = (await o.txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
            full_table_names=[f"{DB}.{table}"], valid_txn_list=state.valid_txn_list), timeout=CALL_TIMEOUT_S)).tables
        return await self._state(table, pb.ReadContext(valid_write_id_list=ids.valid_write_id_list,
                                                       table_id=ids.table_id))

    async def acid_write(self, rng: random.Random, table: str, txn: int, table_id: int, visible: list[str]) -> None:
        tag = f"t{txn}.{next(self._tags)}"
        guard = table_id if rng.random() < 0.5 else 0
        g = self.d.any_gateway(rng)
        op = _pick_op(rng, (45, 35, 15, 5), bool(visible))
        await _write(g, rng, op, table, visible, tag, txn=txn, guard=guard)
        self.judge.counts[f"acid_{op}"] += 1

    async def ext_state(self, table: str) -> ExtState:
        return await self._state(table, None)

    async def _state(self, table: str, ctx: pb.ReadContext | None) -> ExtState:
        """The table's state as the oracle answers it, under `ctx` (None: the latest state)."""
        got = await self.d.oracle.catalog.GetTable(pb.GetTableRequest(db_name=DB, table_name=table, read=ctx),
                                                   timeout=CALL_TIMEOUT_S)
        listed = await self.d.oracle.catalog.ListPartitionNames(pb.ListPartitionNamesRequest(
            db_name=DB, table_name=table, read=ctx), timeout=CALL_TIMEOUT_S)
        parts = await self.d.oracle.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
            db_name=DB, table_name=table, names=list(listed.names), read=ctx), timeout=CALL_TIMEOUT_S)
        return ExtState(got.table.parameters.get("tag", ""),
                        tuple(sorted((p.name, p.parameters.get("tag", "")) for p in parts.partitions)),
                        tuple((c.name, c.type) for c in got.table.columns))

    async def ext_write(self, rng: random.Random) -> None:
        ext = self.d.ext[rng.choice(sorted(self.d.ext))]
        async with ext.lock:
            ext.started += 1
            ext.in_flight += 1
            try:
                current = ext.history[-1][1].part_map
                tag = f"x{next(self._tags)}"
                g = self.d.any_gateway(rng)
                op = _pick_op(rng, (40, 35, 15, 10), bool(current))
                reply = await _write(g, rng, op, ext.name, sorted(current), tag)
                self.judge.counts[f"ext_{op}"] += 1
                if reply.event_id:
                    ext.history.append((reply.event_id, await self.ext_state(ext.name)))
            except grpc.aio.AioRpcError as exc:
                self.judge.error(f"external write to {ext.name}: {exc.code().name}: {exc.details()}")
            finally:
                ext.in_flight -= 1


async def _write(g: Endpoint, rng: random.Random, op: str, table: str, names: list[str], tag: str, *,
                 txn: int = 0, guard: int = 0) -> Any:
    """One write of `op` (see `_pick_op`) through `g`, its partitions drawn from `names`, tagged `tag`:
    inside the ACID txn `txn` (with the table-id `guard`, 0 for none), or external when `txn` is 0.
    An ACID drop tolerates names another txn dropped meanwhile; an ACID write alters up to 3
    partitions, an external one up to 2."""
    acid = txn != 0
    if op == "add":
        values = rng.sample(UNIVERSE, rng.randint(1, 3))
        return await g.catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name=DB, table_name=table, txn_id=txn, table_id=guard, if_not_exists=True,
            partitions=[pb.Partition(values=list(v), parameters={"tag": tag}) for v in values]), timeout=CALL_TIMEOUT_S)
    if op == "alter":
        chosen = rng.sample(names, min(len(names), rng.randint(1, 3 if acid else 2)))
        return await g.catalog.AlterPartitions(pb.AlterPartitionsRequest(
            db_name=DB, table_name=table, txn_id=txn, table_id=guard,
            partitions=[pb.Partition(values=list(part_values(n)), parameters={"tag": tag}) for n in chosen]),
            timeout=CALL_TIMEOUT_S)
    if op == "drop":
        chosen = rng.sample(names, min(len(names), rng.randint(1, 2)))
        return await g.catalog.DropPartitions(pb.DropPartitionsRequest(
            db_name=DB, table_name=table, txn_id=txn, table_id=guard, names=chosen, if_exists=acid),
            timeout=CALL_TIMEOUT_S)
    altered = table_message(table, acid=acid, tag=tag)
    if rng.random() < 0.5:
        # Its columns change too: a partition without columns of its own shows the table's, which a
        # cache joins into its pre-encoded Thrift partitions (from the version the snapshot sees).
        altered.columns.append(pb.FieldSchema(name=rng.choice(("extra", "note")), type="string"))
    return await g.catalog.AlterTable(pb.AlterTableRequest(db_name=DB, table_name=table, txn_id=txn, table=altered),
                                      timeout=CALL_TIMEOUT_S)


def _pick_op(rng: random.Random, weights: tuple[int, int, int, int], has_partitions: bool) -> str:
    """add / alter / drop (partitions) / alter_table by weight; an alter or drop of nothing becomes an add."""
    op = rng.choices(("add", "alter", "drop", "alter_table"), weights=weights)[0]
    return "add" if op in ("alter", "drop") and not has_partitions else op
