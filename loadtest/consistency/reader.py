"""The readers of the consistency run: snapshots taken Hive's way (with or without a reader txn), then
reads of the ACID tables under them (and without one, as Hive 2.3 and Trino read them) and of the
external tables with and without an event token, each handed to the judge (see
loadtest/consistency/__init__.py)."""

from __future__ import annotations

import asyncio
import random
import time
from typing import TYPE_CHECKING, Any

from loadtest.consistency.judge import Racy
from loadtest.consistency.model import (
    CALL_TIMEOUT_S, DB, READ_METHODS, ExtObservation, ExtTable, Violation, ext_projection, one_line,
    random_names, read,
)
from loadtest.consistency.thrift_side import (
    HIVE2_METHODS, THRIFT_METHODS, THRIFT_ONLY_METHODS, ThriftEndpoint, grpc_twin, latest_projection,
    random_partial, render_request, thrift_request,
)
from loadtest.harness import Endpoint
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2 as tpb

if TYPE_CHECKING:
    from loadtest.consistency.driver import Driver

# How long after a drop of a table a read pinned to it may still disagree: the caches apply the drop
# within their poller's interval (200 ms in this run), then every gateway reads the database.
DROP_SETTLE_S = 1.0


class Reader:
    """The reader loops (`loop(i)`, several at once) of one run; they share the old snapshots."""

    def __init__(self, driver: Driver) -> None:
        self.d = driver
        self.judge = driver.judge
        thrift = [*driver.thrift, *([driver.thrift_oracle] if driver.thrift_oracle else [])]
        self._monotonic_locks = {(g, t): asyncio.Lock() for g in [*(g.name for g in driver.gateways),
                                                                    *(f"{t.name}/thrift" for t in thrift)]
                                 for t in [*driver.ext, *driver.committed]}
        self._thrift_share = driver.cfg.thrift_read_share if driver.thrift else 0.0
        self._old_snapshots: list[dict[str, pb.ReadContext]] = []
        self._churn_names = driver.ddl.read_names()

    async def loop(self, i: int) -> None:
        rng = random.Random(f"{self.d.cfg.seed}/reader/{i}")
        while self.d.running():
            in_txn = rng.random() < self.d.cfg.reader_txn_share
            txn = 0
            if in_txn:
                opened = await self.d.any_gateway(rng).txns.OpenTxns(tpb.OpenTxnsRequest(
                    num_txns=1, user="consistency", hostname="driver", agent_info=f"reader{i}"), timeout=CALL_TIMEOUT_S)
                txn = opened.txn_ids[0]
                self.d.open_txns.add(txn)
            try:
                kind = "reader_txn" if in_txn else "snapshot"
                if not in_txn and self._old_snapshots and rng.random() < 0.15:
                    # An old snapshot outside any txn (seconds to a minute old): the cache may still hold
                    # the versions it needs; once version GC passed it, "snapshot too old" on both sides.
                    snap, kind = rng.choice(self._old_snapshots), "old_snapshot"
                else:
                    snap = await self.d.snapshot(rng, txn, self.d.acid, self._churn_names)
                    if not in_txn:
                        self._old_snapshots = [*self._old_snapshots[-30:], snap]
                long_txn = in_txn and rng.random() < 0.1  # holds its snapshot for several seconds
                for _ in range(rng.randint(15, 25) if long_txn else rng.randint(2, 6)):
                    if not self.d.running():
                        break  # (a long txn's reads would run seconds past the deadline)
                    if self.d.ext and rng.random() < 0.25:
                        await self.ext_read(rng, rng.choice(sorted(self.d.ext)))
                    elif rng.random() < self.d.cfg.latest_read_share:
                        await self.latest_read(rng, rng.choice(self.d.acid), in_txn=in_txn)
                    elif self._churn_names and rng.random() < self.d.cfg.churn_read_share:
                        await self.churn_read(rng, snap, in_txn=in_txn, kind=kind)
                    else:
                        table = rng.choice(self.d.acid)
                        await self.acid_read(rng, table, snap[table], in_txn=in_txn, kind=kind)
                    await asyncio.sleep(rng.uniform(0, 0.25))
                self.judge.counts["reader_snapshots"] += 1
            finally:
                if txn:
                    await self.d.any_gateway(rng).txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn),
                                                                 timeout=CALL_TIMEOUT_S)
                    self.d.open_txns.discard(txn)

    async def churn_read(self, rng: random.Random, snap: dict[str, pb.ReadContext], *, in_txn: bool,
                         kind: str) -> None:
        """A snapshot read of a churn table (loadtest/ddl_race.py: altered, renamed away and back, dropped
        and re-created meanwhile) by one of its names, under a snapshot that may predate the last rename or
        re-creation: with that name's own snapshot when the name had a table in it, else (and 20% of the
        time anyway) with the snapshot of the table's other name (its write ids, and its table id, which a
        re-creation since then has made stale), its ValidWriteIdList renamed to this name. Judged as any
        snapshot read (scopes `churn_<kind>`)."""
        name = rng.choice(self._churn_names)
        other = self.d.ddl.other_name(name)
        ctx = snap.get(name)
        if (ctx is None or rng.random() < 0.2) and other in snap:
            # The other name's table (its id) and write ids, under this name (a ValidWriteIdList names its
            # table: one for another name is refused before the cache decides anything).
            theirs = snap[other]
            ctx = pb.ReadContext(valid_write_id_list=f"{DB}.{name}:" + theirs.valid_write_id_list.split(":", 1)[1],
                                 table_id=theirs.table_id, txn_id=theirs.txn_id)
            how = "other_name"
        elif ctx is not None:
            how = "own_name"
        else:
            self.judge.counts["churn_reads_no_snapshot"] += 1  # neither name had a table in the snapshot
            return
        self.judge.counts["churn_reads"] += 1
        self.judge.counts[f"churn_reads_{how}"] += 1
        since = time.monotonic() - DROP_SETTLE_S
        await self.acid_read(rng, name, ctx, in_txn=in_txn, kind=f"churn_{kind}",
                             racy=lambda: self.d.ddl.dropped_lately(ctx.table_id, since))

    async def acid_read(self, rng: random.Random, table: str, ctx: pb.ReadContext, *, in_txn: bool, kind: str,
                        racy: Racy | None = None) -> None:
        if rng.random() < 0.3:
            ctx = pb.ReadContext(valid_write_id_list=ctx.valid_write_id_list, txn_id=ctx.txn_id)  # no table-id guard
        if rng.random() < self._thrift_share:
            await self.thrift_acid_read(rng, table, ctx, in_txn=in_txn, kind=kind, racy=racy)
            return
        which = rng.choices(READ_METHODS, weights=(2, 5, 3))[0]
        if which == "GetTable":
            await self.judge.compare(kind, which, pb.GetTableRequest(db_name=DB, table_name=table, read=ctx),
                                     in_txn=in_txn, racy=racy)
        elif which == "GetPartitionsByNames":
            await self.judge.compare(kind, which, pb.GetPartitionsByNamesRequest(
                db_name=DB, table_name=table, names=random_names(rng, variants=True), read=ctx), in_txn=in_txn,
                racy=racy)
        else:
            request = pb.ListPartitionNamesRequest(db_name=DB, table_name=table, page_size=rng.choice((0, 3, 7, 20)),
                                                   read=ctx)
            first = await self.judge.compare(kind, which, request, in_txn=in_txn, racy=racy)
            if first.ok and first.reply.next_page_token:
                request.page_token = first.reply.next_page_token
                await self.judge.compare(kind, which, request, in_txn=in_txn, racy=racy)

    async def thrift_acid_read(self, rng: random.Random, table: str, ctx: pb.ReadContext, *, in_txn: bool,
                               kind: str, racy: Racy | None = None) -> None:
        """Hive 4's request with the snapshot (validWriteIdList, and the table id unless `ctx` has none),
        compared with the oracle's Thrift answer; half of them also made over gRPC at the same time (every
        name: no partial specification, no maxParts), and the two protocols' answers compared on each
        gateway (get_partitions_req with maxParts, as GetPartitionsByFilter's max_parts); the other half
        with partial specifications and maxParts, and Hive 4's other snapshot reads
        (thrift_side.THRIFT_ONLY_METHODS)."""
        cross = rng.random() < 0.5
        if cross:
            method = rng.choices(THRIFT_METHODS, weights=(2, 5, 3, 2))[0]
            # (maxParts for get_partitions_req only, as its twin's max_parts; never 0: gRPC's means no limit)
            request = thrift_request(method, table, ctx, names=random_names(rng, variants=True),
                                     max_parts=rng.choice((-1, 3, 7, 20)) if method == "get_partitions_req" else -1)
        else:
            method = rng.choices((*THRIFT_METHODS, *THRIFT_ONLY_METHODS), weights=(2, 5, 3, 2, 2))[0]
            request = thrift_request(method, table, ctx, names=random_names(rng, variants=True),
                                     max_parts=rng.choice((-1, 0, 3, 7, 20)), part_values=random_partial(rng))
        await self.judge.compare_thrift(kind, method, request, in_txn=in_txn,
                                        twin=grpc_twin(method, request, ctx) if cross else None, racy=racy)

    async def latest_read(self, rng: random.Random, table: str, *, in_txn: bool) -> None:
        """An ACID table read without a snapshot. Over gRPC (a quarter of them) every kind is refused
        (FAILED_PRECONDITION: a managed transactional table's reads carry a ValidWriteIdList), by every
        gateway alike (scope `no_snapshot`). Over Thrift (Hive 4's requests without validWriteIdList, all
        the kinds the snapshot reads draw, and Hive 2.3's and Trino's calls) the latest committed state:
        through every caching gateway and the oracle, one read at a time per endpoint and table, each
        answer a committed state of the table's history, never older than the same endpoint's previous
        one (observations of `<gateway>/thrift`, judged at the end)."""
        if not self.d.thrift or rng.random() < 0.25:
            which = rng.choices(READ_METHODS, weights=(2, 5, 3))[0]
            request: Any = (pb.GetTableRequest(db_name=DB, table_name=table) if which == "GetTable" else
                            pb.GetPartitionsByNamesRequest(db_name=DB, table_name=table,
                                                           names=random_names(rng, variants=True))
                            if which == "GetPartitionsByNames" else
                            pb.ListPartitionNamesRequest(db_name=DB, table_name=table, page_size=rng.choice((0, 3))))
            if rng.random() < 0.3:
                request.read.txn_id = 1  # a txn id, no ValidWriteIdList: still no snapshot
            await self.judge.compare("no_snapshot", which, request, in_txn=in_txn)
            return
        method = rng.choices((*THRIFT_METHODS, *THRIFT_ONLY_METHODS, *HIVE2_METHODS),
                             weights=(2, 4, 2, 2, 2, 1, 2, 2))[0]
        partial = random_partial(rng) if method in THRIFT_ONLY_METHODS or (
            method == "get_partition_names_ps_req" and rng.random() < 0.5) else []
        request = thrift_request(method, table, None, names=random_names(rng, variants=False),
                                 max_parts=rng.choice((-1, -1, 0, 3, 7, 20)), part_values=partial)
        await self._latest_thrift_read(table, method, request, [*self.d.thrift, *self._thrift_oracle()])

    def _thrift_oracle(self) -> list[ThriftEndpoint]:
        return [self.d.thrift_oracle] if self.d.thrift_oracle is not None else []

    async def _latest_thrift_read(self, table: str, method: str, request: Any, endpoints: list[ThriftEndpoint],
                                  scope: str = "latest", counter: str = "thrift_latest_reads") -> None:
        """`request` (no snapshot) through each of `endpoints`, each under its lock for `table`: the
        answers become observations, judged at the end against the table's history (monotonic reads)."""
        async def one(t: ThriftEndpoint) -> None:
            who = f"{t.name}/thrift"
            async with self._monotonic_locks[(who, table)]:
                self.judge.counts["thrift_reads"] += 1
                got = await t.call(method, request)
                if not got.ok:
                    self.judge.violate(Violation("error", who, method, render_request(method, request), got.render(),
                                                 "an answer", "(a Thrift read without a snapshot)", scope=scope))
                    return
                self.judge.counts[counter] += 1
                self.judge.observations.append(ExtObservation(who, table, method, render_request(method, request),
                                                              latest_projection(method, request, got.reply),
                                                              None, next(self.judge.seq)))

        await asyncio.gather(*(one(t) for t in endpoints))

    async def ext_read(self, rng: random.Random, table: str) -> None:
        ext = self.d.ext[table]
        if rng.random() < self._thrift_share:
            await self._ext_thrift_read(rng, ext)
            return
        which = rng.choices(READ_METHODS, weights=(2, 5, 3))[0]
        if which == "GetTable":
            request: Any = pb.GetTableRequest(db_name=DB, table_name=table)
        elif which == "GetPartitionsByNames":
            request = pb.GetPartitionsByNamesRequest(db_name=DB, table_name=table,
                                                     names=random_names(rng, variants=False))
        else:
            request = pb.ListPartitionNamesRequest(db_name=DB, table_name=table, page_size=rng.choice((0, 4, 9)))
        if rng.random() < 0.5:
            await self._ext_token_read(ext, which, request)
        else:
            await self._ext_monotonic_read(ext, which, request)

    async def _ext_token_read(self, ext: ExtTable, method: str, request: Any) -> None:
        token_index = len(ext.history) - 1
        request.read.min_event_id = ext.history[token_index][0]
        started, quiet = ext.started, ext.in_flight == 0
        answers = await asyncio.gather(*(read(g, method, request) for g in self.d.gateways))
        expected = await read(self.d.oracle, method, request)
        strict = quiet and ext.started == started
        for g, got in zip(self.d.gateways, answers):
            if not got.ok:
                self.judge.violate(Violation("error", g.name, method, one_line(request), got.render(),
                                             expected.render(), "(external read with token)", scope="ext_token"))
                continue
            self.judge.observations.append(ExtObservation(g.name, ext.name, method, one_line(request),
                                                    ext_projection(method, request, got.reply), token_index,
                                                    next(self.judge.seq)))
            if not strict:
                self.judge.counts["ext_token_skipped"] += 1
                continue
            self.judge.counts["compared.ext_token"] += 1
            if not got.same(expected):
                self.judge.violate(Violation("mismatch", g.name, method, one_line(request), got.render(),
                                             expected.render(),
                                             "(external, min_event_id = the last write's event, no write in between)",
                                             scope="ext_token"))

    async def _ext_monotonic_read(self, ext: ExtTable, method: str, request: Any) -> None:
        async def one(g: Endpoint) -> None:
            async with self._monotonic_locks[(g.name, ext.name)]:
                got = await read(g, method, request)
                if not got.ok:
                    self.judge.violate(Violation("error", g.name, method, one_line(request), got.render(), "an answer",
                                           "(external read without token)", scope="ext_no_token"))
                    return
                self.judge.counts["ext_no_token_reads"] += 1
                self.judge.observations.append(ExtObservation(g.name, ext.name, method, one_line(request),
                                                        ext_projection(method, request, got.reply), None,
                                                        next(self.judge.seq)))

        await asyncio.gather(*(one(g) for g in self.d.gateways))

    async def _ext_thrift_read(self, rng: random.Random, ext: ExtTable) -> None:
        """A Thrift read without a snapshot (the latest state, no token): judged as the gRPC reads without
        a token, monotonic per gateway and protocol (observations of `<gateway>/thrift`)."""
        method = rng.choices(THRIFT_METHODS, weights=(2, 5, 3, 2))[0]
        request = thrift_request(method, ext.name, None, names=random_names(rng, variants=False))
        await self._latest_thrift_read(ext.name, method, request, self.d.thrift, scope="ext_no_token",
                                       counter="thrift_ext_reads")
