"""Small write transactions per second against one gateway process, at 1 and 16 concurrent clients.

    python -m loadtest.bench_txns                      # 20 s per client count, writes docs/benchmarks.md
    python -m loadtest.bench_txns --duration 5 --clients 1,4,16 --fsync on

One write transaction is what a Hive writer does for a small insert into a partitioned ACID table:
`OpenTxns(num_txns=1)` -> `AllocateTableWriteIds` -> `AddPartitions` (10 new partitions, `txn_id` set)
-> `CommitTxn`, issued back to back by one client and timed as one request, "write-txn(10 partitions)".
Clients run a closed loop without think time, each with its own gRPC channel, in load-generator worker
processes (loadtest.run_load).

Without `--dsn` the gateway runs as its own OS process (`python -m gateway.cli serve --port 0
--data-dir <tmp>`) on a fresh embedded PostgreSQL in a temporary directory, removed afterwards. By
default it does so twice: durable (fsync on: PostgreSQL's and the gateway's default) and with
`--conf metastore.gateway.embedded.unsafe.fast=true` (fsync, synchronous_commit and full_page_writes
off), so the report shows how much of the time is the commit's WAL flush. With `--dsn` one gateway
serves from that PostgreSQL as it is configured, in a database-per-run catalog that is dropped at the
end.

Besides the client-side numbers, every run measures on the server side, over the same window:
* CPU seconds of the gateway process, of the PostgreSQL processes (when PostgreSQL is local), of the
  load generator and of the whole machine (/proc), as cores in use;
* WAL fsyncs per database commit (pg_stat_io; both counters are flushed together by each backend, so
  the ratio is exact even though either count lags by up to a second) and WAL bytes per transaction;
* what the gateway's PostgreSQL backends are doing, sampled from pg_stat_activity every 25 ms: running,
  waiting for a WAL flush, waiting for a row lock (and on which statement), or idle in a transaction
  while the gateway works.

The markdown section between `<!-- bench:txns:start -->` and `<!-- bench:txns:end -->` of `--out` is
replaced (the file and the markers are created when missing); the loadtest report (CSV, time series,
PNG) and every measurement (JSON) go to `--results-dir` (default loadtest/results/bench_txns, git-ignored).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime as dt
import json
import math
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import asyncpg
import grpc

from loadtest import benchdoc, pg_probes, probes
from loadtest.config import RunConfig
from loadtest.gateway_process import GatewayProcess
from loadtest.grpc_user import GrpcUser
from loadtest.progress import ProgressLine
from loadtest.report import matplotlib_available, write_report
from loadtest.results import LiveView, RunResult
from loadtest.runner import run_load
from loadtest.users import constant, task
from protos.metastore.v1 import catalog_pb2 as cpb
from protos.metastore.v1 import catalog_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc

REPO = Path(__file__).resolve().parent.parent
REQUEST = "write-txn(10 partitions)"
SECTION_START, SECTION_END = benchdoc.markers("txns")
DEFAULT_OUT = "docs/benchmarks.md"
DEFAULT_RESULTS = "loadtest/results/bench_txns"
UNSAFE_FAST_CONF = "metastore.gateway.embedded.unsafe.fast=true"
COMMITS_PER_TXN = 4  # OpenTxns, AllocateTableWriteIds, AddPartitions, CommitTxn: one database transaction each


# -- the simulated client ------------------------------------------------------------------------------


class WriteTxnUser(GrpcUser):
    """One Hive-like writer: each task is one small write transaction on the benchmark's table.

    Partition values are unique per run (`options["tag"]`), user and iteration: ds=<tag>u<user_id>,
    n=<iteration * partitions + i>. A transaction that fails is aborted (unmeasured) and the failure
    is recorded under the request's name."""

    wait_time = constant(0.0)
    call_timeout_s = 30.0

    async def on_start(self) -> None:
        await super().on_start()
        self.txns = transactions_pb2_grpc.TransactionsStub(self.channel)
        self.catalog = catalog_pb2_grpc.CatalogStub(self.channel)
        self.db_name = str(self.options["db"])
        self.table_name = str(self.options["table"])
        self.partitions = int(self.options.get("partitions", 10))
        self.ds = f"{self.options.get('tag', 'run')}u{self.user_id}"
        self.iteration = 0
        self.hostname = socket.gethostname()

    @task
    async def write_txn(self) -> None:
        first = self.iteration * self.partitions
        self.iteration += 1
        parts = [cpb.Partition(values=[self.ds, str(first + i)]) for i in range(self.partitions)]
        timeout = self.call_timeout_s
        txn_id = 0
        committed = False
        try:
            async with self.measure(REQUEST) as m:
                opened = await self.txns.OpenTxns(
                    tpb.OpenTxnsRequest(num_txns=1, user="bench", hostname=self.hostname, agent_info="bench_txns"),
                    timeout=timeout)
                txn_id = opened.txn_ids[0]
                await self.txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(
                    txn_ids=[txn_id], db_name=self.db_name, table_name=self.table_name), timeout=timeout)
                added = await self.catalog.AddPartitions(cpb.AddPartitionsRequest(
                    db_name=self.db_name, table_name=self.table_name, partitions=parts, txn_id=txn_id), timeout=timeout)
                await self.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn_id), timeout=timeout)
                committed = True
                m.items = len(added.partitions)
                if m.items != self.partitions:
                    m.fail("AddPartitions added fewer partitions than asked")
        except Exception:
            if txn_id and not committed:
                try:
                    await self.txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[txn_id]), timeout=timeout)
                except grpc.aio.AioRpcError:
                    pass
            raise


# -- the gateway under test ----------------------------------------------------------------------------




# -- measurements on the side --------------------------------------------------------------------------

class ProbeSink:
    """The run's progress sink: brackets the load window for `probe`, then forwards to `inner`."""

    def __init__(self, inner: Any, probe: pg_probes.RunProbe, run_time_s: float) -> None:
        self._inner = inner
        self._probe = probe
        self._run_time_s = run_time_s

    def update(self, view: LiveView) -> None:
        if not self._probe.started.is_set() and view.elapsed_s >= 0:
            self._probe.start()
        elif self._probe.started.is_set() and not self._probe.ended.is_set() and view.elapsed_s >= self._run_time_s:
            self._probe.end()
        if self._inner is not None:
            self._inner.update(view)

    def finish(self, view: LiveView) -> None:
        if self._probe.started.is_set() and not self._probe.ended.is_set():
            self._probe.end()
        self._probe.ended.set()
        self._probe.started.set()
        if self._inner is not None:
            self._inner.finish(view)


# -- one benchmark mode: a gateway, a table, the runs ----------------------------------------------------


@dataclass
class RunSummary:
    mode: str
    clients: int
    workers: int
    duration_s: float
    txns: int
    failures: int
    errors: dict[str, int]
    partitions: int
    txns_per_s: float
    partitions_per_s: float
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    worker_errors: list[str]
    cpu: dict[str, float]
    wal_fsyncs_per_commit: float
    wal_fsyncs_per_txn: float
    commits_per_txn: float
    wal_bytes_per_txn: float
    wait_profile: dict[str, float]
    samples: int
    seq_waiter_share: float
    discarded_other_cores: list[float] = field(default_factory=list)


@dataclass
class ModeInfo:
    mode: str
    conf: list[str]
    pg_version: str
    pg_settings: dict[str, str]
    gateway_settings: dict[str, Any]
    fdatasync: dict[str, float] | None
    runs: list[RunSummary] = field(default_factory=list)


async def _setup_catalog(address: str, db_name: str, table_name: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        await asyncio.wait_for(channel.channel_ready(), 20)
        catalog = catalog_pb2_grpc.CatalogStub(channel)
        await catalog.CreateDatabase(cpb.CreateDatabaseRequest(database=cpb.Database(name=db_name)), timeout=30)
        await catalog.CreateTable(cpb.CreateTableRequest(table=cpb.Table(
            db_name=db_name, name=table_name, table_type=cpb.MANAGED, transactional=True,
            columns=[cpb.FieldSchema(name="id", type="bigint"), cpb.FieldSchema(name="payload", type="string")],
            partition_keys=[cpb.FieldSchema(name="ds", type="string"), cpb.FieldSchema(name="n", type="int")],
            sd=cpb.StorageDescriptor(input_format="org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
                                     output_format="org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
                                     serde=cpb.SerDeInfo(serialization_lib="org.apache.hadoop.hive.ql.io.orc.OrcSerde")))),
            timeout=30)


async def _drop_catalog(address: str, db_name: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        await asyncio.wait_for(channel.channel_ready(), 20)
        await catalog_pb2_grpc.CatalogStub(channel).DropDatabase(
            cpb.DropDatabaseRequest(name=db_name, cascade=True, if_exists=True), timeout=60)


def _summary(mode: str, clients: int, workers: int, result: RunResult, probe: pg_probes.RunProbe,
             before: dict[str, int] | None, after: dict[str, int] | None) -> RunSummary:
    stats = result.stats.get(REQUEST)
    nan = math.nan
    if stats is None or stats.requests == 0:
        txns = failures = parts = 0
        errors: dict[str, int] = {}
        p50 = p95 = p99 = mean = mx = nan
    else:
        txns, failures, parts, errors = stats.requests - stats.failures, stats.failures, stats.items, dict(stats.errors)
        p50, p95, p99 = (v * 1e3 for v in stats.latency.percentiles((50, 95, 99)))
        mean, mx = stats.latency.mean_s * 1e3, stats.latency.max_s * 1e3
    duration = result.duration_s
    fsync_per_commit = fsync_per_txn = commits_per_txn = wal_per_txn = nan
    if before and after:
        d_commits = after["commits"] - before["commits"]
        d_fsync = after["wal_fsyncs"] - before["wal_fsyncs"]
        if d_commits > 0:
            fsync_per_commit = d_fsync / d_commits
        if txns:
            commits_per_txn = d_commits / txns
            fsync_per_txn = d_fsync / txns
            wal_per_txn = (after["wal_bytes"] - before["wal_bytes"]) / txns
    return RunSummary(
        mode=mode, clients=clients, workers=workers, duration_s=duration, txns=txns, failures=failures, errors=errors,
        partitions=parts, txns_per_s=txns / duration if duration > 0 else nan,
        partitions_per_s=parts / duration if duration > 0 else nan, mean_ms=mean, p50_ms=p50, p95_ms=p95, p99_ms=p99,
        max_ms=mx, worker_errors=list(result.worker_errors), cpu=probe.cpu(),
        wal_fsyncs_per_commit=fsync_per_commit, wal_fsyncs_per_txn=fsync_per_txn, commits_per_txn=commits_per_txn,
        wal_bytes_per_txn=wal_per_txn, wait_profile=probe.wait_profile(), samples=probe.samples,
        seq_waiter_share=probe.seq_waiter_samples / probe.samples if probe.samples else math.nan)


@dataclass(frozen=True)
class Options:
    duration_s: float
    clients: tuple[int, ...]
    out: Path
    results_dir: Path
    dsn: str
    fsync_modes: tuple[str, ...]
    workers: int
    partitions: int
    gateway_conf: tuple[str, ...]
    progress: bool
    plot: bool
    pause_s: float
    max_other_cores: float = 0.25
    retries: int = 3
    quiet_wait_s: float = 300.0


async def run_mode(opts: Options, mode: str) -> tuple[ModeInfo, list[RunResult]]:
    """Start one gateway (fresh embedded PostgreSQL or `opts.dsn`), create the table, run every client
    count against it, stop it and clean up."""
    tmp = Path(tempfile.mkdtemp(prefix="msgw-bench-txns-"))
    tmp.chmod(0o755)
    conf = list(opts.gateway_conf)
    if mode == "off":
        conf.append(UNSAFE_FAST_CONF)
    args = [a for c in conf for a in ("--conf", c)]
    fsync_probe = None
    if opts.dsn:
        args += ["--dsn", opts.dsn]
    else:
        data_dir = tmp / "data"
        data_dir.mkdir()
        args += ["--data-dir", str(data_dir)]
        if mode == "on":
            fsync_probe = pg_probes.fdatasync_probe(data_dir)
    gateway = GatewayProcess(args, tmp / "gateway.log")
    stats_conn: asyncpg.Connection | None = None
    db_name = f"bench_txns_{dt.datetime.now(dt.timezone.utc):%Y%m%d%H%M%S}_{os.getpid()}"
    created = False
    try:
        address = await asyncio.to_thread(gateway.wait_serving)
        dsn = opts.dsn or gateway.dsn
        stats_conn, datname, postmaster = await pg_probes.connect_stats(dsn)
        pg_version = await stats_conn.fetchval("SHOW server_version")
        pg_settings = {name: await stats_conn.fetchval(f"SHOW {name}") for name in
                       ("fsync", "synchronous_commit", "full_page_writes", "wal_sync_method", "shared_buffers")}
        from gateway.config import load_settings

        gw_settings = load_settings(overrides=dict(item.split("=", 1) for item in conf))
        info = ModeInfo(mode=mode, conf=conf, pg_version=pg_version, pg_settings=pg_settings,
                        gateway_settings={"pool_max_size": gw_settings.pool_max_size,
                                          "max_concurrent_rpcs": gw_settings.max_concurrent_rpcs},
                        fdatasync=fsync_probe)
        await _setup_catalog(address, db_name, "writes")
        created = True
        results = []
        before = await pg_probes.wal_stats(stats_conn, datname)
        for clients in opts.clients:
            label = f"fsync={mode} c={clients}" if mode in ("on", "off") else f"c={clients}"
            workers = min(opts.workers, clients)
            config = RunConfig(users=clients, run_time_s=opts.duration_s, workers=workers, stop_timeout_s=5.0)
            discarded: list[float] = []
            while True:
                probe = pg_probes.RunProbe(gateway.proc.pid, postmaster, stats_conn, datname)
                sink = ProbeSink(ProgressLine(label) if opts.progress else None, probe, opts.duration_s)
                sampler = asyncio.create_task(probe.sample())
                try:
                    result = await run_load(WriteTxnUser, address, config, target=label, progress=sink, options={
                        "db": db_name, "table": "writes", "partitions": opts.partitions,
                        "tag": f"c{clients}a{len(discarded)}"})
                finally:
                    probe.ended.set()
                    probe.started.set()
                    await sampler
                # Idle backends flush their pg_stat counters after 10 s (PGSTAT_IDLE_INTERVAL); wait that out so
                # the counters read next hold exactly this run (and the next run starts on a quiet server).
                await asyncio.sleep(opts.pause_s)
                after = await pg_probes.wal_stats(stats_conn, datname)
                summary = _summary(mode, clients, workers, result, probe, before, after)
                before = after
                other = summary.cpu.get("other", 0.0)
                if other <= opts.max_other_cores or len(discarded) >= opts.retries:
                    break
                discarded.append(round(other, 3))
                print(f"bench_txns: other processes used {other:.2f} cores during {label}; repeating it "
                      f"(attempt {len(discarded) + 1} of {opts.retries + 1}) once the machine is quiet",
                      file=sys.stderr)
                await asyncio.to_thread(probes.wait_quiet, opts.max_other_cores, opts.quiet_wait_s)
            summary.discarded_other_cores = discarded
            results.append(result)
            info.runs.append(summary)
        return info, results
    finally:
        if stats_conn is not None:
            await stats_conn.close()
        if created and opts.dsn:
            try:
                await _drop_catalog(gateway.address, db_name)
            except Exception as exc:  # noqa: BLE001 - cleanup must not hide the run's outcome
                print(f"bench_txns: could not drop database {db_name}: {exc!r}", file=sys.stderr)
        code = await asyncio.to_thread(gateway.stop)
        if code not in (0, None):
            print(f"bench_txns: the gateway exited with {code}:\n{gateway.log_path.read_text()[-4000:]}",
                  file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)


# -- the report ----------------------------------------------------------------------------------------


def code_version() -> dict[str, Any]:
    """The commit under test and how many files of the server differ from it (read-only git calls)."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10,
                                  check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    commit = git("rev-parse", "--short", "HEAD")
    changed = git("status", "--porcelain", "--", "gateway", "store", "poller", "protos")
    return {"commit": commit, "server_files_changed": len(changed.splitlines()) if changed else 0}


def _num(value: float, digits: int = 0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}"


def _ms(value: float) -> str:
    if math.isnan(value):
        return "–"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _mode_label(info: ModeInfo) -> str:
    s = info.pg_settings
    if info.mode == "on":
        return f"durable: fsync={s['fsync']}, synchronous_commit={s['synchronous_commit']}"
    if info.mode == "off":
        return f"unsafe fast: fsync={s['fsync']}, synchronous_commit={s['synchronous_commit']}"
    return f"your server: fsync={s['fsync']}, synchronous_commit={s['synchronous_commit']}"


def _ratio(modes: list[ModeInfo], mode: str, metric: str) -> float:
    info = next((m for m in modes if m.mode == mode), None)
    if info is None or len(info.runs) < 2:
        return math.nan
    lo, hi = min(info.runs, key=lambda r: r.clients), max(info.runs, key=lambda r: r.clients)
    a, b = getattr(lo, metric), getattr(hi, metric)
    return b / a if a and not math.isnan(a) and not math.isnan(b) else math.nan


def _run(modes: list[ModeInfo], mode: str, clients: int) -> RunSummary | None:
    for m in modes:
        if m.mode == mode:
            for r in m.runs:
                if r.clients == clients:
                    return r
    return None


def _lock_waits(profile: Mapping[str, float]) -> dict[str, float]:
    """Average backends waiting for a lock, by the statement that waits (Lock:tuple and Lock:transactionid
    waits on the same statement are one row-lock queue)."""
    out: dict[str, float] = {}
    for k, v in profile.items():
        m = re.match(r"lock wait \(Lock:\w+\) in (.*)", k)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0.0) + v
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def interpretation(modes: list[ModeInfo], nproc: int) -> list[str]:
    """Sentences computed from the measurements, so a re-run on another machine keeps them true.
    Mechanisms named here come from the code (store/events.py, store/txns.py), not from the numbers."""
    out: list[str] = []
    on = next((m for m in modes if m.mode == "on"), None)
    off = next((m for m in modes if m.mode == "off"), None)
    main = on or off or (modes[0] if modes else None)
    if main is None or not main.runs:
        return out
    lo = min(r.clients for r in main.runs)
    hi = max(r.clients for r in main.runs)
    r_lo, r_hi = _run(modes, main.mode, lo), _run(modes, main.mode, hi)
    assert r_lo is not None and r_hi is not None
    plural = "s" if hi > 1 else ""
    if hi != lo:
        ratio = _ratio(modes, main.mode, "txns_per_s")
        head = ("More clients, fewer transactions." if ratio < 0.95 else
                "Concurrency barely pays." if ratio < 2 else "Concurrency.")
        out.append(
            f"**{head}** {hi} clients commit {ratio:.2f}× the transactions per second of {lo} "
            f"({_num(r_hi.txns_per_s)} vs {_num(r_lo.txns_per_s)} txns/s) while each transaction's median latency "
            f"goes from {_ms(r_lo.p50_ms)} ms to {_ms(r_hi.p50_ms)} ms.")
    # 1 client: one request in flight, so average backends in a state = share of wall time.
    single = _run(modes, main.mode, 1)
    if single is not None and single.wait_profile:
        prof = single.wait_profile
        in_txn = sum(v for k, v in prof.items() if k != "idle")
        out.append(
            f"**One client ({main.mode if main.mode != 'dsn' else 'your server'}).** With one request in flight, the "
            f"samples are shares of time: a database transaction is open {100 * in_txn:.0f}% of the time — "
            f"{100 * prof.get('idle in transaction (waiting for the gateway)', 0):.0f}% idle in the transaction "
            f"waiting for the gateway's next statement, "
            f"{100 * prof.get('running (on CPU or runnable)', 0):.0f}% executing, "
            f"{100 * prof.get('WAL fsync (IO:WalSync)', 0):.0f}% in the commit's WAL fsync — and "
            f"{100 * max(0.0, 1 - in_txn):.0f}% of the time no transaction is open (gRPC, the gateway's Python code "
            f"outside transactions, the client)."
            + (f" The gateway process was on CPU {single.cpu['gateway']:.2f} of the time "
               f"({1e3 * single.cpu['gateway'] / single.txns_per_s:.1f} ms per transaction of the "
               f"{_ms(single.mean_ms)} ms mean), PostgreSQL {_num(single.cpu['postgres'], 2)}: for one client the "
               f"time goes mostly to the gateway's own processing."
               if single.cpu and single.txns_per_s and single.cpu["gateway"] > 0.5 else ""))
    if on is not None and off is not None:
        counts = (lo, hi) if hi != lo else (lo,)
        parts = []
        for clients in counts:
            a, b = _run(modes, "on", clients), _run(modes, "off", clients)
            if a is None or b is None or math.isnan(a.mean_ms) or math.isnan(b.mean_ms):
                continue
            share = 1 - b.mean_ms / a.mean_ms
            parts.append(f"at {clients} client{'s' if clients > 1 else ''} {_num(b.txns_per_s)} instead of "
                         f"{_num(a.txns_per_s)} txns/s (mean {_ms(b.mean_ms)} instead of {_ms(a.mean_ms)} ms, "
                         + (f"so flushes are ~{100 * share:.0f}% of a durable transaction's time)" if share >= 0.02
                            else "no gain: the flushes are not what the transactions wait for)"))
        if parts:
            small = all(r_off.mean_ms > 0.7 * r_on.mean_ms for c in counts
                        if (r_on := _run(modes, "on", c)) is not None and (r_off := _run(modes, "off", c)) is not None)
            out.append(("**fsync is a small share.**" if small else "**fsync.**")
                       + " With fsync off (same gateway, same load) it does " + "; ".join(parts) + ".")
        fd = on.fdatasync
        r_on_hi = _run(modes, "on", hi)
        if r_on_hi is not None and not math.isnan(r_on_hi.wal_fsyncs_per_txn):
            disk = (f"An 8 KiB write + fdatasync on this disk takes {fd['mean_ms']:.2f} ms. " if fd else "")
            if r_on_hi.wal_fsyncs_per_txn >= COMMITS_PER_TXN - 0.2:
                out.append(
                    f"**No group commit.** {disk}Durable runs made {r_on_hi.wal_fsyncs_per_txn:.2f} WAL fsyncs per "
                    f"transaction at {hi} client{plural}: one for each of the {COMMITS_PER_TXN} writing commits "
                    f"(one per RPC), never shared. Every write appends its event last and keeps the "
                    f"`notification_sequence` row "
                    f"locked until its commit is flushed (store/sql/events.py), so no two writing commits ever wait "
                    f"for the disk together.")
            else:
                out.append(f"**Group commit.** {disk}Durable runs made {r_on_hi.wal_fsyncs_per_txn:.2f} WAL fsyncs per "
                           f"transaction at {hi} client{plural} for {COMMITS_PER_TXN} writing commits.")
    if r_hi.commits_per_txn > COMMITS_PER_TXN + 0.5 and not math.isnan(r_lo.commits_per_txn):
        out.append(
            f"**Read-only commits.** PostgreSQL counted {r_lo.commits_per_txn:.1f} (at {lo} client) and "
            f"{r_hi.commits_per_txn:.1f} (at {hi}) commits in the gateway's database per transaction, of which "
            f"{COMMITS_PER_TXN} write; the others are read-only statements — among them the reset query asyncpg's pool "
            f"sends each time an RPC returns its connection, and the gateway's own readers of the notification log — "
            f"round trips and CPU, but no WAL flush.")
    for info in [m for m in (on, off) if m is not None] or [main]:
        r = _run(modes, info.mode, hi)
        if r is None or hi == 1 or not r.wait_profile:
            continue
        prof = r.wait_profile
        locks = _lock_waits(prof)
        lock_all = sum(locks.values())
        flush = prof.get("WAL fsync (IO:WalSync)", 0.0) + prof.get(
            "waiting for another backend's WAL flush (LWLock:WALWrite)", 0.0)
        in_txn = sum(v for k, v in prof.items() if k != "idle")
        top = ", ".join(f"`{k}` {v:.2f}" for k, v in list(locks.items())[:3])
        pool = info.gateway_settings["pool_max_size"]
        idle_tx = prof.get("idle in transaction (waiting for the gateway)", 0.0)
        cap = (f", so at most {pool} of the {hi} requests can be in the database at a time"
               if hi > pool and in_txn > 0.8 * pool else "")
        text = (
            f"**{hi} clients, {_mode_label(info)}.** On average {in_txn:.2f} of the gateway's {pool} pooled "
            f"connections are inside a transaction{cap}. {lock_all:.2f} of them wait for a row lock"
            + (f" ({top})" if top else "")
            + f", {idle_tx:.2f} are idle in a transaction, holding their locks while the gateway gets to their next "
            f"statement, {prof.get('running (on CPU or runnable)', 0):.2f} are executing and {flush:.2f} are in a WAL "
            f"flush.")
        if r.seq_waiter_share >= 0.5:
            text += (
                f" A backend was queued on the `notification_sequence` row in {100 * r.seq_waiter_share:.0f}% of the "
                f"samples. Every write locks that row as its last step and holds it through three more round trips to "
                f"the gateway (event insert, NOTIFY, COMMIT) and the commit itself, so writes pass it one at a time"
                + ("; " if len(locks) > 1 else ".")
                + ("the transactions waiting in "
                   + ", ".join(f"`{k}`" for k in locks if "notification_sequence" not in k)
                   + " wait for row locks that earlier transactions took first and keep until they commit, i.e. "
                     "until after their own turn on `notification_sequence`." if len(locks) > 1 else ""))
        cpu = r.cpu
        if cpu and r.txns_per_s:
            text += (f" CPU: the machine was {cpu['machine']:.2f} of {nproc} cores busy — gateway process "
                     f"{cpu['gateway']:.2f} (its Python event loop can use about one), PostgreSQL "
                     f"{_num(cpu['postgres'], 2)}, load generator {cpu['generator']:.2f}; per transaction "
                     f"{1e3 * cpu['gateway'] / r.txns_per_s:.1f} ms of gateway CPU and "
                     f"{_num(1e3 * cpu['postgres'] / r.txns_per_s, 1)} ms of PostgreSQL CPU.")
        out.append(text)
    r = _run(modes, main.mode, hi)
    r_off = _run(modes, "off", hi)
    if r is not None and r.cpu and hi > 1 and r.seq_waiter_share >= 0.5:
        cpu_free = r.cpu["machine"] < 0.9 * nproc and r.cpu["gateway"] < 0.9
        fsync_small = main.mode == "on" and r_off is not None and r_off.txns_per_s < 1.25 * r.txns_per_s
        if cpu_free:
            out.append(
                f"**So at {hi} clients** neither the cores nor the gateway's event loop are saturated"
                + (" and turning fsync off gains little" if fsync_small else "")
                + f": the rate is set by writes passing the row locks one at a time, each lock held across round "
                f"trips to a gateway process using {r.cpu['gateway']:.2f} cores (the "
                f"{r.wait_profile.get('idle in transaction (waiting for the gateway)', 0):.2f} transactions idle "
                f"in the database are waiting for it).")
    return out


def _wait_table(modes: list[ModeInfo], min_share: float = 0.02) -> str:
    runs = [r for m in modes for r in m.runs]
    keys: dict[str, None] = {}
    for r in runs:
        for k, v in r.wait_profile.items():
            if v >= min_share:
                keys[k] = None
    order = sorted(keys, key=lambda k: -max(r.wait_profile.get(k, 0.0) for r in runs))
    header = "| backend state (average number of backends) | " + " | ".join(
        f"fsync={r.mode} c={r.clients}" if r.mode in ("on", "off") else f"c={r.clients}" for r in runs) + " |"
    lines = [header, "| --- |" + " ---: |" * len(runs)]
    for k in order:
        lines.append(f"| {k} | " + " | ".join(f"{r.wait_profile.get(k, 0.0):.2f}" for r in runs) + " |")
    other = [sum(v for k, v in r.wait_profile.items() if k not in keys) for r in runs]
    if any(o > 0 for o in other):
        lines.append("| other | " + " | ".join(f"{o:.2f}" for o in other) + " |")
    lines.append("| *samples with a backend queued on `notification_sequence`* | " + " | ".join(
        f"{100 * r.seq_waiter_share:.0f}%" if not math.isnan(r.seq_waiter_share) else "–" for r in runs) + " |")
    lines.append("| *samples* | " + " | ".join(f"{r.samples:,}" for r in runs) + " |")
    return "\n".join(lines) + "\n"


def render_section(command: str, when: dt.datetime, machine: Mapping[str, Any], modes: list[ModeInfo],
                   opts: Options, files: Mapping[str, str]) -> str:
    first = modes[0]
    lines = [
        SECTION_START,
        "## Small write transactions per second",
        "",
        f"One write transaction is what a Hive writer does for a small insert into a partitioned ACID table: "
        f"`OpenTxns(num_txns=1)` → `AllocateTableWriteIds` → `AddPartitions` ({opts.partitions} new partitions, "
        f"`txn_id` set) → `CommitTxn`, issued back to back by one client and timed together as one request, "
        f"`{REQUEST}`. Closed loop, no think time, one gRPC channel per client. Produced by "
        f"`loadtest/bench_txns.py` with",
        "",
        "```sh",
        command,
        "```",
        "",
        f"on {when:%Y-%m-%d %H:%M} UTC, {opts.duration_s:g} s per client count.",
        "",
        f"- **Machine:** {machine['nproc']} cores (`nproc`), CPU \"{machine['cpu_model']}\" (/proc/cpuinfo), "
        f"Linux {machine['kernel']}, Python {machine['python']}, PostgreSQL {first.pg_version}.",
    ]
    code = machine.get("code") or {}
    if code.get("commit"):
        changed = code["server_files_changed"]
        lines.append(f"- **Code:** commit `{code['commit']}`" + (
            f" plus uncommitted changes in {changed} file{'s' if changed > 1 else ''} under gateway/, store/, "
            "poller/, protos/." if changed else ", no uncommitted changes under gateway/, store/, poller/, protos/."))
    if opts.dsn:
        lines.append("- **PostgreSQL:** the server given with `--dsn`, as configured "
                     f"({', '.join(f'{k}={v}' for k, v in first.pg_settings.items())}).")
    else:
        described = []
        for m in modes:
            settings = ", ".join(f"{k}={v}" for k, v in m.pg_settings.items())
            if m.mode == "on":
                described.append(f"*durable* is PostgreSQL's and the gateway's default configuration ({settings})")
            else:
                described.append(f"*unsafe fast* is the gateway started with `--conf {UNSAFE_FAST_CONF}` ({settings}), "
                                 f"run to measure what the WAL flushes cost")
        lines.append("- **PostgreSQL:** the embedded server, a fresh cluster in a temporary directory per mode "
                     "(deleted afterwards); " + "; ".join(described) + ".")
        fd = next((m.fdatasync for m in modes if m.fdatasync), None)
        if fd:
            lines.append(f"- **Disk:** 8 KiB write + fdatasync on the data directory's filesystem: "
                         f"{fd['mean_ms']:.2f} ms each ({_num(fd['ops_per_s'])}/s), measured just before the run.")
    lines.append(
        f"- **Processes:** one gateway process (`python -m gateway.cli serve`, asyncio loop, connection pool "
        f"{first.gateway_settings['pool_max_size']}); the load generator in {opts.workers} worker process"
        f"{'es' if opts.workers > 1 else ''} (uvloop) plus the parent script; PostgreSQL; all on the same "
        f"{machine['nproc']} cores.")
    lines += [
        "",
        "| PostgreSQL | clients | txns/s | partitions/s | p50 ms | p95 ms | p99 ms | max ms | failures |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for info in modes:
        label = {"on": "durable (fsync on)", "off": "unsafe fast (fsync off)"}.get(info.mode, "`--dsn` server")
        for r in info.runs:
            lines.append(f"| {label} | {r.clients} | {_num(r.txns_per_s)} | {_num(r.partitions_per_s)} | "
                         f"{_ms(r.p50_ms)} | {_ms(r.p95_ms)} | {_ms(r.p99_ms)} | {_ms(r.max_ms)} | {r.failures:,} |")
    lines.append("")
    ratios = []
    for info in modes:
        if len(info.runs) >= 2:
            lo, hi = min(r.clients for r in info.runs), max(r.clients for r in info.runs)
            label = {"on": "durable", "off": "unsafe fast"}.get(info.mode, "`--dsn`")
            ratios.append(f"×{_ratio(modes, info.mode, 'txns_per_s'):.2f} ({label})")
    if ratios:
        lines += [f"Throughput ratio {hi} clients / {lo} client: " + ", ".join(ratios) + ".", ""]
    lines += [
        "### Where the time goes",
        "",
        "Measured in the same runs, over the load window: CPU from /proc (cores in use), WAL fsyncs and commits "
        "from `pg_stat_io` / `pg_stat_database`, WAL bytes from `pg_current_wal_lsn()`.",
        "",
        "| run | gateway CPU | PostgreSQL CPU | load generator CPU | other processes | machine busy | commits / txn | "
        "WAL fsyncs / txn | WAL KiB / txn |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for info in modes:
        for r in info.runs:
            c = r.cpu
            name = f"fsync={r.mode} c={r.clients}" if r.mode in ("on", "off") else f"c={r.clients}"
            lines.append(
                f"| {name} | {_num(c.get('gateway', math.nan), 2)} | {_num(c.get('postgres', math.nan), 2)} | "
                f"{_num(c.get('generator', math.nan), 2)} | {_num(c.get('other', math.nan), 2)} | "
                f"{_num(c.get('machine', math.nan), 2)} / {machine['nproc']} | "
                f"{_num(r.commits_per_txn, 2)} | {_num(r.wal_fsyncs_per_txn, 2)} | "
                f"{_num(r.wal_bytes_per_txn / 1024, 1)} |")
    busiest_other = max((r.cpu.get("other", 0.0) for m in modes for r in m.runs), default=0.0)
    repeated = [(r, r.discarded_other_cores) for m in modes for r in m.runs if r.discarded_other_cores]
    lines.append("")
    lines.append("*load generator* is its worker process(es) plus this script (which also runs the sampler below); "
                 "*other processes* is whatever else ran on the machine meanwhile (a run during which they used more "
                 f"than {opts.max_other_cores:g} cores is discarded and repeated, up to {opts.retries} times"
                 + (": " + "; ".join(f"fsync={r.mode} c={r.clients} was repeated {len(d)}× (others had used "
                                     + ", ".join(f"{x:.2f}" for x in d) + " cores)" for r, d in repeated)
                    if repeated else "; none was") + ")." + (
                     f" **The machine was not idle: other processes used up to {busiest_other:.2f} cores during a run, "
                     f"so these numbers understate what an idle machine does.**"
                     if busiest_other > opts.max_other_cores else ""))
    lines += [
        "",
        f"What the gateway's PostgreSQL connections were doing, sampled from `pg_stat_activity` every "
        f"{pg_probes.SAMPLE_INTERVAL_S * 1e3:g} ms (average number of backends per state; states under "
        f"0.02 everywhere are summed as *other*):",
        "",
        _wait_table(modes),
    ]
    lines += ["### Interpretation", "",
              "Computed from the measurements above by the script (mechanisms named are the code's, "
              "store/sql/events.py and store/txns.py):", "",
              *(f"- {s}" for s in interpretation(modes, machine['nproc'])), ""]
    if files:
        lines += ["Loadtest report and raw measurements: " + ", ".join(f"`{p}`" for p in files.values()) +
                  " (git-ignored; regenerate with the command above).", ""]
    lines.append(SECTION_END)
    return "\n".join(lines) + "\n"


# -- entry point -----------------------------------------------------------------------------------------


def _client_counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not counts or any(c < 1 for c in counts):
        raise argparse.ArgumentTypeError(f"client counts must be >= 1, got {text!r}")
    return counts


def _fsync_modes(text: str) -> tuple[str, ...]:
    modes = tuple(x.strip() for x in text.split(",") if x.strip())
    if not modes or any(m not in ("on", "off") for m in modes):
        raise argparse.ArgumentTypeError(f"expected on, off or on,off, got {text!r}")
    return modes


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m loadtest.bench_txns",
                                description="Small write transactions per second (open, allocate, add partitions, "
                                            "commit) at several client counts; writes a section of docs/benchmarks.md.")
    p.add_argument("--duration", type=float, default=20.0, metavar="SECONDS", help="load per client count (default 20)")
    p.add_argument("--clients", type=_client_counts, default=(1, 16), metavar="N,N",
                   help="concurrent clients, one run each (default 1,16)")
    p.add_argument("--out", default=DEFAULT_OUT,
                   help=f"markdown file whose section is replaced (default {DEFAULT_OUT})")
    p.add_argument("--results-dir", default=DEFAULT_RESULTS,
                   help=f"where the CSV/PNG/JSON report goes (default {DEFAULT_RESULTS})")
    p.add_argument("--dsn", default="", help="use this PostgreSQL (as configured) instead of a fresh embedded one")
    p.add_argument("--fsync", type=_fsync_modes, default=("on", "off"), metavar="on,off",
                   help="embedded PostgreSQL only: durable (on) and/or unsafe fast (off) runs (default on,off)")
    p.add_argument("--workers", type=int, default=1, help="load-generator worker processes (default 1)")
    p.add_argument("--partitions", type=int, default=10, help="partitions added per transaction (default 10)")
    p.add_argument("--gateway-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="extra --conf for the gateway (repeatable)")
    p.add_argument("--pause", type=float, default=11.0, metavar="SECONDS",
                   help="idle time after each run before PostgreSQL's counters are read; idle backends flush them "
                        "after 10 s (default 11; less makes fsync and commit counts approximate)")
    p.add_argument("--max-other-cores", type=float, default=0.25, metavar="CORES",
                   help="repeat a run during which other processes used more CPU than this (default 0.25)")
    p.add_argument("--retries", type=int, default=3, help="how often a disturbed run is repeated (default 3)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--render", metavar="JSON",
                   help="run nothing: re-render --out's section from a saved bench_txns.json")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    return p


async def run_benchmark(opts: Options) -> tuple[list[ModeInfo], list[RunResult]]:
    modes, results = [], []
    for mode in (("dsn",) if opts.dsn else opts.fsync_modes):
        busy = await asyncio.to_thread(probes.machine_load)
        if busy > 0.3:
            print(f"bench_txns: warning: the machine is already {busy:.2f} cores busy before the {mode} runs; "
                  "results will be lower than on an idle machine", file=sys.stderr)
        info, mode_results = await run_mode(opts, mode)
        modes.append(info)
        results += mode_results
        if opts.progress:
            for r in info.runs:
                print(f"bench_txns: {r.mode} c={r.clients}: {r.txns_per_s:,.1f} txns/s, {r.partitions_per_s:,.0f} "
                      f"partitions/s, p50 {r.p50_ms:.2f} ms, p99 {r.p99_ms:.2f} ms, failures {r.failures}",
                      file=sys.stderr)
    return modes, results


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _floats(value: Any) -> Any:
    if value is None:
        return math.nan
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    return value


def render_from_json(path: Path, out: Path) -> int:
    """Re-render the markdown section from a saved bench_txns.json (same numbers, same command)."""
    data = json.loads(path.read_text())
    modes = []
    for m in data["modes"]:
        runs = [RunSummary(**{k: (_floats(v) if k in ("cpu", "wait_profile") or v is None else v)
                              for k, v in r.items()}) for r in m.pop("runs")]
        modes.append(ModeInfo(**m, runs=runs))
    o = data["options"]
    opts = Options(**{**o, "clients": tuple(o["clients"]), "fsync_modes": tuple(o["fsync_modes"]),
                      "gateway_conf": tuple(o["gateway_conf"]), "out": Path(o["out"]),
                      "results_dir": Path(o["results_dir"])})
    files = {}
    for name, suffix in (("csv", ".csv"), ("timeseries", "-timeseries.csv"), ("json", ".json"), ("png", ".png")):
        candidate = opts.results_dir / f"bench_txns{suffix}"
        if (REPO / candidate if not candidate.is_absolute() else candidate).exists():
            files[name] = str(candidate)
    when = dt.datetime.fromisoformat(data["date_utc"])
    benchdoc.write_section(out, "txns", render_section(data["command"], when, data["machine"], modes, opts, files))
    print(f"bench_txns: re-rendered {out} from {path}", file=sys.stderr)
    return 0


def _redact(text: str) -> str:
    """postgresql://user:secret@host/db -> postgresql://user:***@host/db (wherever it appears in `text`)."""
    return re.sub(r"(postgres(?:ql)?://[^:/@\s]+):[^@\s]*@", r"\1:***@", text)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(args_list)
    if args.render:
        return render_from_json(Path(args.render), Path(args.out))
    if args.dsn and args.fsync != ("on", "off"):
        print("bench_txns: --fsync applies to the embedded PostgreSQL only; with --dsn the server's own "
              "settings are measured", file=sys.stderr)
        return 2
    if args.workers < 1:
        print("bench_txns: --workers must be at least 1", file=sys.stderr)
        return 2
    opts = Options(duration_s=args.duration, clients=args.clients, out=Path(args.out),
                   results_dir=Path(args.results_dir),
                   dsn=args.dsn, fsync_modes=args.fsync, workers=args.workers, partitions=args.partitions,
                   gateway_conf=tuple(args.gateway_conf), progress=not args.quiet, plot=not args.no_plot,
                   pause_s=args.pause, max_other_cores=args.max_other_cores, retries=max(0, args.retries))
    when = dt.datetime.now(dt.timezone.utc)
    machine = {**probes.machine(), "code": code_version()}
    modes, results = asyncio.run(run_benchmark(opts))

    opts.results_dir.mkdir(parents=True, exist_ok=True)
    report = write_report(results, opts.results_dir, basename="bench_txns",
                          with_plot=opts.plot and matplotlib_available())
    json_path = opts.results_dir / "bench_txns.json"
    # A DSN's password must not end up in the docs: postgresql://user:secret@host -> postgresql://user:***@host
    shown_args = [_redact(a) for a in args_list]
    command = shlex.join(["python", "-m", "loadtest.bench_txns", *shown_args])
    json_path.write_text(json.dumps(_jsonable({
        "command": command, "date_utc": when.isoformat(timespec="seconds"), "machine": machine,
        "options": {k: str(v) if isinstance(v, Path) else _redact(v) if isinstance(v, str) else v
                    for k, v in dataclasses.asdict(opts).items()},
        "modes": [dataclasses.asdict(m) for m in modes],
    }), indent=2) + "\n", encoding="utf-8")

    def shown(p: Path) -> str:
        try:
            return str(p.resolve().relative_to(REPO))
        except ValueError:
            return str(p)

    files = {"csv": shown(report.csv), "timeseries": shown(report.timeseries_csv), "json": shown(json_path)}
    if report.png is not None:
        files["png"] = shown(report.png)
    section = render_section(command, when, machine, modes, opts, files)
    benchdoc.write_section(opts.out, "txns", section)
    print(section if opts.progress else "", end="")
    print(f"bench_txns: wrote {opts.out} and {', '.join(files.values())}", file=sys.stderr)
    failures = sum(r.failures for m in modes for r in m.runs)
    broken = [e for m in modes for r in m.runs for e in r.worker_errors]
    if failures or broken or any(r.txns == 0 for m in modes for r in m.runs):
        print(f"bench_txns: {failures} failed transactions, worker errors: {broken}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # Re-enter through the importable module so the user class pickles as loadtest.bench_txns.WriteTxnUser.
    from loadtest.bench_txns import main as _main

    sys.exit(_main())
