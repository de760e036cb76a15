"""The read-through facade's bookkeeping (store/cache/facade.py) on a real gateway and database.

Each test holds the gateway's poller at a known log position, writes with a `CatalogStore` of its
own (as another gateway would), and checks what the facade's cache step answers before and after
it is told of the write, and after the poller catches up.
"""

from __future__ import annotations

from dataclasses import replace
from typing import AsyncIterator

import pytest

from gateway.app import Gateway
from gateway.convert import table_from_pb
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2_grpc
from store.cache.facade import CachedCatalog
from store.cache.sharded import BEHIND_TOKEN, OWN_WRITES, Miss, PartitionsHit
from store.catalog_store import CatalogStore
from store.models import Database, Partition, Table
from store.snapshot import ReadSnapshot
from tests.builders import table
from tests.conftest import connect, gateway_settings, wait_applied
from tests.thrift_client import ThriftClient
from tests.txn_helpers import Txns

LATEST = ReadSnapshot()


@pytest.fixture
async def g(pg_dsn: str) -> AsyncIterator[Txns]:
    gw = Gateway(gateway_settings(pg_dsn))  # no 100 ms timer: a paused poller stays where it is
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    g = Txns(client, transactions_pb2_grpc.TransactionsStub(client.channel), gw, pg_dsn)
    c = client.catalog
    await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await c.CreateTable(pb.CreateTableRequest(table=table("db", "ext", keys=(("p", "string"),), external=True)))
    await c.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="ext",
                                                  partitions=[pb.Partition(values=["a"])]))
    await c.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=(("p", "string"),), transactional=True)))
    (w,) = await g.open()
    await g.add(w, "a")
    await g.commit(w)
    await wait_applied(gw)
    try:
        yield g
    finally:
        await client.channel.close()
        await gw.stop()


def _facade(g: Txns) -> CachedCatalog:
    assert g.gw.cached_catalog is not None
    return g.gw.cached_catalog


def _other_gateway(g: Txns) -> CatalogStore:
    """Writes the gateway under test learns of only from the log."""
    return CatalogStore(g.gw.database, warehouse_dir=g.gw.settings.warehouse_dir)


def _tags(hit: PartitionsHit | Miss) -> list[str] | Miss:
    if isinstance(hit, Miss):
        return hit
    reply = pb.GetPartitionsByNamesResponse.FromString(b"".join(hit.frames))
    return [p.parameters.get("tag", "") for p in reply.partitions]


def _ext(facade: CachedCatalog) -> list[str] | Miss:
    return _tags(facade.cached_partitions_by_names("db", "ext", ["p=a"], LATEST))


async def _warm(g: Txns, snapshot: ReadSnapshot = LATEST, table_name: str = "ext") -> None:
    assert g.gw.poller is not None
    _facade(g).cached_partitions_by_names("db", table_name, ["p=a"], snapshot)  # a miss asks for a fill
    await g.gw.poller.wait_loaded()


async def _tag_ext(store: CatalogStore, tag: str) -> int:
    _, event_id = await store.alter_partitions("db", "ext", [Partition("db", "ext", ("a",), parameters={"tag": tag})])
    return event_id


async def test_a_write_handed_to_the_facade_sends_this_gateways_reads_to_the_database_until_the_poller_applies_it(
        g: Txns) -> None:
    facade, store = _facade(g), _other_gateway(g)
    await _warm(g)
    assert _ext(facade) == [""]
    assert g.gw.poller is not None
    g.gw.poller.pause()

    await _tag_ext(store, "elsewhere")
    assert _ext(facade) == [""]  # a write the facade was not told of: eventually consistent

    event_id = await _tag_ext(store, "here")
    facade.wrote("DB", "Ext", event_id)  # as the request spelled it: the hold is on the normalised key
    assert _ext(facade) == Miss(BEHIND_TOKEN)
    _, fetched = await facade.fetch_partitions_by_names("db", "ext", ["p=a"], LATEST)
    assert [p.parameters["tag"] for p in fetched] == ["here"]

    g.gw.poller.resume()
    await wait_applied(g.gw)
    assert _ext(facade) == ["here"]


async def test_a_database_read_newer_than_the_cache_holds_the_cache_back_until_it_catches_up(g: Txns) -> None:
    facade, store = _facade(g), _other_gateway(g)
    await _warm(g)
    assert g.gw.poller is not None
    g.gw.poller.pause()
    await _tag_ext(store, "v2")
    assert _ext(facade) == [""]
    _, fetched = await facade.fetch_partitions_by_names("DB", "EXT", ["p=a"], LATEST)  # saw v2 ...
    assert [p.parameters["tag"] for p in fetched] == ["v2"]
    assert _ext(facade) == Miss(BEHIND_TOKEN)  # ... so this gateway must not answer "" again
    g.gw.poller.resume()
    await wait_applied(g.gw)
    assert _ext(facade) == ["v2"]


async def test_a_databases_own_writes_and_reads_are_held_under_its_normalised_name(g: Txns) -> None:
    facade = _facade(g)
    assert facade.cached_database("db") == facade.cache.databases["db"]
    assert g.gw.poller is not None
    g.gw.poller.pause()
    _, event_id = await _other_gateway(g).alter_database("db", facade.cache.databases["db"])
    facade.wrote("Db", "", event_id)
    assert facade.cached_database("db") == Miss(BEHIND_TOKEN)
    g.gw.poller.resume()
    await wait_applied(g.gw)
    assert facade.cached_database("db") == facade.cache.databases["db"]


async def test_a_database_read_newer_than_the_cache_holds_that_database_and_not_its_tables(g: Txns) -> None:
    """Spark asks for the database around most statements: a database read from PostgreSQL that saw a
    newer state holds this gateway's reads of the database, not of every table in it."""
    facade = _facade(g)
    await _warm(g)
    assert g.gw.poller is not None
    g.gw.poller.pause()
    altered, _ = await _other_gateway(g).alter_database("db", replace(facade.cache.databases["db"],
                                                                      description="newer"))
    assert (await facade.fetch_database("Db")).description == "newer"
    assert facade.cached_database("db") == Miss(BEHIND_TOKEN)  # it must not answer the older one again
    assert _ext(facade) == [""]  # the tables' entries are as current as before
    g.gw.poller.resume()
    await wait_applied(g.gw)
    assert facade.cached_database("db") == altered


async def test_a_thrift_get_database_is_answered_by_the_cache_as_grpcs_is(g: Txns) -> None:
    facade = _facade(g)
    await _warm(g)
    client = ThriftClient(g.gw.thrift_port)
    try:
        hits = facade.cache.stats.hits
        assert (await client("get_database", "DB")).name == "db"
        assert facade.cache.stats.hits == hits + 1
        assert _ext(facade) == [""]  # and holds nothing back
    finally:
        client.close()


async def test_a_txns_write_sends_its_own_reads_to_the_database_until_its_outcome_is_applied(g: Txns) -> None:
    facade = _facade(g)
    (t,) = await g.open()
    read = await g.snapshot(t)
    mine = ReadSnapshot.parse(read.valid_write_id_list, t, read.table_id)
    await _warm(g, mine, "t")
    assert g.gw.poller is not None
    token = g.gw.poller.position  # the txn's reads carry a token this cache has applied
    assert isinstance(facade.cached_partitions_by_names("db", "t", ["p=a"], mine, token), PartitionsHit)
    g.gw.poller.pause()

    _, event_id = await _other_gateway(g).alter_partitions(
        "db", "t", [Partition("db", "t", ("a",), parameters={"tag": "mine"})], txn_id=t)
    # Not told: the cache cannot know the txn wrote (its events are not applied), and would answer
    # without the txn's own write.
    assert _tags(facade.cached_partitions_by_names("db", "t", ["p=a"], mine, token)) == [""]
    facade.wrote("DB", "T", event_id, txn_id=t)
    assert facade.cached_partitions_by_names("db", "t", ["p=a"], mine, token) in (Miss(BEHIND_TOKEN), Miss(OWN_WRITES))
    _, fetched = await facade.fetch_partitions_by_names("db", "t", ["p=a"], mine)
    assert [p.parameters["tag"] for p in fetched] == ["mine"]

    g.gw.poller.resume()
    await g.commit(t)
    await wait_applied(g.gw)
    entry = facade.cache.by_name("db", "t")
    assert entry is not None and t not in entry.writers  # the commit, applied, ends the mark


async def test_a_commit_taken_here_is_seen_by_reads_here_when_the_txns_writes_went_elsewhere(g: Txns) -> None:
    """The txn wrote through another gateway (this one has applied none of its events); its commit,
    taken here, holds this gateway's reads of the tables it wrote until the commit is applied, so a
    read without a snapshot (Hive 2.3's, Spark's) after the commit sees the write."""
    facade = _facade(g)
    await _warm(g, ReadSnapshot(latest_committed=True), "t")
    latest_committed = ReadSnapshot(latest_committed=True)
    assert facade.cached_partition_names("db", "t", "", 100, latest_committed) == (["p=a"], None)
    assert g.gw.poller is not None
    g.gw.poller.pause()
    (t,) = await g.open()
    await _other_gateway(g).add_partitions("db", "t", [Partition("db", "t", ("b",))], if_not_exists=False, txn_id=t)
    await g.commit(t)  # through this gateway

    assert isinstance(facade.cached_partition_names("db", "t", "", 100, latest_committed), Miss)
    names, _ = await facade.fetch_partition_names("db", "t", 100, "", latest_committed)
    assert names == ["p=a", "p=b"]
    g.gw.poller.resume()
    await wait_applied(g.gw)
    assert facade.cached_partition_names("db", "t", "", 100, latest_committed) == (["p=a", "p=b"], None)


async def test_a_tables_retention_is_answered_from_the_cache_as_postgresql_holds_it(g: Txns) -> None:
    """Hive's Table.retention lives in the table's stored document and the log's events, so the cache,
    filled from the log by another gateway's writes, answers a Thrift read with it as PostgreSQL does."""
    facade, store = _facade(g), _other_gateway(g)
    kept, _ = await store.create_table(replace(table_from_pb(table("db", "kept")), retention=30))
    await wait_applied(g.gw)
    cached = facade.cached_table_object("db", "kept", LATEST)
    assert isinstance(cached, Table) and cached.retention == 30
    assert cached == await facade.fetch_table("db", "kept", LATEST)
    await store.alter_table("db", "kept", replace(kept, retention=-7))
    await wait_applied(g.gw)
    cached = facade.cached_table_object("db", "kept", LATEST)
    assert isinstance(cached, Table) and cached.retention == -7
    assert cached == await facade.fetch_table("db", "kept", LATEST)
    client = ThriftClient(g.gw.thrift_port)
    try:
        hits = facade.cache.stats.hits
        assert (await client("get_table", "db", "kept")).retention == -7
        assert facade.cache.stats.hits == hits + 1
    finally:
        client.close()


async def test_a_database_created_without_a_description_is_answered_from_the_cache_without_one(g: Txns) -> None:
    """Thrift tells a description never sent (null, as Hive answers it) from an empty one: the cache,
    filled from another gateway's events, answers each as PostgreSQL holds it."""
    facade, store = _facade(g), _other_gateway(g)
    await store.create_database(Database("plain"))
    await store.create_database(Database("empty", description=""))
    await wait_applied(g.gw)
    for name, description in (("plain", None), ("empty", "")):
        cached = facade.cached_database(name)
        assert isinstance(cached, Database) and cached.description == description
        assert cached == await facade.fetch_database(name)
    client = ThriftClient(g.gw.thrift_port)
    try:
        hits = facade.cache.stats.hits
        assert (await client("get_database", "plain")).description is None
        assert (await client("get_database", "empty")).description == ""
        assert facade.cache.stats.hits == hits + 2
    finally:
        client.close()


async def test_an_owner_never_set_and_an_empty_one_are_answered_from_the_cache_apart(g: Txns) -> None:
    """Thrift tells an owner never sent (null, as Hive answers it) from '', of a database and of a table:
    the cache, filled from another gateway's events, answers each as PostgreSQL holds it."""
    facade, store = _facade(g), _other_gateway(g)
    for name, owner in (("unowned", None), ("owned_empty", "")):
        await store.create_database(Database(name, owner=owner))
        await store.create_table(replace(table_from_pb(table("db", name)), owner=owner))
    await wait_applied(g.gw)
    client = ThriftClient(g.gw.thrift_port)
    try:
        for name, owner in (("unowned", None), ("owned_empty", "")):
            cached_db, cached_table = facade.cached_database(name), facade.cached_table_object("db", name, LATEST)
            assert isinstance(cached_db, Database) and cached_db.owner == owner
            assert isinstance(cached_table, Table) and cached_table.owner == owner
            assert cached_db == await facade.fetch_database(name)
            assert cached_table == await facade.fetch_table("db", name, LATEST)
            hits = facade.cache.stats.hits
            assert (await client("get_database", name)).ownerName == owner
            assert (await client("get_table", "db", name)).owner == owner
            assert facade.cache.stats.hits == hits + 2
    finally:
        client.close()
