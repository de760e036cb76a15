"""Concurrent OpenTxns, AllocateTableWriteIds and CommitTxn calls share one statement per batch, and
concurrent Lock calls one transaction (store/group_commit.py), on the real PostgreSQL; each call still
gets exactly its own answer: its own txn ids, write ids, lock id and event id, its own error for what
the batch refused, and nothing written for it; the log holds one event per call that changed
something, densely numbered."""

from __future__ import annotations

import asyncio
import json

import pytest

from protos.metastore.v1 import catalog_pb2 as pb
from store import events
from store.db import Database
from hive.lock_rules import LockComponent, LockScope, LockState, LockType
from store.errors import Aborted, InvalidArgument, NotFound
from store.lock_store import LockStore
from store.locks import LockRequest, LockResult
from store.models import NotificationEvent
from store.txn_store import TxnLimits, TxnStore
from tests.builders import table
from tests.conftest import GatewayClient

CALLS = 24


async def _log_after(db: Database, head: int) -> list[NotificationEvent]:
    return await db.read(events.next_events, head, 10_000)


async def test_concurrent_txn_calls_are_batched_and_each_gets_its_own_answer(gateway: GatewayClient,
                                                                             pg_dsn: str) -> None:
    catalog = gateway.catalog
    await catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    for name, acid in (("a", True), ("b", True), ("plain", False)):
        await catalog.CreateTable(pb.CreateTableRequest(table=table("db", name, transactional=acid)))
    db = await Database.connect(pg_dsn)
    store = TxnStore(db, TxnLimits())
    try:
        head = await db.read(events.current_event_id)

        # Opens: one call of three txns among single ones.
        counts = [3 if i == 5 else 1 for i in range(CALLS)]
        opened = await asyncio.gather(*(store.open_txns(n, user=f"u{i}", host="h", agent_info="")
                                        for i, n in enumerate(counts)))
        assert store.group_commit_stats()["OpenTxns"][0] >= 1
        assert [len(ids) for ids, _ in opened] == counts
        all_ids = [t for ids, _ in opened for t in ids]
        assert len(set(all_ids)) == len(all_ids)
        log = {e.event_id: e for e in await _log_after(db, head)}
        assert sorted(log) == list(range(head + 1, head + 1 + CALLS))  # one event per call, no gap
        for ids, event_id in opened:
            assert log[event_id].event_type == "OPEN_TXN" and json.loads(log[event_id].message)["txn_ids"] == ids
        shown = {t.txn_id: t.user for t in await store.show_transactions("OPEN")}
        assert all(shown[t] == f"u{i}" for i, (ids, _) in enumerate(opened) for t in ids)

        # Allocations: alternate tables; one aborted txn, one missing database, one plain table, one bad name
        # (a missing table of a database that exists has its write ids reserved: test_write_id_reservations.py).
        txns = [ids[0] for ids, _ in opened]
        await store.abort([txns[0]])
        head = await db.read(events.current_event_id)
        targets = ["a" if i % 2 else "b" for i in range(CALLS)]
        targets[1], targets[2] = "missing", "plain"
        calls = [store.allocate_write_ids([t], "nodb" if name == "missing" else "db", name)
                 for t, name in zip(txns, targets)]
        calls.append(store.allocate_write_ids([txns[3]], "db", "bad name!"))
        allocated = await asyncio.gather(*calls, return_exceptions=True)
        assert store.group_commit_stats()["AllocateTableWriteIds"][0] >= 1
        assert isinstance(allocated[0], Aborted) and "was aborted" in str(allocated[0])
        assert isinstance(allocated[1], NotFound) and "database nodb does not exist" in str(allocated[1])
        assert isinstance(allocated[2], InvalidArgument) and "not transactional" in str(allocated[2])
        assert isinstance(allocated[-1], InvalidArgument)
        granted = {(name, t): ids[t] for t, name, ids in zip(txns, targets, allocated)
                   if isinstance(ids, dict)}
        assert len(granted) == CALLS - 3
        for name in ("a", "b"):  # dense per table, one per txn
            assert sorted(w for (n, _), w in granted.items() if n == name) == list(
                range(1, 1 + sum(1 for n, _ in granted if n == name)))
        log = {e.event_id: e for e in await _log_after(db, head)}
        assert sorted(log) == list(range(head + 1, head + 1 + len(granted)))
        logged = {(e.table_name, t): w for e in log.values() for t, w in
                  zip(json.loads(e.message)["txn_ids"], json.loads(e.message)["write_ids"])}
        assert logged == granted

        # Commits: every txn, one twice, one aborted, one that never existed.
        head = await db.read(events.current_event_id)
        to_commit = [*all_ids, txns[4], 10**12]
        results = await asyncio.gather(*(store.commit(t) for t in to_commit), return_exceptions=True)
        committed = [r[0] if isinstance(r, tuple) else r for r in results]  # (event id, tables written)
        written = {t: {table for _, table in r[1]} for t, r in zip(to_commit, results) if isinstance(r, tuple) and r[0]}
        assert all(written[t] == {table for table, txn in granted if txn == t} for t in written)
        assert store.group_commit_stats()["CommitTxn"][0] >= 1
        answers = dict(zip(to_commit[:-2], committed[:-2]))
        assert isinstance(answers[txns[0]], Aborted)
        assert isinstance(committed[-1], NotFound)
        twice = [answers[txns[4]], committed[-2]]
        assert all(isinstance(e, int) for e in twice) and sorted(twice, key=bool)[0] == 0  # one logged, one no-op
        event_of = {t: e for t, e in answers.items() if isinstance(e, int) and e}
        event_of[txns[4]] = int(max(e for e in twice if isinstance(e, int)))
        log = {e.event_id: e for e in await _log_after(db, head)}
        assert sorted(log) == list(range(head + 1, head + len(all_ids)))  # all but the aborted one
        assert {log[e].txn_id for e in event_of.values()} == set(all_ids) - {txns[0]}
        assert all(log[e].event_type == "COMMIT_TXN" and log[e].txn_id == t for t, e in event_of.items())
        assert not [t.txn_id for t in await store.show_transactions("OPEN")]

        # Opens of Hive 4's kinds in one batch: each keeps its own (READ_ONLY is 2).
        kinds = [2 if i % 3 == 2 else 0 for i in range(CALLS)]
        opened = await asyncio.gather(*(store.open_txns(1, user="u", host="h", agent_info="", txn_type=kind)
                                        for kind in kinds))
        kind_of = {t.txn_id: t.txn_type for t in await store.show_transactions("OPEN")}
        assert [kind_of[ids[0]] for ids, _ in opened] == kinds
    finally:
        await db.close()


@pytest.mark.parametrize("concurrent", [1, CALLS])
async def test_a_batch_of_commits_counts_as_each_commit(gateway: GatewayClient, pg_dsn: str, concurrent: int) -> None:
    """Txns committed in one batch take their commit ids as if committed one by one: a txn that
    wrote gets a commit id, one that did not gets none (first committer wins reads them)."""
    await gateway.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await gateway.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "a", transactional=True)))
    db = await Database.connect(pg_dsn)
    store = TxnStore(db, TxnLimits())
    try:
        opened = [ids[0] for ids, _ in await asyncio.gather(
            *(store.open_txns(1, user="u", host="h", agent_info="") for _ in range(concurrent)))]
        writers = opened[::2]
        await asyncio.gather(*(store.allocate_write_ids([t], "db", "a") for t in writers))
        await asyncio.gather(*(store.commit(t) for t in opened))
        rows = await db.pool.fetch("SELECT txn_id, state, commit_id FROM txns WHERE txn_id = ANY($1::bigint[])", opened)
        assert {r["txn_id"]: r["state"] for r in rows} == dict.fromkeys(opened, "c")
        assert {r["txn_id"] for r in rows if r["commit_id"] is not None} == set(writers)
        assert all(r["commit_id"] >= max(opened) for r in rows if r["commit_id"] is not None)
    finally:
        await db.close()


async def test_two_gateways_batches_on_the_same_tables_do_not_deadlock(gateway: GatewayClient, pg_dsn: str) -> None:
    """Two gateways' batches allocating on the same two tables, named in opposite orders: each batch
    locks the tables' counter rows in name order, so neither ever waits for the other in a cycle
    (PostgreSQL would detect one after deadlock_timeout, 1 s, and roll a batch back)."""
    await gateway.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    for name in ("a", "b"):
        await gateway.catalog.CreateTable(pb.CreateTableRequest(table=table("db", name, transactional=True)))
    first, second = await Database.connect(pg_dsn), await Database.connect(pg_dsn)
    stores = [TxnStore(first, TxnLimits()), TxnStore(second, TxnLimits())]
    try:
        before = await first.pool.fetchval("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        for _ in range(40):
            txns = [ids[0] for ids, _ in await asyncio.gather(
                *(stores[i % 2].open_txns(1, user="u", host="h", agent_info="") for i in range(4)))]
            await asyncio.gather(stores[0].allocate_write_ids([txns[0]], "db", "a"),
                                 stores[0].allocate_write_ids([txns[2]], "db", "b"),
                                 stores[1].allocate_write_ids([txns[1]], "db", "b"),
                                 stores[1].allocate_write_ids([txns[3]], "db", "a"))
        assert all(s.group_commit_stats()["AllocateTableWriteIds"][0] == 40 for s in stores)
        after = await first.pool.fetchval("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        assert after == before
    finally:
        await first.close()
        await second.close()


def _lock(scope: LockScope, kind: LockType, txn_id: int = 0, user: str = "u") -> LockRequest:
    return LockRequest((LockComponent(scope, kind),), txn_id=txn_id, user=user, host="h")


async def test_concurrent_lock_requests_are_enqueued_in_one_batch_each_decided_after_the_ones_before(
        gateway: GatewayClient, pg_dsn: str) -> None:
    await gateway.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    for name in ("a", "b"):
        await gateway.catalog.CreateTable(pb.CreateTableRequest(table=table("db", name, transactional=True)))
    db = await Database.connect(pg_dsn)
    store, txn_store = LockStore(db), TxnStore(db, TxnLimits())
    try:
        (txn,), _ = await txn_store.open_txns(1, user="w", host="h", agent_info="")
        requests = [_lock(LockScope("db", "a"), LockType.EXCLUSIVE),
                    _lock(LockScope("db", "a"), LockType.SHARED_READ, txn_id=txn),
                    _lock(LockScope("db", "b"), LockType.SHARED_READ),
                    _lock(LockScope("db"), LockType.EXCLUSIVE),
                    _lock(LockScope("db", "b"), LockType.SHARED_READ)]
        results = await asyncio.gather(*(store.lock(r) for r in requests))
        assert store.group_commit_stats() == (1, len(requests))
        first = results[0].lock_id
        assert [r.lock_id for r in results] == list(range(first, first + len(requests)))  # in call order
        assert [(r.state, r.blocked_by) for r in results] == [
            (LockState.ACQUIRED, None), (LockState.WAITING, (first, 1)), (LockState.ACQUIRED, None),
            (LockState.WAITING, (first, 1)), (LockState.WAITING, (first + 3, 1))]  # behind the db lock before it
        shown = {(i.lock_id, i.scope, i.state, i.txn_id) for i in await store.show_locks(None)}
        assert shown == {(first, LockScope("db", "a"), LockState.ACQUIRED, 0),
                         (first + 1, LockScope("db", "a"), LockState.WAITING, txn),
                         (first + 2, LockScope("db", "b"), LockState.ACQUIRED, 0),
                         (first + 3, LockScope("db"), LockState.WAITING, 0),
                         (first + 4, LockScope("db", "b"), LockState.WAITING, 0)}

        # A batch with requests the lock manager refuses: each of those fails alone, and writes nothing.
        for result in results:
            await store.unlock(result.lock_id)
        await txn_store.abort([txn])
        bad = await asyncio.gather(store.lock(_lock(LockScope("db", "b"), LockType.SHARED_READ, user="ok1")),
                                   store.lock(_lock(LockScope("db", "b", "ds=x/hr=1/more=2"), LockType.SHARED_READ)),
                                   store.lock(_lock(LockScope("db", "b"), LockType.SHARED_READ, txn_id=txn)),
                                   store.lock(_lock(LockScope("db", "b"), LockType.SHARED_READ, user="ok2")),
                                   return_exceptions=True)
        assert isinstance(bad[1], InvalidArgument) and "has 3 keys but table db.b has 2" in str(bad[1])
        assert isinstance(bad[2], Aborted)
        granted = [r for r in bad if isinstance(r, LockResult)]
        assert [r.state for r in granted] == [LockState.ACQUIRED] * 2
        assert {i.user for i in await store.show_locks(None) if i.lock_id > first + 4} == {"ok1", "ok2"}
    finally:
        await db.close()


@pytest.mark.parametrize("group_commit_max", [1, 64])
async def test_two_gateways_concurrent_exclusive_enqueues_grant_at_most_one(gateway: GatewayClient, pg_dsn: str,
                                                                           group_commit_max: int) -> None:
    """Each enqueue must see every request enqueued before its ids were taken, another gateway's
    included: the one taken the next_lock_id row just before it committed meanwhile. Two gateways'
    enqueues (alone and in batches) of EXCLUSIVE on one table, racing: in each round exactly the
    first is granted and every later one waits behind one that came before it."""
    await gateway.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="race")))
    await gateway.catalog.CreateTable(pb.CreateTableRequest(table=table("race", "t", transactional=True)))
    dbs = [await Database.connect(pg_dsn) for _ in range(2)]
    stores = [LockStore(db, group_commit_max) for db in dbs]
    try:
        for _ in range(15):
            results = await asyncio.gather(*(stores[i % 2].lock(_lock(LockScope("race", "t"), LockType.EXCLUSIVE))
                                             for i in range(12)))
            by_id = sorted(results, key=lambda r: r.lock_id)
            assert [r.state for r in by_id] == [LockState.ACQUIRED] + [LockState.WAITING] * 11, by_id
            assert all(r.blocked_by is not None and r.blocked_by[0] < r.lock_id for r in by_id[1:])
            for result in results:
                await stores[0].unlock(result.lock_id)
    finally:
        for db in dbs:
            await db.close()
