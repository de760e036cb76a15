"""The write side of Hive 4's transaction calls over Thrift, against what Hive 4's metastore answers
(standalone-metastore/metastore-server/.../txn/jdbc/functions/*Function.java) for what Hive 4's
clients send on their normal paths (ql/.../lockmgr/DbTxnManager.java, ql/.../DriverTxnHandler.java,
HiveMetaStoreClient.java)."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest
from thriftpy2.thrift import TApplicationException

from gateway.app import Gateway
from gateway.thrift.idl import hms
from protos.metastore.v1 import catalog_pb2 as pb
from tests.builders import table
from tests.conftest import connect, gateway_settings
from tests.e2e.test_thrift_snapshots import hive_txn_list, hive_write_id_list
from tests.thrift_client import ThriftClient


@pytest.fixture
async def call(pg_dsn: str) -> AsyncIterator[ThriftClient]:
    gw = Gateway(gateway_settings(pg_dsn))
    await gw.start()
    grpc_client = await connect(f"127.0.0.1:{gw.port}")
    await grpc_client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await grpc_client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", transactional=True)))
    client = ThriftClient(gw.thrift_port)
    try:
        yield client
    finally:
        client.close()
        await grpc_client.channel.close()
        await gw.stop()


async def _open(call: ThriftClient, **fields: Any) -> int:
    (txn,) = (await call("open_txns", hms.OpenTxnRequest(num_txns=1, user="hive", hostname="hs2", **fields))).txn_ids
    return int(txn)


async def _allocate(call: ThriftClient, *txns: int, **fields: Any) -> dict[int, int]:
    answer = await call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
        dbName="db", tableName="t", txnIds=list(txns), **fields))
    return {a.txnId: a.writeId for a in answer.txnToWriteIds}


async def test_hive4_records_a_readers_write_ids_with_add_write_ids_to_min_history(call: ThriftClient) -> None:
    """Every Hive 4 query that reads a transactional table sends it once its snapshot is taken; Hive
    4's metastore answers it (and stores nothing) unless metastore.txn.use.minhistorywriteid is on."""
    txn = await _open(call)
    assert await call("add_write_ids_to_min_history", txn, {"db.t": 1}) is None
    assert await call("add_write_ids_to_min_history", txn, {}) is None
    assert await _allocate(call, txn) == {txn: 1}  # the txn goes on as before
    await call("commit_txn", hms.CommitTxnRequest(txnid=txn))


async def test_a_read_only_txn_is_kept_as_such_and_takes_no_write_id(call: ThriftClient) -> None:
    """Hive 4 opens a READ_ONLY txn (OpenTxnRequest.txn_type 2) for a query that writes nothing when
    hive.txn.readonly.enabled: its TXNS row keeps the type, Hive 4's AllocateTableWriteIdsFunction
    refuses it a write id ('not all input txns in open state or read-only'; there an undeclared
    IllegalStateException, here the declared MetaException), and no snapshot lists it (getOpenTxns and
    get_open_txns_req with excludeTxnTypes [READ_ONLY], what Hive 4 clients send)."""
    read_only = await _open(call, txn_type=2)
    writer = await _open(call)
    with pytest.raises(hms.MetaException, match=f"txn {read_only} was opened READ_ONLY: it takes no write ids"):
        await _allocate(call, read_only)
    with pytest.raises(hms.MetaException, match="READ_ONLY"):
        await _allocate(call, writer, read_only)
    assert await _allocate(call, writer) == {writer: 1}  # the refused call allocated nothing
    assert (await call("get_open_txns")).open_txns == [writer]
    assert (await call("get_open_txns_req", hms.GetOpenTxnsRequest(excludeTxnTypes=[2]))).open_txns == [writer]
    assert (await call("get_open_txns_req", hms.GetOpenTxnsRequest())).open_txns == [read_only, writer]
    (info,) = [t for t in (await call("get_open_txns_info")).open_txns if t.id == read_only]
    assert info.state == 3  # open
    await call("commit_txn", hms.CommitTxnRequest(txnid=read_only))
    await call("commit_txn", hms.CommitTxnRequest(txnid=writer))


async def test_replication_txns_and_unknown_txn_types_are_refused(call: ThriftClient) -> None:
    with pytest.raises(TApplicationException, match="txn_type 9 is not one of Hive's TxnType values"):
        await _open(call, txn_type=9)
    with pytest.raises(TApplicationException, match="replication"):
        await _open(call, replPolicy="db.*", replSrcTxnIds=[5], txn_type=1)
    assert (await call("get_open_txns")).open_txns == []  # nothing opened


async def test_txns_that_hold_a_write_id_keep_it_among_txns_that_do_not(call: ThriftClient) -> None:
    """Different from Hive on purpose (allocate_table_write_ids' docstring): Hive 4 fails such a call
    (an assertion, else duplicate TXN_TO_WRITE_ID rows); here the held id is reused and the others are
    allocated, as separate calls would."""
    first, second, third = [await _open(call) for _ in range(3)]
    assert await _allocate(call, second) == {second: 1}
    assert await _allocate(call, first, second, third) == {first: 2, second: 1, third: 3}
    assert await _allocate(call, third, first) == {first: 2, third: 3}  # all held: reused, nothing new


async def test_hive4_counts_a_writes_rows_with_update_transaction_statistics(call: ThriftClient) -> None:
    """Hive 4's BasicStatsTask after an INSERT, UPDATE or DELETE of a transactional table; without it
    the statement logs that its statistics could not be updated (and fails with hive.stats.reliable)."""
    table_id = (await call("get_table_req", hms.GetTableRequest(dbName="db", tblName="t"))).table.id
    assert await call("update_transaction_statistics", hms.UpdateTransactionalStatsRequest(
        tableId=table_id, insertCount=3, updatedCount=0, deletedCount=1)) is None


async def test_hive4_show_compactions_filters_as_hive_does(call: ThriftClient) -> None:
    """Hive 4's SHOW COMPACTIONS db.t TYPE 'major' STATUS 'initiated' LIMIT n (ShowCompactionsOperation)
    and its ALTER TABLE ... COMPACT ... AND WAIT, which polls its compaction by id, send the filters in
    ShowCompactRequest; Hive 4's ShowCompactHandler answers only the entries that match them."""
    sd = (await call("get_table", "db", "t")).sd
    for name in ("u", "v"):
        sd.location = None
        await call("create_table_req", hms.CreateTableRequest(table=hms.Table(
            tableName=name, dbName="db", owner="hive", tableType="MANAGED_TABLE", partitionKeys=[],
            parameters={"transactional": "true"}, sd=sd)))
    major = (await call("compact2", hms.CompactionRequest(dbname="db", tablename="v", type=2))).id
    minor = (await call("compact2", hms.CompactionRequest(dbname="db", tablename="u", type=1))).id

    async def shown(**filters: Any) -> list[int]:
        return [e.id for e in (await call("show_compact", hms.ShowCompactRequest(**filters))).compacts]

    assert await shown() == [major, minor]
    assert await shown(dbName="db", tbName="u") == [minor]
    assert await shown(id=major) == [major]
    assert await shown(type=1) == [minor]
    assert await shown(state="i") == [major, minor] and await shown(state="s") == []
    assert await shown(poolName="default", limit=1) == [major]
    assert await shown(dbName="other") == []


async def test_a_recompiled_hive4_update_is_aborted_at_commit_where_hive4_commits_it(call: ThriftClient) -> None:
    """A difference on purpose (commit_txn's docstring): two Hive 4 UPDATEs of one partition under
    EXCL_WRITE locks; the later txn waits, then finds the earlier one in conflict
    (get_latest_txnid_in_conflict), and Hive 4's Driver recompiles it in the same txn and commits it
    with exclWriteEnabled, which Hive 4's metastore reads as 'skip the write-set check'. The gateway
    checks the write set on every commit: the later txn is aborted."""
    excl_write, update = 4, 3

    async def lock(txn: int) -> int:
        component = hms.LockComponent(type=excl_write, level=3, dbname="db", tablename="t", partitionname="ds=a",
                                      operationType=update, isAcid=True)
        return int((await call("lock", hms.LockRequest(component=[component], txnid=txn, user="hive",
                                                        hostname="hs2"))).state)

    first, second = await _open(call), await _open(call)
    assert await lock(first) == 1  # ACQUIRED
    await _allocate(call, first)
    assert await lock(second) == 2  # WAITING behind the first
    await call("commit_txn", hms.CommitTxnRequest(txnid=first))
    assert await call("get_latest_txnid_in_conflict", second) == first  # earlier than it: same txn, recompiled
    await _allocate(call, second)
    with pytest.raises(hms.TxnAbortedException, match="conflict"):
        await call("commit_txn", hms.CommitTxnRequest(txnid=second))


async def test_a_hive4_insert_into_a_transactional_table_runs_its_calls_in_hives_order(call: ThriftClient) -> None:
    """INSERT INTO db.sales PARTITION (ds) ... as Hive 4's HiveServer2 sends it, one existing partition
    and one new (Driver, DbTxnManager, DriverTxnHandler, Hive.loadPartition, BasicStatsTask,
    ColStatsProcessor; the names as HiveMetaStoreClient sends them, catalog-qualified where the call
    has no catalog argument): every call is answered, and a later reader sees both partitions under
    the insert's write id with their statistics, all at the commit and none before."""
    sd = (await call("get_table", "db", "t")).sd
    sd.location = None
    await call("create_table_req", hms.CreateTableRequest(table=hms.Table(
        tableName="sales", dbName="db", owner="hive", tableType="MANAGED_TABLE", sd=sd,
        partitionKeys=[hms.FieldSchema(name="ds", type="string", comment="")],
        parameters={"transactional": "true", "transactional_properties": "default"})))
    (first,) = (await call("open_txns", hms.OpenTxnRequest(num_txns=1, user="hive", hostname="hs2"))).txn_ids
    first_wid = (await _allocate_for(call, first, "sales"))
    await call("add_partition_with_environment_context", hms.Partition(
        values=["a"], dbName="db", tableName="sales", parameters={}, writeId=first_wid), None)
    await call("commit_txn", hms.CommitTxnRequest(txnid=first))

    # Compile: the database and table, a txn and its snapshot.
    await call("get_database_req", hms.GetDatabaseRequest(name="db", catalogName="hive"))
    await call("get_table_req", hms.GetTableRequest(dbName="db", tblName="sales", catName="hive"))
    txn = await _open(call)
    txn_list = hive_txn_list(await call("get_open_txns_req", hms.GetOpenTxnsRequest(excludeTxnTypes=[2])), txn)
    # Locks (an INSERT: SHARED_READ on the table, Hive 4's default), the write id, the table's snapshot.
    lock = await call("lock", hms.LockRequest(component=[hms.LockComponent(
        type=1, level=2, dbname="db", tablename="sales", operationType=2, isAcid=True,
        isDynamicPartitionWrite=True)], txnid=txn, user="hive", hostname="hs2"))
    assert lock.state == 1
    write_id = await _allocate_for(call, txn, "sales")
    (ids,) = (await call("get_valid_write_ids", hms.GetValidWriteIdsRequest(
        fullTableNames=["db.sales"], validTxnList=txn_list))).tblValidWriteIds
    snapshot = hive_write_id_list(ids)
    assert snapshot == f"db.sales:{write_id}:9223372036854775807::"  # its own write id valid to it
    await call("heartbeat", hms.HeartbeatRequest(txnid=txn))
    # Move: the existing partition altered, the new one added, both naming the write id in the object.
    existing = await call("get_partition", "@hive#db", "sales", ["a"])
    existing.writeId, existing.parameters = write_id, {**existing.parameters, "numRows": "2"}
    await call("alter_partitions_req", hms.AlterPartitionsRequest(
        catName="hive", dbName="db", tableName="sales", partitions=[existing], validWriteIdList=snapshot,
        environmentContext=hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})))
    with pytest.raises(hms.NoSuchObjectException):
        await call("get_partition", "@hive#db", "sales", ["b"])
    await call("add_partition_with_environment_context", hms.Partition(
        values=["b"], dbName="db", tableName="sales", parameters={"numRows": "1"}, writeId=write_id), None)
    await call("add_dynamic_partitions", hms.AddDynamicPartitions(
        txnid=txn, writeid=write_id, dbname="db", tablename="sales", partitionnames=["ds=a", "ds=b"],
        operationType=2))
    # Statistics: basic ones, the row counts, the columns' (merged into the old).
    await call("update_transaction_statistics", hms.UpdateTransactionalStatsRequest(
        tableId=(await call("get_table_req", hms.GetTableRequest(dbName="db", tblName="sales"))).table.id,
        insertCount=3, updatedCount=0, deletedCount=0))
    stats = hms.ColumnStatistics(
        statsDesc=hms.ColumnStatisticsDesc(isTblLevel=False, dbName="db", tableName="sales", partName="ds=b"),
        statsObj=[hms.ColumnStatisticsObj(colName="id", colType="bigint", statsData=hms.ColumnStatisticsData(
            longStats=hms.LongColumnStatsData(lowValue=1, highValue=1, numNulls=0, numDVs=1)))])
    assert await call("set_aggr_stats_for", hms.SetPartitionsStatsRequest(
        colStats=[stats], needMerge=True, writeId=write_id, validWriteIdList=snapshot, engine="hive"))

    before = await call("get_partition_names", "@hive#db", "sales", -1)
    await call("commit_txn", hms.CommitTxnRequest(txnid=txn))
    assert before == ["ds=a"]  # nothing of the insert before its commit
    assert await call("get_partition_names", "@hive#db", "sales", -1) == ["ds=a", "ds=b"]
    a, b = (await call("get_partitions_by_names_req", hms.GetPartitionsByNamesRequest(
        db_name="@hive#db", tbl_name="sales", names=["ds=a", "ds=b"]))).partitions
    assert (a.writeId, a.parameters["numRows"], b.writeId) == (write_id, "2", write_id)
    (got,) = (await call("get_partitions_statistics_req", hms.PartitionsStatsRequest(
        dbName="db", tblName="sales", colNames=["id"], partNames=["ds=b"], engine="hive"))).partStats["ds=b"]
    assert got.statsData.longStats.highValue == 1


async def _allocate_for(call: ThriftClient, txn: int, table_name: str) -> int:
    (allocated,) = (await call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
        dbName="db", tableName=table_name, txnIds=[txn]))).txnToWriteIds
    return int(allocated.writeId)


async def test_hive4_get_table_req_with_column_stats_answers_them_as_its_snapshot_sees_them(
        call: ThriftClient) -> None:
    """Hive 4's HiveMetaStoreClient.getTable(cat, db, t, validWriteIdList, getColumnStats=true, engine):
    the table's statistics come in Table.colStats as the snapshot sees them: a txn's own at once,
    another reader's only once the txn has committed (a transactional table's statistics are versioned
    by write id, not marked in COLUMN_STATS_ACCURATE)."""

    async def snapshot_of(txn: int) -> str:
        txns = hive_txn_list(await call("get_open_txns_req", hms.GetOpenTxnsRequest(excludeTxnTypes=[2])), txn)
        (ids,) = (await call("get_valid_write_ids", hms.GetValidWriteIdsRequest(
            fullTableNames=["db.t"], validTxnList=txns))).tblValidWriteIds
        return hive_write_id_list(ids)

    table_id = (await call("get_table_req", hms.GetTableRequest(dbName="db", tblName="t"))).table.id

    async def stats_seen(snapshot: str | None) -> Any:
        return (await call("get_table_req", hms.GetTableRequest(
            dbName="db", tblName="t", catName="hive", validWriteIdList=snapshot, getColumnStats=True,
            engine="hive", id=table_id if snapshot else -1))).table.colStats

    assert await stats_seen(None) is None  # none written: Hive leaves it unset
    txn = await _open(call)
    write_id = (await _allocate(call, txn))[txn]
    own = await snapshot_of(txn)
    assert await call("set_aggr_stats_for", hms.SetPartitionsStatsRequest(colStats=[hms.ColumnStatistics(
        statsDesc=hms.ColumnStatisticsDesc(isTblLevel=True, dbName="db", tableName="t"),
        statsObj=[hms.ColumnStatisticsObj(colName="id", colType="bigint", statsData=hms.ColumnStatisticsData(
            longStats=hms.LongColumnStatsData(lowValue=1, highValue=9, numNulls=0, numDVs=9)))])],
        writeId=write_id, validWriteIdList=own, engine="hive"))
    others = await snapshot_of(0)
    seen = await stats_seen(own)
    assert (seen.statsDesc.isTblLevel, seen.statsDesc.dbName, seen.statsDesc.tableName) == (True, "db", "t")
    assert [(o.colName, o.statsData.longStats.highValue) for o in seen.statsObj] == [("id", 9)]
    assert await stats_seen(others) is None
    await call("commit_txn", hms.CommitTxnRequest(txnid=txn))
    assert [o.colName for o in (await stats_seen(await snapshot_of(0))).statsObj] == ["id"]
    plain = await call("get_table_req", hms.GetTableRequest(dbName="db", tblName="t", catName="hive"))
    assert plain.table.colStats is None  # only when asked for
