"""What each transaction RPC's statement costs PostgreSQL alone: `python -m loadtest.profile_statements`.

On a fresh embedded PostgreSQL (durable), migrated and given the bench table by a gateway that is
then stopped, one connection runs each statement `--calls` times back to back, each committed on its
own as the gateway runs it, and reads its backend's CPU from /proc: no gateway, no other client, no
poller, no lock waits. Three reference statements frame them (a `SELECT 1`, a one-row UPDATE, a
`pg_notify`). Then the same with `synchronous_commit=off`: the difference is what the commit's WAL
flush costs the backend in CPU (the kernel's fdatasync), not the wait for the disk.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any, Awaitable, Callable

import asyncpg
import grpc

from loadtest.gateway_targets import DB, TABLE, bench_table
from loadtest.probes import cpu_s
from loadtest.harness import postgres, start_gateway, workdir
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc
from store.events import EventType
from store.sql import txns as sql

SCRATCH = "profile_statements_counter"


BATCH = 8  # calls in one group-commit batch (store/group_commit.py): 16 clients' calls queue about this deep


async def _costs(conn: asyncpg.Connection, calls: int) -> dict[str, float]:
    """Backend CPU µs per call of each statement (a batch statement serves BATCH calls)."""
    pid = await conn.fetchval("SELECT pg_backend_pid()")
    single: list[int] = []
    batched: list[int] = []
    open_batch = ([1] * BATCH, ["bench"] * BATCH, ["h"] * BATCH, [""] * BATCH, EventType.OPEN_TXN.value,
                  [0] * BATCH)  # the txns' types: DEFAULT

    def batch_of(i: int) -> list[int]:
        return batched[i * BATCH:(i + 1) * BATCH]

    statements: dict[str, tuple[int, Callable[[int], Awaitable[Any]]]] = {  # name: (calls per statement, call)
        "SELECT 1": (1, lambda i: conn.execute("SELECT 1")),
        "UPDATE of one row": (1, lambda i: conn.execute(f"UPDATE {SCRATCH} SET n = n + 1 WHERE id = 1")),
        "pg_notify": (1, lambda i: conn.execute("SELECT pg_notify('profile_statements', '1')")),
        "OpenTxns": (1, lambda i: conn.fetch(sql.OPEN_TXNS_LOGGED, 1, 0, "bench", "h", "", EventType.OPEN_TXN.value)),
        "AllocateTableWriteIds": (1, lambda i: conn.fetch(sql.ALLOCATE_TABLE_WRITE_IDS_LOGGED, DB, TABLE, [single[i]],
                                                          EventType.ALLOC_WRITE_ID.value)),
        "CommitTxn": (1, lambda i: conn.fetch(sql.COMMIT_TXN_LOGGED, single[i], EventType.COMMIT_TXN.value)),
        f"OpenTxns, {BATCH} calls in a batch": (BATCH, lambda i: conn.fetch(sql.OPEN_TXNS_BATCH_LOGGED, *open_batch)),
        f"AllocateTableWriteIds, {BATCH} calls in a batch": (BATCH, lambda i: conn.fetch(
            sql.ALLOCATE_TABLE_WRITE_IDS_BATCH_LOGGED, [DB] * BATCH, [TABLE] * BATCH, batch_of(i),
            list(range(1, BATCH + 1)), EventType.ALLOC_WRITE_ID.value)),
        f"CommitTxn, {BATCH} calls in a batch": (BATCH, lambda i: conn.fetch(sql.COMMIT_TXNS_LOGGED, batch_of(i),
                                                                             EventType.COMMIT_TXN.value)),
    }
    out = {}
    for name, (per_statement, call) in statements.items():
        before = cpu_s(pid)
        for i in range(calls // per_statement):
            rows = await call(i)
            if name.startswith("OpenTxns"):
                (batched if per_statement > 1 else single).extend(r["first_txn_id"] for r in rows)
        out[name] = 1e6 * (cpu_s(pid) - before) / (calls // per_statement * per_statement)
    return out


async def run(calls: int) -> dict[str, tuple[float, float]]:
    with workdir(prefix="msgw-stmts-") as root:
        async with postgres(root, fast=False) as dsn:
            gw = await start_gateway("--dsn", dsn)
            try:
                with grpc.insecure_channel(gw.address) as channel:
                    catalog = catalog_pb2_grpc.CatalogStub(channel)
                    catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=DB)))
                    catalog.CreateTable(pb.CreateTableRequest(table=bench_table()))
            finally:
                gw.stop()
            conn = await asyncpg.connect(dsn)
            try:
                await conn.execute(f"CREATE TABLE {SCRATCH} (id int PRIMARY KEY, n bigint); "
                                   f"INSERT INTO {SCRATCH} VALUES (1, 0)")
                durable = await _costs(conn, calls)
                await conn.execute("SET synchronous_commit = off")
                unflushed = await _costs(conn, calls)
            finally:
                await conn.close()
    return {name: (durable[name], unflushed[name]) for name in durable}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtest.profile_statements",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args(argv)
    costs = asyncio.run(run(args.calls))
    print("| statement (one connection, back to back) | backend CPU µs, durable | with synchronous_commit=off |")
    print("| --- | ---: | ---: |")
    for name, (durable, unflushed) in costs.items():
        print(f"| {name} | {durable:.0f} | {unflushed:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
