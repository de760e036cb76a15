"""The transaction functions' statements touch a bounded number of pages whatever the history: after
3,000 committed txns with write ids, no statement inside OpenTxns, AllocateTableWriteIds or CommitTxn
reads more than a handful of buffers (auto_explain, nested statements). Before 0008 two of them read
every txn_to_write_id row of the table, or every committed txn's index entry, on each call."""

from __future__ import annotations

import re

import asyncpg

from gateway.app import Gateway
from protos.metastore.v1 import catalog_pb2 as pb
from store.events import EventType
from store.sql import txns as sql
from tests.builders import table
from tests.conftest import connect, gateway_settings

HISTORY = 3000
MAX_BUFFERS = 15  # per statement; the history is 30 and more pages of each table


async def _txn(conn: asyncpg.Connection) -> None:
    opened = await conn.fetchrow(sql.OPEN_TXNS_LOGGED, 1, 0, "test", "h", "", EventType.OPEN_TXN.value)
    txn_id = opened["first_txn_id"]
    await conn.fetchrow(sql.ALLOCATE_TABLE_WRITE_IDS_LOGGED, "db", "t", [txn_id], EventType.ALLOC_WRITE_ID.value)
    await conn.fetchrow(sql.COMMIT_TXN_LOGGED, txn_id, EventType.COMMIT_TXN.value)


async def test_txn_statements_read_a_bounded_number_of_buffers_whatever_the_history(pg_dsn: str) -> None:
    gw = Gateway(gateway_settings(pg_dsn, **{"metastore.gateway.cache.enabled": "false"}))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=(("p", "string"),),
                                                                           transactional=True)))
    finally:
        await client.channel.close()
        await gw.stop()
    conn = await asyncpg.connect(pg_dsn)
    try:
        for _ in range(HISTORY):
            await _txn(conn)
        await conn.execute("LOAD 'auto_explain'")
        await conn.execute("SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; "
                           "SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on; "
                           "SET auto_explain.log_level = notice; SET client_min_messages = notice")
        plans: list[str] = []
        conn.add_log_listener(lambda _c, message: plans.append(message.message))
        for _ in range(3):
            await _txn(conn)
    finally:
        await conn.close()
    nested = [p for p in plans if "txn_to_write_id" in p or "FROM txns" in p]
    assert nested, "auto_explain logged no nested statement"
    for plan in nested:
        top = re.search(r"Buffers: shared hit=(\d+)(?: read=(\d+))?", plan)
        buffers = int(top.group(1)) + int(top.group(2) or 0) if top else 0
        assert buffers <= MAX_BUFFERS, f"{buffers} buffers for:\n{plan}"
