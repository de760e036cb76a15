"""A read after a lock sees every commit made before the lock was granted, through any gateway.

Hive reads every object fresh, and its clients rely on it: Iceberg's HiveCatalog locks a table, reads its
metadata_location, alters it and unlocks (tests/e2e/test_iceberg_catalog.py runs Iceberg's own client).
A gateway answers reads without a snapshot from its cache, which may lag the log; a grant through it holds
reads of what the lock names to PostgreSQL until its cache has applied the log's head as the grant saw it
(store/cache/facade.py lock_granted). Here the lagging gateway's poller is paused, so without that rule each
read below answers the old table."""

from __future__ import annotations

from typing import AsyncIterator

import pytest

from gateway.app import Gateway
from gateway.thrift.idl import hms
from protos.metastore.v1 import admin_pb2, admin_pb2_grpc
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from tests.conftest import connect, running_gateway, wait_applied
from tests.thrift_client import ThriftClient, client_with_database, thrift_table


def _lock(*scopes: tuple[str, str | None], lock_type: int = hms.LockType.EXCLUSIVE) -> hms.LockRequest:
    return hms.LockRequest(component=[hms.LockComponent(
        type=lock_type, level=hms.LockLevel.TABLE if table else hms.LockLevel.DB, dbname=db, tablename=table)
        for db, table in scopes], user="ice", hostname="h")


async def _location(client: ThriftClient, table: str = "ice") -> str:
    return str((await client("get_table", "db", table)).parameters["metadata_location"])


async def _commit(client: ThriftClient, location: str, table: str = "ice") -> None:
    """What Iceberg's commit does once it holds the lock: read, point at the new metadata, alter."""
    current = await client("get_table", "db", table)
    current.parameters = {**current.parameters, "metadata_location": location}
    await client("alter_table_with_environment_context", "db", table, current,
                 hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"}))


@pytest.fixture
async def lagging(pg_dsn: str) -> AsyncIterator[tuple[ThriftClient, ThriftClient, Gateway]]:
    """A client of gateway a, one of gateway b, and b, whose cache knows db.ice and db.other at v1 and whose
    poller is paused: it applies nothing more until the test resumes it."""
    async with running_gateway(pg_dsn) as a, running_gateway(pg_dsn) as b, \
            client_with_database(a.thrift_port) as on_a:
        for name in ("ice", "other"):
            await on_a("create_table", thrift_table(name, table_type="EXTERNAL_TABLE", EXTERNAL="TRUE",
                                                    metadata_location="v1"))
        on_b = ThriftClient(b.thrift_port)
        try:
            await wait_applied(b)
            assert await _location(on_b, "ice") == await _location(on_b, "other") == "v1"
            assert b.poller is not None
            b.poller.pause()
            yield on_a, on_b, b
        finally:
            on_b.close()


async def test_a_lock_granted_at_once_reads_the_commit_that_freed_it(
        lagging: tuple[ThriftClient, ThriftClient, Gateway]) -> None:
    on_a, on_b, b = lagging
    held = await on_a("lock", _lock(("db", "ice")))
    await _commit(on_a, "v2")
    await on_a("unlock", hms.UnlockRequest(lockid=held.lockid))
    assert await _location(on_b) == "v1"  # no lock: b's cache answers, as of what it has applied

    granted = await on_b("lock", _lock(("db", "ice")))
    assert granted.state == hms.LockState.ACQUIRED
    assert await _location(on_b) == "v2"
    await _commit(on_b, "v3")
    await on_b("unlock", hms.UnlockRequest(lockid=granted.lockid))
    assert b.poller is not None
    b.poller.resume()
    await wait_applied(b)
    assert await _location(on_b) == "v3"


async def test_a_lock_granted_by_check_lock_reads_the_commit_of_the_holder_it_waited_for(
        lagging: tuple[ThriftClient, ThriftClient, Gateway]) -> None:
    on_a, on_b, _ = lagging
    held = await on_a("lock", _lock(("db", "ice")))
    waiting = await on_b("lock", _lock(("db", "ice")))
    assert waiting.state == hms.LockState.WAITING
    await _commit(on_a, "v2")
    await on_a("unlock", hms.UnlockRequest(lockid=held.lockid))
    assert (await on_b("check_lock", hms.CheckLockRequest(lockid=waiting.lockid))).state == hms.LockState.ACQUIRED
    assert await _location(on_b) == "v2"
    await on_b("unlock", hms.UnlockRequest(lockid=waiting.lockid))


async def test_a_database_lock_holds_reads_of_every_table_of_the_database(
        lagging: tuple[ThriftClient, ThriftClient, Gateway]) -> None:
    on_a, on_b, _ = lagging
    await _commit(on_a, "v2", table="other")
    granted = await on_b("lock", _lock(("db", None)))
    assert granted.state == hms.LockState.ACQUIRED
    assert await _location(on_b, "other") == "v2"
    await on_b("unlock", hms.UnlockRequest(lockid=granted.lockid))


async def test_a_shared_read_lock_also_reads_what_was_committed_before_it(
        lagging: tuple[ThriftClient, ThriftClient, Gateway]) -> None:
    on_a, on_b, _ = lagging
    await _commit(on_a, "v2")
    granted = await on_b("lock", _lock(("db", "ice"), lock_type=hms.LockType.SHARED_READ))
    assert granted.state == hms.LockState.ACQUIRED
    assert await _location(on_b) == "v2"
    assert await _location(on_b, "other") == "v1"  # not locked: b's cache answers, as of what it has applied
    await on_b("unlock", hms.UnlockRequest(lockid=granted.lockid))


async def test_a_grpc_lock_holds_the_grpc_reads_alike(lagging: tuple[ThriftClient, ThriftClient, Gateway]) -> None:
    on_a, _, b = lagging
    client = await connect(f"127.0.0.1:{b.port}")
    try:
        async def location() -> str:
            reply = await client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="ice"))
            return reply.table.parameters["metadata_location"]

        await _commit(on_a, "v2")
        assert await location() == "v1"
        granted = await locks_pb2_grpc.LocksStub(client.channel).Lock(lpb.LockRequest(
            components=[lpb.LockComponent(db_name="db", table_name="ice", type=lpb.EXCLUSIVE)], user="ice"))
        assert granted.state == lpb.ACQUIRED
        assert await location() == "v2"
        stats = admin_pb2_grpc.AdminStub(client.channel)
        before = await stats.CacheStats(admin_pb2.CacheStatsRequest())
        assert b.poller is not None
        b.poller.resume()
        await wait_applied(b)
        assert await location() == "v2"  # the hold ends once the cache has applied the grant's head
        assert (await stats.CacheStats(admin_pb2.CacheStatsRequest())).hits > before.hits
        await locks_pb2_grpc.LocksStub(client.channel).Unlock(lpb.UnlockRequest(lock_id=granted.lock_id))
    finally:
        await client.channel.close()


async def test_an_iceberg_commit_built_on_a_lagging_gateways_read_is_refused_not_lost(
        lagging: tuple[ThriftClient, ThriftClient, Gateway]) -> None:
    """The lock taken through one gateway, the read through another (Trino opens a connection per call;
    Iceberg's Java client pools them): the lagging gateway's read is the old table, so the commit built on
    it names an older previous_metadata_location. It is refused in the words of Hive's conditional alter,
    which Iceberg reads as a concurrent commit and retries; the other writer's commit stays
    (store/catalog.py _check_iceberg_base)."""
    on_a, on_b, b = lagging
    await on_a("alter_table_with_environment_context", "db", "ice", await _iceberg_commit(on_a, "v2"), None)
    held = await on_a("lock", _lock(("db", "ice")))  # the second writer's lock, through a
    assert held.state == hms.LockState.ACQUIRED
    stale = await _iceberg_commit(on_b, "v3")  # its read, through b: still v1
    assert stale.parameters["previous_metadata_location"] == "v1"
    for alter_on in (on_b, on_a):
        with pytest.raises(hms.MetaException, match="The table has been modified. The parameter value for key "
                                                    "'metadata_location' is 'v2'. The expected was value was 'v1'"):
            await alter_on("alter_table_with_environment_context", "db", "ice", stale, None)
    assert await _location(on_a) == "v2"
    assert b.poller is not None
    b.poller.resume()
    await wait_applied(b)
    await on_b("alter_table_with_environment_context", "db", "ice", await _iceberg_commit(on_b, "v3"), None)
    await on_a("unlock", hms.UnlockRequest(lockid=held.lockid))
    assert await _location(on_b) == "v3"


async def _iceberg_commit(client: ThriftClient, location: str) -> hms.Table:
    """The table as `client` reads it, made an Iceberg table's commit to `location` (what Iceberg sends)."""
    table = await client("get_table", "db", "ice")
    table.parameters = {**table.parameters, "table_type": "ICEBERG", "metadata_location": location,
                        "previous_metadata_location": table.parameters["metadata_location"]}
    return table
