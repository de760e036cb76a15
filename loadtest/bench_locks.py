"""Lock manager figures against one gateway process: uncontended lock+unlock round trips per second,
and how long a writer waits behind 16 readers cycling on one table.

    python -m loadtest.bench_locks                  # writes the locks section of docs/benchmarks.md
    python -m loadtest.bench_locks --seconds 5 --writers 10 --fsync off

The gateway runs as its own OS process (`python -m gateway.cli serve --port 0 --data-dir <tmp>`) on a
fresh embedded PostgreSQL in a temporary directory, removed afterwards; by default once durable
(fsync on, the default) and once with `metastore.gateway.embedded.unsafe.fast=true`. The clients run
in this process on asyncio, one gRPC channel each.

* **Uncontended:** each client loops `Lock(EXCLUSIVE on its own table)` -> `Unlock` for `--seconds`;
  one client, then 16 (on 16 tables: no lock conflicts, but every enqueue takes the one
  next_lock_id row, as Hive's NEXT_LOCK_ID).
* **Writer behind readers:** `--readers` readers loop `Lock(SHARED_READ on bench.hot)` -> (wait) ->
  hold `--hold-ms` -> `Unlock` with no pause, so the table is never free of readers. Every 0.3-0.6 s
  a writer asks `EXCLUSIVE` on it and the time from Lock to ACQUIRED is taken, `--writers` times,
  once with Hive's client back-off (100 ms doubling; pipeline/locking.py) and once polling CheckLock
  every 5 ms (the server's own fairness without the back-off's granularity). Readers wait with
  Hive's back-off. Strict FIFO means the writer waits only for the readers already there.

The section between `<!-- bench:locks:start -->` and `<!-- bench:locks:end -->` of `--out` is replaced
(file and markers are created when missing); other sections are left as they are.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import random
import shlex
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import grpc

from loadtest import probes, report
from loadtest.harness import conf_args, start_gateway, workdir
from loadtest.histogram import percentile
from pipeline.locking import LockClient, RetryPolicy
from protos.metastore.v1 import catalog_pb2 as cpb
from protos.metastore.v1 import catalog_pb2_grpc
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc

REPO = Path(__file__).resolve().parent.parent
SECTION_START, SECTION_END = report.markers("locks")
UNSAFE_FAST_CONF = "metastore.gateway.embedded.unsafe.fast=true"


def _comp(table: str, lock_type: lpb.LockType) -> lpb.LockComponent:
    return lpb.LockComponent(db_name="bench", table_name=table, type=lock_type)


@dataclass
class Uncontended:
    clients: int
    round_trips: int
    seconds: float
    latencies_ms: list[float]

    @property
    def per_second(self) -> float:
        return self.round_trips / self.seconds


@dataclass
class WriterWaits:
    polling: str
    waits_ms: list[float] = field(default_factory=list)
    reader_waits_ms: list[float] = field(default_factory=list)
    reader_grants: int = 0


async def _channels(address: str, n: int) -> list[grpc.aio.Channel]:
    channels = [grpc.aio.insecure_channel(address) for _ in range(n)]
    await asyncio.gather(*(asyncio.wait_for(c.channel_ready(), 30) for c in channels))
    return channels


async def create_locked_objects(address: str, clients: int) -> None:
    """The database and tables the runs lock: real objects, as clients' locks name them (a lock may also name
    missing ones, as in Hive)."""
    (channel,) = await _channels(address, 1)
    catalog = catalog_pb2_grpc.CatalogStub(channel)
    await catalog.CreateDatabase(cpb.CreateDatabaseRequest(database=cpb.Database(name="bench")))
    for name in ["hot", *(f"u{i}" for i in range(clients))]:
        await catalog.CreateTable(cpb.CreateTableRequest(table=cpb.Table(
            db_name="bench", name=name, columns=[cpb.FieldSchema(name="id", type="bigint")])))
    await channel.close()


async def uncontended(address: str, clients: int, seconds: float) -> Uncontended:
    channels = await _channels(address, clients)
    latencies: list[float] = []
    count = 0
    stop_at = time.monotonic() + seconds

    async def loop(i: int, channel: grpc.aio.Channel) -> None:
        nonlocal count
        stub = locks_pb2_grpc.LocksStub(channel)
        request = lpb.LockRequest(components=[_comp(f"u{i}", lpb.EXCLUSIVE)], user="bench")
        while time.monotonic() < stop_at:
            t0 = time.perf_counter()
            reply = await stub.Lock(request)
            assert reply.state == lpb.ACQUIRED, reply
            await stub.Unlock(lpb.UnlockRequest(lock_id=reply.lock_id))
            latencies.append((time.perf_counter() - t0) * 1000)
            count += 1

    started = time.monotonic()
    await asyncio.gather(*(loop(i, c) for i, c in enumerate(channels)))
    elapsed = time.monotonic() - started
    for c in channels:
        await c.close()
    return Uncontended(clients, count, elapsed, latencies)


async def reference_read(address: str, seconds: float) -> float:
    """One client's ShowLocks round trips per second on an empty database: one read-only database
    transaction per call, the floor a lock call is added to on this machine."""
    (channel,) = await _channels(address, 1)
    stub = locks_pb2_grpc.LocksStub(channel)
    count, started = 0, time.monotonic()
    while time.monotonic() - started < seconds:
        await stub.ShowLocks(lpb.ShowLocksRequest(db_name="empty"))
        count += 1
    elapsed = time.monotonic() - started
    await channel.close()
    return count / elapsed


async def writer_behind_readers(address: str, readers: int, hold_ms: float, writers: int,
                                fast_poll: bool) -> WriterWaits:
    channels = await _channels(address, readers + 1)
    result = WriterWaits("CheckLock every 5 ms" if fast_poll else "Hive back-off (100 ms doubling)")
    stop = asyncio.Event()

    async def reader(channel: grpc.aio.Channel) -> None:
        client = LockClient(locks_pb2_grpc.LocksStub(channel), RetryPolicy(num_retries=1000, max_sleep_s=60))
        request = lpb.LockRequest(components=[_comp("hot", lpb.SHARED_READ)], user="reader")
        while not stop.is_set():
            t0 = time.perf_counter()
            reply = await client.acquire(request)
            result.reader_waits_ms.append((time.perf_counter() - t0) * 1000)
            result.reader_grants += 1
            await asyncio.sleep(hold_ms / 1000)
            await client.release(reply.lock_id)

    async def fast_acquire(stub: locks_pb2_grpc.LocksStub, request: lpb.LockRequest) -> lpb.LockResponse:
        reply = await stub.Lock(request)
        while reply.state != lpb.ACQUIRED:
            await asyncio.sleep(0.005)
            reply = await stub.CheckLock(lpb.CheckLockRequest(lock_id=reply.lock_id))
        return reply

    tasks = [asyncio.create_task(reader(c)) for c in channels[:readers]]
    stub = locks_pb2_grpc.LocksStub(channels[-1])
    writer = LockClient(stub, RetryPolicy(num_retries=1000, max_sleep_s=60))
    request = lpb.LockRequest(components=[_comp("hot", lpb.EXCLUSIVE)], user="writer")
    await asyncio.sleep(1.0)  # readers reach their steady cycle
    for _ in range(writers):
        await asyncio.sleep(random.uniform(0.3, 0.6))
        t0 = time.perf_counter()
        reply = await (fast_acquire(stub, request) if fast_poll else writer.acquire(request))
        result.waits_ms.append((time.perf_counter() - t0) * 1000)
        await asyncio.sleep(0.01)
        await stub.Unlock(lpb.UnlockRequest(lock_id=reply.lock_id))
    stop.set()
    await asyncio.gather(*tasks)
    for c in channels:
        await c.close()
    return result


@dataclass
class Run:
    fsync: str
    load: dict[str, float]
    reference_per_second: float
    uncontended: list[Uncontended]
    writer: list[WriterWaits]


async def bench(fsync_on: bool, args: argparse.Namespace) -> Run:
    window = probes.MachineWindow()
    conf = ["metastore.gateway.max.concurrent.rpcs=10000", *([] if fsync_on else [UNSAFE_FAST_CONF])]
    with workdir(prefix="msgw-bench-locks-") as work:
        gateway = await start_gateway("--data-dir", str(work / "pg"), *conf_args(*conf), log_path=work / "gateway.log")
        try:
            address = gateway.address
            print(f"gateway (fsync {'on' if fsync_on else 'off'}) at {address}", flush=True)
            await create_locked_objects(address, 16)
            reference = await reference_read(address, args.seconds)
            un = [await uncontended(address, n, args.seconds) for n in (1, 16)]
            waits = [await writer_behind_readers(address, args.readers, args.hold_ms, args.writers, fast)
                     for fast in (False, True)]
        finally:
            await asyncio.to_thread(gateway.stop, 60)
    return Run("on" if fsync_on else "off", window.close().as_dict(), reference, un, waits)


def render(runs: list[Run], args: argparse.Namespace, command: str) -> str:
    now = dt.datetime.now(dt.timezone.utc)
    machine = probes.machine()
    lines = [
        SECTION_START,
        "## Locks",
        "",
        *report.produced_by("bench_locks", command),
        f"on {now:%Y-%m-%d %H:%M} UTC at commit `{probes.code_version()['commit']}`: {machine['nproc']} cores "
        f"({machine['cpu_model']}), Python {machine['python']}. The gateway is its own process (on its default "
        "loop, uvloop) on a fresh embedded PostgreSQL; the clients run in the benchmark process (asyncio, one gRPC "
        "channel each), all on this machine. Machine state while measuring: "
        + "; ".join(f"fsync {r.fsync}: {probes.describe_load(r.load, machine['nproc'])}" for r in runs) + ".",
        "",
        f"**Uncontended lock + unlock** (`Lock` EXCLUSIVE on the client's own table, then `Unlock`; "
        f"{args.seconds:g} s per row):",
        "",
        *report.table(["PostgreSQL fsync", "clients", "round trips/s", "p50 ms", "p99 ms"],
                      [[run.fsync, u.clients, f"{u.per_second:,.0f}", f"{percentile(u.latencies_ms, 50):.2f}",
                        f"{percentile(u.latencies_ms, 99):.2f}"] for run in runs for u in run.uncontended]),
        "",
        "For reference, one client's read-only `ShowLocks` (one read-only database transaction per call) runs at "
        + ", ".join(f"{r.reference_per_second:,.0f}/s (fsync {r.fsync})" for r in runs)
        + ": the floor of one RPC with one database transaction on this machine; a lock + unlock is two write "
        "transactions.",
        "",
        f"**A writer behind {args.readers} readers cycling on one table** (each reader: SHARED_READ, hold "
        f"{args.hold_ms:g} ms, Unlock, again at once, waiting with Hive's back-off; the writer asks EXCLUSIVE "
        f"{args.writers} times, 0.3-0.6 s apart; time from `Lock` to ACQUIRED):",
        "",
        *report.table(["PostgreSQL fsync", "writer polls with", "writer wait median ms", "p90 ms", "max ms",
                       "reader wait median ms", "reader p99 ms", "reader grants"],
                      [[run.fsync, w.polling, f"{statistics.median(w.waits_ms):.0f}",
                        f"{percentile(w.waits_ms, 90):.0f}", f"{max(w.waits_ms):.0f}",
                        f"{statistics.median(w.reader_waits_ms):.0f}",
                        f"{percentile(w.reader_waits_ms, 99):.0f}", w.reader_grants]
                       for run in runs for w in run.writer], numeric_from=2),
        "",
        "Reading it: the table is never free of readers, yet the writer waits only for the readers that were "
        f"there before it to finish their {args.hold_ms:g} ms, plus RPCs and polling (strict FIFO: readers arriving "
        "after it queue behind it; tests/e2e/test_locks.py checks that none overtakes it). "
        "With Hive's back-off the writer's wait is rounded up to its polling steps (100, 200, 400 ms ...), and "
        "readers queued behind it inherit their own back-off steps. Every enqueue holds the one `next_lock_id` row "
        "until it commits (so ext ids become visible in id order), so enqueues commit one at a time across all "
        "gateways. A Lock call is one statement (the `enqueue_locks` function), and the Lock calls that arrive at a "
        "gateway while one commits share the next statement and its WAL flush (group commit, "
        "`metastore.gateway.txn.group.commit.max`), so the 16-client rate is bounded by CPU, as client, gateway "
        "and PostgreSQL share the machine's cores.",
        SECTION_END,
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtest.bench_locks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="duration of each uncontended run")
    parser.add_argument("--readers", type=int, default=16)
    parser.add_argument("--hold-ms", type=float, default=50.0, help="how long each reader holds its lock")
    parser.add_argument("--writers", type=int, default=20, help="writer requests per polling mode")
    parser.add_argument("--fsync", choices=("on", "off", "both"), default="both")
    parser.add_argument("--out", default="docs/benchmarks.md", help="markdown file to update ('-': print only)")
    args = parser.parse_args(argv)
    modes = {"on": [True], "off": [False], "both": [True, False]}[args.fsync]
    runs = [asyncio.run(bench(m, args)) for m in modes]
    command = "python -m loadtest.bench_locks " + " ".join(shlex.quote(a) for a in (argv if argv is not None
                                                                                      else sys.argv[1:]))
    section = render(runs, args, command.strip())
    if args.out == "-":
        print(section)
    else:
        out = REPO / args.out if not Path(args.out).is_absolute() else Path(args.out)
        report.write_section(out, "locks", section)
        print(f"wrote the locks section of {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
