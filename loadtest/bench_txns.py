"""Small write transactions per second: the gateway and the Hive Metastore 2.3 on PostgreSQL side by side,
at 1 and 16 concurrent clients (`make bench-txns`).

    python -m loadtest.bench_txns                      # 20 s per run, writes docs/benchmarks.md
    python -m loadtest.bench_txns --duration 5 --clients 1,4,16 --targets gateway --fsync on,off
    python -m loadtest.bench_txns --lag                # also the commit-to-visible lag under the load

Two workloads, each one small write transaction issued back to back by one client and timed as one request:

* `txn` (txn manager only): gateway `OpenTxns(num_txns=1)` -> `AllocateTableWriteIds` -> `CommitTxn`; Hive
  Metastore 2.3, which has no write ids, `open_txns(1)` -> `lock` (SHARED_READ on the table, operation
  INSERT, in the txn) -> `commit_txn` (loadtest/hms_txns.py);
* `parts` (plus N partitions, default 10): the same with `AddPartitions` / `add_partitions` of N new
  partitions (the gateway's with `txn_id` set) before the commit.

The `gateway-thrift` target runs the Hive Metastore's own client (HmsWriteTxnUser, the same calls over the
same Thrift library) against the gateway's Thrift endpoint for `txn`; for `parts` it sends Hive 3's calls
(the txn's write id allocated, each new partition carrying it), since Hive 2.3's `add_partitions` cannot name
a txn and the gateway refuses a write to a transactional table outside one (loadtest/hms_txns.py).

Clients run a closed loop without think time, each with its own gRPC channel or Thrift connection, in
load-generator worker processes (loadtest.run_load). Targets run one after another:

* `gateway`: without `--dsn` a gateway process (`--data-dir <tmp>`, on `--loop`) on a fresh embedded
  PostgreSQL per `--fsync` mode: durable (fsync on, the default; the headline) and, when asked, unsafe fast
  (`metastore.gateway.embedded.unsafe.fast=true`), so the report can show what the commit's WAL flush costs.
  With `--dsn` one gateway serves from that PostgreSQL as configured, in a database dropped at the end.
* `gateway-thrift`: the same, the load sent to its Thrift endpoint;
* `hms`: the Hive Metastore 2.3 from pyspark's jars (loadtest/hms.py) on a fresh embedded PostgreSQL with the
  durable gateway's settings, its transaction tables created from loadtest/hms_txn_schema.sql, with as many
  database connections per pool as the gateway's pool.

Each target first runs the `parts` workload for `--warmup` seconds at the largest client count, unmeasured.
Over each run's window it measures (loadtest.probes): CPU of the server process (gateway or JVM), its
PostgreSQL, the load generator and the machine as cores in use; WAL fsyncs and commits per transaction and
WAL bytes; and what the server's backends are doing, sampled from pg_stat_activity every 25 ms.

`--lag` adds the commit-to-visible lag across three gateways under the `parts` load at the largest client
count (loadtest/txn_lag.py). The section `bench:txns` of `--out` is replaced (loadtest/bench_txns_report.py);
the loadtest report (CSV, time series, PNG) and the measurements (bench_txns.json, which `--render`
re-renders from) go to `--results-dir`.
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
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import asyncpg
import grpc

from gateway.embedded_pg import EmbeddedPostgres
from loadtest import hms, probes, report
from loadtest.bench_txns_report import (
    SECTION_END,
    SECTION_START,
    UNSAFE_FAST_CONF,
    jsonable,
    render_section,
)
from loadtest.engine import RunConfig
from loadtest.gateway_process import GatewayProcess
from loadtest.harness import conf_args, new_workdir
from loadtest.hms_txns import HmsWriteTxnUser, create_table
from loadtest.report import matplotlib_available, write_report
from loadtest.runner import run_load
from loadtest.stats import LiveView, ProgressLine, RunResult
from loadtest.txn_lag import lag_under_load
from loadtest.users import GrpcUser, User, constant, task
from protos.metastore.v1 import catalog_pb2 as cpb
from protos.metastore.v1 import catalog_pb2_grpc, transactions_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb

__all__ = ["SECTION_END", "SECTION_START", "WriteTxnUser", "main", "request_name"]

REPO = Path(__file__).resolve().parent.parent
WORKLOADS = ("txn", "parts")
TARGETS = ("gateway", "gateway-thrift", "hms")
PG_SETTINGS = ("fsync", "synchronous_commit", "full_page_writes", "wal_sync_method", "shared_buffers")
POOL = "datanucleus.connectionPool.maxPoolSize"
TABLE = "writes"


def request_name(partitions: int) -> str:
    """The measured request's name: `write-txn(txn manager only)` or `write-txn(10 partitions)`."""
    return "write-txn(txn manager only)" if partitions == 0 else f"write-txn({partitions} partitions)"


class WriteTxnUser(GrpcUser):
    """One Hive-like writer on the gateway: each task is one small write transaction on the bench's table.

    options: "db", "table", "partitions" (new partitions per txn; 0: OpenTxns -> AllocateTableWriteIds ->
    CommitTxn alone), "tag" (unique per run), "addresses" (optional: the user's gateway is
    addresses[user_id % len], else the run's host). Partition values are unique per tag, user and
    iteration. A transaction that fails is aborted (unmeasured) and the failure is recorded under the
    request's name."""

    wait_time = constant(0.0)
    call_timeout_s = 30.0

    async def on_start(self) -> None:
        addresses = list(self.options.get("addresses") or [self.host])
        self.channel = grpc.aio.insecure_channel(addresses[self.user_id % len(addresses)])
        await asyncio.wait_for(self.channel.channel_ready(), timeout=self.connect_timeout_s)
        self.txns = transactions_pb2_grpc.TransactionsStub(self.channel)
        self.catalog = catalog_pb2_grpc.CatalogStub(self.channel)
        self.db_name, self.table_name = str(self.options["db"]), str(self.options["table"])
        self.partitions = int(self.options.get("partitions", 10))
        self.request = request_name(self.partitions)
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
            async with self.measure(self.request) as m:
                opened = await self.txns.OpenTxns(
                    tpb.OpenTxnsRequest(num_txns=1, user="bench", hostname=self.hostname, agent_info="bench_txns"),
                    timeout=timeout)
                txn_id = opened.txn_ids[0]
                await self.txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(
                    txn_ids=[txn_id], db_name=self.db_name, table_name=self.table_name), timeout=timeout)
                if parts:
                    added = await self.catalog.AddPartitions(cpb.AddPartitionsRequest(
                        db_name=self.db_name, table_name=self.table_name, partitions=parts, txn_id=txn_id),
                        timeout=timeout)
                    m.items = len(added.partitions)
                await self.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn_id), timeout=timeout)
                committed = True
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
            db_name=db_name, name=TABLE, table_type=cpb.MANAGED, transactional=True,
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


def summarize(target: str, mode: str, workload: str, clients: int, request: str, result: RunResult,
              probe: probes.RunProbe, before: dict[str, int] | None, after: dict[str, int] | None) -> dict[str, Any]:
    """One run's figures, JSON-ready (NaN as None)."""
    stats, nan = result.stats.get(request), math.nan
    txns = stats.requests - stats.failures if stats else 0
    p50, p95, p99 = (v * 1e3 for v in stats.latency.percentiles((50, 95, 99))) if stats else (nan, nan, nan)
    per_txn = {"commits_per_txn": nan, "wal_fsyncs_per_txn": nan, "wal_bytes_per_txn": nan}
    if before and after and txns:
        per_txn = {"commits_per_txn": (after["commits"] - before["commits"]) / txns,
                   "wal_fsyncs_per_txn": (after["wal_fsyncs"] - before["wal_fsyncs"]) / txns,
                   "wal_bytes_per_txn": (after["wal_bytes"] - before["wal_bytes"]) / txns}
    d = result.duration_s
    return jsonable({
        "target": target, "mode": mode, "workload": workload, "clients": clients, "request": request,
        "duration_s": d, "txns": txns, "failures": stats.failures if stats else 0,
        "errors": dict(stats.errors) if stats else {}, "partitions": stats.items if stats else 0,
        "txns_per_s": txns / d if d > 0 else nan, "partitions_per_s": (stats.items if stats else 0) / d if d else nan,
        "mean_ms": stats.latency.mean_s * 1e3 if stats else nan, "p50_ms": p50, "p95_ms": p95, "p99_ms": p99,
        "max_ms": stats.latency.max_s * 1e3 if stats else nan, "worker_errors": list(result.worker_errors),
        "cpu": probe.cpu(), **per_txn, "wait_profile": probe.wait_profile(), "samples": probe.samples,
        "seq_waiter_share": probe.seq_waiter_samples / probe.samples if probe.samples else nan,
        "discarded_other_cores": []})


@dataclass
class Server:
    """One target as the runs see it: where to send the load, whose CPU is the server's, its PostgreSQL."""

    target: str  # "gateway", "gateway-thrift" or "hms"
    mode: str  # "on", "off" or "dsn"
    user_class: type[User]
    address: str
    pid: int
    stats_conn: asyncpg.Connection
    datname: str
    postmaster: int | None
    options: dict[str, Any]
    sequence_oid: int | None = None  # the gateway's notification_sequence table


async def run_matrix(opts: argparse.Namespace, server: Server) -> tuple[list[dict[str, Any]], list[RunResult]]:
    """Warm `server` up (its `parts` workload), then run every workload asked for at every client
    count against it; a run during which other processes used more than --max-other-cores is repeated once the
    machine is quiet (up to --retries)."""
    if opts.warmup > 0:
        most = max(opts.clients)
        config = RunConfig(users=most, run_time_s=opts.warmup, workers=min(opts.workers, most), stop_timeout_s=5.0)
        await run_load(server.user_class, server.address, config, target=f"{server.target} warm-up", progress=False,
                       options={**server.options, "partitions": opts.partitions, "tag": "warm",
                                "request": request_name(opts.partitions)})
    summaries, results = [], []
    await asyncio.sleep(opts.pause)
    before = await probes.wal_stats(server.stats_conn, server.datname)
    for workload in opts.workloads:
        partitions = 0 if workload == "txn" else opts.partitions
        request = request_name(partitions)
        for clients in opts.clients:
            label = f"{server.target} fsync={server.mode} {workload} c={clients}"
            config = RunConfig(users=clients, run_time_s=opts.duration, workers=min(opts.workers, clients),
                               stop_timeout_s=5.0)
            discarded: list[float] = []
            while True:
                probe = probes.RunProbe(server.pid, server.postmaster, server.stats_conn, server.datname,
                                        sequence_oid=server.sequence_oid)
                sink = ProbeSink(None if opts.quiet else ProgressLine(label), probe, opts.duration)
                sampler = asyncio.create_task(probe.sample())
                try:
                    result = await run_load(server.user_class, server.address, config, target=label, progress=sink,
                                            options={**server.options, "partitions": partitions, "request": request,
                                                     "tag": f"{workload}c{clients}a{len(discarded)}"})
                finally:
                    probe.ended.set()
                    probe.started.set()
                    await sampler
                # Idle backends flush their pg_stat counters after 10 s (PGSTAT_IDLE_INTERVAL); wait that out so
                # the counters read next hold exactly this run (and the next run starts on a quiet server).
                await asyncio.sleep(opts.pause)
                after = await probes.wal_stats(server.stats_conn, server.datname)
                summary = summarize(server.target, server.mode, workload, clients, request, result, probe, before,
                                    after)
                before = after
                other = (summary["cpu"] or {}).get("other") or 0.0
                if other <= opts.max_other_cores or len(discarded) >= opts.retries:
                    break
                discarded.append(round(other, 3))
                print(f"bench_txns: other processes used {other:.2f} cores during {label}; repeating it once the "
                      "machine is quiet", file=sys.stderr)
                await asyncio.to_thread(probes.wait_quiet, opts.max_other_cores, 300.0)
            summary["discarded_other_cores"] = discarded
            summaries.append(summary)
            results.append(result)
    return summaries, results


async def _pg_info(conn: asyncpg.Connection) -> dict[str, Any]:
    return {"pg_version": await conn.fetchval("SHOW server_version"),
            "pg_settings": {name: await conn.fetchval(f"SHOW {name}") for name in PG_SETTINGS}}


async def run_gateway(opts: argparse.Namespace, mode: str, *,
                      thrift: bool = False) -> tuple[dict[str, Any], list[RunResult]]:
    """Start one gateway (fresh embedded PostgreSQL or `opts.dsn`), create the table, run the matrix against
    it (`thrift`: the Hive Metastore's client on its Thrift endpoint), stop it and clean up."""
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
        # The gateway logs its DSN with the password redacted; the embedded server's is in its data directory.
        dsn = opts.dsn or EmbeddedPostgres(tmp / "data").dsn()
        stats_conn, datname, postmaster, sequence_oid = await probes.connect_stats(dsn)
        settings = await asyncio.to_thread(gateway_settings, conf)
        target = "gateway-thrift" if thrift else "gateway"
        info: dict[str, Any] = {
            "target": target, "mode": mode, "conf": conf, **await _pg_info(stats_conn),
            "gateway_settings": {"pool_max_size": int(settings[POOL]), "loop": opts.loop},
            "fdatasync": fsync_probe}
        if thrift:
            location = await asyncio.to_thread(create_table, gateway.thrift_address, db_name, TABLE)
            server = Server(target, mode, HmsWriteTxnUser, gateway.thrift_address, gateway.proc.pid, stats_conn,
                            datname, postmaster, {"db": db_name, "table": TABLE, "location": location,
                                                  "write_ids": True}, sequence_oid)
        else:
            await _catalog(address, db_name)
            server = Server(target, mode, WriteTxnUser, address, gateway.proc.pid, stats_conn, datname, postmaster,
                            {"db": db_name, "table": TABLE}, sequence_oid)
        created = True
        info["runs"], results = await run_matrix(opts, server)
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


def _jdbc_version(jar: Path) -> str:
    """Implementation-Version from the JDBC jar's manifest (e.g. 42.5.5)."""
    with zipfile.ZipFile(jar) as z:
        manifest = z.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    m = re.search(r"^(?:Implementation|Bundle)-Version:\s*(\S+)", manifest, re.MULTILINE)
    return m.group(1) if m else "unknown"


def _shown_path(path: Path | None) -> str:
    """`path` relative to the repository when inside it (the docs should not name one checkout's directory)."""
    if path is None:
        return "?"
    resolved = path.resolve()
    return str(resolved.relative_to(REPO)) if resolved.is_relative_to(REPO) else str(resolved)


def _java_version(java: str) -> str:
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    lines = (out.stderr or out.stdout).splitlines()
    return " ".join(lines[:1] + lines[2:3]).strip()  # "openjdk version ..." and the VM line


async def _hms_txn_state(dsn: str, log: Path) -> dict[str, int]:
    """What the runs left in Hive's transaction tables, and the ERROR lines in the HMS's log: evidence that
    TxnHandler really served the calls (every committed write is in COMPLETED_TXN_COMPONENTS, no txn is left
    open, no lock is left behind)."""
    conn = await asyncpg.connect(dsn)
    try:
        row = await conn.fetchrow(
            "SELECT (SELECT count(*) FROM completed_txn_components) AS completed_components,"
            " (SELECT count(*) FROM txns WHERE txn_state = 'o') AS open_txns,"
            " (SELECT count(*) FROM hive_locks) AS locks, (SELECT ntxn_next - 1 FROM next_txn_id) AS txns_opened")
    finally:
        await conn.close()
    errors = sum(" ERROR " in line for line in log.read_text(errors="replace").splitlines()) if log.exists() else 0
    return {**{k: int(v) for k, v in dict(row).items()}, "log_errors": errors}


async def run_hms(opts: argparse.Namespace, pool: int) -> tuple[dict[str, Any], list[RunResult]]:
    """Start the Hive Metastore 2.3 on a fresh durable embedded PostgreSQL with its transaction tables, create
    the table, run the matrix against it, stop it."""
    reason = hms.hms_unavailable_reason() or hms.postgres_unavailable_reason()
    if reason:
        raise hms.HmsError(f"the Hive Metastore target cannot run here: {reason}")
    tmp = new_workdir("msgw-bench-txns-hms-")
    jvm_args = list(opts.hms_jvm_arg)
    try:
        async with hms.hms_process(workdir=tmp, backing="postgresql", durable=True, transactions=True,
                                   jvm_args=jvm_args, site={POOL: str(pool)}) as server:
            stats_conn, datname, postmaster, _ = await probes.connect_stats(server.dsn)
            try:
                location = await asyncio.to_thread(create_table, server.address, "bench_txns", TABLE)
                info: dict[str, Any] = {
                    "target": "hms", "mode": "on", **await _pg_info(stats_conn), "fdatasync": None,
                    "hms": {"version": hms.hms_version(), "jars": _shown_path(hms.pyspark_jars_dir()),
                            "java": await asyncio.to_thread(_java_version, server.command[0]), "jvm_args": jvm_args,
                            "properties": dict(hms.TXN_PROPERTIES), "pool": pool,
                            "jdbc_jar": str(hms.POSTGRES_JDBC_JAR),
                            "jdbc_version": _jdbc_version(hms.POSTGRES_JDBC_JAR)}}
                info["runs"], results = await run_matrix(opts, Server(
                    "hms", "on", HmsWriteTxnUser, server.address, server.pid, stats_conn, datname, postmaster,
                    {"db": "bench_txns", "table": TABLE, "location": location}))
                info["hms"]["after"] = await _hms_txn_state(server.dsn, tmp / "hms.log")
            finally:
                await stats_conn.close()
        return info, results
    except BaseException:
        log = tmp / "hms.log"
        if log.exists():
            print(f"bench_txns: the end of the Hive Metastore's log:\n{log.read_text(errors='replace')[-4000:]}",
                  file=sys.stderr)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


async def run_lag(opts: argparse.Namespace) -> dict[str, Any]:
    """The commit-to-visible lag across three gateways under the `parts` load (loadtest/txn_lag.py)."""
    tmp = new_workdir("msgw-bench-txns-lag-")
    try:
        clients = max(opts.clients)
        config = RunConfig(users=clients, run_time_s=opts.lag_duration, workers=min(opts.workers, clients),
                           stop_timeout_s=5.0)
        figures, _ = await lag_under_load(tmp, WriteTxnUser, config, {
            "db": "bench_txns_lag", "table": TABLE, "partitions": opts.partitions, "tag": "lag"}, _catalog)
        return figures
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


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
    p.add_argument("--duration", type=float, default=20.0, help="seconds of load per run (default 20)")
    p.add_argument("--clients", type=_csv(int), default=(1, 16), help="client counts, one run each (default 1,16)")
    p.add_argument("--targets", type=_csv(str, TARGETS), default=TARGETS,
                   help="gateway (gRPC), gateway-thrift (Hive's clients on the gateway's Thrift endpoint) and/or "
                        "hms, the Hive Metastore 2.3 on PostgreSQL (default all three)")
    p.add_argument("--workloads", type=_csv(str, WORKLOADS), default=WORKLOADS,
                   help="txn (txn manager only) and/or parts (plus --partitions new partitions) (default both)")
    p.add_argument("--out", default="docs/benchmarks.md", help="markdown file whose section is replaced")
    p.add_argument("--results-dir", default="loadtest/results/bench_txns", help="where CSV/PNG/JSON go")
    p.add_argument("--dsn", default="", help="gateway: use this PostgreSQL (as configured) instead of a fresh embedded "
                                             "one")
    p.add_argument("--fsync", type=_csv(str, ("on", "off")), default=("on",),
                   help="gateway on the embedded PostgreSQL: durable (on) and/or unsafe fast (off) runs (default on)")
    p.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop",
                   help="the gateway's event loop (default: its own default, uvloop)")
    p.add_argument("--workers", type=int, default=1, help="load-generator worker processes (default 1)")
    p.add_argument("--partitions", type=int, default=10, help="partitions added per transaction (default 10)")
    p.add_argument("--gateway-conf", action="append", default=[], metavar="KEY=VALUE", help="extra gateway --conf")
    p.add_argument("--hms-jvm-arg", action="append", default=[], metavar="ARG",
                   help="an extra JVM flag for the Hive Metastore, e.g. -Xmx2g (default none: the JVM's defaults)")
    p.add_argument("--warmup", type=float, default=10.0,
                   help="seconds of unmeasured load on each target before its runs (default 10)")
    p.add_argument("--lag", action="store_true",
                   help="also measure commit-to-visible lag across three gateways under the write load")
    p.add_argument("--lag-duration", type=float, default=60.0,
                   help="seconds of load while the lag is probed (default 60: a p99 needs a few hundred commits)")
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


async def measure(opts: argparse.Namespace) -> tuple[list[dict[str, Any]], list[RunResult], dict[str, Any] | None]:
    """Every target's runs, one after the other, then the lag figure when asked."""
    targets, results = [], []
    for thrift in (False, True):
        if ("gateway-thrift" if thrift else "gateway") not in opts.targets:
            continue
        for mode in ("dsn",) if opts.dsn else opts.fsync:
            info, mode_results = await run_gateway(opts, mode, thrift=thrift)
            targets.append(info)
            results += mode_results
    if "hms" in opts.targets:
        pool = int((await asyncio.to_thread(gateway_settings, opts.gateway_conf))[POOL])
        info, hms_results = await run_hms(opts, pool)
        targets.append(info)
        results += hms_results
    lag = await run_lag(opts) if opts.lag else None
    return targets, results, lag


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    opts = build_parser().parse_args(args_list)
    out = Path(opts.out)
    if opts.render:
        report.write_section(out, "txns", render_section(json.loads(Path(opts.render).read_text())))
        return 0
    if opts.dsn and opts.fsync != ("on",):
        print("bench_txns: --fsync applies to the embedded PostgreSQL only", file=sys.stderr)
        return 2
    if opts.workers < 1 or opts.partitions < 1:
        print("bench_txns: --workers and --partitions must be at least 1", file=sys.stderr)
        return 2
    missing = "hms" in opts.targets and (hms.hms_unavailable_reason() or hms.postgres_unavailable_reason())
    if missing:  # before minutes of gateway runs, not after them
        print(f"bench_txns: the Hive Metastore target cannot run here: {missing} (or leave it out: --targets "
              "gateway,gateway-thrift)", file=sys.stderr)
        return 2
    when = dt.datetime.now(dt.timezone.utc)
    window = probes.MachineWindow()
    targets, results, lag = asyncio.run(measure(opts))
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
                     "targets": targets, "lag": lag})
    (results_dir / "bench_txns.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    section = render_section(data)
    report.write_section(out, "txns", section)
    print("" if opts.quiet else section, end="")
    runs = [r for t in targets for r in t["runs"]]
    lag_load = (lag or {}).get("load") or {}
    if any(r["failures"] or r["worker_errors"] or not r["txns"] for r in runs) or lag_load.get("failures") or \
            lag_load.get("worker_errors"):
        print(f"bench_txns: failures or worker errors: {[(r['failures'], r['worker_errors']) for r in runs]}"
              + (f"; lag load: {lag_load}" if lag else ""), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # Re-enter through the importable module so the user class pickles as loadtest.bench_txns.WriteTxnUser.
    from loadtest.bench_txns import main as _main

    sys.exit(_main())
