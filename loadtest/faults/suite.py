"""The fault suite's phases and checks, its report, and its command line (`python -m loadtest.faults`)."""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable, Sequence

import asyncpg
import grpc

from gateway.app import migrate_database
from gateway.embedded_pg import EmbeddedPostgres
from loadtest.consistency.model import DB, Outcome
from loadtest.faults import holder, workload
from loadtest.faults.cluster import PG_SETTINGS, Cluster, Timing
from loadtest.faults.holder import Holder, log_head, recovery_s
from loadtest.faults.ledger import COMMITTED, UNKNOWN, PhaseStats
from loadtest.faults.workload import ACID_TABLES, Workload
from loadtest.harness import with_database, workdir
from protos.metastore.v1 import catalog_pb2 as pb

FAULTS = ("pg_restart_fast", "pg_restart_immediate", "kill9_gateway", "sigstop_gateway", "vanished_client")
RECOVERY_BOUND_S = 2.0  # issue 15: poller lag normal again within 2 s of the database's return
GATEWAYS = ("gw1", "gw2", "gw3")


@dataclass(frozen=True)
class FaultConfig:
    faults: tuple[str, ...] = FAULTS
    rounds: int = 1
    writers: int = 3
    readers: int = 3
    warmup_s: float = 1.5  # load before the fault
    tail_s: float = 1.0  # load after recovery, before the checks
    pg_down_s: float = 1.0  # between pg_ctl stop and start
    sigstop_s: float = 20.0
    seed: int = 0
    timing: Timing = field(default_factory=Timing)


@dataclass
class SuiteReport:
    phases: list[PhaseStats]
    wall_s: float
    gateway_failures: list[str]

    @property
    def violations(self) -> list[str]:
        return [f"{p.name}: {v}" for p in self.phases for v in p.violations] + self.gateway_failures

    @property
    def ok(self) -> bool:
        return not self.violations

    def summary(self) -> str:
        lines = [f"fault suite: {len(self.phases)} faults in {self.wall_s:.1f}s"]
        lines += [p.render() for p in self.phases]
        lines += [f"gateway exit: {g}" for g in self.gateway_failures]
        lines.append(f"violations: {len(self.violations)}")
        return "\n".join(lines)


class Suite:
    def __init__(self, cluster: Cluster, cfg: FaultConfig, log: Callable[[str], None]) -> None:
        self.cluster = cluster
        self.cfg = cfg
        self.log = log
        self.load = Workload(cluster, seed=cfg.seed)
        self.phases: list[PhaseStats] = []
        self._rng = random.Random(f"{cfg.seed}/suite")

    async def run(self) -> None:
        await workload.create_tables(self.cluster)
        await holder.create_tables(self.cluster)
        for r in range(self.cfg.rounds):
            for fault in self.cfg.faults:
                await self.phase(f"{fault}#{r + 1}", getattr(self, fault))

    async def phase(self, name: str, inject: Callable[[PhaseStats], Awaitable[None]]) -> None:
        stats = PhaseStats(name)
        self.cluster.calls.phase = stats
        self.phases.append(stats)
        stop = asyncio.Event()
        load = asyncio.create_task(self.load.run(stop, self.cfg.writers, self.cfg.readers, name))
        try:
            await asyncio.sleep(self.cfg.warmup_s)
            await inject(stats)
            await asyncio.sleep(self.cfg.tail_s)
        finally:
            stop.set()
            await asyncio.wait_for(load, workload.GIVE_UP_S + 30)  # writers end their txns first
        await self.verify(stats)
        self.log(stats.render())

    # -- the faults ------------------------------------------------------------------------------------

    async def _pg_restart(self, stats: PhaseStats, mode: str) -> None:
        back = await self.cluster.restart_postgres(mode, self.cfg.pg_down_s)
        # Both at once: the reads must happen before the pollers catch up, and must not delay the probe.
        _, seconds = await asyncio.gather(self.read_at_once(stats, self.cluster.live()),
                                          recovery_s(self.cluster, back, stats.name, stats))
        self._recovered(stats, seconds, "the database's return")

    async def pg_restart_fast(self, stats: PhaseStats) -> None:
        await self._pg_restart(stats, "fast")

    async def pg_restart_immediate(self, stats: PhaseStats) -> None:
        await self._pg_restart(stats, "immediate")

    async def kill9_gateway(self, stats: PhaseStats) -> None:
        victim = self.cluster.member(self._rng.choice(GATEWAYS))
        held = Holder(self.cluster, victim, f"kill{len(self.phases)}")
        try:
            await held.hold()
            await asyncio.sleep(self.cluster.timing.heartbeat_s * 1.5)  # it heartbeats while its gateway lives
            self.cluster.kill(victim.name)
            killed = time.monotonic()
            self._recovered(stats, await recovery_s(self.cluster, killed, stats.name, stats), "the kill")
            await held.wait_reaped(killed, stats)
        finally:
            await held.stop()
        await self.cluster.replace(victim.name)
        self._only_from(stats, victim.name)

    async def sigstop_gateway(self, stats: PhaseStats) -> None:
        victim = self._rng.choice(GATEWAYS)
        self.cluster.sigstop(victim)
        done = asyncio.Event()
        side = asyncio.create_task(self.load.side_writer(self.cfg.writers, done, victim))
        stats.counts[f"commits_avoiding_{victim}"] += 0  # shown even when none
        try:
            await asyncio.sleep(self.cfg.sigstop_s)
        finally:
            self.cluster.sigcont(victim)
            done.set()
        resumed = time.monotonic()
        # At once, before its poller can have caught up; the side writer ends its txn meanwhile.
        _, seconds, _ = await asyncio.gather(self.read_at_once(stats, [self.cluster.member(victim)]),
                                             recovery_s(self.cluster, resumed, stats.name, stats), side)
        self._recovered(stats, seconds, "SIGCONT")
        if stats.counts[f"commits_avoiding_{victim}"] <= 1:
            # Every writer stalled for the whole stop: the stopped gateway's session, idle in its
            # transaction, held a row lock all writes take (notification_sequence, next_txn_id) beyond
            # metastore.gateway.db.idle.in.transaction.timeout, after which PostgreSQL must end it.
            stats.violate(f"writers that never called {victim} committed "
                          f"{stats.counts[f'commits_avoiding_{victim}']} txn(s) during its {self.cfg.sigstop_s:g}s "
                          f"stop: a lock its stopped session held stalled them past the idle-transaction bound "
                          f"({self.cluster.timing.idle_in_txn_s:g}s)")

    async def vanished_client(self, stats: PhaseStats) -> None:
        held = Holder(self.cluster, self.cluster.member(self._rng.choice(GATEWAYS)), f"gone{len(self.phases)}")
        try:
            await held.hold()
            await asyncio.sleep(self.cluster.timing.heartbeat_s * 1.5)
        except BaseException:
            await held.stop()
            raise
        await held.vanish()
        await held.wait_reaped(time.monotonic(), stats)
        self._only_from(stats, None)

    async def read_at_once(self, stats: PhaseStats, members: Sequence[workload.Member]) -> None:
        """Right after the fault ends, before the pollers can have caught up: fresh snapshots through the
        oracle (retried while the database still refuses), then the same reads through `members`; a cache
        that missed commits must notice it (the snapshot's write ids) and answer like the database."""
        for table in ACID_TABLES:
            async with asyncio.timeout(30):
                while True:
                    try:
                        ctx = await self.load.snapshot(self._rng, table, via=self.cluster.the_oracle)
                        break
                    except grpc.aio.AioRpcError:
                        await asyncio.sleep(0.05)
            names = self.load.ledger.names(table)[-5000:]
            request = pb.GetPartitionsByNamesRequest(db_name=DB, table_name=table, names=names, read=ctx)
            for m in members:
                got = await self.load.read(m, "GetPartitionsByNames", request)
                want = await self.load.read(self.cluster.the_oracle, "GetPartitionsByNames", request)
                if got.ok and want.ok:
                    self.load.judge(m.name, "GetPartitionsByNames", request, got, want)
                    stats.counts["reads_at_once_compared"] += 1

    def _recovered(self, stats: PhaseStats, seconds: float, since: str) -> None:
        stats.figures["recovery_s"] = seconds
        if seconds > RECOVERY_BOUND_S:
            stats.violate(f"a commit made after {since} reached every live gateway's cache {seconds:.2f}s after it "
                          f"(bound {RECOVERY_BOUND_S:g}s)")

    @staticmethod
    def _only_from(stats: PhaseStats, faulted: str | None) -> None:
        """With the database up, only the faulted gateway may fail calls; the others keep serving (they may
        still answer that a reader's snapshot is too old: ledger.ANSWERS_OF_ANY_GATEWAY)."""
        others = {k: v for k, v in stats.not_served.items() if k.split("/", 1)[0] != faulted}
        if others:
            stats.violate(f"errors from gateways that were not faulted, with the database up: {others}")

    # -- the checks after each fault -------------------------------------------------------------------

    async def verify(self, stats: PhaseStats) -> None:
        """Every acknowledged commit present, no aborted write visible (the ledger against the oracle,
        i.e. PostgreSQL, with a fresh snapshot); every live gateway, caught up, answers the same reads
        equally; reads cached gateways answered while the database was away equal it now."""
        await self.load.judge_deferred()
        head = await log_head(self.cluster)
        async with asyncio.timeout(30):
            for m in self.cluster.live():
                while (cache := await m.ep.stats()).poller_position < head:
                    await asyncio.sleep(0.02)
                if cache.reloads:  # nothing trims the log here: a reload would mean the poller saw a gap
                    stats.violate(f"{m.name} reloaded its cache {cache.reloads} time(s)")
        ledger, o = self.load.ledger, self.cluster.the_oracle
        unknown = sum(t.outcome == UNKNOWN for t in ledger.txns)
        for table in ACID_TABLES:
            ctx = await self.load.snapshot(self._rng, table, via=o)
            listed = await self.load.read(o, "ListPartitionNames", pb.ListPartitionNamesRequest(
                db_name=DB, table_name=table, read=ctx))
            assert listed.ok, listed.render()
            parts = await self._partitions(o, table, list(listed.reply.names), ctx)
            present = {p.name: p.parameters.get("tag", "") for p in parts}
            for problem in ledger.resolve(table, set(present)):
                stats.violate(problem)
            expected = ledger.expected(table)
            lost = sorted(set(expected) - set(present))
            extra = sorted(set(present) - set(expected))
            wrong = sorted(n for n in set(expected) & set(present) if expected[n] != present[n])
            if lost:
                stats.violate(f"{table}: acknowledged commits lost: {lost[:10]} ({len(lost)})")
            if extra:
                stats.violate(f"{table}: partitions no committed txn wrote are visible: {extra[:10]} ({len(extra)})")
            if wrong:
                stats.violate(f"{table}: not the last committed version: "
                              + ", ".join(f"{n} {present[n]} (expected {expected[n]})" for n in wrong[:10]))
            stats.counts["partitions_checked"] += len(expected)
            reads = (("ListPartitionNames", pb.ListPartitionNamesRequest(db_name=DB, table_name=table, read=ctx)),
                     ("GetPartitionsByNames", pb.GetPartitionsByNamesRequest(
                         db_name=DB, table_name=table, names=sorted(present)[:5000], read=ctx)))
            for m in self.cluster.live():
                await self._final_reads(stats, m, reads)
        stats.counts["acknowledged_commits_checked"] = sum(t.outcome == COMMITTED for t in ledger.txns)
        stats.counts["outcomes_resolved_from_data"] += unknown

    async def _final_reads(self, stats: PhaseStats, m: workload.Member, reads: Sequence[tuple[str, Any]]) -> None:
        """`reads` through `m`, each equal to the oracle's, and (caught up and quiet as it is) all answered
        by its cache: a table a new gateway never loaded misses once and is filled, so the pass is
        repeated for up to 10 s until every read is a hit."""
        for _ in range(50):
            before = await m.ep.stats()
            for method, request in reads:
                want = await self.load.read(self.cluster.the_oracle, method, request)
                got = await self.load.read(m, method, request)
                self.load.judge(m.name, method, request, got, want)
                stats.counts["final_reads_compared"] += 1
            after = await m.ep.stats()
            if after.hits - before.hits == len(reads):
                stats.counts["final_reads_from_cache"] += len(reads)
                return
            await asyncio.sleep(0.2)
        misses = {k: v - before.misses_by_reason.get(k, 0) for k, v in after.misses_by_reason.items()
                  if v != before.misses_by_reason.get(k, 0)}
        stats.violate(f"{m.name}: caught up and quiet, its cache still does not answer a fresh snapshot ({misses})")

    async def _partitions(self, o: workload.Member, table: str, names: list[str],
                          ctx: pb.ReadContext) -> list[pb.Partition]:
        out: list[pb.Partition] = []
        for i in range(0, len(names), 1000):
            got: Outcome = await self.load.read(o, "GetPartitionsByNames", pb.GetPartitionsByNamesRequest(
                db_name=DB, table_name=table, names=names[i:i + 1000], read=ctx))
            assert got.ok, got.render()
            out += got.reply.partitions
        return out


async def run_faults(cfg: FaultConfig, log: Callable[[str], None] = print, keep: bool = False) -> SuiteReport:
    """The whole suite: an embedded PostgreSQL (durable commits, see cluster.PG_SETTINGS), three caching
    gateways and the oracle on a fresh database, each fault of `cfg` in turn (`rounds` times)."""
    started = time.monotonic()
    with workdir(keep=keep, prefix="msgw-faults-") as root:
        pg = EmbeddedPostgres(root / "pg", settings=dict(PG_SETTINGS))
        admin_dsn = await asyncio.to_thread(pg.start)
        try:
            conn = await asyncpg.connect(admin_dsn)
            try:
                await conn.execute("CREATE DATABASE faults")
            finally:
                await conn.close()
            dsn = with_database(admin_dsn, "faults")
            await migrate_database(dsn)
            cluster = Cluster(root, pg, dsn, cfg.timing)
            suite = Suite(cluster, cfg, log)
            try:
                await cluster.start(GATEWAYS)
                await suite.run()
            finally:
                failures = await cluster.close()
        finally:
            await asyncio.to_thread(pg.stop)
    return SuiteReport(suite.phases, time.monotonic() - started, failures)


def main(argv: Sequence[str] | None = None) -> int:
    from loadtest.faults import __doc__ as doc

    parser = argparse.ArgumentParser(prog="python -m loadtest.faults", description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="each fault this many times (default 3)")
    parser.add_argument("--faults", default=",".join(FAULTS), help=f"comma-separated subset of {','.join(FAULTS)}")
    parser.add_argument("--sigstop", type=float, default=20.0, help="seconds a gateway stays stopped (default 20)")
    parser.add_argument("--pg-down", type=float, default=3.0, help="seconds PostgreSQL stays down (default 3)")
    parser.add_argument("--load", type=float, default=3.0, help="seconds of load before and after each fault")
    parser.add_argument("--seed", type=int, default=None, help="default: random (printed)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (gateway logs)")
    args = parser.parse_args(argv)
    unknown = set(args.faults.split(",")) - set(FAULTS)
    if unknown:
        parser.error(f"unknown faults {sorted(unknown)}; choose from {', '.join(FAULTS)}")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2**31)
    cfg = replace(FaultConfig(), faults=tuple(args.faults.split(",")), rounds=args.rounds, sigstop_s=args.sigstop,
                  pg_down_s=args.pg_down, warmup_s=args.load, tail_s=args.load, seed=seed)
    print(f"fault suite seed: {seed}", flush=True)
    report = asyncio.run(run_faults(cfg, lambda s: print(s, flush=True), keep=args.keep))
    print(report.summary(), flush=True)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
