"""Database round trips per write-transaction RPC, counted on the gateway's own connections.

A small write transaction is OpenTxns -> AllocateTableWriteIds -> AddPartitions -> CommitTxn (or,
Hive 2.3's way, OpenTxns -> Lock -> CommitTxn). The transaction manager's calls are one statement
each (store/schema/0007_txn_functions.sql), and so is Lock (0009_lock_enqueue.sql): each costs one
round trip and commits by itself, so no row lock (the txn counter, the txn's row, next_lock_id, the
notification sequence) is held while the gateway is away. This test fails if one of them grows
a statement again; `pytest -s` prints the statements (docs/benchmarks.md quotes the table).

Counting wraps asyncpg's Connection methods that send a statement (instrumentation of the real
driver talking to the real server; nothing is replaced). Only statements sent by the RPC's own task
count: the gateway's background loops (housekeeping, compactor, probes) run in tasks that exist
before the first call, and their statements are left out.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import asyncpg
import pytest

from gateway.app import Gateway
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import partitions, table
from tests.conftest import connect, running_gateway

StatementLog = dict[str, list[str]]


@pytest.fixture
async def gateway_without_cache(pg_dsn: str) -> AsyncIterator[Gateway]:
    async with running_gateway(pg_dsn, **{"metastore.gateway.cache.enabled": "false"}) as gw:
        yield gw


@pytest.fixture
async def statements(monkeypatch: pytest.MonkeyPatch, gateway_without_cache: Gateway) -> StatementLog:
    log: StatementLog = {"current": []}
    background = asyncio.all_tasks()  # the gateway's loops, and this test
    conn_cls = asyncpg.connection.Connection
    send_prepared, send_simple, send_many = conn_cls._execute, conn_cls.execute, conn_cls._executemany

    def note(query: str) -> None:
        if asyncio.current_task() not in background:
            log["current"].append(" ".join(query.split()))

    async def _execute(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
        note(query)
        return await send_prepared(self, query, *args, **kwargs)

    async def execute(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
        if not args:  # with arguments it goes through _execute, counted there
            note(query)
        return await send_simple(self, query, *args, **kwargs)

    async def _executemany(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
        note(query)
        return await send_many(self, query, *args, **kwargs)

    monkeypatch.setattr(conn_cls, "_execute", _execute)
    monkeypatch.setattr(conn_cls, "execute", execute)
    monkeypatch.setattr(conn_cls, "_executemany", _executemany)
    return log


async def test_the_txn_manager_calls_are_one_round_trip_each(gateway_without_cache: Gateway,
                                                             statements: StatementLog) -> None:
    client = await connect(f"127.0.0.1:{gateway_without_cache.port}")
    txns = transactions_pb2_grpc.TransactionsStub(client.channel)
    locks = locks_pb2_grpc.LocksStub(client.channel)
    await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await client.catalog.CreateTable(pb.CreateTableRequest(
        table=table("db", "t", keys=(("p", "string"),), transactional=True)))
    per_call: dict[str, list[str]] = {}

    async def count(name: str, call: Any) -> Any:
        statements["current"] = []
        reply = await call
        per_call[name] = statements["current"]
        return reply

    try:
        for round_ in range(2):  # the second round runs on warm connections and prepared statements
            (txn,) = (await count("OpenTxns", txns.OpenTxns(
                tpb.OpenTxnsRequest(num_txns=1, user="u", hostname="h")))).txn_ids
            await count("AllocateTableWriteIds", txns.AllocateTableWriteIds(
                tpb.AllocateTableWriteIdsRequest(txn_ids=[txn], db_name="db", table_name="t")))
            await count("Lock(table)", locks.Lock(lpb.LockRequest(
                components=[lpb.LockComponent(type=lpb.SHARED_READ, db_name="db", table_name="t",
                                          operation=lpb.DATA_OPERATION_INSERT)], txn_id=txn,
                user="u", hostname="h")))
            await count("AddPartitions(10)", client.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name="db", table_name="t", txn_id=txn,
                partitions=partitions([(f"r{round_}_{i}",) for i in range(10)]))))
            await count("CommitTxn", txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn)))
    finally:
        await client.channel.close()

    for name, sent in per_call.items():
        print(f"{name}: {len(sent)} statement(s)")
        for query in sent:
            print(f"    {query[:100]}")
    assert {name: len(sent) for name, sent in per_call.items()} == {
        "OpenTxns": 1, "AllocateTableWriteIds": 1, "Lock(table)": 1, "CommitTxn": 1,
        # BEGIN, lock the table, allocate, insert, conflict check, append the event, COMMIT
        "AddPartitions(10)": 7,
    }, per_call
