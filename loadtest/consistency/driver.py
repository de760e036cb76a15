"""The consistency run's driver: sets up the catalog through the oracle, runs the writers, readers
and churners until the deadline, waits for every gateway to catch up, sweeps, and reports; and the
command line (`python -m loadtest.consistency`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import sys
import time
from typing import Any, Callable, Coroutine, Sequence

import grpc

from loadtest.consistency.judge import Judge
from loadtest.consistency.model import (
    ALL_NAMES, CACHED_GATEWAY_CONF, CALL_TIMEOUT_S, DB, ORACLE_CONF, UNIVERSE, ConsistencyConfig, ConsistencyReport,
    ExtTable, GatewayShare, table_message,
)
from loadtest.consistency.reader import Reader
from loadtest.consistency.thrift_side import HIVE2_METHODS, THRIFT_METHODS, ThriftEndpoint, grpc_twin, thrift_request
from loadtest.consistency.writer import Writer
from loadtest.harness import Endpoint, GatewayProcess, conf_args, fresh_database, workdir
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import events_pb2 as epb
from protos.metastore.v1 import transactions_pb2 as tpb


SWEEP_CONCURRENCY = 4  # the final sweep's reads in flight per gateway


class Driver:
    """One run: the shared state (gateways, oracle, tables, open txns, deadline) and its phases. The
    judge's counters and its `violate` and `error` are also reachable here (loadtest/ddl_race.py)."""

    def __init__(self, gateways: Sequence[Endpoint], oracle: Endpoint, cfg: ConsistencyConfig,
                 log: Callable[[str], None] = print, *, thrift: Sequence[ThriftEndpoint] = (),
                 thrift_oracle: ThriftEndpoint | None = None) -> None:
        self.gateways = list(gateways)
        self.oracle = oracle
        # Each gateway's Thrift endpoint, in `gateways`' order, and the oracle's: all, or none (gRPC only).
        self.thrift = list(thrift) if thrift_oracle is not None else []
        self.thrift_oracle = thrift_oracle if self.thrift else None
        self.cfg = cfg
        self.log = log
        self.acid = [f"a{i}" for i in range(cfg.acid_tables)]
        self.ext = {f"e{i}": ExtTable(f"e{i}") for i in range(cfg.external_tables)}
        self.committed = {t: ExtTable(t) for t in self.acid}  # each ACID table's committed states
        self.judge = Judge(self.gateways, oracle, self.ext, log, thrift=self.thrift, thrift_oracle=self.thrift_oracle,
                           committed=self.committed)
        self.counts = self.judge.counts
        self.violate = self.judge.violate
        self.error = self.judge.error
        self.open_txns: set[int] = set()
        self._deadline = 0.0
        self._stop = asyncio.Event()
        from loadtest.ddl_race import DdlRace  # it builds on this package's model

        self.ddl = DdlRace(self, cfg.churn_tables)
        self.readers = Reader(self)
        self.writers = Writer(self)

    def any_gateway(self, rng: random.Random) -> Endpoint:
        return rng.choice(self.gateways)

    async def snapshot(self, rng: random.Random, txn_id: int, tables: Sequence[str],
                       optional: Sequence[str] = ()) -> dict[str, pb.ReadContext]:
        """Hive's way: the ValidTxnList (as `txn_id` sees it), then each table's ValidWriteIdList. The
        `optional` tables (the churn tables' names, which may have no table in the snapshot) are asked
        one at a time with the same ValidTxnList: a name without a table (NOT_FOUND) is left out."""
        state = await self.any_gateway(rng).txns.GetOpenTxns(tpb.GetOpenTxnsRequest(current_txn_id=txn_id),
                                                             timeout=CALL_TIMEOUT_S)

        async def write_ids(names: Sequence[str], gateway: Endpoint, *, missing_ok: bool) -> list[Any]:
            try:
                got = await gateway.txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
                    full_table_names=[f"{DB}.{t}" for t in names], valid_txn_list=state.valid_txn_list),
                    timeout=CALL_TIMEOUT_S)
            except grpc.aio.AioRpcError as exc:
                if not missing_ok or exc.code() != grpc.StatusCode.NOT_FOUND:
                    raise
                return []
            return list(got.tables)

        calls = [write_ids(tables, self.any_gateway(rng), missing_ok=False)] if tables else []
        calls += [write_ids([t], self.any_gateway(rng), missing_ok=True) for t in optional]
        answers = await asyncio.gather(*calls)
        return {t.full_table_name.split(".", 1)[1]: pb.ReadContext(
            valid_write_id_list=t.valid_write_id_list, table_id=t.table_id, txn_id=txn_id)
            for tables_ in answers for t in tables_}

    def running(self) -> bool:
        return not self._stop.is_set() and time.monotonic() < self._deadline

    async def setup(self) -> None:
        rng = random.Random(f"{self.cfg.seed}/setup")
        o = self.oracle
        await o.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=DB)), timeout=CALL_TIMEOUT_S)
        for t in self.acid:
            await o.catalog.CreateTable(pb.CreateTableRequest(table=table_message(t, acid=True)),
                                        timeout=CALL_TIMEOUT_S)
            (txn,) = (await o.txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="consistency"))).txn_ids
            await o.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=t, txn_id=txn,
                partitions=[pb.Partition(values=list(v), parameters={"tag": "init"})
                            for v in rng.sample(UNIVERSE, self.cfg.initial_partitions)]), timeout=CALL_TIMEOUT_S)
            committed = await o.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), timeout=CALL_TIMEOUT_S)
            self.committed[t].history.append((committed.event_id, await self.writers.acid_state(t)))
        for ext in self.ext.values():
            await o.catalog.CreateTable(pb.CreateTableRequest(table=table_message(ext.name, acid=False, tag="init")),
                                        timeout=CALL_TIMEOUT_S)
            added = await o.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=ext.name,
                partitions=[pb.Partition(values=list(v), parameters={"tag": "init"})
                            for v in rng.sample(UNIVERSE, self.cfg.initial_partitions)]), timeout=CALL_TIMEOUT_S)
            ext.history.append((added.event_id, await self.writers.ext_state(ext.name)))
        await self.ddl.setup()
        await self.wait_caught_up()

    async def wait_caught_up(self, timeout_s: float = 30.0) -> int:
        head = (await self.oracle.events.GetCurrentNotificationEventId(
            epb.GetCurrentNotificationEventIdRequest(), timeout=CALL_TIMEOUT_S)).event_id
        async with asyncio.timeout(timeout_s):
            for g in self.gateways:
                while (await g.stats()).poller_position < head:
                    await asyncio.sleep(0.02)
        return head

    async def final_sweep(self) -> list[GatewayShare]:
        """After catch-up, with a fresh snapshot: every read equals the oracle and comes from the cache;
        the ACID tables, the churn tables that exist (by the names they have) and the external tables,
        over gRPC and over Thrift, and the ACID tables over Thrift without a snapshot too (their latest
        committed state). A table a gateway never loaded misses once (unknown_table starts its lazy
        fill), and a commit made after the catch-up makes a fresh snapshot stale: then the pass is repeated
        (after catching up again), up to 50 times, until it has no such miss."""
        await self.wait_caught_up()
        return list(await asyncio.gather(*(self._sweep(g, random.Random(f"{self.cfg.seed}/final/{g.name}"))
                                           for g in self.gateways)))

    async def _sweep(self, g: Endpoint, rng: random.Random) -> GatewayShare:
        """The final sweep's passes through `g` (each gateway's at once: a pass's hits are its own cache's)."""
        for _ in range(50):
            snap = await self.snapshot(rng, 0, self.acid, self.ddl.read_names())
            versioned = [*self.acid, *sorted(set(snap) - set(self.acid))]  # the churn tables that exist
            before, sent = await g.stats(), g.reads_sent
            requests: list[tuple[str, Any]] = []
            for t in versioned:
                requests += [("GetTable", pb.GetTableRequest(db_name=DB, table_name=t, read=snap[t])),
                             ("GetPartitionsByNames", pb.GetPartitionsByNamesRequest(
                                 db_name=DB, table_name=t, names=list(ALL_NAMES), read=snap[t])),
                             ("ListPartitionNames", pb.ListPartitionNamesRequest(
                                 db_name=DB, table_name=t, read=snap[t]))]
            for t in self.ext:
                requests += [("GetTable", pb.GetTableRequest(db_name=DB, table_name=t)),
                             ("GetPartitionsByNames", pb.GetPartitionsByNamesRequest(
                                 db_name=DB, table_name=t, names=list(ALL_NAMES))),
                             ("ListPartitionNames", pb.ListPartitionNamesRequest(db_name=DB, table_name=t))]
            reads: list[Coroutine[Any, Any, object]] = [
                self.judge.compare("final", method, request, in_txn=False, gateways=[g])
                for method, request in requests]
            for table in (*versioned, *self.ext) if self.thrift else ():
                # Hive 4's requests, with the snapshot on the ACID tables: from the cache too, equal to
                # the oracle's Thrift answers, and describing what the same read over gRPC does.
                ctx = snap.get(table)
                for method in THRIFT_METHODS:
                    request = thrift_request(method, table, ctx, names=list(ALL_NAMES))
                    reads.append(self.judge.compare_thrift("final", method, request, in_txn=False, gateways=[g],
                                                           twin=grpc_twin(method, request, ctx)))
            for table in self.acid if self.thrift else ():
                # Without a snapshot (Hive 2.3, Trino): the latest committed state, from the cache too.
                for method in (*THRIFT_METHODS, *HIVE2_METHODS):
                    reads.append(self.judge.compare_thrift("final_latest", method, thrift_request(
                        method, table, None, names=list(ALL_NAMES)), in_txn=False, gateways=[g]))
            # Quiet now: the order of the reads changes no answer. A few at a time: each Thrift read at once
            # would open a connection of its own to the gateway and to the oracle.
            await _gather_bounded(reads, SWEEP_CONCURRENCY)
            after = await g.stats()
            misses = {k: v - before.misses_by_reason.get(k, 0) for k, v in after.misses_by_reason.items()
                      if v - before.misses_by_reason.get(k, 0)}
            share = GatewayShare(g.name, after.hits - before.hits, misses, g.reads_sent - sent)
            if not misses or set(misses) - _SWEEP_RETRIED:
                break
            self.counts["final_sweep_refills"] += 1
            await asyncio.sleep(0.2)
            if "stale" in misses:  # something committed after the catch-up: catch up again, take a new snapshot
                await self.wait_caught_up()
        return share

    async def run(self) -> ConsistencyReport:
        started = time.monotonic()
        await self.setup()
        self.log(f"consistency: seed {self.cfg.seed}, {len(self.gateways)} gateways + oracle, "
                 f"{self.cfg.duration_s:g}s, {self.cfg.writers} writers, {self.cfg.readers} readers")
        before = [await g.stats() for g in self.gateways]
        sent = [g.reads_sent for g in self.gateways]
        self._deadline = time.monotonic() + self.cfg.duration_s
        tasks = [asyncio.create_task(self.writers.loop(i)) for i in range(self.cfg.writers)]
        tasks += [asyncio.create_task(self.readers.loop(i)) for i in range(self.cfg.readers)]
        tasks += [asyncio.create_task(self.ddl.churner(t)) for t in self.ddl.tables]
        try:
            for task in asyncio.as_completed(tasks):
                await task
        except BaseException:
            self._stop.set()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.open_txns:
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await self.oracle.txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=sorted(self.open_txns)))
            raise
        after = [await g.stats() for g in self.gateways]
        shares = []
        for g, b, a, s in zip(self.gateways, before, after, sent):
            misses = {k: a.misses_by_reason.get(k, 0) - b.misses_by_reason.get(k, 0) for k in a.misses_by_reason}
            shares.append(GatewayShare(g.name, a.hits - b.hits, misses, g.reads_sent - s))
        run_s = time.monotonic() - started
        final = await self.final_sweep()
        self.judge.check_observations()
        return ConsistencyReport(self.cfg.seed, run_s, self.counts, self.judge.violations, shares, final,
                                 self.judge.errors)


# Misses of the final sweep that a later pass may not have: a table a gateway never loaded (its first read
# starts the fill), and a snapshot that includes a commit made after the catch-up (the pass waits again).
# A table stale in every pass is a cache that lost a write id's outcome: a churn table made again over an
# id its name reserved for a txn that had committed (fixed: store/txns.py take_reserved_write_ids).
_SWEEP_RETRIED = frozenset({"unknown_table", "stale"})


async def _gather_bounded(calls: Sequence[Coroutine[Any, Any, object]], limit: int) -> None:
    """Await `calls`, at most `limit` at a time."""
    slots = asyncio.Semaphore(limit)

    async def one(call: Coroutine[Any, Any, object]) -> None:
        async with slots:
            await call

    await asyncio.gather(*(one(c) for c in calls))


async def run_consistency(gateway_addresses: Sequence[str], oracle_address: str, cfg: ConsistencyConfig,
                          log: Callable[[str], None] = print, *, thrift_addresses: Sequence[str] = (),
                          thrift_oracle_address: str = "") -> ConsistencyReport:
    """Drive the caching gateways at `gateway_addresses` and the cache-less `oracle_address` (all on
    one fresh, migrated database) for `cfg.duration_s`; see the module docstring for what is checked.
    With their Hive Thrift addresses (`thrift_addresses`, in the same order, and `thrift_oracle_address`),
    a share of the reads (cfg.thrift_read_share) goes over Thrift; without them, gRPC only."""
    gateways = [await Endpoint.open(f"gw{i + 1}", a) for i, a in enumerate(gateway_addresses)]
    oracle = await Endpoint.open("oracle", oracle_address)
    with_thrift = bool(thrift_oracle_address) and len(thrift_addresses) == len(gateways) and all(thrift_addresses)
    thrift = [ThriftEndpoint(g, a) for g, a in zip(gateways, thrift_addresses)] if with_thrift else []
    thrift_oracle = ThriftEndpoint(oracle, thrift_oracle_address) if with_thrift else None
    try:
        return await Driver(gateways, oracle, cfg, log, thrift=thrift, thrift_oracle=thrift_oracle).run()
    finally:
        for t in (*thrift, *([thrift_oracle] if thrift_oracle else [])):
            t.close()
        for ep in (*gateways, oracle):
            await ep.channel.close()


def seed_from_env(default: int | None = None) -> int:
    value = os.environ.get("CONSISTENCY_SEED")
    if value:
        return int(value)
    return default if default is not None else random.SystemRandom().randrange(1, 2**31)


async def _main_async(args: argparse.Namespace) -> int:
    cfg = ConsistencyConfig(duration_s=args.duration, seed=args.seed if args.seed is not None else seed_from_env(),
                            writers=args.writers, readers=args.readers)
    print(f"consistency seed: {cfg.seed}", flush=True)
    with workdir() as root:
        async with fresh_database(args.dsn, "consistency", root) as dsn:
            common = [f"hive.metastore.acid.housekeeper.interval={args.housekeeping}", *args.conf]
            procs = [GatewayProcess(["--dsn", dsn, *conf_args(*CACHED_GATEWAY_CONF, *common)], root / f"gw{i + 1}.log")
                     for i in range(args.gateways)]
            procs.append(GatewayProcess(["--dsn", dsn, *conf_args(*ORACLE_CONF, *common)], root / "oracle.log"))
            try:
                addresses = [await asyncio.to_thread(p.wait_serving, 120) for p in procs]
                thrift = [p.thrift_address for p in procs]
                report = await run_consistency(addresses[:-1], addresses[-1], cfg, thrift_addresses=thrift[:-1],
                                               thrift_oracle_address=thrift[-1])
            finally:
                codes = [p.stop() for p in procs]
                bad = [p for p, c in zip(procs, codes) if c != 0]
                for p in bad:
                    print(f"gateway {p.argv} exited {p.proc.returncode}:\n{p.output()[-3000:]}", file=sys.stderr)
    print(report.summary(), flush=True)
    return 0 if report.ok and not bad else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtest.consistency", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of writes and reads (default 30)")
    parser.add_argument("--seed", type=int, help="default: $CONSISTENCY_SEED, else random (printed)")
    parser.add_argument("--gateways", type=int, default=3, help="caching gateway processes (default 3)")
    parser.add_argument("--writers", type=int, default=3)
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--housekeeping", default="30s",
                        help="hive.metastore.acid.housekeeper.interval of every gateway (default 30s: version GC "
                             "runs during a long run, so snapshots outside txns may become too old)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting of every gateway, the oracle's too (repeatable), e.g. the Cleaner's abort "
                             "clean-up at once: --conf hive.compactor.abortedtxn.threshold=0 --conf "
                             "hive.compactor.aborted.txn.time.threshold=1s --conf hive.txn.timeout=60s")
    parser.add_argument("--dsn", help="PostgreSQL server to create the run's database in (default: an embedded one)")
    return asyncio.run(_main_async(parser.parse_args(argv)))

