"""Where a small write transaction's time goes, RPC by RPC: `python -m loadtest.txn_rpc_costs`.

A write transaction is OpenTxns -> AllocateTableWriteIds -> AddPartitions(10) -> CommitTxn. This runs
`--calls` transactions phase by phase (all the opens, then all the allocations, ...) with
`--clients` concurrent callers, then a batch writer's two calls (Hive Streaming's transaction
batch: OpenTxns of 10 txns, AllocateTableWriteIds for all 10), against one gateway process on a
fresh, durable embedded PostgreSQL (fsync on), and measures each phase alone: calls/s and latency;
CPU per call of the gateway process, of PostgreSQL (postmaster and backends) and of this client;
WAL fsyncs, commits and WAL bytes per call (pg_stat_io / pg_stat_database); and the share of
pg_stat_activity samples (every 25 ms) in which a backend waited for the notification_sequence row,
the lock every event append takes until commit. Statements per call are
tests/e2e/test_txn_round_trips.py's count. The section `bench:txn-rpcs` of `--out` is replaced when
`--out` is given.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Awaitable, Callable

import grpc

from loadtest import probes
from loadtest.gateway_targets import DB, TABLE, bench_table
from loadtest.harness import postgres, start_gateway, workdir
from loadtest.report import machine_line, markers, write_section
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc, transactions_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb

BATCH = 10  # txns per call of a batch writer (Hive Streaming's transaction batch)
STATEMENTS = {"OpenTxns": 1, "AllocateTableWriteIds": 1, "AddPartitions(10)": 7, "CommitTxn": 1,
              f"OpenTxns({BATCH} txns)": 1, f"AllocateTableWriteIds({BATCH} txns)": 1}


async def _phase(calls: int, clients: int, one: Callable[[int], Awaitable[object]]) -> list[float]:
    """`one(i)` for i in range(calls), `clients` at a time; each call's latency in seconds."""
    latencies: list[float] = []
    todo = iter(range(calls))

    async def caller() -> None:
        for i in todo:
            started = time.perf_counter()
            await one(i)
            latencies.append(time.perf_counter() - started)

    await asyncio.gather(*(caller() for _ in range(clients)))
    return latencies


async def measure(address: str, dsn: str, gateway_pid: int, calls: int, clients: int, round_: int,
                  settle_s: float) -> dict[str, dict[str, float]]:
    stats_conn, datname, postmaster, sequence_oid = await probes.connect_stats(dsn)
    out: dict[str, dict[str, float]] = {}
    async with grpc.aio.insecure_channel(address) as channel:
        txns = transactions_pb2_grpc.TransactionsStub(channel)
        catalog = catalog_pb2_grpc.CatalogStub(channel)
        ids: list[int] = []

        async def open_txn(i: int) -> None:
            ids.append((await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="bench", hostname="h"))).txn_ids[0])

        async def allocate(i: int) -> None:
            await txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(txn_ids=[ids[i]], db_name=DB,
                                                                              table_name=TABLE))

        async def add(i: int) -> None:
            await catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=TABLE, txn_id=ids[i],
                partitions=[pb.Partition(values=[f"r{round_}c{clients}", f"{i * 10 + j}"]) for j in range(10)]))

        async def commit(i: int) -> None:
            await txns.CommitTxn(tpb.CommitTxnRequest(txn_id=ids[i]))

        batches: list[list[int]] = []

        async def open_batch(i: int) -> None:
            reply = await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=BATCH, user="bench", hostname="h"))
            batches.append(list(reply.txn_ids))

        async def allocate_batch(i: int) -> None:
            await txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(txn_ids=batches[i], db_name=DB,
                                                                              table_name=TABLE))

        # A batch writer (Hive Streaming): one call opens BATCH txns, one allocates their write ids.
        phases = (("OpenTxns", calls, open_txn), ("AllocateTableWriteIds", calls, allocate),
                  ("AddPartitions(10)", calls, add), ("CommitTxn", calls, commit),
                  (f"OpenTxns({BATCH} txns)", calls // BATCH, open_batch),
                  (f"AllocateTableWriteIds({BATCH} txns)", calls // BATCH, allocate_batch))
        # Backends report their pg_stat counters when idle, up to 10 s late (PGSTAT_IDLE_INTERVAL): each
        # phase's counters are read after such a pause, which is also the next phase's starting point.
        await asyncio.sleep(settle_s)
        wal_a = await probes.wal_stats(stats_conn, datname)
        for name, n, one in phases:
            probe = probes.RunProbe(gateway_pid, postmaster, stats_conn, datname, sequence_oid=sequence_oid)
            client_a = time.process_time()
            probe.start()
            sampler = asyncio.create_task(probe.sample())
            latencies = await _phase(n, clients, one)
            probe.end()
            await sampler
            client_s = time.process_time() - client_a
            await asyncio.sleep(settle_s)
            wal_b = await probes.wal_stats(stats_conn, datname)
            cpu = probe.cpu()
            row = {"calls_per_s": n / cpu["wall_s"], "p50_ms": 1e3 * statistics.median(latencies),
                   "gateway_us": 1e6 * cpu["gateway"] * cpu["wall_s"] / n,
                   "postgres_us": 1e6 * cpu["postgres"] * cpu["wall_s"] / n,
                   "client_us": 1e6 * client_s / n,
                   "txns_per_call": BATCH if "txns)" in name else 1,
                   "seq_wait": probe.seq_waiter_samples / max(1, probe.samples)}
            if wal_a and wal_b:
                row.update({k: (wal_b[k] - wal_a[k]) / n for k in ("wal_fsyncs", "commits", "wal_bytes")})
            wal_a = wal_b
            out[name] = row
    await stats_conn.close()
    return out


def table(results: dict[int, dict[str, dict[str, float]]]) -> str:
    lines = ["| RPC | clients | statements | calls/s | txns/s | p50 ms | gateway CPU µs | PostgreSQL CPU µs "
             "| client CPU µs | WAL fsyncs | commits | WAL KiB | queued on the sequence |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for clients, phases in results.items():
        for name, r in phases.items():
            lines.append(
                f"| {name} | {clients} | {STATEMENTS[name]} | {r['calls_per_s']:,.0f} "
                f"| {r['calls_per_s'] * r['txns_per_call']:,.0f} | {r['p50_ms']:.2f} "
                f"| {r['gateway_us']:,.0f} | {r['postgres_us']:,.0f} | {r['client_us']:,.0f} "
                f"| {r.get('wal_fsyncs', float('nan')):.2f} | {r.get('commits', float('nan')):.2f} "
                f"| {r.get('wal_bytes', float('nan')) / 1024:.1f} | {r['seq_wait']:.0%} |")
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> str:
    with workdir(prefix="msgw-txnrpc-") as root:
        async with postgres(root, fast=False) as dsn:
            gw = await start_gateway("--dsn", dsn, "--loop", args.loop)
            try:
                with grpc.insecure_channel(gw.address) as channel:
                    catalog = catalog_pb2_grpc.CatalogStub(channel)
                    catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=DB)))
                    catalog.CreateTable(pb.CreateTableRequest(table=bench_table()))
                results = {}
                for round_, clients in enumerate(args.clients):
                    print(f"{clients} client(s) ...", file=sys.stderr)
                    results[clients] = await measure(gw.address, dsn, gw.pid, args.calls, clients, round_,
                                                     args.settle)
            finally:
                gw.stop()
    return table(results)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=1000, help="transactions per client count (default 1000)")
    p.add_argument("--clients", type=lambda s: [int(x) for x in s.split(",")], default=[1, 16],
                   help="client counts (default 1,16)")
    p.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    p.add_argument("--settle", type=float, default=11.0,
                   help="seconds to wait around each phase for PostgreSQL's statistics (default 11)")
    p.add_argument("--out", type=Path, help="markdown file whose bench:txn-rpcs section is replaced")
    args = p.parse_args(argv)
    rows = asyncio.run(run(args))
    command = "python -m loadtest.txn_rpc_costs" + (f" --calls {args.calls}" if args.calls != 1000 else "")
    start, end = markers("txn-rpcs")
    section = (f"{start}\n### Per RPC: where a write transaction's time goes\n\n"
               f"`{command}` ({machine_line()}), one gateway process (uvloop) on a fresh embedded PostgreSQL, durable "
               f"(fsync on); each RPC measured alone, {args.calls} calls per client count. CPU, WAL fsyncs, commits "
               f"and WAL bytes are per call.\n\n{rows}\n{end}\n")
    print(section)
    if args.out:
        write_section(args.out, "txn-rpcs", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
