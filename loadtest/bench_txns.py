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
The section is written by loadtest/bench_txns_report.py.
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
from pathlib import Path
from typing import Any, Sequence

import asyncpg
import grpc

from loadtest import benchdoc, pg_probes, probes
from loadtest.bench_txns_report import SECTION_END as SECTION_END  # re-exported: the section's markers
from loadtest.bench_txns_report import SECTION_START as SECTION_START
from loadtest.bench_txns_report import (
    REPO, REQUEST, UNSAFE_FAST_CONF, ModeInfo, Options, RunSummary, jsonable, render_from_json, render_section,
)
from loadtest.config import RunConfig
from loadtest.gateway_process import GatewayProcess
from loadtest.harness import new_workdir
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

DEFAULT_OUT = "docs/benchmarks.md"
DEFAULT_RESULTS = "loadtest/results/bench_txns"


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


# -- measurements on the side (loadtest/pg_probes.py) ----------------------------------------------------


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


async def run_mode(opts: Options, mode: str) -> tuple[ModeInfo, list[RunResult]]:
    """Start one gateway (fresh embedded PostgreSQL or `opts.dsn`), create the table, run every client
    count against it, stop it and clean up."""
    tmp = new_workdir("msgw-bench-txns-")
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


# -- what the report records beside the figures --------------------------------------------------------


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
    json_path.write_text(json.dumps(jsonable({
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
