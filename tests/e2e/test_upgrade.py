"""Upgrading over a database an older gateway wrote: tests/upgrade/old_database.sql is a pg_dump of the
database commit 7ab20de (schema 0018) wrote through its public APIs, expected_reads.json that gateway's
answers to tests/upgrade/reads.py's reads (tests/upgrade/make_fixture.py made both; its docstring says how
to make them again). The current gateway starts on a copy of that database (applying the later migrations),
must answer the same reads the same, except for the deliberate differences listed in DIFFERENCES, and the
database must go on working: the old open txn commits, a new txn adds partitions, the cache and the database
answer them, and the notification log continues after the old events, applied by the poller."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any, AsyncIterator

import asyncpg
import grpc
import pytest

from gateway.app import Gateway, migrate_database
from gateway.thrift.idl import hms
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc, events_pb2, events_pb2_grpc, locks_pb2, locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.conftest import PgCluster, running_gateway, wait_applied
from tests.thrift_client import ThriftClient
from tests.upgrade import reads  # also run by make_fixture.py, in the old checkout, by file path

FIXTURES = Path(__file__).resolve().parent.parent / "upgrade"
OLD_SCHEMA_VERSION = 18
OLD_LAST_EVENT = 42
OPEN_TXN, READER_TXN = 5, 6  # the txns the old gateway left open: the writer (write id 5 of sales.orders), a reader
_counter = itertools.count(1)


# The old data's heartbeats and event times are as old as the fixture: without these the reaper would abort
# the open txn and the lock, and the event clean-up delete the old events, before the test reads them.
KEEP_OLD_STATE = {"hive.txn.timeout": "3650d", "hive.timedout.txn.reaper.start": "3650d",
                  "hive.metastore.event.db.listener.timetolive": "3650d", "hive.compactor.cleaner.on": "false"}

def _without_empty_comments(value: Any) -> Any:
    if isinstance(value, list):
        return [_without_empty_comments(v) for v in value]
    if isinstance(value, dict):
        is_column = set(value) == {"name", "type", "comment"}
        return {k: _without_empty_comments(v) for k, v in value.items()
                if not (is_column and k == "comment" and v == "")}
    return value


def _without(member: str, empty: Any) -> Any:
    return lambda value: {k: v for k, v in value.items() if not (k == member and v == empty)}


def _hive_json_events(value: Any) -> Any:
    """The message itself is Hive's rewriting of the stored one (not derivable here): compared by the
    database it names (Hive's ALTER_TABLE message names the table before the change); the rest of each
    event as before, its format json-0.2."""
    events = []
    for e in value["events"]:
        message = json.loads(e["message"])
        named = {k: message[k] for k in ("db", "dbName") if message.get(k) is not None}
        events.append({**{k: v for k, v in e.items() if k != "message"}, "messageFormat": "json-0.2",
                       "names": sorted(set(named.values()))})
    return {"events": events}


def _names_of_old_message(value: Any) -> Any:
    """The old answer with each message replaced as _hive_json_events does, from the event's own names
    (the old gateway's JSON named no database or table of its own for txn events)."""
    return {"events": [{**{k: v for k, v in e.items() if k != "message"}, "messageFormat": "json-0.2",
                        "names": sorted({e[k] for k in ("dbName",) if k in e}
                                        if e["eventType"] not in ("OPEN_TXN", "COMMIT_TXN", "ABORT_TXN") else set())}
                       for e in value["events"]]}


# Reads a later version answers differently on purpose: read key (a prefix) -> (why, the old answer turned
# into the one now expected, and the new answer made comparable).
DIFFERENCES: dict[str, tuple[str, Any, Any]] = {
    "thrift: notification events": (
        "a342eb8: get_next_notification answers Hive's JSON messages (json-0.2), rewritten from the stored "
        "ones, instead of the gateway's own (metastore-gateway-json-1)", _names_of_old_message, _hive_json_events),
    "thrift: table ": (
        "a3db589, ca484ee: a column without a comment has none (null), not ''; Table.temporary is left unset "
        "as Hive's metastore does", lambda v: _without("temporary", False)(_without_empty_comments(v)), None),
    "thrift: partitions by ": (
        "a3db589: a column without a comment has none (null), not ''", _without_empty_comments, None),
    "thrift: database ": (
        "ec7c59d: a database created without an owner answers ownerName unset (null) as Hive 2.3, not ''",
        _without("ownerName", ""), None),
}


async def _old_database(pg_cluster: PgCluster) -> str:
    """A new database holding the dump, not migrated further; its DSN."""
    name = f"upgrade_{next(_counter)}"
    conn = await asyncpg.connect(pg_cluster.dsn("postgres"))
    try:
        await conn.execute(f"CREATE DATABASE {name}")
    finally:
        await conn.close()
    # pg_dump's psql meta-commands (\restrict, \unrestrict) are not SQL; the rest is plain statements.
    text = "\n".join(line for line in (FIXTURES / "old_database.sql").read_text().splitlines()
                     if not line.startswith("\\"))
    conn = await asyncpg.connect(pg_cluster.dsn(name))
    try:
        await conn.execute(text)
    finally:
        await conn.close()
    return pg_cluster.dsn(name)


@pytest.fixture
async def old_dsn(pg_cluster: PgCluster) -> str:
    return await _old_database(pg_cluster)


@pytest.fixture
async def upgraded(old_dsn: str) -> AsyncIterator[tuple[Gateway, grpc.aio.Channel]]:
    async with running_gateway(old_dsn, **KEEP_OLD_STATE) as gw:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{gw.port}")
        try:
            yield gw, channel
        finally:
            await channel.close()


async def test_the_dump_is_of_the_old_schema_and_the_later_migrations_apply_to_it(old_dsn: str) -> None:
    conn = await asyncpg.connect(old_dsn)
    try:
        assert await conn.fetchval("SELECT max(version) FROM schema_version") == OLD_SCHEMA_VERSION
    finally:
        await conn.close()
    applied = await migrate_database(old_dsn)
    assert applied and applied[0] == OLD_SCHEMA_VERSION + 1
    assert await migrate_database(old_dsn) == []


async def test_the_upgraded_gateway_answers_the_old_reads_as_the_old_gateway_did(
        upgraded: tuple[Gateway, grpc.aio.Channel]) -> None:
    gw, channel = upgraded
    await wait_applied(gw)
    got = await reads.all_reads(channel, gw.thrift_port)
    expected = json.loads((FIXTURES / "expected_reads.json").read_text())
    for prefix, (_why, old_to_now, comparable) in DIFFERENCES.items():
        keys = [key for key in expected if key.startswith(prefix)]
        assert keys, f"no read is named {prefix!r}..."
        for key in keys:
            expected[key] = old_to_now(expected[key])
            got[key] = comparable(got[key]) if comparable else got[key]
    assert sorted(got) == sorted(expected)
    differing = [line for key in sorted(expected) for line in _diff(key, expected[key], got[key])]
    assert not differing, "the upgraded gateway answers differently (path: old -> new):\n" + "\n".join(differing)


def _diff(path: str, old: Any, new: Any) -> list[str]:
    """Where two answers differ: one line per differing leaf, member or list length."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [line for k in sorted(set(old) | set(new))
                for line in _diff(f"{path}.{k}", old.get(k, "<absent>"), new.get(k, "<absent>"))]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [line for i, (o, n) in enumerate(zip(old, new)) for line in _diff(f"{path}[{i}]", o, n)]
    return [] if old == new else [f"{path}: {json.dumps(old)[:300]} -> {json.dumps(new)[:300]}"]


async def test_the_upgraded_database_goes_on_working(upgraded: tuple[Gateway, grpc.aio.Channel]) -> None:
    gw, channel = upgraded
    catalog = catalog_pb2_grpc.CatalogStub(channel)
    txns = transactions_pb2_grpc.TransactionsStub(channel)
    events = events_pb2_grpc.EventsStub(channel)
    await wait_applied(gw)

    # The old open writer commits: its partition becomes visible, its lock goes, its statistics stay.
    await txns.CommitTxn(tpb.CommitTxnRequest(txn_id=OPEN_TXN))
    await txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[READER_TXN]))
    assert not (await locks_pb2_grpc.LocksStub(channel).ShowLocks(locks_pb2.ShowLocksRequest())).locks
    open_now = await txns.GetOpenTxns(tpb.GetOpenTxnsRequest())
    assert list(open_now.open_txn_ids) == []
    client = ThriftClient(gw.thrift_port)
    try:
        stats = await client("get_partitions_statistics_req", hms.PartitionsStatsRequest(
            dbName="sales", tblName="orders", colNames=["id"], partNames=["ds=2026-01-01/region=eu"]))
    finally:
        client.close()
    [written] = stats.partStats["ds=2026-01-01/region=eu"]
    assert (written.statsData.longStats.lowValue, written.statsData.longStats.highValue) == (5, 50)

    # A new txn adds partitions of the old table, with the next write id.
    txn = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="etl", hostname="h"))).txn_ids[0]
    assert txn == READER_TXN + 1
    allocated = await txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(
        txn_ids=[txn], db_name="sales", table_name="orders"))
    assert allocated.txn_to_write_ids[0].write_id == 6
    added = await catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="sales", table_name="orders", txn_id=txn,
        partitions=[pb.Partition(values=["2026-01-04", r], parameters={"v": "new"}) for r in ("eu", "us")]))
    assert added.event_id > OLD_LAST_EVENT
    await txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn))
    await wait_applied(gw)

    expected_names = ["ds=2026-01-01/region=eu", "ds=2026-01-02/region=eu", "ds=2026-01-03/region=eu",
                      "ds=2026-01-04/region=eu", "ds=2026-01-04/region=us"]
    read = await reads.snapshot(channel, "sales", "orders")
    assert read.valid_write_id_list == "sales.orders:6:9223372036854775807::3"
    names = list((await catalog.ListPartitionNames(pb.ListPartitionNamesRequest(
        db_name="sales", table_name="orders", read=read))).names)
    assert names == expected_names

    async def by_names() -> list[tuple[str, str, int]]:
        reply = await catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
            db_name="sales", table_name="orders", names=expected_names, read=read))
        return [(p.name, p.parameters["v"], p.write_id) for p in reply.partitions]

    want = [("ds=2026-01-01/region=eu", "1", 1), ("ds=2026-01-02/region=eu", "2", 2),
            ("ds=2026-01-03/region=eu", "open", 5), ("ds=2026-01-04/region=eu", "new", 6),
            ("ds=2026-01-04/region=us", "new", 6)]
    # From the cache: the first read may fill it; a later one is a hit.
    assert gw.cache is not None
    hits = gw.cache.stats.hits
    async with asyncio.timeout(10):
        while gw.cache.stats.hits == hits:
            assert await by_names() == want
            await asyncio.sleep(0.01)
    # From the database: a gateway without a cache on the same database.
    async with running_gateway(gw.settings.dsn, **KEEP_OLD_STATE, **{"metastore.gateway.cache.enabled": "false"}) \
            as uncached:
        plain = grpc.aio.insecure_channel(f"127.0.0.1:{uncached.port}")
        try:
            reply = await catalog_pb2_grpc.CatalogStub(plain).GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
                db_name="sales", table_name="orders", names=expected_names, read=read))
            assert [(p.name, p.parameters["v"], p.write_id) for p in reply.partitions] == want
        finally:
            await plain.close()

    # The log continues after the old events, in order, and the poller applied every one.
    logged = (await events.GetNextNotification(events_pb2.GetNextNotificationRequest(last_event_id=0))).events
    ids = [e.event_id for e in logged]
    assert ids == sorted(set(ids)) and ids[:OLD_LAST_EVENT] == list(range(1, OLD_LAST_EVENT + 1))
    new = [e for e in logged if e.event_id > OLD_LAST_EVENT]
    assert [e.event_type for e in new] == ["COMMIT_TXN", "ABORT_TXN", "OPEN_TXN", "ALLOC_WRITE_ID_EVENT",
                                           "ADD_PARTITION", "COMMIT_TXN"]
    assert [json.loads(e.message)["txn_id"] for e in new if e.event_type.endswith("_TXN") and
            e.event_type != "OPEN_TXN"] == [OPEN_TXN, READER_TXN, txn]
    assert gw.poller is not None and gw.poller.position == ids[-1]
