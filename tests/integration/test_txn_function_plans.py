"""The transaction functions' statements touch a bounded number of pages whatever the history: after
3,000 committed txns with write ids, no statement inside OpenTxns, AllocateTableWriteIds or CommitTxn
reads more than a handful of buffers (auto_explain, nested statements). Before 0008 two of them read
every txn_to_write_id row of the table, or every committed txn's index entry, on each call. A table's
write-id snapshot (GetValidWriteIds, and every read without a snapshot of a transactional table) reads
only the rows it needs, and answers what all the rows give."""

from __future__ import annotations

import re

import asyncpg

from gateway.app import Gateway
from hive.lock_rules import DataOperationType, LockComponent, LockScope, LockType
from hive.writeids import build_valid_write_id_list
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from store import locks, txns
from store.events import EventType
from store.sql import txns as sql
from tests.builders import table
from tests.conftest import connect, gateway_settings

HISTORY = 3000
MAX_BUFFERS = 15  # per statement; the history is 30 and more pages of each table


async def _begin(conn: asyncpg.Connection) -> int:
    """A new txn, without a write id yet."""
    opened = await conn.fetchrow(sql.OPEN_TXNS_LOGGED, 1, 0, "test", "h", "", EventType.OPEN_TXN.value)
    return int(opened["first_txn_id"])


async def _allocate(conn: asyncpg.Connection, txn_id: int) -> None:
    await conn.fetchrow(sql.ALLOCATE_TABLE_WRITE_IDS_LOGGED, "db", "t", [txn_id], EventType.ALLOC_WRITE_ID.value)


async def _open(conn: asyncpg.Connection) -> int:
    """A new txn holding a write id of db.t."""
    txn_id = await _begin(conn)
    await _allocate(conn, txn_id)
    return txn_id


async def _txn(conn: asyncpg.Connection) -> None:
    await conn.fetchrow(sql.COMMIT_TXN_LOGGED, await _open(conn), EventType.COMMIT_TXN.value)


async def _create_table(pg_dsn: str, partitions: int = 0) -> None:
    """db.t, transactional, partitioned by p, with `partitions` partitions (p=v0, p=v1, ...) one txn added."""
    gw = Gateway(gateway_settings(pg_dsn, **{"metastore.gateway.cache.enabled": "false"}))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=(("p", "string"),),
                                                                           transactional=True)))
        if partitions:
            txn_rpcs = transactions_pb2_grpc.TransactionsStub(client.channel)
            (writer,) = (await txn_rpcs.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="u"))).txn_ids
            await txn_rpcs.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(txn_ids=[writer], db_name="db",
                                                                                  table_name="t"))
            await client.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name="db", table_name="t", txn_id=writer, need_result=False,
                partitions=[pb.Partition(values=[f"v{i}"]) for i in range(partitions)]))
            await txn_rpcs.CommitTxn(tpb.CommitTxnRequest(txn_id=writer))
    finally:
        await client.channel.close()
        await gw.stop()


async def _table_with_history(pg_dsn: str) -> asyncpg.Connection:
    """db.t, transactional, after HISTORY committed txns that each took a write id; a connection to it."""
    await _create_table(pg_dsn)
    conn = await asyncpg.connect(pg_dsn)
    for _ in range(HISTORY):
        await _txn(conn)
    return conn


async def _explained(conn: asyncpg.Connection) -> list[str]:
    """From now on, the plan of every statement `conn` runs, nested ones too, with the buffers it read."""
    await conn.execute("LOAD 'auto_explain'")
    await conn.execute("SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; "
                       "SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on; "
                       "SET auto_explain.log_level = notice; SET client_min_messages = notice")
    plans: list[str] = []
    conn.add_log_listener(lambda _c, message: plans.append(message.message))
    return plans


def _check_bounded(plans: list[str], max_buffers: int = MAX_BUFFERS,
                   touching: tuple[str, ...] = ("txn_to_write_id", "FROM txns")) -> None:
    nested = [p for p in plans if any(name in p for name in touching)]
    assert nested, "auto_explain logged no nested statement"
    for plan in nested:
        top = re.search(r"Buffers: shared hit=(\d+)(?: read=(\d+))?", plan)
        buffers = int(top.group(1)) + int(top.group(2) or 0) if top else 0
        assert buffers <= max_buffers, f"{buffers} buffers for:\n{plan}"


async def test_txn_statements_read_a_bounded_number_of_buffers_whatever_the_history(pg_dsn: str) -> None:
    conn = await _table_with_history(pg_dsn)
    try:
        plans = await _explained(conn)
        for _ in range(3):
            await _txn(conn)
    finally:
        await conn.close()
    _check_bounded(plans)


async def test_a_tables_write_id_snapshot_reads_the_rows_it_needs_and_equals_what_all_rows_give(
        pg_dsn: str) -> None:
    conn = await _table_with_history(pg_dsn)
    try:
        table_id = int(await conn.fetchval("SELECT table_id FROM next_write_id"))
        # Write ids out of txn order, an aborted txn, open ones, and one committed after an older snapshot.
        first, second = await _open(conn), await _open(conn)
        await conn.fetchrow(sql.COMMIT_TXN_LOGGED, second, EventType.COMMIT_TXN.value)
        aborted, late = await _open(conn), await _open(conn)
        await conn.execute(sql.MARK_ABORTED, [aborted])
        older = await txns.get_open_txns(conn)
        await conn.fetchrow(sql.COMMIT_TXN_LOGGED, late, EventType.COMMIT_TXN.value)
        # HIVE-18864's order: a txn open in the snapshot takes its write id after one opened later did, so
        # the later txn's write id is below the snapshot's write id high watermark and must be an exception.
        slow = await _begin(conn)
        skewed = await txns.get_open_txns(conn)
        await _open(conn)
        await _allocate(conn, slow)
        now = await txns.get_open_txns(conn)
        assert first in now.exceptions and aborted in now.aborted and late not in now.exceptions
        all_rows = [(r["txn_id"], r["write_id"]) for r in
                    await conn.fetch("SELECT txn_id, write_id FROM txn_to_write_id WHERE table_id = $1", table_id)]
        state = await conn.fetchrow(sql.TABLE_WRITE_ID_STATE, table_id)
        plans = await _explained(conn)
        for txn_list in (now, older, skewed):
            expected = build_valid_write_id_list("db.t", txn_list, all_rows, state["next"], state["cleaned_hwm"])
            assert await txns.table_write_ids(conn, "db.t", table_id, txn_list) == expected
    finally:
        await conn.close()
    assert len(all_rows) > HISTORY
    # One index probe (3 pages) per open or aborted txn of the snapshot, not a page per 150 rows of history.
    _check_bounded(plans, MAX_BUFFERS + 3 * len(now.exceptions))


# The functions a write txn calls, and those they call: planned once per session (store/schema/0027).
GENERIC_PLANS = ("open_txns", "allocate_write_ids", "allocate_table_write_ids", "lock_latest_table", "commit_txn",
                 "txn_write_ids", "release_txn_locks", "append_events", "enqueue_locks")


async def test_the_txn_functions_plan_each_statement_once_per_session_not_per_call(pg_dsn: str) -> None:
    """Planned for the call's values, a statement over an array argument always looks cheaper than its
    generic plan, so PostgreSQL planned it again on every call (188 µs per gRPC write txn). A migration
    that replaces one of these functions must say the setting again: CREATE OR REPLACE drops it."""
    conn = await asyncpg.connect(pg_dsn)  # a migrated database: the functions as the migrations left them
    try:
        configs = dict(await conn.fetch("SELECT proname, proconfig FROM pg_proc WHERE proname = ANY($1::text[])",
                                        list(GENERIC_PLANS)))
    finally:
        await conn.close()
    assert set(configs) == set(GENERIC_PLANS)
    assert {name: "plan_cache_mode=force_generic_plan" in (config or []) for name, config in configs.items()} == \
        dict.fromkeys(GENERIC_PLANS, True)


async def test_a_commit_releases_its_locks_through_the_index_whatever_other_txns_hold(pg_dsn: str) -> None:
    """release_txn_locks' generic plan probes hive_locks_by_txn for the txn's rows: before 0027 it could
    not use that partial index, and a commit read every page of hive_locks (1 ms once released locks
    awaited vacuum). Other txns' locks stay."""
    await _create_table(pg_dsn)
    conn = await asyncpg.connect(pg_dsn)
    try:
        # Other txns, each holding a lock: hive_locks spans more pages than a statement may read.
        opened = await conn.fetchrow(sql.OPEN_TXNS_LOGGED, 2000, 0, "test", "h", "", EventType.OPEN_TXN.value)
        holders = list(range(opened["first_txn_id"], opened["last_txn_id"] + 1))
        await locks.enqueue_many(conn, [locks.LockRequest(
            (LockComponent(LockScope("db", f"t{k}"), LockType.SHARED_READ, DataOperationType.SELECT),), txn_id=holder)
            for k, holder in enumerate(holders)])
        pages = await conn.fetchval("SELECT pg_relation_size('hive_locks') / 8192")
        txn_id = await _open(conn)
        await locks.enqueue(conn, locks.LockRequest(
            (LockComponent(LockScope("db", "t"), LockType.SHARED_WRITE, DataOperationType.INSERT),), txn_id=txn_id))
        plans = await _explained(conn)
        await conn.fetchrow(sql.COMMIT_TXN_LOGGED, txn_id, EventType.COMMIT_TXN.value)
        commit_plans = list(plans)
        left = await conn.fetch("SELECT txn_id FROM hive_locks ORDER BY txn_id")
    finally:
        await conn.close()
    assert pages > MAX_BUFFERS
    assert [r["txn_id"] for r in left] == holders
    assert not [p for p in commit_plans if "Seq Scan on hive_locks" in p]
    _check_bounded(commit_plans, touching=("hive_locks",))


async def test_write_conflict_checks_probe_by_key_when_statistics_saw_no_open_txn(pg_dsn: str) -> None:
    """The write-write conflict checks (store/sql/txns.py) start from the versions they name and probe
    their writers' txns by key. Statistics gathered while no txn was open, then a thousand open txns
    holding write ids of the table (a streaming writer's batch): a plan of the joins could start from
    the open txns, which the statistics put at a row or two, and scanned txn_to_write_id once per open
    txn (2,009 buffers read by one check here; 11 to 13 ms a check in auto_explain's log)."""
    await _create_table(pg_dsn, partitions=3000)
    conn = await asyncpg.connect(pg_dsn)
    try:
        await conn.execute("ANALYZE txns; ANALYZE txn_to_write_id; ANALYZE partitions; ANALYZE tbls")
        batch = await conn.fetchrow(sql.OPEN_TXNS_LOGGED, 1000, 0, "test", "h", "", EventType.OPEN_TXN.value)
        await conn.fetchrow(sql.ALLOCATE_TABLE_WRITE_IDS_LOGGED, "db", "t",
                            list(range(batch["first_txn_id"], batch["last_txn_id"] + 1)),
                            EventType.ALLOC_WRITE_ID.value)
        me = await _open(conn)
        table_id = int(await conn.fetchval("SELECT table_id FROM next_write_id"))
        plans = await _explained(conn)
        for _ in range(7):  # the five plans for the call's values, then the generic one
            for names in ([f"p=new{i}" for i in range(10)], [f"p=v{i}" for i in range(10)]):
                assert await conn.fetchrow(sql.PARTITION_WRITERS_IN_FLIGHT, table_id, names, me) is None
                assert await conn.fetchrow(sql.PARTITION_CREATED_IN_FLIGHT, table_id, names, me) is None
            assert await conn.fetchrow(sql.TABLE_WRITERS_IN_FLIGHT, table_id, me) is None
            assert await conn.fetchrow(sql.NAME_WRITERS_IN_FLIGHT, "db", "t", me) is None
    finally:
        await conn.close()
    # A few pages per version named (its writer's write id and txn, by key; a table of write ids a few
    # pages long may be read whole instead, as cheap), not pages per open txn (2,009 buffers before).
    _check_bounded(plans, MAX_BUFFERS + 15 * 10, touching=("txn_to_write_id",))
