"""Partitions per second fetched by a local[2] Spark job through the gateway (the snapshot read job).

    python -m loadtest.bench_spark                       # 10,000 partitions, 9 timed runs per row
    python -m loadtest.bench_spark --partitions 2000 --runs 2 --out /tmp/b.md

What runs: a gateway process (`python -m gateway.cli serve --port 0`) on a fresh embedded PostgreSQL in
a temporary directory, and a second gateway on the same database with
`--conf metastore.gateway.cache.enabled=false` (every read from PostgreSQL). One transactional table
`bench.parts` (keys ds string, hr int) gets `--partitions` partitions in one txn, each with seven
Hive-style statistics parameters; their directories do not exist, so the per-partition file listing is
one failing `listdir` and the job measures the metadata path. Then one SparkSession with master
local[2] (default JVM settings, UI off) runs `pipeline.snapshot_read.snapshot_read` for each row of
the table below: one untimed warm-up each (Python workers, the gateway's cache), then `--runs` rounds
in which every row runs once, so that load from other users of the machine falls on all rows alike.

Each run is the whole job as a user runs it: open a read txn, SHARED_READ lock, snapshot
(GetOpenTxns + GetValidWriteIds), GetTable, ListPartitionNames (all pages) on the driver; then the
Spark tasks fetch every partition with GetPartitionsByNames under that snapshot (one channel per Python
worker process, batches in flight), list its files and return one row per partition to the driver;
commit. "job" is that whole time; "fetch phase" is from submitting the Spark job to the rows being on
the driver. The reference row fetches the same partitions from the benchmark's own process with the
same client and no Spark.

The section between `<!-- bench:spark:start -->` and `<!-- bench:spark:end -->` of `--out` is
replaced (created when missing); every measurement goes to `--results-dir` as JSON.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from loadtest import report
from loadtest.gateway_process import GatewayProcess
from loadtest.gateway_targets import DB, bench_table, partition_values
from loadtest.harness import workdir
from loadtest.probes import cpu_s, machine, machine_busy_s, machine_load, postmaster_pid, tree_cpu_s
from pipeline.client import ClientConfig, GatewayClient, close_process_clients, process_client

REPO = Path(__file__).resolve().parent.parent
SECTION_START, SECTION_END = report.markers("spark")
TABLE = "parts"


def machine_info() -> dict[str, Any]:
    """machine() plus the Java and PySpark versions."""
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    import pyspark

    return {**machine(), "java": java[0] if java else "?", "pyspark": pyspark.__version__}


@dataclass
class Row:
    label: str
    gateway: str            # "cache on" / "cache off"
    batch_size: int
    in_flight: int
    slices: int | None      # None: the job's default
    kind: str = "job"       # "job": the snapshot read job; "driver": no Spark; "floor": Spark, no gateway
    jobs_s: list[float] = field(default_factory=list)
    fetch_s: list[float] = field(default_factory=list)
    machine_busy_cores: list[float] = field(default_factory=list)
    gateway_cores: list[float] = field(default_factory=list)
    other_cores: list[float] = field(default_factory=list)  # processes not started by this benchmark
    postgres_cores: list[float] = field(default_factory=list)
    tasks: int = 0
    worker_pids: int = 0


def _setup(address: str, count: int, root: Path) -> None:
    from protos.metastore.v1 import catalog_pb2 as pb

    table = bench_table(TABLE)
    table.sd.location = f"file://{root}/{TABLE}"
    with GatewayClient(ClientConfig(address)) as c:
        c.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=DB)))
        c.catalog.CreateTable(pb.CreateTableRequest(table=table))
        parts = [pb.Partition(values=list(values), parameters={
            "numFiles": str(1 + i % 7), "totalSize": str(100_000 + i), "numRows": str(1000 + i),
            "rawDataSize": str(500_000 + i), "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}',
            "transient_lastDdlTime": "1700000000", "bucketing_version": "2"})
            for i, values in enumerate(partition_values(count))]
        with c.transaction() as txn:
            c.add_partitions(DB, TABLE, parts, txn_id=txn.id)


def _made_up_rows(names: Any) -> Any:
    """The floor: rows of the job's shape for the same names, with no gateway call."""
    pid = os.getpid()
    return ((n, "", 0, "{}", 0, 0, pid) for n in names)


def _run_once(spark: Any, row: Row, gateway: GatewayProcess, count: int, record: bool, postmaster: int) -> None:
    from pipeline.snapshot_read import read_on_driver, snapshot_read

    config = ClientConfig(gateway.address, batch_size=row.batch_size, in_flight=row.in_flight)
    busy = machine_busy_s()
    ours = tree_cpu_s(os.getpid(), postmaster)
    pg_cpu = tree_cpu_s(postmaster)
    gateway_cpu = cpu_s(gateway.proc.pid)
    t = time.perf_counter()
    if row.kind == "job":
        result = snapshot_read(spark, DB, TABLE, config=config, num_slices=row.slices)
        fetch_s = result.timings_s["executors_s"]
        got = len(result.rows)
        row.worker_pids = len({r.fetch_pid for r in result.rows})
    elif row.kind == "floor":
        client = process_client(config)
        names = client.list_partition_names(DB, TABLE, client.table_snapshot(DB, TABLE).read_context())
        f = time.perf_counter()
        got = len(spark.sparkContext.parallelize(names, row.slices).mapPartitions(_made_up_rows).collect())
        fetch_s = time.perf_counter() - f
    else:
        client = process_client(config)
        with client.transaction() as txn:
            table = txn.table_snapshot(DB, TABLE)
            names = client.list_partition_names(DB, TABLE, table.read_context())
            f = time.perf_counter()
            got = len(read_on_driver(client, table, client.valid_txn_list(txn.id), names))
            fetch_s = time.perf_counter() - f
    elapsed = time.perf_counter() - t
    if got != count:
        raise RuntimeError(f"{row.label}: fetched {got} partitions, expected {count}")
    if not record:
        return
    row.jobs_s.append(elapsed)
    row.fetch_s.append(fetch_s)
    busy = machine_busy_s() - busy
    row.machine_busy_cores.append(busy / elapsed)
    row.other_cores.append(max(0.0, busy - (tree_cpu_s(os.getpid(), postmaster) - ours)) / elapsed)
    row.gateway_cores.append((cpu_s(gateway.proc.pid) - gateway_cpu) / elapsed)
    row.postgres_cores.append((tree_cpu_s(postmaster) - pg_cpu) / elapsed)


def _run_rows(spark: Any, rows: list[Row], gateways: dict[str, GatewayProcess], runs: int, count: int,
              postmaster: int) -> None:
    """One warm-up per row, then `runs` rounds that run every row once each: rows interleaved, so
    the load other users put on the machine falls on all rows alike."""
    for row in rows:
        _run_once(spark, row, gateways[row.gateway], count, record=False, postmaster=postmaster)
    for i in range(runs):
        for row in rows:
            _run_once(spark, row, gateways[row.gateway], count, record=True, postmaster=postmaster)
        print(f"round {i + 1}/{runs} done", flush=True)
    for row in rows:
        print(f"{row.label:55} job median {statistics.median(row.jobs_s):6.2f}s  fetch median "
              f"{statistics.median(row.fetch_s):6.2f}s  -> {count / statistics.median(row.fetch_s):8.0f} partitions/s",
              flush=True)


def render(command: str, when: dt.datetime, machine: dict[str, Any], rows: list[Row], count: int, runs: int,
           idle_busy: float) -> str:
    def rate(seconds: list[float]) -> str:
        return f"{count / statistics.median(seconds):,.0f}"

    def spread(seconds: list[float]) -> str:
        return f"{count / max(seconds):,.0f}–{count / min(seconds):,.0f}"

    lines = [
        SECTION_START,
        "## PySpark: partitions fetched per second by a local[2] Spark job",
        "",
        *report.produced_by("bench_spark", command),
        f"on {when:%Y-%m-%d %H:%M} UTC: {machine['nproc']} cores ({machine['cpu_model']}), {machine['mem_gib']} GiB, "
        f"Python {machine['python']}, {machine['java']}, PySpark {machine['pyspark']}, grpcio {machine['grpcio']}. "
        f"The gateways (cache on, and cache off on the same database), the embedded PostgreSQL, the Spark driver "
        f"JVM and its Python workers all run on this machine, which is shared with other sessions: "
        f"{idle_busy:.1f} cores were busy just before the run (psutil); the last column shows other work "
        f"during it.",
        "",
        f"Table: {count:,} partitions of one transactional table (2 keys, 7 parameters each). "
        f"Median of {runs} timed runs after one warm-up, rows interleaved (round after round); "
        "\"fetch phase\" = Spark job submitted -> all rows on "
        f"the driver; \"job\" adds the driver's txn, lock, snapshot, GetTable and ListPartitionNames.",
        "",
        *report.table(
            ["run", "gateway", "batch", "in flight", "Spark tasks", "partitions/s, fetch phase (median)",
             "range over runs", "partitions/s, whole job", "fetch s (median)", "job s (median)", "worker processes",
             "gateway process, cores", "PostgreSQL, cores", "machine busy cores", "of which other work"],
            [[r.label, *((r.gateway, r.batch_size, r.in_flight) if r.kind != "floor" else ("-",) * 3),
              r.tasks if r.kind != "driver" else "-", rate(r.fetch_s), spread(r.fetch_s),
              rate(r.jobs_s) if r.kind == "job" else "-", f"{statistics.median(r.fetch_s):.2f}",
              f"{statistics.median(r.jobs_s):.2f}", r.worker_pids if r.kind == "job" else "-",
              f"{statistics.median(r.gateway_cores) if r.kind != 'floor' else 0:.2f}",
              f"{statistics.median(r.postgres_cores):.2f}", f"{statistics.median(r.machine_busy_cores):.1f}",
              f"{statistics.median(r.other_cores):.1f}"] for r in rows], numeric_from=2),
        "",
        f"Reading it: compare the defaults' fetch phase with the reference (no Spark) and the floor (no gateway) "
        f"rows. The machine-busy column is the whole machine's busy cores during the timed runs "
        f"({machine['nproc']} = saturated); the gateway and PostgreSQL columns are those processes' shares of them "
        "(CPU seconds / wall seconds, psutil), and \"other work\" the share of processes this benchmark did not "
        "start (other users of the machine).",
        "",
        SECTION_END,
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtest.bench_spark", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--out", default="docs/benchmarks.md")
    parser.add_argument("--results-dir", default="loadtest/results/bench_spark")
    opts = parser.parse_args(argv)
    args = list(sys.argv[1:] if argv is None else argv)
    command = "python -m loadtest.bench_spark" + (" " + shlex.join(args) if args else "")

    when = dt.datetime.now(dt.timezone.utc)
    machine = machine_info()
    idle_busy = machine_load(2.0)
    with workdir(prefix="bench-spark-") as work:
        return _measure(opts, command, when, machine, idle_busy, work)


def _measure(opts: argparse.Namespace, command: str, when: dt.datetime, machine: dict[str, Any], idle_busy: float,
             work: Path) -> int:
    cached = GatewayProcess(["--data-dir", str(work / "pg")], work / "gateway-cache-on.log")
    uncached: GatewayProcess | None = None
    spark = None
    try:
        cached.wait_serving()
        uncached = GatewayProcess(["--dsn", cached.dsn, "--conf", "metastore.gateway.cache.enabled=false"],
                                  work / "gateway-cache-off.log")
        uncached.wait_serving()
        t = time.perf_counter()
        _setup(cached.address, opts.partitions, work / "warehouse")
        print(f"added {opts.partitions} partitions in {time.perf_counter() - t:.1f}s", flush=True)

        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        from pyspark.sql import SparkSession

        spark = (SparkSession.builder.master("local[2]").appName("bench_spark").config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false").config("spark.driver.host", "127.0.0.1")
                 .config("spark.pyspark.python", sys.executable).getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        from pipeline.snapshot_read import plan_slices

        tasks = plan_slices(opts.partitions, spark.sparkContext.defaultParallelism, 1000, 4)  # the job's default
        rows = [
            Row(f"defaults: batches of 1000, 4 in flight, {tasks} tasks", "cache on", 1000, 4, tasks),
            Row("one batch in flight", "cache on", 1000, 1, tasks),
            Row("batches of 100", "cache on", 100, 4, tasks),
            Row("8 tasks", "cache on", 1000, 4, 8),
            Row("defaults, cache off (PostgreSQL every read)", "cache off", 1000, 4, tasks),
            Row("reference: the same client in one process, no Spark", "cache on", 1000, 4, None, kind="driver"),
            Row("floor: the same Spark job shape, rows made up, no gateway call", "cache on", 1000, 4, tasks,
                kind="floor"),
        ]
        for r in rows:
            r.tasks = r.slices or 0
        postmaster = postmaster_pid(work / "pg" / "pgdata")
        print(f"embedded PostgreSQL postmaster pid {postmaster or 'not found'}", flush=True)
        _run_rows(spark, rows, {"cache on": cached, "cache off": uncached}, opts.runs, opts.partitions, postmaster)
        section = render(command, when, machine, rows, opts.partitions, opts.runs, idle_busy)
        report.write_section(REPO / opts.out if not os.path.isabs(opts.out) else Path(opts.out), "spark", section)
        results = REPO / opts.results_dir
        results.mkdir(parents=True, exist_ok=True)
        (results / f"bench_spark_{when:%Y%m%dT%H%M%S}.json").write_text(json.dumps(
            {"command": command, "when": when.isoformat(), "machine": machine, "idle_busy_cores": idle_busy,
             "partitions": opts.partitions, "runs": opts.runs, "rows": [asdict(r) for r in rows]}, indent=2))
        print(section)
        return 0
    finally:
        if spark is not None:
            spark.stop()
        close_process_clients()
        for g in (uncached, cached):
            if g is not None:
                g.stop()


if __name__ == "__main__":
    sys.exit(main())
