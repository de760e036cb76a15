"""The Hive metastore Thrift methods for transactions, write ids and locks (the notification log is
gateway/thrift/event_methods.py): thin adapters over the same TxnStore and LockStore the gRPC services use.

Hive's enums travel as i32 (LockType, LockLevel, LockState, TxnState, DataOperationType); the
tables below hold Hive's values. Where a method declares an exception the store's error table
cannot pick by itself (heartbeat names a lock or a txn), the method raises the declared one.
"""

from __future__ import annotations

from typing import Any, Iterable

from thriftpy2.thrift import TType

from gateway.auth import Identity, Ownership, shown, thrift_identity
from gateway.config import Settings
from gateway.thrift import wire
from gateway.thrift.convert import required
from gateway.thrift.idl import hms
from gateway.thrift.server import RawValue
from store.cache.facade import CachedCatalog
from store.catalog_store import CatalogStore
from store.errors import InvalidArgument, PermissionDenied, ResourceExhausted
from hive.lock_rules import DataOperationType, LockComponent, LockState, LockType, make_scope
from store.lock_store import LockStore
from store.locks import LockInfo, LockRequest, LockResult
from store.txn_store import TxnStore
from store.txns import READ_ONLY_TXN_TYPE
from store.write_set import DynamicPartitions
from hive.writeids import LONG_MAX, ValidTxnList

LOCK_TYPES = {1: LockType.SHARED_READ, 2: LockType.SHARED_WRITE, 3: LockType.EXCLUSIVE, 4: LockType.EXCL_WRITE}
LOCK_TYPE_IDS = {v: k for k, v in LOCK_TYPES.items()}
OPERATIONS = {1: DataOperationType.SELECT, 2: DataOperationType.INSERT, 3: DataOperationType.UPDATE,
              4: DataOperationType.DELETE, 5: DataOperationType.UNSET, 6: DataOperationType.NO_TXN}
LOCK_STATE_IDS = {LockState.ACQUIRED: 1, LockState.WAITING: 2}
TXN_STATE_IDS = {"COMMITTED": 1, "ABORTED": 2, "OPEN": 3}
READ_ONLY_TXNS = frozenset({READ_ONLY_TXN_TYPE})  # Hive's TxnType.READ_ONLY: in no snapshot's open list


def bitset(flags: Iterable[bool]) -> bytes:
    """java.util.BitSet.toByteArray of the flags: bit i in byte i // 8 at i % 8, no trailing zeros."""
    out = bytearray()
    for i, flag in enumerate(flags):
        if i % 8 == 0:
            out.append(0)
        if flag:
            out[-1] |= 1 << (i % 8)
    return bytes(out.rstrip(b"\0"))


def txn_id_of(value: int | None, what: str) -> int:
    if value is None or value <= 0:
        raise InvalidArgument(f"{what} must be a txn id (positive), got {value}")
    return value


def _check_admin(what: str) -> None:
    identity = thrift_identity.get()
    if identity.limited_to is not None:
        raise PermissionDenied(f"{what}: {identity.user} may not seed write or txn ids; only an admin "
                               "(hive.users.in.admin.role) may")


class TxnLockMethods:
    """Mixed into the Thrift handler; needs `_txns`, `_locks`, `_catalog`, `_settings` and `_owners`.
    The caller is the connection's (`thrift_identity`, set by the server from its certificate)."""

    _owners: Ownership
    _txns: TxnStore
    _locks: LockStore
    _cached: CachedCatalog
    _catalog: CatalogStore
    _settings: Settings

    # -- txns ------------------------------------------------------------------------------------

    async def open_txns(self, rqst: Any) -> Any:
        """Hive's openTxns; Hive 4's txn_type is kept with each txn (a READ_ONLY one takes no write id,
        and Hive 4 clients leave READ_ONLY txns out of their snapshots: get_open_txns_req). Replication's
        txns (replPolicy, replSrcTxnIds) are not supported: refused. A request for more than
        hive.txn.max.open.batch txns opens that many, as Hive 2.3's TxnHandler.openTxns and Hive 4's
        OpenTxnsFunction cap it (the caller takes the ids answered; Hive 3.1 meant to and opened all); one
        for fewer than 1 is refused, as Hive 3 and 4 refuse it (Hive 2.3 opens none)."""
        if rqst is None or not rqst.num_txns or rqst.num_txns < 1:
            raise InvalidArgument("open_txns needs num_txns of at least 1")
        if rqst.replPolicy or rqst.replSrcTxnIds:
            raise InvalidArgument("open_txns for replication (replPolicy, replSrcTxnIds) is not supported by this "
                                  "gateway")
        user = thrift_identity.get().user_or(rqst.user or "")
        count = min(rqst.num_txns, self._settings.txn_max_open_batch)
        ids, _ = await self._txns.open_txns(count, user=user, host=rqst.hostname or "",
                                            agent_info=rqst.agentInfo or "",
                                            txn_type=rqst.txn_type if rqst.txn_type is not None else 0)
        return hms.OpenTxnsResponse(txn_ids=ids)

    async def commit_txn(self, rqst: Any) -> None:
        """Hive's commitTxn, with the write-set check on every commit of a txn that updated or deleted
        (store/write_set.py: a conflict aborts it, TxnAbortedException). Different from Hive 4 on
        purpose: Hive 4's CommitTxnFunction skips the check when the request's exclWriteEnabled is true
        (field 6, true unless set; Hive 4's DbTxnManager sends hive.txn.xlock.write, true by default),
        trusting the client's EXCL_WRITE locks, its get_latest_txnid_in_conflict check once it holds
        them, and its recompile of the statement in the same txn with a new snapshot and write ids
        reallocated (AllocateTableWriteIdsRequest.reallocate, HIVE-26472). The gateway reads neither
        field: its other writers (Spark, gRPC clients, Trino) rely on the check, and write ids are not
        reallocated here. So a Hive 4 UPDATE, DELETE or MERGE that waited for another txn, begun before
        it, to commit a conflicting write is aborted at its commit (the statement fails and may be run
        again), where Hive 4 commits its recompiled statement."""
        txn_id = txn_id_of(rqst and rqst.txnid, "txnid")
        await self._owners.check_txns(thrift_identity.get(), [txn_id], "commit_txn")
        if rqst.keyValue is not None:  # Hive 4's: a table parameter set with the commit, both or neither
            key_value = rqst.keyValue
            event_id, written = await self._catalog.commit_with_table_parameter(
                txn_id, required(key_value.tableId, "keyValue.tableId"), required(key_value.key, "keyValue.key"),
                required(key_value.value, "keyValue.value"))
            self._cached.ended_txn(txn_id, event_id, written)
            return
        self._cached.ended_txn(txn_id, *await self._txns.commit(txn_id))

    async def abort_txn(self, rqst: Any) -> None:
        """Hive's abortTxn: a committed or unknown txn is NoSuchTxnException, an aborted one nothing."""
        await self._abort([txn_id_of(rqst.txnid if rqst else None, "txnid")], "abort_txn", skip_ended=False)

    async def abort_txns(self, rqst: Any) -> None:
        """Hive's abortTxns: the open ones are aborted; committed, aborted and unknown txns are skipped,
        not an error (a streaming client aborts what is left of a batch, some of which committed). An id
        of 0 or below is no txn's and is skipped alike, as Hive (2.3 to 4) skips it: its UPDATE of the
        named txns in state open finds no row for it."""
        await self._abort(list((rqst.txn_ids if rqst else None) or []), "abort_txns", skip_ended=True)

    async def _abort(self, txn_ids: list[int], method: str, *, skip_ended: bool) -> None:
        if len(txn_ids) > self._settings.txn_max_open_batch:
            raise ResourceExhausted(f"{method} of {len(txn_ids)} txns: more than hive.txn.max.open.batch")
        await self._owners.check_txns(thrift_identity.get(), txn_ids, method)
        event_ids = await self._txns.abort(txn_ids, skip_ended=skip_ended)
        self._cached.ended_txns(txn_ids, max(event_ids, default=0))

    async def get_open_txns(self) -> RawValue:
        """Hive's getOpenTxns: without READ_ONLY txns, which write nothing (Hive 4's TxnHandler.getOpenTxns
        leaves them out as get_open_txns_req does when asked to).

        Hive 2.3 and Hive 3 both call it (DbTxnManager.getValidTxns, before every statement), and declare
        GetOpenTxnsResponse.open_txns (required, field 2) as a set<i64> (2.3) and a list<i64> (3): a client
        skips a field of another type than its own, then fails the reply for the required field it lacks. So
        the field is written twice, as a set and then as a list: each client reads the one of its type and
        skips the other (Hive 2.3 skips abortedBits, a field it does not know)."""
        response = _open_txns_response(await self._txns.get_open_txns(0, READ_ONLY_TXNS))
        return RawValue(TType.STRUCT, wire.i64_set_field(2, response.open_txns) + wire.encode(response))

    async def get_open_txns_req(self, rqst: Any) -> Any:
        """Hive 4's form of get_open_txns, the only one its clients call (HiveMetaStoreClient
        getValidTxns, getOpenTxns): without the txns of the types in `excludeTxnTypes` (they name
        READ_ONLY, which this gateway never opens; unset: none left out)."""
        exclude = (rqst.excludeTxnTypes if rqst is not None else None) or []
        return _open_txns_response(await self._txns.get_open_txns(0, frozenset(exclude)))

    async def get_open_txns_info(self) -> Any:
        """Hive's getOpenTxnsInfo (SHOW TRANSACTIONS): the open and aborted txns up to the high-water
        mark with their state, user, host and times; agentInfo is the one the txn was opened with,
        where Hive's stays at its IDL default "Unknown". Unlike Hive's, the list is bounded: the
        lowest MAX_SHOW_ROWS + 1 ids (store/txns.py show_transactions), with no way to say more exist."""
        snapshot = await self._txns.get_open_txns(0)
        identity = thrift_identity.get()
        txns = [hms.TxnInfo(id=t.txn_id, state=TXN_STATE_IDS[t.state], agentInfo=t.agent_info or "Unknown",
                            startedTime=t.started_ms, lastHeartbeatTime=t.last_heartbeat_ms,
                            **dict(zip(("user", "hostname"), shown(identity, t.user, t.host))))
                for t in await self._txns.show_transactions() if t.txn_id <= snapshot.high_watermark]
        return hms.GetOpenTxnsInfoResponse(txn_high_water_mark=snapshot.high_watermark, open_txns=txns)

    async def heartbeat(self, ids: Any) -> None:
        if ids is None or not (ids.txnid or ids.lockid):
            return  # nothing to heartbeat: Hive's heartbeatLock and heartbeatTxn return on an id of 0
        await self._owners.check_txns(thrift_identity.get(), [ids.txnid] if ids.txnid else [], "heartbeat")
        await self._owners.check_locks(thrift_identity.get(), [ids.lockid] if ids.lockid else [], "heartbeat")
        # The lock first, then the txn, as Hive's TxnHandler.heartbeat: a missing lock is NoSuchLockException
        # whatever the txn's state.
        if ids.lockid and await self._locks.heartbeat([ids.lockid]):
            raise hms.NoSuchLockException(message=f"lock {ids.lockid} does not exist (released or timed out)")
        if ids.txnid:
            aborted, nosuch = await self._txns.heartbeat([ids.txnid])
            if aborted:
                raise hms.TxnAbortedException(message=f"txn {ids.txnid} was aborted; start a new transaction")
            if nosuch:
                raise hms.NoSuchTxnException(message=f"txn {ids.txnid} does not exist")

    async def heartbeat_txn_range(self, txns: Any) -> Any:
        """Hive's heartbeatTxnRange: each id from min to max heartbeated, those not open answered as
        aborted or nosuch. As Hive's (2.3 to 4), whose heartbeat of txn 0 returns at once, an id of 0 is in
        neither set, and one below 0, which no txn has, is nosuch."""
        low, high = (txns.min, txns.max) if txns is not None else (None, None)
        if low is None or high is None or high < low:
            raise InvalidArgument(f"heartbeat_txn_range [{low}, {high}] is not a range of txn ids (min <= max)")
        if high - low >= self._settings.txn_max_open_batch:
            raise ResourceExhausted(f"heartbeat_txn_range covers {high - low + 1} txns, more than "
                                    "hive.txn.max.open.batch")
        txn_ids = [t for t in range(low, high + 1) if t != 0]
        await self._owners.check_txns(thrift_identity.get(), txn_ids, "heartbeat_txn_range")
        aborted, nosuch = await self._txns.heartbeat(txn_ids)
        return hms.HeartbeatTxnRangeResponse(aborted=set(aborted), nosuch=set(nosuch))

    async def get_latest_txnid_in_conflict(self, txnId: int | None) -> int:  # noqa: N803 - Hive's argument name
        """Hive 4's, asked by its Driver once it holds an exclusive lock (UPDATE, DELETE, MERGE, INSERT
        OVERWRITE): the latest txn whose committed update or delete conflicts with this txn's (its
        snapshot is then out of date), 0 when none, as for an id no open txn has."""
        return await self._txns.latest_txn_in_conflict(txnId or 0)

    async def update_transaction_statistics(self, req: Any) -> None:
        """Hive 4's, sent by its BasicStatsTask after a write to a transactional table (the rows it
        inserted, updated and deleted, by table id): Hive 4's TxnHandler.updateTransactionStatistics adds
        them to the counters of the materialized views that use the table (MV_TABLES_USED), nothing for
        a table none uses. This gateway has no materialized views: answered, nothing done."""

    # -- write ids ---------------------------------------------------------------------------------

    async def add_write_ids_to_min_history(self, txnId: int | None,  # noqa: N803 - Hive's argument names
                                           writeIds: dict[str, int] | None) -> None:  # noqa: N803
        """Hive 4's, sent on every query that reads a transactional table, once its snapshot is taken
        (DriverTxnHandler.recordValidWriteIds -> DbTxnManager.addWriteIdsToMinHistory: the smallest write
        id of each such table its snapshot holds open). Hive 4's metastore stores them in
        MIN_HISTORY_WRITE_ID only with metastore.txn.use.minhistorywriteid (off by default), for its
        Cleaner to tell per table what no open snapshot can read; else it does nothing and answers. The
        gateway's Cleaner needs no such record: it deletes what a compaction made obsolete only once every
        txn open at the compaction's commit has ended (its horizon, Hive's CQ_NEXT_TXN_ID rule:
        store/compaction.py). So nothing is stored and nothing checked, as in Hive's default."""


    async def get_valid_write_ids(self, rqst: Any) -> Any:
        """Hive's getValidWriteIds: each named table's write ids in the snapshot of `validTxnList`;
        without one, Hive 4's `writeId` names a write id of the first table and the snapshot is its
        txn's (what Hive 4's TRUNCATE asks); with neither, the current snapshot. An empty
        validTxnList counts as none, where Hive reads '' as "every txn committed", open ones too. A
        name no table has in the snapshot is answered as Hive's TxnHandler does, finding no write-id
        rows for it: high-water mark 0, nothing invalid. No names: no tables answered, as in Hive (the
        snapshot still read, so a txn list it cannot read is refused).

        Each table is answered under its name as sent, as Hive's is (a client finds its answer by the
        name it asked by). Different from Hive on purpose: a name in other case ("DB.T") is answered
        with the table's write ids, found as every call finds names; Hive looks its rows up by the
        name as given, finds none (it stores names lower-cased) and answers high-water mark 0, with
        which a reader would skip every committed write of the table. Hive's, Trino's and Impala's
        clients send lower-case names, which both answer alike."""
        if rqst is None:
            raise InvalidArgument("get_valid_write_ids needs a request (GetValidWriteIdsRequest)")
        names = rqst.fullTableNames or []
        if len(names) > self._settings.max_batch_size:
            raise InvalidArgument(f"get_valid_write_ids names {len(names)} tables, more than "
                                  f"{self._settings.max_batch_size} (metastore.gateway.max.batch.size)")
        if rqst.validTxnList:
            txn_list = ValidTxnList.parse(rqst.validTxnList)
        elif rqst.writeId is not None:
            if not names:
                raise InvalidArgument(f"get_valid_write_ids: writeId {rqst.writeId} needs the table it is of, first "
                                      "in fullTableNames")
            txn_list = await self._txns.txn_list_of_write_id(names[0], rqst.writeId)
        else:
            txn_list = await self._txns.get_open_txns(0, READ_ONLY_TXNS)
        tables = await self._txns.get_valid_write_ids(list(names), txn_list, missing_ok=True)
        return hms.GetValidWriteIdsResponse(tblValidWriteIds=[hms.TableValidWriteIds(
            fullTableName=name, writeIdHighWaterMark=t.valid_write_ids.high_watermark,
            invalidWriteIds=list(t.valid_write_ids.exceptions),
            minOpenWriteId=(t.valid_write_ids.min_open_write_id
                            if t.valid_write_ids.min_open_write_id != LONG_MAX else None),
            abortedBits=bitset(w in t.valid_write_ids.aborted for w in t.valid_write_ids.exceptions))
            for name, t in zip(names, tables, strict=True)])

    async def allocate_table_write_ids(self, rqst: Any) -> Any:
        """Hive's allocateTableWriteIds: each txn's write id of the table, reused when it holds one,
        allocated in txn-id order to the others, all in one step. Different from Hive on purpose where
        some of the txns named hold one and some do not: Hive 4's AllocateTableWriteIdsFunction asserts
        that this never happens, and without assertions allocates ids to all of them and fails on the
        held ones' duplicate TXN_TO_WRITE_ID rows (a MetaException after its retries); here each txn
        keeps the one it holds and the others get theirs, as separate calls would give them. Hive's
        clients never send such a call: DbTxnManager allocates for its one txn, streaming for fresh ones."""
        if rqst is None or not rqst.txnIds:
            raise InvalidArgument("allocate_table_write_ids needs txnIds (replication's srcTxnToWriteIdList is not "
                                  "supported)")
        txn_ids = [txn_id_of(t, "txnIds") for t in rqst.txnIds]
        await self._owners.check_txns(thrift_identity.get(), txn_ids, "allocate_table_write_ids")
        ids = await self._txns.allocate_write_ids(txn_ids, rqst.dbName or "", rqst.tableName or "")
        return hms.AllocateTableWriteIdsResponse(
            txnToWriteIds=[hms.TxnToWriteId(txnId=t, writeId=w) for t, w in sorted(ids.items())])

    async def get_max_allocated_table_write_id(self, rqst: Any) -> Any:
        """Hive's getMaxAllocatedTableWriteId, which Hive 4's MSCK REPAIR asks before it adds partitions to a
        transactional table (store/txns.py max_allocated_write_id)."""
        rqst = required(rqst, "rqst")
        allocated = await self._txns.max_allocated_write_id(required(rqst.dbName, "dbName"),
                                                            required(rqst.tableName, "tableName"))
        return hms.MaxAllocatedTableWriteIdResponse(maxWriteId=allocated)

    async def seed_write_id(self, rqst: Any) -> None:
        """Hive's seedWriteId (store/txns.py seed_write_id): Hive 4's MSCK REPAIR seeds a transactional table
        that has had no write ids with the largest one its files name. With authentication on, an admin's
        call only: it decides what every later snapshot of the table reads."""
        rqst = required(rqst, "rqst")
        _check_admin("seed_write_id")
        db_name, table_name = required(rqst.dbName, "dbName"), required(rqst.tableName, "tableName")
        event_id = await self._txns.seed_write_id(db_name, table_name, required(rqst.seedWriteId, "seedWriteId"))
        self._cached.wrote(db_name, table_name, event_id)

    async def seed_txn_id(self, rqst: Any) -> None:
        """Hive's seedTxnId (store/txns.py seed_txn_id): Hive 4's MSCK REPAIR moves the txn ids past those its
        compacted directories name. With authentication on, an admin's call only."""
        rqst = required(rqst, "rqst")
        _check_admin("seed_txn_id")
        await self._txns.seed_txn_id(required(rqst.seedTxnId, "seedTxnId"))

    # -- locks -----------------------------------------------------------------------------------

    async def lock(self, rqst: Any) -> Any:
        components = (rqst.component if rqst else None) or []
        if not components or len(components) > self._settings.max_lock_components:
            raise InvalidArgument(f"lock needs 1 to {self._settings.max_lock_components} components "
                                  "(metastore.gateway.max.lock.components)")
        identity = thrift_identity.get()
        if rqst.txnid:
            await self._owners.check_txns(identity, [rqst.txnid], "lock")
        result = await self._locks.lock(LockRequest(
            tuple(_component(i, c) for i, c in enumerate(components)), rqst.txnid or 0,
            identity.user_or(rqst.user or ""), rqst.hostname or "", rqst.agentInfo or ""))
        return _lock_response(result)

    async def add_dynamic_partitions(self, rqst: Any) -> None:
        txn_id = txn_id_of(rqst and rqst.txnid, "txnid")
        if not rqst.dbname or not rqst.tablename or rqst.partitionnames is None:
            raise InvalidArgument("add_dynamic_partitions needs dbname, tablename and partitionnames (Hive 3's "
                                  "AddDynamicPartitions: txnid, writeid, dbname, tablename, partitionnames, "
                                  "operationType)")
        await self._owners.check_txns(thrift_identity.get(), [txn_id], "add_dynamic_partitions")
        await self._txns.add_dynamic_partitions(DynamicPartitions(
            txn_id, rqst.writeid or 0, rqst.dbname, rqst.tablename, tuple(rqst.partitionnames),
            _operation(rqst.operationType, "operationType")), self._settings.max_lock_components)

    async def check_lock(self, rqst: Any) -> Any:
        await self._owners.check_locks(thrift_identity.get(), [_lock_id(rqst)], "check_lock")
        return _lock_response(await self._locks.check_lock(_lock_id(rqst)))

    async def unlock(self, rqst: Any) -> None:
        """Hive's unlock. Of a lock that does not exist (released, timed out, or an id of 0 or below, which no
        lock has) it returns, as Hive's (2.3 to 4) does "to make the operation idempotent"."""
        lock_id = rqst.lockid if rqst is not None else None
        if lock_id is None:
            raise InvalidArgument("unlock needs lockid")
        await self._owners.check_locks(thrift_identity.get(), [lock_id], "unlock")
        await self._locks.unlock(lock_id, missing_ok=True)

    async def show_locks(self, rqst: Any) -> Any:
        """Hive's SHOW LOCKS. A name no lock can hold (one make_scope refuses, as every lock's names pass it)
        matches none, as Hive's filter on HIVE_LOCKS' names does: Hive 2.3's SHOW LOCKS db.table sends the table
        name "db.table" (its DDLTask does not split it) and gets an empty list, not a failed statement."""
        db, table, part = (rqst.dbname, rqst.tablename, rqst.partname) if rqst else (None, None, None)
        try:
            scope = make_scope(db, table or None, part or None) if db else None
        except InvalidArgument:
            return hms.ShowLocksResponse(locks=[])
        infos = await self._locks.show_locks(scope, extended=bool(rqst and rqst.isExtended))
        identity = thrift_identity.get()
        return hms.ShowLocksResponse(locks=[_lock_element(i, identity) for i in infos])


def _open_txns_response(snapshot: ValidTxnList) -> Any:
    return hms.GetOpenTxnsResponse(
        txn_high_water_mark=snapshot.high_watermark, open_txns=list(snapshot.exceptions),
        min_open_txn=snapshot.min_open_txn if snapshot.min_open_txn != LONG_MAX else None,
        abortedBits=bitset(t in snapshot.aborted for t in snapshot.exceptions))


def _lock_id(rqst: Any) -> int:
    if rqst is None or not rqst.lockid or rqst.lockid <= 0:
        raise InvalidArgument("lockid must be a lock id (positive)")
    return int(rqst.lockid)


def _component(index: int, c: Any) -> LockComponent:
    if c.type not in LOCK_TYPES:
        raise InvalidArgument(f"component[{index}]: lock type {c.type} is not SHARED_READ (1), SHARED_WRITE (2), "
                              "EXCLUSIVE (3) or EXCL_WRITE (4)")
    return LockComponent(make_scope(c.dbname or "", c.tablename or None, c.partitionname or None),
                         LOCK_TYPES[c.type], _operation(c.operationType, f"component[{index}]: operationType"),
                         transactional=c.isAcid is not False, dynamic_partition_write=bool(c.isDynamicPartitionWrite))


def _operation(value: int | None, what: str) -> DataOperationType:
    operation = OPERATIONS.get(value if value is not None else 5)
    if operation is None:
        raise InvalidArgument(f"{what}: unknown DataOperationType {value}")
    return operation


def _lock_response(result: LockResult) -> Any:
    return hms.LockResponse(lockid=result.lock_id, state=LOCK_STATE_IDS[result.state])


def _lock_element(i: LockInfo, identity: Identity) -> Any:
    """One row of SHOW LOCKS. A lock taken without an agent (a gRPC Lock) shows Hive's default, "Unknown", as
    Hive's never shows none: Iceberg's client finds its own lost lock by comparing each row's agentInfo."""
    ext, internal = i.blocked_by or (None, None)
    user, host = shown(identity, i.user, i.host)
    return hms.ShowLocksResponseElement(
        lockid=i.lock_id, dbname=i.scope.db, tablename=i.scope.table, partname=i.scope.partition,
        state=LOCK_STATE_IDS[i.state], type=LOCK_TYPE_IDS[i.type], txnid=i.txn_id or None,
        lastheartbeat=i.last_heartbeat_ms, acquiredat=i.acquired_at_ms or None, user=user, hostname=host,
        agentInfo=i.agent_info or "Unknown", blockedByExtId=ext, blockedByIntId=internal, lockIdInternal=i.component_id)
