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


async def _costs(conn: asyncpg.Connection, calls: int) -> dict[str, float]:
    """Backend CPU µs per call of each statement."""
    pid = await conn.fetchval("SELECT pg_backend_pid()")
    txn_ids: list[int] = []
    statements = {
        "SELECT 1": lambda i: conn.execute("SELECT 1"),
        "UPDATE of one row": lambda i: conn.execute(f"UPDATE {SCRATCH} SET n = n + 1 WHERE id = 1"),
        "pg_notify": lambda i: conn.execute("SELECT pg_notify('profile_statements', '1')"),
        "OpenTxns": lambda i: conn.fetchrow(sql.OPEN_TXNS_LOGGED, 1, 0, "bench", "h", "", EventType.OPEN_TXN.value),
        "AllocateTableWriteIds": lambda i: conn.fetchrow(sql.ALLOCATE_TABLE_WRITE_IDS_LOGGED, DB, TABLE, [txn_ids[i]],
                                                         EventType.ALLOC_WRITE_ID.value),
        "CommitTxn": lambda i: conn.fetchrow(sql.COMMIT_TXN_LOGGED, txn_ids[i], EventType.COMMIT_TXN.value),
    }
    out = {}
    for name, call in statements.items():
        before = cpu_s(pid)
        for i in range(calls):
            row = await call(i)
            if name == "OpenTxns":
                txn_ids.append(row["first_txn_id"])
        out[name] = 1e6 * (cpu_s(pid) - before) / calls
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
