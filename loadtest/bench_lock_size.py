"""One lock request of many partition components, the gateway and the Hive Metastore side by side: what
Hive 2.3's and 3's DbTxnManager send for a query that reads that many partitions (one SHARED_READ
component per partition, in one `lock` call, in the query's txn).

    python -m loadtest.bench_lock_size                        # 1,000, 10,000 and 30,000 components
    python -m loadtest.bench_lock_size --sizes 1000,10000,50000

Both targets are called over Thrift by the same client (hmsclient, one connection): the gateway as its
own process (`metastore-gateway serve`) on a fresh embedded PostgreSQL, and the Hive Metastore 2.3.10 from
pyspark's jars on its own fresh embedded PostgreSQL with Hive's transaction tables; both durable (fsync
on). Per size: `open_txns` -> `lock` (timed) -> `commit_txn`, then an EXCLUSIVE table lock of another
txn, which must wait (checked), and its `commit_txn`. Prints a markdown table; docs/benchmarks.md keeps the
latest one by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Sequence

from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ttypes as T

from loadtest import harness, hms


def lock_times(address: str, sizes: Sequence[int]) -> list[float]:
    """Seconds each lock of `size` partition components took on the metastore at `address`."""
    host, port = address.rsplit(":", 1)
    out = []
    with hmsclient.HMSClient(host=host, port=int(port)) as client:
        for size in sizes:
            reader = client.open_txns(T.OpenTxnRequest(num_txns=1, user="bench", hostname="h")).txn_ids[0]
            components = [T.LockComponent(type=T.LockType.SHARED_READ, level=T.LockLevel.PARTITION, dbname="default",
                                          tablename="t", partitionname=f"p={i}") for i in range(size)]
            started = time.perf_counter()
            granted = client.lock(T.LockRequest(component=components, txnid=reader, user="bench", hostname="h"))
            out.append(time.perf_counter() - started)
            writer = client.open_txns(T.OpenTxnRequest(num_txns=1, user="bench", hostname="h")).txn_ids[0]
            waiting = client.lock(T.LockRequest(component=[T.LockComponent(
                type=T.LockType.EXCLUSIVE, level=T.LockLevel.TABLE, dbname="default", tablename="t")],
                txnid=writer, user="bench", hostname="h"))
            if (granted.state, waiting.state) != (T.LockState.ACQUIRED, T.LockState.WAITING):
                raise RuntimeError(f"{address}: lock states {granted.state}, {waiting.state} at {size} components")
            client.commit_txn(T.CommitTxnRequest(txnid=reader))
            client.abort_txns(T.AbortTxnsRequest(txn_ids=[writer]))
            print(f"  {size:,} components: {out[-1]:.3f} s", flush=True)
    return out


async def gateway_times(sizes: Sequence[int]) -> list[float]:
    with harness.workdir("msgw-bench-lock-size-") as root:
        async with harness.postgres(root / "pg", fast=False) as dsn:
            proc = await harness.start_gateway("--dsn", dsn, log_path=root / "gateway.log")
            try:
                return await asyncio.to_thread(lock_times, proc.thrift_address, sizes)
            finally:
                proc.stop()


async def hms_times(sizes: Sequence[int]) -> list[float]:
    reason = hms.hms_unavailable_reason() or hms.postgres_unavailable_reason()
    if reason:
        raise hms.HmsError(f"the Hive Metastore target cannot run here: {reason}")
    with harness.workdir("msgw-bench-lock-size-hms-") as root:
        async with hms.hms_process(workdir=root, backing="postgresql", durable=True, transactions=True) as server:
            return await asyncio.to_thread(lock_times, server.address, sizes)


async def run(sizes: Sequence[int]) -> str:
    print("gateway:", flush=True)
    gateway = await gateway_times(sizes)
    print(f"Hive Metastore {hms.hms_version()}:", flush=True)
    peer = await hms_times(sizes)
    rows = ["| components | gateway s | Hive Metastore s | Hive Metastore / gateway |", "| ---: | ---: | ---: | ---: |"]
    rows += [f"| {n:,} | {g:.2f} | {h:.2f} | **{h / g:.1f}x** |" for n, g, h in zip(sizes, gateway, peer)]
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtest.bench_lock_size", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,30000", help="components per lock, comma-separated")
    args = parser.parse_args(argv)
    print(asyncio.run(run([int(s) for s in args.sizes.split(",")])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
