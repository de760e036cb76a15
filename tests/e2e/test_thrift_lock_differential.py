"""Thrift lock calls on names that do not exist, against the gateway and the real Hive Metastore 2.3.10
(pyspark's jars, its transactions on PostgreSQL: TxnHandler needs its own tables), compared step by step.

Hive's TxnHandler.lock checks no object: a lock on a missing database, table or partition (of a table
that exists or not) is granted, waits behind the locks on the same names by the usual rules, holds
across the object's creation, and is released by unlock or by its txn's commit. Clients depend on it:
Hive 4's CTAS of an ACID table locks its target before creating it (HIVE-26244), Hive 2.3 locks a new
partition's name before a static insert writes it (a DummyPartition). Lock ids differ between the two
servers by nature, so each step is compared by its state (or exception type) and SHOW LOCKS by its rows.
Skipped without Java, pyspark's jars or PostgreSQL's JDBC driver.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable

import pytest
from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
from hmsclient.genthrift.hive_metastore import ttypes as ht

from gateway.app import Gateway
from loadtest.hms import hms_process, hms_unavailable_reason, postgres_unavailable_reason
from tests.conftest import gateway_settings
from tests.e2e.test_thrift_differential import _table

_REASON = hms_unavailable_reason() or postgres_unavailable_reason()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"Hive Metastore reference: {_REASON}")

Client = ThriftHiveMetastore.Client
DB, TABLE, PART = ht.LockLevel.DB, ht.LockLevel.TABLE, ht.LockLevel.PARTITION
SR, SW, X = ht.LockType.SHARED_READ, ht.LockType.SHARED_WRITE, ht.LockType.EXCLUSIVE
INSERT, UPDATE = ht.DataOperationType.INSERT, ht.DataOperationType.UPDATE


def _comp(kind: int, level: int, db: str, table: str | None = None, part: str | None = None,
          operation: int = ht.DataOperationType.UNSET) -> ht.LockComponent:
    return ht.LockComponent(type=kind, level=level, dbname=db, tablename=table, partitionname=part,
                            operationType=operation, isAcid=operation != ht.DataOperationType.UNSET)


class _Steps:
    """One server's answers, by label; the lock ids it answered, by the label that took them."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.answers: dict[str, Any] = {}
        self.ids: dict[str, int] = {}
        self.txn = 0

    def step(self, label: str, call: Callable[[], Any]) -> Any:
        try:
            got = call()
        except Exception as exc:  # noqa: BLE001 - a declared exception is an answer like any other
            self.answers[label] = {"raised": type(exc).__name__}
            return None
        self.answers[label] = got
        return got

    def lock(self, label: str, *components: ht.LockComponent, txn: bool = False) -> None:
        request = ht.LockRequest(list(components), self.txn if txn else None, "alice", "h")
        got = self.step(label, lambda: Client.lock(self.client, request))
        if got is not None:
            self.ids[label] = got.lockid
            self.answers[label] = ht.LockState._VALUES_TO_NAMES[got.state]

    def check(self, label: str, of: str) -> None:
        got = self.step(label, lambda: Client.check_lock(self.client, ht.CheckLockRequest(self.ids[of])))
        if got is not None:
            self.answers[label] = ht.LockState._VALUES_TO_NAMES[got.state]

    def unlock(self, of: str) -> None:
        self.step(f"unlock: {of}", lambda: Client.unlock(self.client, ht.UnlockRequest(self.ids[of])))

    def show(self, label: str, db: str, table: str | None = None) -> None:
        got = self.step(label, lambda: Client.show_locks(self.client, ht.ShowLocksRequest(db, table, None)))
        if got is not None:
            self.answers[label] = sorted(
                (e.dbname, e.tablename or "", e.partname or "", ht.LockState._VALUES_TO_NAMES[e.state],
                 ht.LockType._VALUES_TO_NAMES[e.type]) for e in got.locks)


def run_steps(address: str) -> dict[str, Any]:
    host, _, port = address.rpartition(":")
    client = hmsclient.HMSClient(host=host, port=int(port))
    client.open()
    s = _Steps(client)
    try:
        s.step("create the db", lambda: Client.create_database(client, ht.Database("ldb", "", None, {})))
        s.step("create a table", lambda: Client.create_table(client, _table("ldb", "t")))
        s.lock("X on a missing table", _comp(X, TABLE, "ldb", "nt"))
        s.lock("SR on the missing table", _comp(SR, TABLE, "ldb", "nt"))
        s.lock("SR on another missing table", _comp(SR, TABLE, "ldb", "nt2"))
        s.lock("X on a partition of a missing table", _comp(X, PART, "ldb", "np", "ds=1"))
        s.lock("SR on another partition of it", _comp(SR, PART, "ldb", "np", "ds=2"))
        s.lock("SR on the missing table of the partition", _comp(SR, TABLE, "ldb", "np"))
        s.lock("X on a missing partition of a table", _comp(X, PART, "ldb", "t", "ds=9"))
        s.lock("X on a missing db", _comp(X, DB, "nodb"))
        s.lock("SR on a table of another missing db", _comp(SR, TABLE, "nodb2", "t"))
        s.lock("X on a table of the missing db", _comp(X, TABLE, "nodb", "t"))
        s.show("locks of the db", "ldb")
        s.show("locks of the missing table", "ldb", "nt")
        s.show("locks of the missing db", "nodb")
        s.check("the SR still waits", "SR on the missing table")
        s.unlock("X on a missing table")
        s.check("the SR after the unlock", "SR on the missing table")
        s.step("create a locked table", lambda: Client.create_table(client, _table("ldb", "nt2")))
        s.lock("X on the created table", _comp(X, TABLE, "ldb", "nt2"))
        s.unlock("SR on another missing table")
        s.check("the X after the unlock", "X on the created table")
        s.unlock("X on the created table")
        s.step("drop the created table", lambda: Client.drop_table(client, "ldb", "nt2", True))
        for label in ("SR on the missing table", "X on a partition of a missing table", "SR on another partition of it",
                      "SR on the missing table of the partition", "X on a missing partition of a table",
                      "X on a missing db", "SR on a table of another missing db", "X on a table of the missing db"):
            s.unlock(label)
        s.show("locks after the unlocks", "ldb")
        s.txn = s.step("open a txn", lambda: Client.open_txns(client, ht.OpenTxnRequest(1, "alice", "h")).txn_ids[0])
        s.answers["open a txn"] = "opened"
        s.lock("a txn's insert into a missing table", _comp(SW, TABLE, "ldb", "ctas", operation=INSERT), txn=True)
        s.lock("a txn's update of a missing table's partition", _comp(SW, PART, "ldb", "tt", "ds=1", operation=UPDATE),
               txn=True)
        s.lock("X on the txn's missing table", _comp(X, TABLE, "ldb", "ctas"))
        s.show("locks under the txn", "ldb")
        s.step("commit the txn", lambda: Client.commit_txn(client, ht.CommitTxnRequest(s.txn)))
        s.check("the X after the commit", "X on the txn's missing table")
        s.unlock("X on the txn's missing table")
        s.show("locks at the end", "ldb")
        s.step("drop the db", lambda: Client.drop_database(client, "ldb", True, True))
    finally:
        client.close()
    return s.answers


async def test_locks_on_names_that_do_not_exist_are_answered_as_hive_metastore_does(pg_dsn: str,
                                                                                     tmp_path: Path) -> None:
    gw = Gateway(gateway_settings(pg_dsn, **{"hive.metastore.warehouse.dir": str(tmp_path / "gateway-warehouse")}))
    await gw.start()
    try:
        ours = await asyncio.to_thread(run_steps, f"127.0.0.1:{gw.thrift_port}")
    finally:
        await gw.stop()
    async with hms_process(workdir=tmp_path / "hms", backing="postgresql", transactions=True, quick_start=True,
                           jvm_args=["-Ddatanucleus.connectionPoolingType=dbcp"]) as hms:
        theirs = await asyncio.to_thread(run_steps, hms.address)
    assert list(ours) == list(theirs)
    differing = {label: (ours[label], theirs[label]) for label in theirs if ours[label] != theirs[label]}
    assert not differing, differing
    # Real answers, not two sides failing alike.
    assert theirs["X on a missing table"] == "ACQUIRED" and theirs["SR on the missing table"] == "WAITING"
    assert theirs["the X after the commit"] == "ACQUIRED" and theirs["locks at the end"] == []
