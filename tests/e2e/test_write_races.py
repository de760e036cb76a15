"""Writes that wait on a table whose version changes meanwhile (issue 11).

Each test makes the interleaving certain instead of timing it: a raw database transaction (the
barrier, standing in for a long AddPartitions) holds the row of t's latest version; a second writer
B queues behind it (an AlterTable under a txn, which replaces the version, or an AbortTxns, which
deletes B's version and restores the one before); then the write under test queues behind B. The
barrier waits until PostgreSQL reports each of them waiting on a lock, then lets go. The write
under test must then answer what it answers when the same calls run one after another: never
NOT_FOUND for a table that existed the whole time.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import AsyncIterator, Awaitable, Callable

import asyncpg
import grpc
import pytest

from gateway.app import Gateway
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import table
from tests.conftest import connect, gateway_settings
from tests.txn_helpers import Txns

C = grpc.StatusCode
LOCK_WAIT_TIMEOUT_S = 20.0


TABLE_ROW = "SELECT version_id FROM tbls WHERE db_name = 'db' AND tbl_name = 't' AND dropped_wid IS NULL FOR UPDATE"


class Barrier:
    """A database transaction that holds a row (db.t's latest version by default) until `release()`."""

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._conn: asyncpg.Connection | None = None
        self._watch: asyncpg.Connection | None = None

    async def hold(self, row_query: str = TABLE_ROW) -> None:
        self._conn = await asyncpg.connect(self._dsn)
        self._watch = await asyncpg.connect(self._dsn)
        await self._conn.execute("BEGIN")
        assert await self._conn.fetchrow(row_query) is not None

    async def until_waiting(self, count: int) -> None:
        """Return once `count` other sessions of this database wait on a lock (PostgreSQL says so)."""
        assert self._watch is not None
        async with asyncio.timeout(LOCK_WAIT_TIMEOUT_S):
            while await self._watch.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'") < count:
                await asyncio.sleep(0.005)

    async def release(self) -> None:
        if self._conn is not None:
            await self._conn.execute("ROLLBACK")
            await self._conn.close()
            self._conn = None
        if self._watch is not None:
            await self._watch.close()
            self._watch = None


@dataclass
class Race:
    txns: Txns
    barrier: Barrier

    @property
    def catalog(self) -> catalog_pb2_grpc.CatalogStub:
        return self.txns.client.catalog

    async def alter_table(self, txn_id: int, tag: str) -> pb.AlterTableResponse:
        current = (await self.catalog.GetTable(pb.GetTableRequest(
            db_name="db", table_name="t", read=await self.txns.snapshot()))).table
        current.parameters["tag"] = tag
        return await self.catalog.AlterTable(pb.AlterTableRequest(
            db_name="db", table_name="t", table=current, txn_id=txn_id))

    async def run(self, writer_b: Callable[[], Awaitable[object]],
                  write_under_test: Callable[[], Awaitable[object]],
                  row_query: str = TABLE_ROW) -> tuple[object, object]:
        """The barrier holds a row; B queues; the write under test queues behind B; then the barrier lets go."""
        await self.barrier.hold(row_query)
        try:
            b = asyncio.ensure_future(writer_b())
            await self.barrier.until_waiting(1)
            c = asyncio.ensure_future(write_under_test())
            await self.barrier.until_waiting(2)
        finally:
            await self.barrier.release()
        results = await asyncio.gather(b, c, return_exceptions=True)
        return results[0], results[1]

    async def table_exists(self) -> bool:
        listed = await self.catalog.ListTables(pb.ListTablesRequest(db_name="db"))
        return "t" in listed.names


@pytest.fixture
async def race(pg_dsn: str) -> AsyncIterator[Race]:
    gw = Gateway(gateway_settings(pg_dsn, **{"metastore.gateway.cache.enabled": "false"}))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    txns = Txns(client, transactions_pb2_grpc.TransactionsStub(client.channel), gw, pg_dsn)
    await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await client.catalog.CreateTable(pb.CreateTableRequest(
        table=table("db", "t", keys=(("p", "string"),), transactional=True)))
    setup = (await txns.open())[0]
    await txns.add(setup, "a", "b", "c")
    await txns.commit(setup)
    try:
        yield Race(txns, Barrier(pg_dsn))
    finally:
        await client.channel.close()
        await gw.stop()


def _ok(result: object) -> object:
    if isinstance(result, BaseException):
        raise AssertionError(f"expected success, got {result!r}") from result
    return result


def _code(result: object) -> grpc.StatusCode | None:
    if isinstance(result, grpc.aio.AioRpcError):
        return result.code()
    if isinstance(result, BaseException):
        raise result
    return None


# -- what waits behind B: B replaces t's version (AlterTable under an open txn) or B's abort
#    deletes B's version and restores the one before.

async def _b_alters(race: Race) -> Callable[[], Awaitable[object]]:
    b = (await race.txns.open())[0]
    return lambda: race.alter_table(b, "b")


async def _b_aborts(race: Race) -> Callable[[], Awaitable[object]]:
    b = (await race.txns.open())[0]
    await race.alter_table(b, "b")  # before the barrier: t's latest version is B's
    return lambda: race.txns.txn.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[b]))


B_VARIANTS = {"b_alters": _b_alters, "b_aborts": _b_aborts}


@pytest.mark.parametrize("variant", B_VARIANTS)
async def test_drop_table_waiting_behind_a_new_version_drops_it(race: Race, variant: str) -> None:
    b = await B_VARIANTS[variant](race)
    _, dropped = await race.run(b, lambda: race.catalog.DropTable(pb.DropTableRequest(db_name="db", table_name="t")))
    assert _ok(dropped).event_id > 0  # type: ignore[attr-defined]
    assert not await race.table_exists()


@pytest.mark.parametrize("variant", B_VARIANTS)
async def test_drop_database_cascade_waiting_behind_a_new_version_drops_the_table(race: Race, variant: str) -> None:
    b = await B_VARIANTS[variant](race)
    _, dropped = await race.run(b, lambda: race.catalog.DropDatabase(
        pb.DropDatabaseRequest(name="db", cascade=True)))
    assert _ok(dropped).event_id > 0  # type: ignore[attr-defined]
    listed = await race.catalog.ListDatabases(pb.ListDatabasesRequest())
    assert "db" not in listed.names


async def test_alter_table_waiting_behind_an_open_writer_is_a_write_conflict(race: Race) -> None:
    b = await _b_alters(race)
    c = (await race.txns.open())[0]
    b_result, c_result = await race.run(b, lambda: race.alter_table(c, "c"))
    _ok(b_result)
    assert _code(c_result) is C.ABORTED
    assert isinstance(c_result, grpc.aio.AioRpcError) and "still open" in c_result.details()
    assert await race.table_exists()


async def test_alter_table_waiting_behind_an_abort_alters_the_restored_version(race: Race) -> None:
    b = await _b_aborts(race)
    c = (await race.txns.open())[0]
    _, c_result = await race.run(b, lambda: race.alter_table(c, "c"))
    assert _ok(c_result).table.parameters["tag"] == "c"  # type: ignore[attr-defined]
    await race.txns.commit(c)
    current = await race.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t",
                                                             read=await race.txns.snapshot()))
    assert current.table.parameters["tag"] == "c"


def _partition_writes(race: Race, txn_id: int) -> dict[str, Callable[[], Awaitable[object]]]:
    catalog = race.catalog
    return {
        "add": lambda: race.txns.add(txn_id, "new"),
        "alter": lambda: race.txns.alter(txn_id, "a", "c"),
        "drop": lambda: catalog.DropPartitions(pb.DropPartitionsRequest(
            db_name="db", table_name="t", txn_id=txn_id, names=["p=b"])),
        "allocate": lambda: race.txns.txn.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(
            txn_ids=[txn_id], db_name="db", table_name="t")),
    }


@pytest.mark.parametrize("variant", B_VARIANTS)
@pytest.mark.parametrize("write", ["add", "alter", "drop", "allocate"])
async def test_partition_writes_waiting_behind_a_new_version_find_the_table(
        race: Race, variant: str, write: str) -> None:
    b = await B_VARIANTS[variant](race)
    c = (await race.txns.open())[0]
    _, c_result = await race.run(b, _partition_writes(race, c)[write])
    _ok(c_result)
    await race.txns.commit(c)


async def _b_alters_partition(race: Race) -> Callable[[], Awaitable[object]]:
    b = (await race.txns.open())[0]
    await race.txns.alter(b, "a", "b")  # before the barrier: p=a's latest version is B's
    return lambda: race.txns.txn.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[b]))


@pytest.mark.parametrize("write", ["alter", "drop"])
async def test_partition_writes_waiting_behind_an_abort_find_the_restored_partition(race: Race, write: str) -> None:
    """The same race one level down: the barrier holds B's version of p=a, B's abort deletes it and
    restores the version before, and C's write of p=a waits behind the abort."""
    b = await _b_alters_partition(race)
    c = (await race.txns.open())[0]
    writes = {
        "alter": lambda: race.txns.alter(c, "a", "c"),
        "drop": lambda: race.catalog.DropPartitions(pb.DropPartitionsRequest(
            db_name="db", table_name="t", txn_id=c, names=["p=a"])),
    }
    b_version = "SELECT version_id FROM partitions WHERE part_name = 'p=a' AND dropped_wid IS NULL FOR UPDATE"
    aborted, c_result = await race.run(b, writes[write], row_query=b_version)
    _ok(aborted)
    _ok(c_result)
    await race.txns.commit(c)
