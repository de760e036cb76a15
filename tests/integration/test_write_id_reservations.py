"""Write ids reserved under a table name no table has (store/txns.py reserve_write_ids: Hive 3's and 4's
CTAS into a transactional table allocates before it creates the table) are taken over by the table's
creation whatever the two race to: on the real PostgreSQL, an allocation for the name and the creation
of the table run at once, again and again; every allocated id must end up the table's own, as given,
never left under the name (the name's advisory lock, store/sql/txns.py LOCK_TABLE_NAME)."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

import asyncpg
import pytest

from gateway.convert import table_from_pb
from protos.metastore.v1 import catalog_pb2 as pb
from store import catalog, housekeeping
from store.db import Database
from store.errors import TableNotFound
from store.migrations import known_migrations
from store.txn_store import TxnLimits, TxnStore
from tests.builders import table
from tests.conftest import GatewayClient

ROUNDS = 30


@pytest.fixture
async def db_and_txns(gateway: GatewayClient, pg_dsn: str) -> AsyncIterator[tuple[Database, TxnStore]]:
    """The store on the gateway's database, which has the database db."""
    await gateway.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    db = await Database.connect(pg_dsn)
    try:
        yield db, TxnStore(db, TxnLimits())
    finally:
        await db.close()


async def test_an_allocation_racing_the_tables_creation_is_never_lost(db_and_txns: tuple[Database, TxnStore]) -> None:
    db, store = db_and_txns
    for i in range(ROUNDS):
        name = f"ctas{i}"
        ids, _ = await store.open_txns(2, user="u", host="h", agent_info="")
        early = await store.allocate_write_ids([ids[0]], "db", name)  # before: reserved
        created, allocated = await asyncio.gather(
            db.transact(catalog.create_table, table_from_pb(table("db", name, transactional=True))),
            store.allocate_write_ids([ids[1]], "db", name))
        held = {r["txn_id"]: r["write_id"] for r in await db.read(_rows, created.value.table_id)}
        assert held == {ids[0]: early[ids[0]], ids[1]: allocated[ids[1]]}, (i, held)
        assert sorted(held.values()) == [1, 2]
        assert await db.read(_reserved, name) == 0  # nothing left under the name
        await store.abort(ids)


async def test_a_commit_racing_the_tables_creation_is_told_to_caches_once(
        db_and_txns: tuple[Database, TxnStore]) -> None:
    """The txn that holds a reservation commits while the table of its name is created: the log tells
    the id's outcome exactly once, in the txn's COMMIT_TXN (the creation went first: the commit waited
    for it, and found the id the table's) or in the creation's ALLOC_WRITE_ID (the commit went first).
    Told in neither, every cache would count the id open for good."""
    db, store = db_and_txns
    for i in range(ROUNDS):
        name = f"race{i}"
        (txn,), _ = await store.open_txns(1, user="u", host="h", agent_info="")
        assert await store.allocate_write_ids([txn], "db", name) == {txn: 1}
        created, _ = await asyncio.gather(
            db.transact(catalog.create_table, table_from_pb(table("db", name, transactional=True))),
            store.commit(txn))
        table_id = created.value.table_id
        told = await db.read(_outcomes_told, table_id, txn)
        assert told in (["COMMIT_TXN"], ["ALLOC_WRITE_ID_EVENT"]), (i, told)


async def _outcomes_told(conn: asyncpg.Connection, table_id: int, txn_id: int) -> list[str]:
    """The events that say txn_id's write id 1 of table_id was committed."""
    rows = await conn.fetch(
        "SELECT event_type, message FROM notification_log WHERE (event_type = 'COMMIT_TXN' AND txn_id = $2) "
        "OR (event_type = 'ALLOC_WRITE_ID_EVENT' AND table_id = $1) ORDER BY event_id", table_id, txn_id)
    told = []
    for r in rows:
        m = r["message"]  # jsonb, decoded by the pool's codec
        if r["event_type"] == "COMMIT_TXN" and {"table_id": table_id, "write_id": 1} in [
                {"table_id": w["table_id"], "write_id": w["write_id"]} for w in m["write_ids"]]:
            told.append(r["event_type"])
        if r["event_type"] == "ALLOC_WRITE_ID_EVENT" and 1 in m.get("committed", ()):
            told.append(r["event_type"])
    return told


async def _rows(conn: asyncpg.Connection, table_id: int) -> list[asyncpg.Record]:
    return await conn.fetch("SELECT txn_id, write_id FROM txn_to_write_id WHERE table_id = $1", table_id)


async def _reserved(conn: asyncpg.Connection, name: str) -> int:
    return int(await conn.fetchval("SELECT count(*) FROM write_id_reservations WHERE tbl_name = $1", name))


async def test_an_aborted_ctas_keeps_its_txn_so_its_reserved_id_stays_aborted(
        db_and_txns: tuple[Database, TxnStore]) -> None:
    """Housekeeping forgets aborted txns that wrote nothing (a forgotten txn reads as committed); one that
    holds a reserved write id is not forgotten, or the table's creation would take the id over as
    committed and its files would be read."""
    db, store = db_and_txns
    (failed, empty), _ = await store.open_txns(2, user="u", host="h", agent_info="")
    assert await store.allocate_write_ids([failed], "db", "ctas") == {failed: 1}
    await store.abort([failed, empty])
    forgotten = await db.transact(housekeeping.forget_empty_aborted_txns, 0.0)
    assert forgotten.forgotten == 1  # the one that holds nothing
    assert await db.read(_state, failed) == "a"
    await db.transact(catalog.create_table, table_from_pb(table("db", "ctas", transactional=True)))
    (listed,) = await store.get_valid_write_ids(["db.ctas"], await store.get_open_txns())
    assert (listed.valid_write_ids.high_watermark, listed.valid_write_ids.is_write_id_aborted(1)) == (1, True)


async def _state(conn: asyncpg.Connection, txn_id: int) -> str | None:
    return await conn.fetchval("SELECT state FROM txns WHERE txn_id = $1", txn_id)


async def test_a_databases_drop_takes_the_reservations_under_it(db_and_txns: tuple[Database, TxnStore],
                                                                gateway: GatewayClient) -> None:
    """As Hive's drop of a database deletes its TXN_TO_WRITE_ID rows: the aborted CTAS's txn, which held
    the only reservation, can then be forgotten (no longer listed in every snapshot), and a table of the
    name in a database made again takes nothing over."""
    db, store = db_and_txns
    await gateway.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="gone")))
    (failed,), _ = await store.open_txns(1, user="u", host="h", agent_info="")
    assert await store.allocate_write_ids([failed], "gone", "ctas") == {failed: 1}
    await store.abort([failed])
    await db.transact(catalog.drop_database, "gone", cascade=True, if_exists=False)
    assert await db.read(_reserved, "ctas") == 0
    forgotten = await db.transact(housekeeping.forget_empty_aborted_txns, 0.0)
    assert (forgotten.forgotten, await db.read(_state, failed)) == (1, None)
    assert failed not in (await store.get_open_txns()).exceptions
    await gateway.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="gone")))
    await db.transact(catalog.create_table, table_from_pb(table("gone", "ctas", transactional=True)))
    (listed,) = await store.get_valid_write_ids(["gone.ctas"], await store.get_open_txns())
    assert listed.valid_write_ids.high_watermark == 0


async def test_no_reservation_outlives_a_drop_of_its_database_it_raced(db_and_txns: tuple[Database, TxnStore],
                                                                       gateway: GatewayClient) -> None:
    """An allocation for a name no table has races the drop of the name's database: it is reserved before
    the drop (which takes it) or refused after it, never left under a database that no longer exists."""
    db, store = db_and_txns
    for i in range(ROUNDS):
        name = f"racing{i}"
        await gateway.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=name)))
        (txn,), _ = await store.open_txns(1, user="u", host="h", agent_info="")
        _, allocated = await asyncio.gather(
            db.transact(catalog.drop_database, name, cascade=True, if_exists=False),
            store.allocate_write_ids([txn], name, "ctas"), return_exceptions=True)
        assert allocated == {txn: 1} or isinstance(allocated, TableNotFound), (i, allocated)
        assert await db.read(_reserved_in, name) == 0, i
        await store.abort([txn])


async def test_the_upgrade_drops_the_reservations_of_databases_dropped_before(
        db_and_txns: tuple[Database, TxnStore]) -> None:
    db, store = db_and_txns
    (txn,), _ = await store.open_txns(1, user="u", host="h", agent_info="")
    await store.allocate_write_ids([txn], "db", "kept")
    await db.transact(_execute, "INSERT INTO write_id_reservations (db_name, tbl_name, txn_id, write_id) "
                      "VALUES ('dropped', 't', $1, 1)", txn)
    (migration,) = [m for m in known_migrations() if m.name == "reservations_of_dropped_databases"]
    await db.transact(_execute, migration.sql)
    assert (await db.read(_reserved_in, "dropped"), await db.read(_reserved_in, "db")) == (0, 1)


async def _reserved_in(conn: asyncpg.Connection, db_name: str) -> int:
    return int(await conn.fetchval("SELECT count(*) FROM write_id_reservations WHERE db_name = $1", db_name))


async def _execute(conn: asyncpg.Connection, statement: str, *args: object) -> None:
    await conn.execute(statement, *args)
