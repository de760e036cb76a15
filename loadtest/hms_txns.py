"""Small write transactions on the Hive Metastore 2.3 through its Thrift API: the peer of the gateway's
write-txn workloads in loadtest/bench_txns.py.

Hive 2.3 has no write ids: where the gateway allocates a table write id, a Hive 2.3 writer takes a lock in
its txn. One transaction is what Hive 2.3's DbTxnManager does for `INSERT INTO` a partitioned ACID table:

    open_txns(num_txns=1) -> lock(SHARED_READ on the table, operation INSERT, isAcid, the txn id)
      [-> add_partitions(N new partitions)] -> commit_txn

The lock is granted at once (nothing else locks the table exclusively), and being an ACID INSERT it is
recorded in TXN_COMPONENTS and moved to COMPLETED_TXN_COMPONENTS at commit, as a write id's bookkeeping is
on the gateway. Each new partition's directory is made before the clock runs (a real writer has written
its files there already), so the HMS only finds it.
"""

from __future__ import annotations

import contextlib
import socket
import time
from typing import Any

from loadtest.hms import (
    DEFAULT_COLUMNS,
    HmsError,
    ThriftUser,
    local_dir,
    storage_descriptor,
    connect,
    partition_name,
)
from loadtest.users import task

KEYS: tuple[tuple[str, str], ...] = (("ds", "string"), ("n", "int"))  # the gateway bench's table `writes`


def create_table(address: str, db: str, table: str) -> str:
    """Create database `db` and the ACID table `db.table` (the gateway bench's columns and partition keys;
    ORC, bucketed by id into one bucket, as Hive 2.3 requires of a transactional table); returns the table's
    location. Blocking."""
    from hmsclient.genthrift.hive_metastore.ttypes import Database, FieldSchema, Table

    with contextlib.closing(connect(address, timeout_s=120.0)) as client:
        client.create_database(Database(name=db, description=f"{db} (bench_txns)", parameters={}))
        sd = storage_descriptor(DEFAULT_COLUMNS, None)
        sd.numBuckets, sd.bucketCols = 1, ["id"]
        client.create_table(Table(
            tableName=table, dbName=db, owner="bench", createTime=int(time.time()), lastAccessTime=0, retention=0,
            sd=sd, partitionKeys=[FieldSchema(name=n, type=t, comment=None) for n, t in KEYS],
            parameters={"transactional": "true"}, tableType="MANAGED_TABLE"))
        return str(client.get_table(db, table).sd.location).rstrip("/")


class HmsWriteTxnUser(ThriftUser):
    """One Hive 2.3 writer over its own Thrift connection (calls in the user's own thread). options: "db",
    "table", "location" (the table's, from create_table), "partitions" (new partitions per txn; 0: the
    txn manager alone), "tag" (unique per run), "request" (the measured name). A txn that fails is aborted
    (unmeasured) and the failure is recorded under the request's name."""

    async def on_start(self) -> None:
        self.db_name, self.table_name = str(self.options["db"]), str(self.options["table"])
        self.location = str(self.options["location"])
        self.partitions = int(self.options.get("partitions", 10))
        self.request = str(self.options["request"])
        self.ds = f"{self.options.get('tag', 'run')}u{self.user_id}"
        self.iteration = 0
        self.hostname = socket.gethostname()
        self._own_thread()
        self.client = await self._run(connect, self.host)

    def _requests(self) -> tuple[Any, Any, list[Any]]:
        """This txn's lock request (without its txn id), its open request, and its new partitions."""
        from hmsclient.genthrift.hive_metastore.ttypes import (
            DataOperationType, LockComponent, LockLevel, LockRequest, LockType, OpenTxnRequest, Partition,
        )

        first = self.iteration * self.partitions
        self.iteration += 1
        now = int(time.time())
        parts = []
        for i in range(self.partitions):
            values = [self.ds, str(first + i)]
            location = f"{self.location}/{partition_name(KEYS, values)}"
            local = local_dir(location)
            if local is not None:
                local.mkdir(parents=True, exist_ok=True)
            parts.append(Partition(values=values, dbName=self.db_name, tableName=self.table_name, createTime=now,
                                   lastAccessTime=0, sd=storage_descriptor(DEFAULT_COLUMNS, location), parameters={}))
        lock = LockRequest(component=[LockComponent(
            type=LockType.SHARED_READ, level=LockLevel.TABLE, dbname=self.db_name, tablename=self.table_name,
            operationType=DataOperationType.INSERT, isAcid=True, isDynamicPartitionWrite=False)],
            user="bench", hostname=self.hostname, agentInfo="bench_txns")
        opened = OpenTxnRequest(num_txns=1, user="bench", hostname=self.hostname, agentInfo="bench_txns")
        return lock, opened, parts

    def _txn(self, lock: Any, opened: Any, parts: list[Any]) -> int:
        """One write transaction, blocking; returns the partitions added."""
        from hmsclient.genthrift.hive_metastore.ttypes import AbortTxnRequest, CommitTxnRequest, LockState

        client, txn_id, committed = self.client, 0, False
        try:
            txn_id = client.open_txns(opened).txn_ids[0]
            lock.txnid = txn_id
            granted = client.lock(lock)
            if granted.state != LockState.ACQUIRED:
                raise HmsError(f"lock in txn {txn_id} answered state {granted.state}, not ACQUIRED")
            added = client.add_partitions(parts) if parts else 0
            client.commit_txn(CommitTxnRequest(txnid=txn_id))
            committed = True
            return int(added)
        finally:
            if txn_id and not committed:
                with contextlib.suppress(Exception):
                    client.abort_txn(AbortTxnRequest(txnid=txn_id))

    @task
    async def write_txn(self) -> None:
        lock, opened, parts = self._requests()
        async with self.measure(self.request) as m:
            m.items = await self._run(self._txn, lock, opened, parts)
            if m.items != self.partitions:
                m.fail("add_partitions added fewer partitions than asked")

