"""Compaction figures: reading a partition of many deltas before and after a major compaction, and
the worker's throughput on local[2].

    python -m pipeline.compactor.bench                    # 100 deltas x 10,000 rows, 3 timed reads each
    make bench-compaction                                 # the same, writing docs/compaction-benchmarks.md

What runs: a gateway process on a fresh embedded PostgreSQL in a temporary directory; one local[2]
SparkSession (UI off). One transactional table gets `--deltas` appends to one partition, each its
own txn writing `--rows` rows (id bigint, payload a 24-character hex string) as one Parquet file in
`delta_w_w`. A "read" is what a reader does: take a snapshot (GetOpenTxns + GetValidWriteIds), list
the files it may read (`pipeline.acid.visible_files`), and scan them with Spark
(`sum(id), sum(length(payload))`, so every column is decoded); one untimed warm-up, then `--runs`
timed reads, median reported. Then ALTER TABLE ... COMPACT 'major' (gRPC Compact) and one worker run
(`pipeline.compactor.run_one`, claim to complete: listing, Spark read and write of the new base,
the gateway calls); throughput = rows and input bytes over that time. The same reads follow, and
their sums must equal the ones before.

The section between `<!-- bench:compaction:start -->` and `<!-- bench:compaction:end -->` of
`--out` is replaced (the file is created when missing).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import grpc

from loadtest import report
from loadtest.gateway_process import GatewayProcess
from loadtest.harness import new_workdir
from loadtest.probes import load_average, machine
from pipeline.acid import visible_files
from pipeline.client import ClientConfig, GatewayClient, close_process_clients
from pipeline.compactor.worker import CompactionRun, run_one
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import compaction_pb2 as cpb
from protos.metastore.v1 import compaction_pb2_grpc

REPO = Path(__file__).resolve().parents[2]
DB, TABLE, PART = "bench", "events", "2024-01-01"


def _read(spark: Any, client: GatewayClient, location: str) -> tuple[int, float, tuple[int, int]]:
    """(files, seconds, sums) of one reader's whole read of the partition."""
    started = time.perf_counter()
    snap = client.snapshot([f"{DB}.{TABLE}"])
    files = visible_files(location, snap.table(f"{DB}.{TABLE}").write_ids(), snap.txn_list())
    row = spark.read.parquet(*[f"file://{p}" for p, _ in files]).selectExpr(
        "sum(id) AS ids", "sum(length(payload)) AS chars").collect()[0]
    return len(files), time.perf_counter() - started, (int(row["ids"]), int(row["chars"]))


def _reads(spark: Any, client: GatewayClient, location: str, runs: int) -> tuple[int, list[float], tuple[int, int]]:
    files, _, sums = _read(spark, client, location)  # warm-up
    times = []
    for _ in range(runs):
        f, seconds, s = _read(spark, client, location)
        assert (f, s) == (files, sums), "two reads of one unchanged partition disagree"
        times.append(seconds)
    return files, times, sums


def _setup(spark: Any, client: GatewayClient, root: Path, deltas: int, rows: int) -> str:
    try:
        client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=DB)))
    except grpc.RpcError:
        pass
    client.catalog.CreateTable(pb.CreateTableRequest(table=pb.Table(
        db_name=DB, name=TABLE, table_type=pb.MANAGED, transactional=True,
        columns=[pb.FieldSchema(name="id", type="bigint"), pb.FieldSchema(name="payload", type="string")],
        partition_keys=[pb.FieldSchema(name="ds", type="string")],
        sd=pb.StorageDescriptor(location=f"file://{root}/{TABLE}"))))
    location = ""
    for i in range(deltas):
        txn = client.open_txn()
        w = client.allocate_write_id(txn, DB, TABLE)
        if not location:
            [p] = client.add_partitions(DB, TABLE, [pb.Partition(values=[PART])], txn_id=txn)
            location = p.sd.location
        df = spark.range(i * rows, (i + 1) * rows, numPartitions=1).selectExpr(
            "id", "substr(sha2(cast(id AS string), 256), 1, 24) AS payload")
        df.write.parquet(f"{location}/delta_{w:07d}_{w:07d}")
        client.commit_txn(txn)
    return location


def _section(args: argparse.Namespace, before: tuple[int, list[float]], after: tuple[int, list[float]],
             run: CompactionRun, loads: list[float]) -> str:
    m = machine()
    import pyspark

    mb_in, mb_out = run.bytes_in / 1e6, run.bytes_out / 1e6
    lines = [
        "## Compaction: reads before and after a major compaction, and the worker's throughput",
        "",
        f"Command: `{' '.join(['python -m pipeline.compactor.bench', *sys.argv[1:]])}` "
        f"({dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC).",
        f"Machine: {m['nproc']} cores ({m['cpu_model']}), {m['mem_gib']} GiB, Python {m['python']}, "
        f"PySpark {pyspark.__version__}, Spark master local[2]. 1-minute load average during the run: "
        f"{min(loads):.1f} to {max(loads):.1f} — **the machine was shared with other engineers' test runs**, "
        "so absolute times are inflated and noisy; the before/after ratio is the figure to read.",
        "",
        f"One partition, {args.deltas} appends of {args.rows:,} rows each (one Parquet file per delta), "
        f"{args.deltas * args.rows:,} rows in all. A read = snapshot + file listing + Spark scan of every column; "
        f"median of {args.runs} timed reads after one warm-up.",
        "",
        "| partition layout | files read | read time, median (min-max) |",
        "| --- | ---: | ---: |",
        f"| {args.deltas} deltas | {before[0]} | {statistics.median(before[1]):.2f} s "
        f"({min(before[1]):.2f}-{max(before[1]):.2f}) |",
        f"| after major compaction (`{Path(run.output_dir).name}`) | {after[0]} | "
        f"{statistics.median(after[1]):.2f} s ({min(after[1]):.2f}-{max(after[1]):.2f}) |",
        "",
        f"Read speed-up: {statistics.median(before[1]) / statistics.median(after[1]):.1f}x with "
        f"{before[0] / max(after[0], 1):.0f}x fewer files. Both layouts return the same sums of every column.",
        "",
        "| compaction (one worker run, claim to complete) | value |",
        "| --- | ---: |",
        f"| input | {run.files_in} files, {mb_in:.1f} MB, {run.rows:,} rows |",
        f"| output | {mb_out:.1f} MB |",
        f"| time | {run.seconds:.1f} s |",
        f"| throughput | {run.rows / run.seconds:,.0f} rows/s, {mb_in / run.seconds:.2f} MB/s (input bytes) |",
        "",
    ]
    start, end = report.markers("compaction")
    return "\n".join([start, *lines, end]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.compactor.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deltas", type=int, default=100)
    parser.add_argument("--rows", type=int, default=10000, help="rows per delta")
    parser.add_argument("--runs", type=int, default=3, help="timed reads per layout")
    parser.add_argument("--out", default=str(REPO / "docs" / "compaction-benchmarks.md"))
    args = parser.parse_args(argv)
    if args.deltas < 2 or args.rows < 1 or args.runs < 1:
        parser.error("--deltas must be at least 2, --rows and --runs at least 1")
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    root = new_workdir("msgw-compaction-bench-")
    gateway = GatewayProcess(["--conf", f"metastore.gateway.data.dir={root}/pg",
                              "--conf", "metastore.gateway.embedded.unsafe.fast=true",
                              "--conf", "hive.compactor.cleaner.on=false"])
    spark = (SparkSession.builder.master("local[2]").appName("compaction bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    loads = [load_average()]
    try:
        address = gateway.wait_serving()
        config = ClientConfig(address)
        with GatewayClient(config) as client:
            location = _setup(spark, client, root, args.deltas, args.rows)
            loads.append(load_average())
            files_before, before, sums_before = _reads(spark, client, location, args.runs)
            channel = grpc.insecure_channel(address)
            compactor = compaction_pb2_grpc.CompactorStub(channel)
            compactor.Compact(cpb.CompactRequest(db_name=DB, table_name=TABLE, partition_name=f"ds={PART}",
                                                 type=cpb.MAJOR))
            channel.close()
            run = run_one(spark, config, worker_id="bench-worker")
            if run is None or run.outcome != "compacted":
                raise SystemExit(f"the compaction did not run: {run}")
            loads.append(load_average())
            files_after, after, sums_after = _reads(spark, client, location, args.runs)
            loads.append(load_average())
            if sums_after != sums_before:
                raise SystemExit(f"rows differ after compaction: {sums_before} != {sums_after}")
        section = _section(args, (files_before, before), (files_after, after), run, loads)
        out = Path(args.out)
        if not out.exists():
            out.write_text("# Compaction benchmarks\n\nFigures of the compactor (pipeline/compactor/), each with the "
                           "command that produced it.\n\n")
        report.write_section(out, "compaction", section)
        print(section)
        return 0
    finally:
        spark.stop()
        close_process_clients()
        gateway.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
