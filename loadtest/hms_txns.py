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

On the gateway's Thrift endpoint, a txn that adds partitions sends what Hive 3 sends for the same `INSERT
INTO` (option "write_ids"): Hive 2.3's `add_partitions` cannot name a txn, and the gateway refuses a write to
a transactional table outside one, so the txn allocates the table's write id first and each new partition
carries it (Partition.writeId), over a client of the gateway's own IDL (thriftpy2; Hive 2.3's client
library has neither the call nor the field):

    open_txns(1) -> allocate_table_write_ids -> lock(as above) -> add_partitions(N, writeId set) -> commit_txn
"""

from __future__ import annotations

import contextlib
import importlib
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


def connect_hive3(address: str, *, timeout_s: float = 30.0) -> Any:
    """A client of the gateway's own IDL (Hive 3's calls and fields) to "host:port", over thriftpy2's C
    binary protocol on a buffered socket. Close it with .close()."""
    import thriftpy2.rpc

    from gateway.thrift.idl import SERVICE

    host, _, port = address.rpartition(":")
    return thriftpy2.rpc.make_client(SERVICE, host.strip("[]"), int(port), timeout=int(timeout_s * 1000))


def _structs(*, hive3: bool) -> Any:
    """Hive's generated structs: the gateway's IDL's (Hive 3's fields) or hmsclient's (Hive 2.3's)."""
    if hive3:
        from gateway.thrift.idl import hms
        return hms
    return importlib.import_module("hmsclient.genthrift.hive_metastore.ttypes")


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
    """One Hive writer over its own Thrift connection (calls in the user's own thread). options: "db",
    "table", "location" (the table's, from create_table), "partitions" (new partitions per txn; 0: the
    txn manager alone), "write_ids" (Hive 3's calls when partitions are added; see the module's docstring),
    "tag" (unique per run), "request" (the measured name). A txn that fails is aborted (unmeasured) and the
    failure is recorded under the request's name."""

    async def on_start(self) -> None:
        self.db_name, self.table_name = str(self.options["db"]), str(self.options["table"])
        self.location = str(self.options["location"])
        self.partitions = int(self.options.get("partitions", 10))
        self.write_ids = bool(self.options.get("write_ids")) and self.partitions > 0
        self.request = str(self.options["request"])
        self.ds = f"{self.options.get('tag', 'run')}u{self.user_id}"
        self.iteration = 0
        self.hostname = socket.gethostname()
        self.ttypes = _structs(hive3=self.write_ids)
        self._own_thread()
        self.client = await self._run(connect_hive3 if self.write_ids else connect, self.host)

    def _requests(self) -> tuple[Any, Any, list[Any]]:
        """This txn's lock request (without its txn id), its open request, and its new partitions (without
        their write id)."""
        t = self.ttypes
        DataOperationType, LockComponent, LockLevel = t.DataOperationType, t.LockComponent, t.LockLevel
        LockRequest, LockType, OpenTxnRequest, Partition = t.LockRequest, t.LockType, t.OpenTxnRequest, t.Partition
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
                                   lastAccessTime=0, sd=storage_descriptor(DEFAULT_COLUMNS, location, t),
                                   parameters={}))
        lock = LockRequest(component=[LockComponent(
            type=LockType.SHARED_READ, level=LockLevel.TABLE, dbname=self.db_name, tablename=self.table_name,
            operationType=DataOperationType.INSERT, isAcid=True, isDynamicPartitionWrite=False)],
            user="bench", hostname=self.hostname, agentInfo="bench_txns")
        opened = OpenTxnRequest(num_txns=1, user="bench", hostname=self.hostname, agentInfo="bench_txns")
        return lock, opened, parts

    def _txn(self, lock: Any, opened: Any, parts: list[Any]) -> int:
        """One write transaction, blocking; returns the partitions added."""
        t, client, txn_id, committed = self.ttypes, self.client, 0, False
        AbortTxnRequest, CommitTxnRequest, LockState = t.AbortTxnRequest, t.CommitTxnRequest, t.LockState
        try:
            txn_id = client.open_txns(opened).txn_ids[0]
            if self.write_ids:
                allocated = client.allocate_table_write_ids(t.AllocateTableWriteIdsRequest(
                    dbName=self.db_name, tableName=self.table_name, txnIds=[txn_id]))
                for part in parts:
                    part.writeId = allocated.txnToWriteIds[0].writeId
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

