"""Cache figures for docs/benchmarks.md, measured on gateway processes over a real PostgreSQL.

    python -m loadtest.bench_cache                          # all three figures (about 10 minutes)
    python -m loadtest.bench_cache --only hit --users 4,16 --duration 30
    python -m loadtest.bench_cache --only lag --commits 200
    python -m loadtest.bench_cache --only prewarm --tables 20 --per-table 50000

hit: cache hit share under a 95/5 read/write mix. Two caching gateway processes; users alternate
    between them. Each user runs tasks in a closed loop (no think time), picked 95:5:
    * read query, Hive's way: GetOpenTxns -> GetValidWriteIds(table) -> GetPartitionsByNames(100 names
      of the table's initial partitions, with that snapshot);
    * write txn: OpenTxns -> AddPartitions(2 new) -> AlterPartitions(2 of the initial partitions, the
      ones readers read) -> CommitTxn (a write-write conflict aborts it).
    Caches are warmed first (one read per table per gateway), then the share is Admin.CacheStats
    hits / (hits + misses) over the run, summed over both gateways, with misses by reason, and per
    second (PNG). The loadtest report (CSV, markdown, PNG of throughput/latency) is kept too.
lag: commit-to-cache-visible across gateways. Gateway A takes OpenTxns -> AddPartitions(1 new) ->
    CommitTxn; from the moment CommitTxn returns (t0), gateway B is polled until
    * `poller`: B's Admin.CacheStats.poller_position >= the commit's event id (poll loop, ~0.3 ms);
    * `served`: with a fresh snapshot taken right after the commit (GetOpenTxns -> GetValidWriteIds on
      B), GetPartitionsByNames of the new partition on B returns it AND B's hit counter moved (the cache
      answered it); probes repeat the read (+ a CacheStats), ~1-2 ms each.
    The two are measured on separate commits, one at a time, on otherwise idle gateways.
prewarm: prewarm time and resident memory per cached partition. 20 ACID tables x 50,000 partitions
    (1,000,000) are loaded: per table one txn whose first 1,000 partitions go through AddPartitions
    (gRPC, to a gateway with the cache disabled) and whose other 49,000 are COPYed into `partitions`
    as copies of the first row AddPartitions wrote (its stored body with the name swapped, the txn's
    write id), then CommitTxn. Then a gateway process with the cache disabled starts on that
    database (baseline), and one with `metastore.gateway.cache.prewarm=eager` and
    `metastore.gateway.cache.max.partitions=2000000`: wall time from spawn to "serving", VmRSS after
    start minus the baseline's VmRSS, divided by the partitions cached; VmHWM is the peak.

PostgreSQL is an embedded server started for the run in a temporary directory (durable settings,
PostgreSQL's defaults) unless `--dsn` names a server; each figure runs in its own fresh database,
dropped at the end. Results go to --results-dir (default loadtest/results/bench_cache, git-ignored)
as JSON and PNG; the section between `<!-- bench:cache:start -->` and `<!-- bench:cache:end -->` of
--out (default docs/benchmarks.md) is rewritten from the newest JSON of each figure, so running one
figure keeps the others.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import grpc

from loadtest import probes, report
from loadtest.engine import RunConfig
from loadtest.gateway_targets import DB, bench_table, partition_values, read_context
from loadtest.harness import Endpoint, GatewayProcess, conf_args, fresh_database, gateways, postgres, workdir
from loadtest.histogram import percentile
from loadtest.probes import MachineWindow, describe_load, machine, peak_rss_bytes, rss_bytes
from loadtest.report import line_chart, markdown_table, matplotlib_available, write_report
from loadtest.runner import run_load
from loadtest.stats import RequestStats
from loadtest.users import GrpcUser, constant, task
from protos.metastore.v1 import admin_pb2 as apb
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc, transactions_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = "docs/benchmarks.md"
DEFAULT_RESULTS = "loadtest/results/bench_cache"
READ = "read-query(snapshot + 100 partitions)"
WRITE = "write-txn(add 2, alter 2)"
TIMEOUT_S = 60.0


def day_hour_values(count: int) -> list[tuple[str, str]]:
    return partition_values(count, start=dt.date(2020, 1, 1))


def name_of(values: Sequence[str]) -> str:
    return f"ds={values[0]}/hr={values[1]}"


async def create_tables(ep: Endpoint, tables: Sequence[str], per_table: int, batch: int = 2000) -> None:
    await ep.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=DB)), timeout=TIMEOUT_S)
    values = day_hour_values(per_table)
    for t in tables:
        await ep.catalog.CreateTable(pb.CreateTableRequest(table=bench_table(t)), timeout=TIMEOUT_S)
        (txn,) = (await ep.txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="bench"), timeout=TIMEOUT_S)).txn_ids
        for i in range(0, per_table, batch):
            await ep.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=t, txn_id=txn,
                partitions=[pb.Partition(values=list(v)) for v in values[i:i + batch]]), timeout=TIMEOUT_S)
        await ep.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), timeout=TIMEOUT_S)


async def snapshot(ep: Endpoint, table: str) -> pb.ReadContext:
    return await read_context(ep.txns, table, TIMEOUT_S)


async def warm(ep: Endpoint, tables: Sequence[str], names: Sequence[str]) -> None:
    """Read each table once (a miss starts the lazy fill), then until a read is a hit."""
    for t in tables:
        for _ in range(2000):
            before = (await ep.stats()).hits
            await ep.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
                db_name=DB, table_name=t, names=list(names[:10]), read=await snapshot(ep, t)), timeout=TIMEOUT_S)
            if (await ep.stats()).hits > before:
                break
            await asyncio.sleep(0.01)
        else:
            raise RuntimeError(f"{ep.name} never served {t} from its cache")


# -- (a) hit share under a 95/5 read/write mix -----------------------------------------------------------


class MixUser(GrpcUser):
    """95 read queries to 5 write txns, on the gateway options["addresses"][user_id % 2]."""

    wait_time = constant(0.0)
    call_timeout_s = 30.0

    async def on_start(self) -> None:
        addresses = list(self.options["addresses"])
        self.channel = grpc.aio.insecure_channel(addresses[self.user_id % len(addresses)])
        await asyncio.wait_for(self.channel.channel_ready(), timeout=self.connect_timeout_s)
        self.catalog = catalog_pb2_grpc.CatalogStub(self.channel)
        self.txns = transactions_pb2_grpc.TransactionsStub(self.channel)
        self.tables = list(self.options["tables"])
        self.names = list(self.options["names"])
        self.writes = 0

    @task(95)
    async def read_query(self) -> None:
        table = self.rng.choice(self.tables)
        async with self.measure(READ) as m:
            read = await read_context(self.txns, table, self.call_timeout_s)
            reply = await self.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
                db_name=DB, table_name=table, names=self.rng.sample(self.names, 100), read=read),
                timeout=self.call_timeout_s)
            m.items = len(reply.partitions)
            if m.items != 100:
                m.fail("wrong-count")

    @task(5)
    async def write_txn(self) -> None:
        table = self.rng.choice(self.tables)
        self.writes += 1
        txn = 0
        try:
            async with self.measure(WRITE):
                txn = (await self.txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="bench"),
                                                timeout=self.call_timeout_s)).txn_ids[0]
                await self.catalog.AddPartitions(pb.AddPartitionsRequest(
                    db_name=DB, table_name=table, txn_id=txn,
                    partitions=[pb.Partition(values=[f"{self.options['tag']}u{self.user_id}", str(2 * self.writes + i)])
                                for i in range(2)]),
                    timeout=self.call_timeout_s)
                tag = f"u{self.user_id}w{self.writes}"
                await self.catalog.AlterPartitions(pb.AlterPartitionsRequest(
                    db_name=DB, table_name=table, txn_id=txn,
                    partitions=[pb.Partition(values=[n.split("/")[0][3:], n.split("hr=")[1]], parameters={"tag": tag})
                                for n in self.rng.sample(self.names, 2)]), timeout=self.call_timeout_s)
                await self.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), timeout=self.call_timeout_s)
                txn = 0
        finally:
            if txn:
                try:
                    await self.txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[txn]), timeout=self.call_timeout_s)
                except grpc.aio.AioRpcError:
                    pass


def _misses(stats: apb.CacheStatsResponse) -> dict[str, int]:
    return dict(stats.misses_by_reason)


async def figure_hit(admin_dsn: str, root: Path, opts: argparse.Namespace, results: Path) -> dict[str, Any]:
    tables = [f"h{i}" for i in range(opts.hit_tables)]
    names = [name_of(v) for v in day_hour_values(opts.hit_partitions)]
    runs = []
    async with fresh_database(admin_dsn, "bench_cache_hit", root) as dsn:
        async with gateways(dsn, root, ["gw1", "gw2"], log_prefix="hit-") as eps:
            addresses = [ep.address for ep in eps]
            await create_tables(eps[0], tables, opts.hit_partitions)
            for ep in eps:
                await warm(ep, tables, names)
            for run_no, users in enumerate(opts.users):
                series: list[dict[str, Any]] = []
                before = [await ep.stats() for ep in eps]
                stop = asyncio.Event()

                async def sample(before: list[apb.CacheStatsResponse], stop: asyncio.Event,
                                 series: list[dict[str, Any]]) -> None:
                    started = time.monotonic()
                    last = before
                    while not stop.is_set():
                        try:
                            await asyncio.wait_for(stop.wait(), 1.0)
                        except TimeoutError:
                            pass
                        now = [await ep.stats() for ep in eps]
                        hits = sum(n.hits - p.hits for n, p in zip(now, last))
                        misses = sum(sum(_misses(n).values()) - sum(_misses(p).values()) for n, p in zip(now, last))
                        series.append({"t": round(time.monotonic() - started, 2), "hits": hits, "misses": misses})
                        last = now

                sampler = asyncio.create_task(sample(before, stop, series))
                config = RunConfig(users=users, run_time_s=opts.duration, workers=1, seed=opts.seed,
                                   stop_timeout_s=10.0)
                result = await run_load(MixUser, addresses[0], config, target=f"{users} users",
                                        options={"addresses": addresses, "tables": tables, "names": names,
                                                 "tag": f"r{run_no}"},
                                        progress=sys.stderr.isatty())
                stop.set()
                await sampler
                after = [await ep.stats() for ep in eps]
                per_gateway: list[dict[str, Any]] = []
                for ep, b, a in zip(eps, before, after):
                    misses = {k: v - _misses(b).get(k, 0) for k, v in _misses(a).items() if v - _misses(b).get(k, 0)}
                    per_gateway.append({"gateway": ep.name, "hits": a.hits - b.hits, "misses": misses})
                hits = sum(g["hits"] for g in per_gateway)
                missed = sum(sum(g["misses"].values()) for g in per_gateway)
                reads = result.stats.get(READ) or RequestStats()  # empty: NaN percentiles
                writes = result.stats.get(WRITE) or RequestStats()
                run = {
                    "users": users, "duration_s": result.duration_s, "hits": hits, "misses": missed,
                    "share": hits / (hits + missed) if hits + missed else 0.0, "per_gateway": per_gateway,
                    "reads": reads.requests, "read_failures": reads.failures, "writes": writes.requests,
                    "write_failures": writes.failures, "write_errors": dict(writes.errors),
                    "reads_per_s": reads.requests / result.duration_s,
                    "writes_per_s": writes.requests / result.duration_s,
                    "read_p50_ms": reads.latency.percentile(50) * 1e3,
                    "read_p99_ms": reads.latency.percentile(99) * 1e3,
                    "series": series,
                }
                runs.append(run)
                files = write_report([result], results, basename=f"hit-{users}users")
                run["report_md"] = markdown_table([result])
                print(f"hit share with {users} users: {run['share']:.2%} ({hits} hits, {missed} misses); "
                      f"report {files.markdown}", flush=True)
    figure = {"figure": "hit", "tables": len(tables), "partitions_per_table": opts.hit_partitions,
              "duration_s": opts.duration, "runs": runs}
    if matplotlib_available():
        figure["png"] = str(plot_hit(figure, results / "hit_share.png"))
    return figure


# -- (b) commit-to-cache-visible lag -------------------------------------------------------------------


async def figure_lag(admin_dsn: str, root: Path, opts: argparse.Namespace, results: Path) -> dict[str, Any]:
    samples: dict[str, list[float]] = {"poller": [], "served": []}
    probes: dict[str, list[int]] = {"poller": [], "served": []}
    commit_ms: list[float] = []
    snapshot_ms: list[float] = []
    async with fresh_database(admin_dsn, "bench_cache_lag", root) as dsn:
        async with gateways(dsn, root, ["A", "B"], log_prefix="lag-gw") as (a, b):
            await create_tables(a, ["lag"], 10)
            await warm(b, ["lag"], [name_of(v) for v in day_hour_values(10)])
            for method in ("poller", "served"):
                for i in range(opts.commits):
                    values = [f"{method}", str(i)]
                    hits = (await b.stats()).hits  # nothing else reads on B: only the probes move it
                    (txn,) = (await a.txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="bench"))).txn_ids
                    await a.catalog.AddPartitions(pb.AddPartitionsRequest(
                        db_name=DB, table_name="lag", txn_id=txn, partitions=[pb.Partition(values=values)]))
                    sent = time.perf_counter()
                    event_id = (await a.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn))).event_id
                    t0 = time.perf_counter()
                    commit_ms.append((t0 - sent) * 1e3)
                    n = 0
                    if method == "served":
                        read = await snapshot(b, "lag")  # a fresh snapshot, taken after the commit
                        snapshot_ms.append((time.perf_counter() - t0) * 1e3)
                    while True:
                        n += 1
                        if method == "poller":
                            if (await b.stats()).poller_position >= event_id:
                                done = time.perf_counter()
                                break
                        else:
                            reply = await b.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
                                db_name=DB, table_name="lag", names=[name_of(values)], read=read))
                            done = time.perf_counter()
                            now_hits = (await b.stats()).hits
                            if reply.partitions and now_hits > hits + 1:
                                raise RuntimeError("someone else reads on gateway B")
                            if reply.partitions and now_hits > hits:
                                break
                            hits = now_hits
                        if time.perf_counter() - t0 > 30:
                            raise RuntimeError(f"gateway B did not catch up with event {event_id} in 30 s")
                    samples[method].append((done - t0) * 1e3)
                    probes[method].append(n)
            gateway_view = await b.stats()
    figure: dict[str, Any] = {"figure": "lag", "commits": opts.commits, "commit_ms_p50": percentile(commit_ms, 50),
                              "snapshot_ms_p50": percentile(snapshot_ms, 50),
                              "gateway_lag_p50_ms": gateway_view.poller_lag_p50_ms,
                              "gateway_lag_p99_ms": gateway_view.poller_lag_p99_ms, "methods": {}}
    for method, ms in samples.items():
        figure["methods"][method] = {
            "n": len(ms), "p50_ms": percentile(ms, 50), "p90_ms": percentile(ms, 90),
            "p99_ms": percentile(ms, 99), "max_ms": max(ms), "mean_ms": statistics.fmean(ms),
            "probes_p50": percentile([float(x) for x in probes[method]], 50), "samples_ms": ms,
        }
        print(f"lag ({method}): p50 {figure['methods'][method]['p50_ms']:.2f} ms, "
              f"p99 {figure['methods'][method]['p99_ms']:.2f} ms over {len(ms)} commits", flush=True)
    if matplotlib_available():
        figure["png"] = str(plot_lag(figure, results / "lag.png"))
    return figure


# -- (c) prewarm time and memory per partition ----------------------------------------------------------


async def load_partitions(dsn: str, ep: Endpoint, tables: int, per_table: int, via_api: int) -> float:
    """Create the tables and their partitions; returns seconds taken. Per table one txn: `via_api`
    partitions through AddPartitions, the others COPYed into `partitions` as copies of the first row the
    API wrote (its stored body with its name swapped, the same write id), then CommitTxn: what the gateway
    stores is taken from the gateway itself, not rebuilt here."""
    import asyncpg

    started = time.monotonic()
    await ep.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=DB)), timeout=TIMEOUT_S)
    values = day_hour_values(per_table)
    conn = await asyncpg.connect(dsn)
    try:
        for i in range(tables):
            name = f"p{i}"
            created = await ep.catalog.CreateTable(pb.CreateTableRequest(table=bench_table(name)), timeout=TIMEOUT_S)
            (txn,) = (await ep.txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="bench"))).txn_ids
            added = await ep.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=name, txn_id=txn,
                partitions=[pb.Partition(values=list(v)) for v in values[:via_api]]), timeout=TIMEOUT_S)
            first = name_of(values[0])
            template = await conn.fetchrow(
                "SELECT body::text AS body, create_time FROM partitions WHERE table_id = $1 AND part_name = $2",
                created.table.table_id, first)
            if template is None or f'/{first}"' not in template["body"]:
                raise RuntimeError(f"the row AddPartitions wrote for {first} is not where this benchmark expects it")
            rows = [(created.table.table_id, name_of(v), list(v),
                     template["body"].replace(f'/{first}"', f'/{name_of(v)}"'), template["create_time"],
                     added.partitions[0].write_id) for v in values[via_api:]]
            await conn.copy_records_to_table(
                "partitions", records=rows,
                columns=["table_id", "part_name", "part_values", "body", "create_time", "created_wid"])
            await ep.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), timeout=TIMEOUT_S)
            print(f"loaded {(i + 1) * per_table:,} partitions", file=sys.stderr, flush=True)
        await conn.execute("ANALYZE partitions")
    finally:
        await conn.close()
    return time.monotonic() - started


async def settled_rss(proc: GatewayProcess, seconds: float = 3.0) -> int:
    """VmRSS after `seconds` of idling (sampled each 0.5 s; the last sample)."""
    rss = 0
    for _ in range(int(seconds / 0.5)):
        await asyncio.sleep(0.5)
        rss = rss_bytes(proc.pid)
    return rss


async def figure_prewarm(admin_dsn: str, root: Path, opts: argparse.Namespace, results: Path) -> dict[str, Any]:
    total = opts.tables * opts.per_table
    async with fresh_database(admin_dsn, "bench_cache_prewarm", root) as dsn:
        async with gateways(dsn, root, ["loader"], "metastore.gateway.cache.enabled=false") as (ep,):
            load_s = await load_partitions(dsn, ep, opts.tables, opts.per_table, opts.via_api)
        print(f"loaded {total:,} partitions in {load_s:.0f} s", flush=True)

        async def start(conf: Sequence[str],
                        log: str) -> tuple[GatewayProcess, float, int, int, apb.CacheStatsResponse]:
            proc = GatewayProcess(["--dsn", dsn, *conf_args(*conf)], root / log, log_level="INFO")
            address = await asyncio.to_thread(proc.wait_serving, 3600)
            serve_s = proc.serving_at - proc.started_at
            endpoint = await Endpoint.open(log, address)
            # One read of 100 partitions each, so both have used a database connection and the gRPC path.
            names = [name_of(v) for v in day_hour_values(100)]
            await endpoint.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
                db_name=DB, table_name="p0", names=names, read=await snapshot(endpoint, "p0")), timeout=TIMEOUT_S)
            stats = await endpoint.stats()
            await endpoint.channel.close()
            rss = await settled_rss(proc)
            return proc, serve_s, rss, peak_rss_bytes(proc.pid), stats

        base, base_s, base_rss, base_hwm, _ = await start(["metastore.gateway.cache.enabled=false"], "baseline.log")
        base.stop()
        eager, eager_s, eager_rss, eager_hwm, stats = await start(
            ["metastore.gateway.cache.prewarm=eager", "metastore.gateway.cache.max.partitions=2000000"], "eager.log")
        eager.stop()
        logged = re.search(r"prewarm loaded (\d+) tables, (\d+) partitions at event (\d+) in ([\d.]+)s", eager.output())
    cached = stats.partitions
    figure = {
        "figure": "prewarm", "tables": opts.tables, "per_table": opts.per_table, "partitions": total,
        "load_s": load_s, "via_api_per_table": opts.via_api, "baseline_serving_s": base_s, "eager_serving_s": eager_s,
        "prewarm_logged_s": float(logged.group(4)) if logged else None,
        "baseline_rss": base_rss, "eager_rss": eager_rss, "baseline_hwm": base_hwm, "eager_hwm": eager_hwm,
        "cached_partitions": cached, "cached_tables": stats.tables, "cache_bytes": stats.bytes,
        "first_read_hit": stats.hits >= 1,
        "bytes_per_partition": (eager_rss - base_rss) / cached if cached else float("nan"),
        "frame_bytes_per_partition": stats.bytes / cached if cached else float("nan"),
    }
    print(f"prewarm: {cached:,} partitions, serving after {eager_s:.1f} s (baseline {base_s:.1f} s), "
          f"RSS {eager_rss / 2**20:.0f} MiB vs {base_rss / 2**20:.0f} MiB -> "
          f"{figure['bytes_per_partition']:.0f} bytes per partition", flush=True)
    return figure


# -- the docs section -----------------------------------------------------------------------------------


def _command(opts: argparse.Namespace, figure: str) -> str:
    base = "python -m loadtest.bench_cache --only " + figure
    if figure == "hit":
        return base + f" --users {','.join(map(str, opts.users))} --duration {opts.duration:g}"
    if figure == "lag":
        return base + f" --commits {opts.commits}"
    return base + f" --tables {opts.tables} --per-table {opts.per_table}"


async def _main_async(opts: argparse.Namespace) -> int:
    results = Path(opts.results_dir)
    results.mkdir(parents=True, exist_ok=True)
    with workdir() as root:
        async with postgres(root / "pg", dsn=opts.dsn, fast=False) as admin_dsn:
            meta = {"machine": machine(), "pg_version": await probes.server_version(admin_dsn)}
            runners = {"hit": figure_hit, "lag": figure_lag, "prewarm": figure_prewarm}
            for name in opts.only:
                window = MachineWindow()
                figure = await runners[name](admin_dsn, root, opts, results)
                figure["load"] = window.close().as_dict()
                figure["command"] = _command(opts, name)
                figure["measured"] = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
                figure["machine"] = meta["machine"]
                figure["pg_version"] = meta["pg_version"]
                (results / f"{name}.json").write_text(json.dumps(figure, indent=1))
    if opts.out:
        write_docs(Path(opts.out), results, meta)
        print(f"wrote the bench:cache section of {opts.out}", flush=True)
    return 0


def plot_hit(figure: dict[str, Any], path: Path) -> str:
    return line_chart(path, "Cache hit share per second, 95/5 read/write mix, 2 gateways", "seconds since start",
                 "reads served by the caches (%)",
                 [(f"{run['users']} users ({100 * run['share']:.1f}% overall)",
                   [p["t"] for p in run["series"] if p["hits"] + p["misses"]],
                   [100 * p["hits"] / (p["hits"] + p["misses"]) for p in run["series"] if p["hits"] + p["misses"]])
                  for run in figure["runs"]])


def plot_lag(figure: dict[str, Any], path: Path) -> str:
    lines = []
    for method, m in figure["methods"].items():
        xs = sorted(m["samples_ms"])
        lines.append((f"{method} (p50 {m['p50_ms']:.1f} ms, p99 {m['p99_ms']:.1f} ms)", xs,
                      [100 * (k + 1) / len(xs) for k in range(len(xs))]))
    return line_chart(path, f"Commit-to-cache-visible lag across gateways, {figure['commits']} commits each (CDF)",
                 "ms after CommitTxn returned on gateway A (log scale)", "commits (%)", lines, log_x=True, step=True)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    return [*report.table(header, rows), ""]


TITLES = {"hit": "Cache hit share under a 95/5 read/write mix",
          "lag": "Commit-to-cache-visible lag across gateways",
          "prewarm": "Prewarm time and resident memory per cached partition"}


def subsections(text: str) -> dict[str, list[str]]:
    """The `### ` subsections of the bench:cache section in the markdown `text`, by title, each its lines
    up to the next subsection or the section's end (none when the section is missing)."""
    start, end = report.markers("cache")
    if start not in text or end not in text:
        return {}
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text[text.index(start):text.index(end)].splitlines():
        if line.startswith("### "):
            current = found.setdefault(line[4:].strip(), [])
        if current is not None:
            current.append(line)
    return found


def render_section(figures: dict[str, dict[str, Any]], meta: dict[str, Any],
                   kept: dict[str, list[str]] | None = None) -> str:
    """The bench:cache section: per figure its command, when, the machine's state, and its table; a figure
    not in `figures` keeps its subsection from `kept` (the document's, by title) when there is one."""
    kept = kept or {}
    m, (start, end) = meta["machine"], report.markers("cache")
    lines = [start, "## The synchronized cache: hit share, commit-to-cache lag, prewarm", "",
             "Produced by `loadtest/bench_cache.py` (its docstring says exactly what runs). Gateways run as separate "
             "`metastore-gateway serve` processes on one embedded PostgreSQL with its default (durable) settings, "
             f"on the same machine as the load generator: {m['nproc']} cores, CPU \"{m['cpu_model']}\", "
             f"{m['mem_gib']} GiB RAM, Linux {m['kernel']}, Python {m['python']}, PostgreSQL "
             f"{meta.get('pg_version', '?')}.", ""]

    def head(title: str, figure: dict[str, Any]) -> list[str]:
        load = describe_load(figure["load"], m["nproc"]) if figure.get("load") else "not recorded"
        return [f"### {title}", "", "```sh", figure["command"], "```", "",
                f"Measured {figure['measured']}; machine state: {load}.", ""]

    if hit := figures.get("hit"):
        lines += head(TITLES["hit"], hit)
        lines += [f"{hit['tables']} ACID tables of {hit['partitions_per_table']:,} partitions, two caching gateways; "
                  "users alternate between them, closed loop, 95 read queries (`GetOpenTxns` → `GetValidWriteIds` → "
                  "`GetPartitionsByNames(100)`) to 5 write txns (`OpenTxns` → `AddPartitions(2)` → "
                  "`AlterPartitions(2 read ones)` → `CommitTxn`); share = `CacheStats` hits / (hits + misses), both "
                  "gateways. Per second: `loadtest/results/bench_cache/hit_share.png`.", ""]
        rows = []
        for r in hit["runs"]:
            reasons: dict[str, int] = {}
            for g in r["per_gateway"]:
                for k, v in g["misses"].items():
                    reasons[k] = reasons.get(k, 0) + v
            rows.append([r["users"], f"{r['duration_s']:.0f}", f"{r['reads_per_s']:.0f}", f"{r['writes_per_s']:.1f}",
                         f"{r['read_p50_ms']:.1f}", f"{r['read_p99_ms']:.1f}", f"{r['hits']:,}",
                         f"{r['misses']:,} ({', '.join(f'{k} {v}' for k, v in sorted(reasons.items())) or 'none'})",
                         r["read_failures"] + r["write_failures"], f"**{100 * r['share']:.2f}%**"])
        lines += _table(["users", "run s", "read queries/s", "write txns/s", "read p50 ms", "read p99 ms",
                         "cache hits", "misses (by reason)", "failures", "hit share"], rows)
    else:
        lines += kept.get(TITLES["hit"], [])
    if lag := figures.get("lag"):
        lines += head(TITLES["lag"], lag)
        lines += ["Gateway A commits a txn that added one partition; t0 is when `CommitTxn` returns. Gateway B "
                  "(warm, default settings) is polled, one commit at a time, nothing else running, until *poller*: "
                  "its `CacheStats.poller_position` ≥ the commit's event id, or *served*: a fresh snapshot's "
                  "`GetPartitionsByNames` of the new partition is answered from its cache (the snapshot is inside "
                  "the lag). Distribution: `loadtest/results/bench_cache/lag.png`.", ""]
        lines += _table(["visible means", "commits", "p50 ms", "p90 ms", "p99 ms", "max ms", "probes (p50)"],
                        [[k, v["n"], f"{v['p50_ms']:.2f}", f"{v['p90_ms']:.2f}", f"**{v['p99_ms']:.2f}**",
                          f"{v['max_ms']:.2f}", f"{v['probes_p50']:.0f}"] for k, v in lag["methods"].items()])
        lines += _table(["CommitTxn p50 ms", "fresh snapshot p50 ms", "B's own poller lag p50 / p99 ms"],
                        [[f"{lag['commit_ms_p50']:.1f}", f"{lag['snapshot_ms_p50']:.1f}",
                          f"{lag['gateway_lag_p50_ms']:.1f} / {lag['gateway_lag_p99_ms']:.1f}"]])
    else:
        lines += kept.get(TITLES["lag"], [])
    if pre := figures.get("prewarm"):
        mib = 2**20
        lines += head(TITLES["prewarm"], pre)
        lines += [f"{pre['tables']} ACID tables × {pre['per_table']:,} partitions = {pre['partitions']:,} (per table "
                  f"{pre['via_api_per_table']:,} through `AddPartitions`, the rest COPYed with the same rows; loading "
                  f"took {pre['load_s']:.0f} s). Then a gateway with the cache disabled (baseline) and one with "
                  "`metastore.gateway.cache.prewarm=eager`, one after the other; each answered one read, then idled "
                  "3 s before VmRSS was read. Bytes per partition = (eager − baseline VmRSS) / partitions cached.", ""]
        lines += _table(["gateway", "spawn → serving s", "VmRSS MiB", "peak VmHWM MiB"],
                        [["cache disabled", f"{pre['baseline_serving_s']:.1f}", f"{pre['baseline_rss'] / mib:.0f}",
                          f"{pre['baseline_hwm'] / mib:.0f}"],
                         ["eager prewarm", f"{pre['eager_serving_s']:.1f}", f"{pre['eager_rss'] / mib:.0f}",
                          f"{pre['eager_hwm'] / mib:.0f}"]])
        logged = pre.get("prewarm_logged_s")
        lines += _table(["partitions cached", "tables", "prewarm as logged s", "**bytes per partition**",
                         "of which frames", "first read a hit"],
                        [[f"{pre['cached_partitions']:,}", pre["cached_tables"],
                          "–" if logged is None else f"{logged:.1f}", f"**{pre['bytes_per_partition']:.0f}**",
                          f"{pre['frame_bytes_per_partition']:.0f}", "yes" if pre["first_read_hit"] else "NO"]])
    else:
        lines += kept.get(TITLES["prewarm"], [])
    return "\n".join([*lines, end]) + "\n"


def write_docs(out: Path, results: Path, meta: dict[str, Any]) -> None:
    """Rewrite the bench:cache section of `out` from the newest JSON of each figure in `results`; a figure
    with none there (not measured on this machine since its results were cleaned, or in a fresh clone)
    keeps its subsection as `out` has it."""
    figures = {n: json.loads((results / f"{n}.json").read_text()) for n in ("hit", "lag", "prewarm")
               if (results / f"{n}.json").exists()}
    kept = subsections(out.read_text(encoding="utf-8")) if out.exists() else {}
    report.write_section(out, "cache", render_section(figures, meta, kept))


def _csv_ints(value: str) -> list[int]:
    return [int(v) for v in value.split(",") if v]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtest.bench_cache", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="hit,lag,prewarm", type=lambda v: [x for x in v.split(",") if x],
                        help="figures to measure: hit, lag, prewarm (comma-separated; default all)")
    parser.add_argument("--users", default="4,16", type=_csv_ints, help="hit: user counts, one run each (default 4,16)")
    parser.add_argument("--duration", type=float, default=30.0, help="hit: seconds per run (default 30)")
    parser.add_argument("--hit-tables", type=int, default=8)
    parser.add_argument("--hit-partitions", type=int, default=2000, help="hit: partitions per table (default 2000)")
    parser.add_argument("--commits", type=int, default=200, help="lag: commits per method (default 200)")
    parser.add_argument("--tables", type=int, default=20, help="prewarm: tables (default 20)")
    parser.add_argument("--per-table", type=int, default=50_000, help="prewarm: partitions per table (default 50000)")
    parser.add_argument("--via-api", type=int, default=1000, help="prewarm: partitions per table added over gRPC")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dsn", help="PostgreSQL server to create the databases in (default: an embedded one)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="markdown file whose bench:cache section is rewritten "
                                                           "('' to skip)")
    parser.add_argument("--results-dir", default=DEFAULT_RESULTS)
    opts = parser.parse_args(argv)
    unknown = set(opts.only) - {"hit", "lag", "prewarm"}
    if unknown:
        parser.error(f"unknown figure(s): {', '.join(sorted(unknown))}")
    return asyncio.run(_main_async(opts))


if __name__ == "__main__":
    sys.exit(main())
