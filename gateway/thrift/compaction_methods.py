"""The Hive metastore Thrift methods of the compactor: `compact2` (ALTER TABLE ... COMPACT) and
`show_compact` (SHOW COMPACTIONS), over the same store functions as the gRPC Compactor service.

Hive declares no exception on either method, so a refused request reaches a Thrift client as
TApplicationException carrying the store's message (gateway/thrift/errors.py).
"""

from __future__ import annotations

from typing import Any

import asyncpg

from gateway.auth import thrift_identity
from gateway.thrift.convert import required
from gateway.thrift.idl import hms
from store import compaction
from store.db import Database
from store.errors import InvalidArgument

# Hive's CompactionType values on the wire.
_TYPES = {1: compaction.MINOR, 2: compaction.MAJOR}
_TYPE_IDS = {"MINOR": 1, "MAJOR": 2}
MAX_PROPERTIES = 100


class CompactionMethods:
    """Mixed into the Thrift handler; needs `_compaction_db`."""

    _compaction_db: Database

    async def compact(self, rqst: Any) -> None:
        """Hive 2's ALTER TABLE ... COMPACT before compact2: the same request, no answer."""
        await self.compact2(rqst)

    async def compact2(self, rqst: Any) -> Any:
        if rqst is None or not rqst.dbname or not rqst.tablename:
            raise InvalidArgument("compact2 needs dbname and tablename")
        if rqst.type not in _TYPES:
            raise InvalidArgument(f"compact2: type must be MINOR (1) or MAJOR (2), got {rqst.type}")
        properties = dict(rqst.properties or {})
        run_as = thrift_identity.get().run_as(rqst.runas or "")  # the connection's user unless an admin's
        if len(properties) > MAX_PROPERTIES:
            raise InvalidArgument(f"compact2: at most {MAX_PROPERTIES} properties, got {len(properties)}")

        async def run(conn: asyncpg.Connection) -> compaction.Enqueued:
            table, partition = await compaction.resolve_target(conn, rqst.dbname, rqst.tablename,
                                                               rqst.partitionname or None)
            return await compaction.enqueue(conn, table, partition.name if partition else None, _TYPES[rqst.type],
                                            properties=properties, run_as=run_as, initiator_id="manual",
                                            manual=True)

        done = await self._compaction_db.transact(run)
        return hms.CompactionResponse(id=done.id, state=compaction.STATE_NAMES[done.state], accepted=done.accepted)

    async def show_compact(self, rqst: Any) -> Any:
        """Hive's SHOW COMPACTIONS: the queue's and the history's entries; Hive 4's filters, each that is
        set (id, database, table, partition, pool, type, state as Hive's one-letter state, limit),
        keep those that match, as Hive 4's ShowCompactHandler does. Its `order` (the statement's ORDER
        BY, SQL text run by Hive's metastore) is not run: entries come by id."""
        rqst = rqst if rqst is not None else hms.ShowCompactRequest()
        if rqst.type is not None and rqst.type not in _TYPES:
            raise InvalidArgument(f"show_compact: type must be MINOR (1) or MAJOR (2), got {rqst.type}")
        rows = await self._compaction_db.read(
            compaction.show, db_name=rqst.dbName or None, table_name=rqst.tbName or None,
            partition_name=rqst.partName or None, compaction_id=rqst.id if rqst.id and rqst.id > 0 else None,
            type_=_TYPES[rqst.type] if rqst.type is not None else None, state=rqst.state or None,
            pool_name=rqst.poolName or None,
            limit=rqst.limit if rqst.limit and 0 < rqst.limit < compaction.MAX_SHOW else compaction.MAX_SHOW)
        return hms.ShowCompactResponse(compacts=[_element(c) for c in rows])


    async def get_latest_committed_compaction_info(self, rqst: Any) -> Any:
        """Hive 4's: of each partition named (none named: every one, and the table's own), the newest
        compaction whose files readers may use now (succeeded, or waiting for the Cleaner), above
        `lastCompactionId` when it is set, newest first (store/compaction.py latest_committed). Impala's
        catalog asks it before it reloads a transactional table's files."""
        rqst = required(rqst, "rqst")
        if rqst.dbname is None or rqst.tablename is None:
            raise InvalidArgument("Database name and table name cannot be null.")
        db_name, table_name = rqst.dbname, rqst.tablename
        latest = await self._compaction_db.read(compaction.latest_committed, db_name, table_name,
                                                rqst.partitionnames, rqst.lastCompactionId)
        return hms.GetLatestCommittedCompactionInfoResponse(compactions=[hms.CompactionInfoStruct(
            id=c.id, dbname=db_name.lower(), tablename=table_name.lower(), partitionname=c.partition_name,
            type=_TYPE_IDS[c.type]) for c in latest])


def _element(c: compaction.CompactionInfo) -> Any:
    return hms.ShowCompactResponseElement(
        dbname=c.db_name, tablename=c.table_name, partitionname=c.partition_name, type=_TYPE_IDS[c.type],
        state=c.state, workerid=c.worker_id or None, start=c.start_ms or None, runAs=c.run_as or None,
        endTime=c.end_ms or None, hadoopJobId="None", id=c.id, errorMessage=c.error_message or None,
        enqueueTime=c.enqueue_time_ms or None, workerVersion=c.worker_version or None,
        initiatorId=c.initiator_id or None, initiatorVersion=c.initiator_version or None, poolName=c.pool_name,
        nextTxnId=c.next_txn_id or None, txnId=c.txn_id or None, commitTime=c.commit_time_ms or None,
        hightestWriteId=c.highest_write_id or None)
