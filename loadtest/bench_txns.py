"""Small write transactions per second against one gateway process, at 1 and 16 concurrent clients.

    python -m loadtest.bench_txns                      # 20 s per client count, writes docs/benchmarks.md
    python -m loadtest.bench_txns --duration 5 --clients 1,4,16 --fsync on

One write transaction is what a Hive writer does for a small insert into a partitioned ACID table:
`OpenTxns(num_txns=1)` -> `AllocateTableWriteIds` -> `AddPartitions` (10 new partitions, `txn_id` set)
-> `CommitTxn`, issued back to back by one client and timed as one request, "write-txn(10 partitions)".
Clients run a closed loop without think time, each with its own gRPC channel, in load-generator worker
processes (loadtest.run_load).

Without `--dsn` the gateway runs as its own OS process (`--data-dir <tmp>`, on `--loop`, by default the
gateway's own default, uvloop) on a fresh embedded PostgreSQL, removed afterwards; by default twice:
durable (fsync on, the default) and with `metastore.gateway.embedded.unsafe.fast=true` (fsync,
synchronous_commit and full_page_writes off), so the report shows what the commit's WAL flush costs.
With `--dsn` one gateway serves from that PostgreSQL as configured, in a database that is dropped at
the end.

Over each run's window it also measures (loadtest.probes): CPU of the gateway, PostgreSQL, the load
generator and the machine as cores in use; WAL fsyncs and commits per transaction (pg_stat_io /
pg_stat_database) and WAL bytes; and what the gateway's backends are doing, sampled from
pg_stat_activity every 25 ms. The section `bench:txns` of `--out` is replaced; the loadtest report
(CSV, time series, PNG) and the measurements (bench_txns.json, which `--render` re-renders from) go to
`--results-dir`.
"""

from __future__ import annotations

import argparse
import asyncio
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

from loadtest import probes, report
from loadtest.engine import RunConfig
from loadtest.gateway_process import GatewayProcess
from loadtest.harness import conf_args, new_workdir
from loadtest.report import matplotlib_available, write_report
from loadtest.runner import run_load
from loadtest.stats import LiveView, ProgressLine, RunResult
from loadtest.users import GrpcUser, constant, task
from protos.metastore.v1 import catalog_pb2 as cpb
from protos.metastore.v1 import catalog_pb2_grpc, transactions_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb

REPO = Path(__file__).resolve().parent.parent
REQUEST = "write-txn(10 partitions)"
SECTION_START, SECTION_END = report.markers("txns")
UNSAFE_FAST_CONF = "metastore.gateway.embedded.unsafe.fast=true"
MODE_LABELS = {"on": "durable (fsync on)", "off": "unsafe fast (fsync off)", "dsn": "`--dsn` server"}
PG_SETTINGS = ("fsync", "synchronous_commit", "full_page_writes", "wal_sync_method", "shared_buffers")
POOL = "datanucleus.connectionPool.maxPoolSize"


class WriteTxnUser(GrpcUser):
    """One Hive-like writer: each task is one small write transaction on the benchmark's table.

    Partition values are unique per run (`options["tag"]`), user and iteration. A transaction that
    fails is aborted (unmeasured) and the failure is recorded under the request's name."""

    wait_time = constant(0.0)
    call_timeout_s = 30.0

    async def on_start(self) -> None:
        await super().on_start()
        self.txns = transactions_pb2_grpc.TransactionsStub(self.channel)
        self.catalog = catalog_pb2_grpc.CatalogStub(self.channel)
        self.db_name, self.table_name = str(self.options["db"]), str(self.options["table"])
        self.partitions = int(self.options.get("partitions", 10))
        self.ds = f"{self.options.get('tag', 'run')}u{self.user_id}"
        self.iteration = 0
        self.hostname = socket.gethostname()

    @task
    async def write_txn(self) -> None:
        first = self.iteration * self.partitions
        self.iteration += 1
        parts = [cpb.Partition(values=[self.ds, str(first + i)]) for i in range(self.partitions)]
        timeout, txn_id, committed = self.call_timeout_s, 0, False
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


class ProbeSink:
    """The run's progress sink: brackets the load window for `probe`, then forwards to `inner`."""

    def __init__(self, inner: ProgressLine | None, probe: probes.RunProbe, run_time_s: float) -> None:
        self._inner, self._probe, self._run_time_s = inner, probe, run_time_s

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


async def _catalog(address: str, db_name: str, *, drop: bool = False) -> None:
    """Create the benchmark's database and its transactional table `writes` (ds string, n int), or drop it."""
    async with grpc.aio.insecure_channel(address) as channel:
        await asyncio.wait_for(channel.channel_ready(), 20)
        catalog = catalog_pb2_grpc.CatalogStub(channel)
        if drop:
            await catalog.DropDatabase(cpb.DropDatabaseRequest(name=db_name, cascade=True, if_exists=True), timeout=60)
            return
        orc = "org.apache.hadoop.hive.ql.io.orc."
        await catalog.CreateDatabase(cpb.CreateDatabaseRequest(database=cpb.Database(name=db_name)), timeout=30)
        await catalog.CreateTable(cpb.CreateTableRequest(table=cpb.Table(
            db_name=db_name, name="writes", table_type=cpb.MANAGED, transactional=True,
            columns=[cpb.FieldSchema(name="id", type="bigint"), cpb.FieldSchema(name="payload", type="string")],
            partition_keys=[cpb.FieldSchema(name="ds", type="string"), cpb.FieldSchema(name="n", type="int")],
            sd=cpb.StorageDescriptor(input_format=orc + "OrcInputFormat", output_format=orc + "OrcOutputFormat",
                                     serde=cpb.SerDeInfo(serialization_lib=orc + "OrcSerde")))), timeout=30)


def gateway_settings(conf: Sequence[str]) -> dict[str, str]:
    """The gateway's effective settings as `metastore-gateway settings` prints them, with `conf` applied."""
    out = subprocess.run([sys.executable, "-m", "gateway.cli", "settings"], cwd=REPO, capture_output=True, text=True,
                         timeout=60, check=True).stdout
    settings = {m.group(1): m.group(2) for m in re.finditer(r"^(\S+)\s+(\S+)", out, re.MULTILINE)}
    return {**settings, **dict(item.split("=", 1) for item in conf)}


def summarize(mode: str, clients: int, result: RunResult, probe: probes.RunProbe,
              before: dict[str, int] | None, after: dict[str, int] | None) -> dict[str, Any]:
    """One run's figures, JSON-ready (NaN as None)."""
    stats, nan = result.stats.get(REQUEST), math.nan
    txns = stats.requests - stats.failures if stats else 0
    p50, p95, p99 = (v * 1e3 for v in stats.latency.percentiles((50, 95, 99))) if stats else (nan, nan, nan)
    per_txn = {"commits_per_txn": nan, "wal_fsyncs_per_txn": nan, "wal_bytes_per_txn": nan}
    if before and after and txns:
        per_txn = {"commits_per_txn": (after["commits"] - before["commits"]) / txns,
                   "wal_fsyncs_per_txn": (after["wal_fsyncs"] - before["wal_fsyncs"]) / txns,
                   "wal_bytes_per_txn": (after["wal_bytes"] - before["wal_bytes"]) / txns}
    d = result.duration_s
    return jsonable({
        "mode": mode, "clients": clients, "duration_s": d, "txns": txns, "failures": stats.failures if stats else 0,
        "errors": dict(stats.errors) if stats else {}, "partitions": stats.items if stats else 0,
        "txns_per_s": txns / d if d > 0 else nan, "partitions_per_s": (stats.items if stats else 0) / d if d else nan,
        "mean_ms": stats.latency.mean_s * 1e3 if stats else nan, "p50_ms": p50, "p95_ms": p95, "p99_ms": p99,
        "max_ms": stats.latency.max_s * 1e3 if stats else nan, "worker_errors": list(result.worker_errors),
        "cpu": probe.cpu(), **per_txn, "wait_profile": probe.wait_profile(), "samples": probe.samples,
        "seq_waiter_share": probe.seq_waiter_samples / probe.samples if probe.samples else nan,
        "discarded_other_cores": []})


async def run_mode(opts: argparse.Namespace, mode: str) -> tuple[dict[str, Any], list[RunResult]]:
    """Start one gateway (fresh embedded PostgreSQL or `opts.dsn`), create the table, run every client
    count against it, stop it and clean up."""
    tmp = new_workdir("msgw-bench-txns-")
    conf = [*opts.gateway_conf, *([UNSAFE_FAST_CONF] if mode == "off" else [])]
    args = [*conf_args(*conf), "--loop", opts.loop]
    fsync_probe = None
    if opts.dsn:
        args += ["--dsn", opts.dsn]
    else:
        (tmp / "data").mkdir()
        args += ["--data-dir", str(tmp / "data")]
        if mode == "on":
            fsync_probe = probes.fdatasync_probe(tmp / "data")
    gateway = GatewayProcess(args, tmp / "gateway.log")
    stats_conn: asyncpg.Connection | None = None
    db_name = f"bench_txns_{dt.datetime.now(dt.timezone.utc):%Y%m%d%H%M%S}_{os.getpid()}"
    created = False
    try:
        address = await asyncio.to_thread(gateway.wait_serving)
        stats_conn, datname, postmaster = await probes.connect_stats(opts.dsn or gateway.dsn)
        settings = await asyncio.to_thread(gateway_settings, conf)
        info: dict[str, Any] = {
            "mode": mode, "conf": conf, "pg_version": await stats_conn.fetchval("SHOW server_version"),
            "pg_settings": {name: await stats_conn.fetchval(f"SHOW {name}") for name in PG_SETTINGS},
            "gateway_settings": {"pool_max_size": int(settings[POOL]), "loop": opts.loop},
            "fdatasync": fsync_probe, "runs": []}
        await _catalog(address, db_name)
        created = True
        results = []
        before = await probes.wal_stats(stats_conn, datname)
        for clients in opts.clients:
            label = f"fsync={mode} c={clients}" if mode != "dsn" else f"c={clients}"
            config = RunConfig(users=clients, run_time_s=opts.duration, workers=min(opts.workers, clients),
                               stop_timeout_s=5.0)
            discarded: list[float] = []
            while True:
                probe = probes.RunProbe(gateway.proc.pid, postmaster, stats_conn, datname)
                sink = ProbeSink(None if opts.quiet else ProgressLine(label), probe, opts.duration)
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
                await asyncio.sleep(opts.pause)
                after = await probes.wal_stats(stats_conn, datname)
                summary = summarize(mode, clients, result, probe, before, after)
                before = after
                other = (summary["cpu"] or {}).get("other") or 0.0
                if other <= opts.max_other_cores or len(discarded) >= opts.retries:
                    break
                discarded.append(round(other, 3))
                print(f"bench_txns: other processes used {other:.2f} cores during {label}; repeating it once the "
                      "machine is quiet", file=sys.stderr)
                await asyncio.to_thread(probes.wait_quiet, opts.max_other_cores, 300.0)
            summary["discarded_other_cores"] = discarded
            results.append(result)
            info["runs"].append(summary)
        return info, results
    finally:
        if stats_conn is not None:
            await stats_conn.close()
        if created and opts.dsn:
            try:
                await _catalog(gateway.address, db_name, drop=True)
            except Exception as exc:  # noqa: BLE001 - cleanup must not hide the run's outcome
                print(f"bench_txns: could not drop database {db_name}: {exc!r}", file=sys.stderr)
        if await asyncio.to_thread(gateway.stop) not in (0, None):
            print(f"bench_txns: the gateway failed:\n{gateway.output()[-4000:]}", file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)


def jsonable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def _n(value: float | None, digits: int = 0) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:,.{digits}f}"


def render_section(data: dict[str, Any]) -> str:
    """The docs section from the saved measurements (bench_txns.json's content)."""
    modes, machine, opts = data["modes"], data["machine"], data["options"]
    runs = [r for m in modes for r in m["runs"]]
    nproc, first, code = machine["nproc"], modes[0], machine.get("code") or {}
    name = {id(r): f"fsync={r['mode']} c={r['clients']}" if r["mode"] != "dsn" else f"c={r['clients']}" for r in runs}
    lines = [SECTION_START, "## Small write transactions per second", "",
             f"One write transaction is what a Hive writer does for a small insert into a partitioned ACID table: "
             f"`OpenTxns(num_txns=1)` → `AllocateTableWriteIds` → `AddPartitions` ({opts['partitions']} new "
             f"partitions, `txn_id` set) → `CommitTxn`, issued back to back by one client and timed together as one "
             f"request, `{REQUEST}`. Closed loop, no think time, one gRPC channel per client. Produced by "
             "`loadtest/bench_txns.py` with", "", "```sh", data["command"], "```", "",
             f"on {data['date_utc'][:16].replace('T', ' ')} UTC, {opts['duration']:g} s per client count.", "",
             f"- **Machine:** {nproc} cores, CPU \"{machine['cpu_model']}\", Linux {machine['kernel']}, Python "
             f"{machine['python']}, PostgreSQL {first['pg_version']}; state while measuring: "
             f"{probes.describe_load(data['load'], nproc) if data.get('load') else 'not recorded'}.",
             f"- **Code:** commit `{code.get('commit', '?')}`"
             + (f" plus uncommitted changes in {code['server_files_changed']} server files." if
                code.get("server_files_changed") else ", no uncommitted server changes."),
             "- **PostgreSQL:** " + ("the server given with `--dsn`, as configured" if opts["dsn"] else
                                     "the embedded server, a fresh cluster per mode; *unsafe fast* is "
                                     f"`--conf {UNSAFE_FAST_CONF}`") + ": "
             + "; ".join(f"{MODE_LABELS[m['mode']]}: " + ", ".join(f"{k}={v}" for k, v in m["pg_settings"].items())
                         for m in modes) + "."]
    fd = next((m["fdatasync"] for m in modes if m["fdatasync"]), None)
    if fd:
        lines.append(f"- **Disk:** 8 KiB write + fdatasync on the data directory's filesystem: {fd['mean_ms']:.2f} ms "
                     f"each ({_n(fd['ops_per_s'])}/s), measured just before the run.")
    settings = first["gateway_settings"]
    lines += [f"- **Processes:** one gateway process on {settings.get('loop', 'its default loop')} (connection pool "
              f"{settings['pool_max_size']}); the load generator in {opts['workers']} worker process(es) (uvloop) "
              f"plus the parent script; PostgreSQL; all on the same {nproc} cores.", "",
              "| PostgreSQL | clients | txns/s | partitions/s | p50 ms | p95 ms | p99 ms | max ms | failures |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in runs:
        lines.append(f"| {MODE_LABELS[r['mode']]} | {r['clients']} | {_n(r['txns_per_s'])} | "
                     f"{_n(r['partitions_per_s'])} | {_n(r['p50_ms'], 2)} | {_n(r['p95_ms'], 2)} | "
                     f"{_n(r['p99_ms'], 2)} | {_n(r['max_ms'], 1)} | {r['failures']:,} |")
    lines += ["", "### Where the time goes", "",
              "Over each run's load window: CPU as cores in use (psutil), commits and WAL fsyncs from `pg_stat_io` / "
              "`pg_stat_database`, WAL bytes from `pg_current_wal_lsn()`. *Other processes* is whatever else ran on "
              f"the machine; a run during which they used more than {opts['max_other_cores']:g} cores was repeated, "
              f"up to {opts['retries']} times (the cores they used in discarded attempts are listed).", "",
              "| run | gateway CPU | PostgreSQL CPU | load generator CPU | other processes | machine busy | commits / "
              "txn | WAL fsyncs / txn | WAL KiB / txn | discarded attempts |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in runs:
        c = r["cpu"] or {}
        kib = None if r["wal_bytes_per_txn"] is None else r["wal_bytes_per_txn"] / 1024
        lines.append(f"| {name[id(r)]} | " + " | ".join(_n(c.get(k), 2) for k in ("gateway", "postgres", "generator",
                                                                                    "other"))
                     + f" | {_n(c.get('machine'), 2)} / {nproc} | {_n(r['commits_per_txn'], 2)} | "
                     f"{_n(r['wal_fsyncs_per_txn'], 2)} | {_n(kib, 1)} | "
                     + (", ".join(f"{x:.2f}" for x in r["discarded_other_cores"]) or "none") + " |")
    states = sorted({k for r in runs for k, v in r["wait_profile"].items() if v >= 0.02},
                    key=lambda k: -max(r["wait_profile"].get(k, 0.0) for r in runs))
    lines += ["", f"What the gateway's PostgreSQL connections were doing, sampled from `pg_stat_activity` every "
              f"{probes.SAMPLE_INTERVAL_S * 1e3:g} ms (average number of backends per state; states under 0.02 "
              "everywhere are summed as *other*):", "",
              "| backend state | " + " | ".join(name[id(r)] for r in runs) + " |", "| --- |" + " ---: |" * len(runs)]
    for k in states:
        lines.append(f"| {k} | " + " | ".join(f"{r['wait_profile'].get(k, 0.0):.2f}" for r in runs) + " |")
    lines += ["| other | " + " | ".join(f"{sum(v for k, v in r['wait_profile'].items() if k not in states):.2f}"
                                        for r in runs) + " |",
              "| *samples with a backend queued on `notification_sequence`* | " + " | ".join(
                  "–" if r["seq_waiter_share"] is None else f"{100 * r['seq_waiter_share']:.0f}%" for r in runs) + " |",
              "| *samples* | " + " | ".join(f"{r['samples']:,}" for r in runs) + " |", ""]
    if data.get("files"):
        lines += ["Loadtest report and raw measurements: " + ", ".join(f"`{p}`" for p in data["files"]) +
                  " (git-ignored; regenerate with the command above).", ""]
    return "\n".join([*lines, SECTION_END]) + "\n"


def _csv(kind: type, choices: Sequence[str] = ()) -> Any:
    def parse(text: str) -> tuple[Any, ...]:
        try:
            values = tuple(kind(x.strip()) for x in text.split(",") if x.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {kind.__name__}s, got {text!r}") from None
        if not values or (choices and any(v not in choices for v in values)) or (kind is int and min(values) < 1):
            raise argparse.ArgumentTypeError(f"unexpected value in {text!r}")
        return values
    return parse


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m loadtest.bench_txns", description=__doc__.split("\n")[0])
    p.add_argument("--duration", type=float, default=20.0, help="seconds of load per client count (default 20)")
    p.add_argument("--clients", type=_csv(int), default=(1, 16), help="client counts, one run each (default 1,16)")
    p.add_argument("--out", default="docs/benchmarks.md", help="markdown file whose section is replaced")
    p.add_argument("--results-dir", default="loadtest/results/bench_txns", help="where CSV/PNG/JSON go")
    p.add_argument("--dsn", default="", help="use this PostgreSQL (as configured) instead of a fresh embedded one")
    p.add_argument("--fsync", type=_csv(str, ("on", "off")), default=("on", "off"),
                   help="embedded PostgreSQL only: durable (on) and/or unsafe fast (off) runs (default on,off)")
    p.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop",
                   help="the gateway's event loop (default: its own default, uvloop)")
    p.add_argument("--workers", type=int, default=1, help="load-generator worker processes (default 1)")
    p.add_argument("--partitions", type=int, default=10, help="partitions added per transaction (default 10)")
    p.add_argument("--gateway-conf", action="append", default=[], metavar="KEY=VALUE", help="extra gateway --conf")
    p.add_argument("--pause", type=float, default=11.0,
                   help="idle seconds after each run before PostgreSQL's counters are read; idle backends flush them "
                        "after 10 s (default 11; less makes fsync and commit counts approximate)")
    p.add_argument("--max-other-cores", type=float, default=0.25,
                   help="repeat a run during which other processes used more CPU than this (default 0.25)")
    p.add_argument("--retries", type=int, default=3, help="how often a disturbed run is repeated (default 3)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--render", metavar="JSON", help="run nothing: re-render --out's section from a bench_txns.json")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    opts = build_parser().parse_args(args_list)
    out = Path(opts.out)
    if opts.render:
        report.write_section(out, "txns", render_section(json.loads(Path(opts.render).read_text())))
        return 0
    if opts.dsn and opts.fsync != ("on", "off"):
        print("bench_txns: --fsync applies to the embedded PostgreSQL only", file=sys.stderr)
        return 2
    if opts.workers < 1:
        print("bench_txns: --workers must be at least 1", file=sys.stderr)
        return 2
    when = dt.datetime.now(dt.timezone.utc)
    window = probes.MachineWindow()
    modes, results = [], []
    for mode in ("dsn",) if opts.dsn else opts.fsync:
        info, mode_results = asyncio.run(run_mode(opts, mode))
        modes.append(info)
        results += mode_results
    results_dir = Path(opts.results_dir)
    written = write_report(results, results_dir, basename="bench_txns",
                          with_plot=not opts.no_plot and matplotlib_available())
    # A DSN's password must not end up in the docs: postgresql://user:secret@host -> postgresql://user:***@host
    def redact(text: str) -> str:
        return re.sub(r"(postgres(?:ql)?://[^:/@\s]+):[^@\s]*@", r"\1:***@", text)

    files = [str(p) for p in (written.csv, written.timeseries_csv, results_dir / "bench_txns.json", written.png) if p]
    data = jsonable({"command": shlex.join(["python", "-m", "loadtest.bench_txns", *map(redact, args_list)]),
                     "date_utc": when.isoformat(timespec="seconds"), "load": window.close().as_dict(),
                     "machine": {**probes.machine(), "code": probes.code_version()}, "files": files,
                     "options": {k: redact(v) if isinstance(v, str) else v for k, v in vars(opts).items()},
                     "modes": modes})
    (results_dir / "bench_txns.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    section = render_section(data)
    report.write_section(out, "txns", section)
    print("" if opts.quiet else section, end="")
    runs = [r for m in modes for r in m["runs"]]
    if any(r["failures"] or r["worker_errors"] or not r["txns"] for r in runs):
        print(f"bench_txns: failures or worker errors: {[(r['failures'], r['worker_errors']) for r in runs]}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # Re-enter through the importable module so the user class pickles as loadtest.bench_txns.WriteTxnUser.
    from loadtest.bench_txns import main as _main

    sys.exit(_main())
