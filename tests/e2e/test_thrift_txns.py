"""Transactions, write ids, locks and the notification log over Hive's Thrift API, with a Thrift client
of Hive 3's shapes (thriftpy2 on the gateway's IDL; Spark's 2.3 client never calls these, Trino's and
Hive's newer ones do), checked against the gRPC API of the same gateway."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest
from thriftpy2.thrift import TApplicationException

from gateway.app import Gateway
from gateway.thrift.idl import hms
from gateway.thrift.txn_methods import bitset
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import table
from tests.conftest import GatewayClient, connect, gateway_settings, running_gateway, wait_applied
from tests.thrift_client import ThriftClient as Client
from tests.thrift_client import client_with_database, thrift_table

SHARED_READ, EXCLUSIVE = 1, 3
TABLE_LEVEL = 2
ACQUIRED, WAITING = 1, 2


@pytest.fixture
async def env(pg_dsn: str) -> AsyncIterator[tuple[Client, GatewayClient, transactions_pb2_grpc.TransactionsStub]]:
    gw = Gateway(gateway_settings(pg_dsn))
    await gw.start()
    grpc_client = await connect(f"127.0.0.1:{gw.port}")
    await grpc_client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await grpc_client.catalog.CreateTable(pb.CreateTableRequest(
        table=table("db", "t", keys=(("p", "string"),), transactional=True)))
    client = Client(gw.thrift_port)
    try:
        yield client, grpc_client, transactions_pb2_grpc.TransactionsStub(grpc_client.channel)
    finally:
        client.close()
        await grpc_client.channel.close()
        await gw.stop()


def test_aborted_bits_are_java_bitsets() -> None:
    assert bitset([]) == b"" and bitset([False, False]) == b""
    assert bitset([True, False, True]) == bytes([0b101])
    assert bitset([False] * 9 + [True]) == bytes([0, 0b10])


async def test_txns_open_commit_abort_and_their_exceptions(env: Any) -> None:
    hms_call, _, grpc_txns = env
    a, b, c = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=3, user="trino", hostname="h"))).txn_ids
    await hms_call("commit_txn", hms.CommitTxnRequest(txnid=a))
    await hms_call("abort_txn", hms.AbortTxnRequest(txnid=b))
    with pytest.raises(hms.TxnAbortedException) as aborted:
        await hms_call("commit_txn", hms.CommitTxnRequest(txnid=b))
    assert f"txn {b} was aborted" in aborted.value.message
    with pytest.raises(hms.NoSuchTxnException):
        await hms_call("commit_txn", hms.CommitTxnRequest(txnid=c + 100))
    state = await hms_call("get_open_txns")
    assert (state.txn_high_water_mark, state.open_txns, state.min_open_txn) == (c, [b, c], c)
    assert state.abortedBits == bitset([True, False])
    grpc_state = await grpc_txns.GetOpenTxns(tpb.GetOpenTxnsRequest())
    assert grpc_state.valid_txn_list == f"{c}:{c}:{c}:{b}"  # the same snapshot, in Hive's string form
    info = await hms_call("get_open_txns_info")
    assert [(t.id, t.state, t.user) for t in info.open_txns] == [(b, 2, "trino"), (c, 3, "trino")]


async def test_an_ended_txn_is_answered_with_hives_exceptions(env: Any) -> None:
    """As Hive's TxnHandler: aborting a committed txn, or locking under it, is NoSuchTxnException ("already
    committed"), locking under an aborted one TxnAbortedException, aborting it again nothing; abort_txns
    aborts the open ones and skips the others (a committed, an aborted, an unknown txn); the gateway's
    messages."""
    hms_call, _, _ = env
    done, gone, live = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=3, user="u", hostname="h"))).txn_ids
    await hms_call("commit_txn", hms.CommitTxnRequest(txnid=done))
    await hms_call("abort_txn", hms.AbortTxnRequest(txnid=gone))
    await hms_call("abort_txn", hms.AbortTxnRequest(txnid=gone))
    with pytest.raises(hms.NoSuchTxnException) as committed:
        await hms_call("abort_txn", hms.AbortTxnRequest(txnid=done))
    assert f"{done} already committed" in committed.value.message
    with pytest.raises(hms.NoSuchTxnException):
        await hms_call("abort_txn", hms.AbortTxnRequest(txnid=live + 100))
    component = hms.LockComponent(type=SHARED_READ, level=TABLE_LEVEL, dbname="db", tablename="t", operationType=1)
    with pytest.raises(hms.NoSuchTxnException) as committed:
        await hms_call("lock", hms.LockRequest(component=[component], txnid=done, user="u", hostname="h"))
    assert f"txn {done} is already committed" in committed.value.message
    with pytest.raises(hms.TxnAbortedException):
        await hms_call("lock", hms.LockRequest(component=[component], txnid=gone, user="u", hostname="h"))
    assert (await hms_call("get_open_txns")).open_txns == [gone, live]  # live was not aborted
    await hms_call("abort_txns", hms.AbortTxnsRequest(txn_ids=[live, done, gone, live + 100]))
    state = await hms_call("get_open_txns")
    assert state.open_txns == [gone, live] and state.abortedBits == bitset([True, True])  # live aborted now


async def test_hive_4s_ctas_allocates_before_the_table_exists_and_its_creation_takes_the_ids(pg_dsn: str) -> None:
    """Hive 3's and 4's CTAS into a transactional table: allocate_table_write_ids for a name no table has
    yet (Hive keeps write ids by name), the files written under that id, then create_table, then the commit.
    The ids are the name's, in order (an aborted CTAS's stays aborted, so its files are never read), and
    the table takes them over when it is created; a database that does not exist is MetaException."""
    async with running_gateway(pg_dsn) as a, running_gateway(pg_dsn) as b, client_with_database(a.thrift_port) as call:
        other = Client(b.thrift_port)
        try:
            opened = await call("open_txns", hms.OpenTxnRequest(num_txns=3, user="u", hostname="h"))
            ctas, failed, late = opened.txn_ids

            async def allocate(txn: int, table_name: str = "ctas", db: str = "db") -> int:
                (got,) = (await call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
                    dbName=db, tableName=table_name, txnIds=[txn]))).txnToWriteIds
                return int(got.writeId)

            async def write_ids(client: Client) -> tuple[int, list[int], bytes]:
                txns = await client("get_open_txns")  # its snapshot in Hive's string form (ValidReadTxnList)
                bits = int.from_bytes(txns.abortedBits or b"", "little")
                aborted = [t for i, t in enumerate(txns.open_txns) if bits >> i & 1]
                still_open = [t for t in txns.open_txns if t not in aborted]
                valid = (f"{txns.txn_high_water_mark}:{min(still_open, default=txns.txn_high_water_mark + 1)}:"
                         f"{','.join(map(str, still_open))}:{','.join(map(str, aborted))}")
                (w,) = (await client("get_valid_write_ids", hms.GetValidWriteIdsRequest(
                    fullTableNames=["db.ctas"], validTxnList=valid))).tblValidWriteIds
                return w.writeIdHighWaterMark, w.invalidWriteIds, w.abortedBits

            assert await allocate(failed) == 1  # a CTAS that fails: its id stays the name's
            assert await allocate(ctas) == 2 and await allocate(ctas) == 2  # the same again
            await call("abort_txn", hms.AbortTxnRequest(txnid=failed))
            with pytest.raises(hms.MetaException, match="database nodb does not exist"):
                await allocate(ctas, db="nodb")
            await call("create_table", thrift_table("ctas", transactional="true"))
            assert await write_ids(call) == (2, [1, 2], bitset([True, False]))  # 1 aborted, 2 open
            # The txn writes under its id, as Hive 4's statistics task does after the data.
            table = await call("get_table", "db", "ctas")
            table.parameters["numRows"] = "3"
            await call("alter_table_req", hms.AlterTableRequest(dbName="db", tableName="ctas", table=table, writeId=2))
            await call("commit_txn", hms.CommitTxnRequest(txnid=ctas))
            assert await write_ids(call) == (2, [1], bitset([True]))
            assert await allocate(late) == 3  # the table's next
            await wait_applied(b)  # another gateway learned it all from the log
            assert await write_ids(other) == (3, [1, 3], bitset([True, False]))
            assert (await other("get_table", "db", "ctas")).parameters["numRows"] == "3"
            # Reserved under a name whose table is then created without write ids: dropped.
            (plain_txn,) = (await call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
            assert await allocate(plain_txn, "plain") == 1
            await call("create_table", thrift_table("plain"))
            with pytest.raises(hms.MetaException, match="not transactional"):  # the table's rule from now on
                await allocate(plain_txn, "plain")
            await call("commit_txn", hms.CommitTxnRequest(txnid=plain_txn))
        finally:
            other.close()


async def test_write_ids_allocated_and_read_back_as_the_grpc_api_answers(env: Any) -> None:
    hms_call, grpc_client, grpc_txns = env
    t1, t2 = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=2, user="u", hostname="h"))).txn_ids
    alloc = await hms_call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
        dbName="db", tableName="t", txnIds=[t2, t1]))
    assert [(x.txnId, x.writeId) for x in alloc.txnToWriteIds] == [(t1, 1), (t2, 2)]
    await grpc_client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", txn_id=t1, partitions=[pb.Partition(values=["a"])]))
    await hms_call("commit_txn", hms.CommitTxnRequest(txnid=t1))
    await hms_call("abort_txn", hms.AbortTxnRequest(txnid=t2))
    got = (await hms_call("get_valid_write_ids", hms.GetValidWriteIdsRequest(fullTableNames=["db.t"]))).tblValidWriteIds
    assert (got[0].fullTableName, got[0].writeIdHighWaterMark, got[0].invalidWriteIds) == ("db.t", 2, [2])
    assert got[0].abortedBits == bitset([True]) and got[0].minOpenWriteId is None
    txn_list = (await grpc_txns.GetOpenTxns(tpb.GetOpenTxnsRequest())).valid_txn_list
    grpc_got = (await grpc_txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
        full_table_names=["db.t"], valid_txn_list=txn_list))).tables[0]
    assert grpc_got.valid_write_id_list == "db.t:2:9223372036854775807::2"
    assert await hms_call("get_partition_names", "db", "t", -1) == ["p=a"]
    with pytest.raises(hms.TxnAbortedException):
        await hms_call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="db", tableName="t", txnIds=[t2]))


async def test_locks_queue_grant_and_show_as_hive_does(env: Any) -> None:
    hms_call, _, _ = env

    def component(lock_type: int) -> Any:
        return hms.LockComponent(type=lock_type, level=TABLE_LEVEL, dbname="db", tablename="t", operationType=5)

    writer = await hms_call("lock", hms.LockRequest(component=[component(EXCLUSIVE)], user="w", hostname="h"))
    assert writer.state == ACQUIRED
    reader = await hms_call("lock", hms.LockRequest(component=[component(SHARED_READ)], user="r", hostname="h"))
    assert reader.state == WAITING
    shown = (await hms_call("show_locks", hms.ShowLocksRequest(dbname="db", tablename="t"))).locks
    assert [(x.lockid, x.type, x.state, x.user) for x in shown] == [
        (writer.lockid, EXCLUSIVE, ACQUIRED, "w"), (reader.lockid, SHARED_READ, WAITING, "r")]
    assert shown[1].blockedByExtId == writer.lockid
    await hms_call("unlock", hms.UnlockRequest(lockid=writer.lockid))
    assert (await hms_call("check_lock", hms.CheckLockRequest(lockid=reader.lockid))).state == ACQUIRED
    # Unlocking it again returns, as Hive's TxnHandler.unlock does for a lock it does not find ("to make
    # the operation idempotent"; Hive Metastore 2.3.10 answers so in test_thrift_lock_stateful_differential.py),
    # and so does a lock id never given; heartbeating it is NoSuchLockException, as in Hive.
    assert await hms_call("unlock", hms.UnlockRequest(lockid=writer.lockid)) is None
    assert await hms_call("unlock", hms.UnlockRequest(lockid=writer.lockid + 1000)) is None
    with pytest.raises(hms.NoSuchLockException):
        await hms_call("heartbeat", hms.HeartbeatRequest(lockid=writer.lockid))
    await hms_call("heartbeat", hms.HeartbeatRequest(lockid=reader.lockid))
    txn = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids[0]
    ranged = await hms_call("heartbeat_txn_range", hms.HeartbeatTxnRangeRequest(min=txn, max=txn + 1))
    assert (set(ranged.aborted), set(ranged.nosuch)) == (set(), {txn + 1})
    # A heartbeat checks its lock before its txn (Hive's TxnHandler.heartbeat: heartbeatLock, then
    # heartbeatTxn): a missing lock is NoSuchLockException even under an aborted txn.
    aborted = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids[0]
    await hms_call("abort_txn", hms.AbortTxnRequest(txnid=aborted))
    with pytest.raises(hms.NoSuchLockException):
        await hms_call("heartbeat", hms.HeartbeatRequest(lockid=writer.lockid, txnid=aborted))
    with pytest.raises(hms.TxnAbortedException):
        await hms_call("heartbeat", hms.HeartbeatRequest(lockid=reader.lockid, txnid=aborted))


async def test_check_lock_of_a_lock_that_is_gone_is_no_such_lock(env: Any) -> None:
    """As Hive's checkLock (getTxnIdFromLockId finds no row: NoSuchLockException): a lock id never
    given, a standalone lock unlocked, and a txn lock released by its txn's abort."""
    hms_call, _, _ = env
    component = hms.LockComponent(type=SHARED_READ, level=TABLE_LEVEL, dbname="db", tablename="t", operationType=1)
    standalone = await hms_call("lock", hms.LockRequest(component=[component], user="u", hostname="h"))
    await hms_call("unlock", hms.UnlockRequest(lockid=standalone.lockid))
    txn = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids[0]
    held = await hms_call("lock", hms.LockRequest(component=[component], txnid=txn, user="u", hostname="h"))
    await hms_call("abort_txn", hms.AbortTxnRequest(txnid=txn))
    for lock_id in (held.lockid + 100, standalone.lockid, held.lockid):
        with pytest.raises(hms.NoSuchLockException) as gone:
            await hms_call("check_lock", hms.CheckLockRequest(lockid=lock_id))
        assert f"lock {lock_id} does not exist" in gone.value.message


async def test_notification_log(env: Any) -> None:
    hms_call, grpc_client, _ = env
    head = (await hms_call("get_current_notificationEventId")).eventId
    assert head >= 3  # the default database (created at start), the database and the table
    events = (await hms_call("get_next_notification", hms.NotificationEventRequest(lastEvent=0, maxEvents=10))).events
    assert [(e.eventType, e.dbName) for e in events][:3] == [
        ("CREATE_DATABASE", "default"), ("CREATE_DATABASE", "db"), ("CREATE_TABLE", "db")]
    assert events[2].tableName == "t" and events[-1].eventId == head
    with pytest.raises(TApplicationException) as bad:  # Hive declares no exception for this method
        await hms_call("get_next_notification", hms.NotificationEventRequest(lastEvent=-1))
    assert "not negative" in (bad.value.message or "")


async def test_hive4_reads_with_a_snapshot_follow_the_seeds_two_gateway_flow(pg_dsn: str) -> None:
    """The seed's example over Thrift: gateway B has the table cached and has not applied a commit made
    through gateway A. A Hive 4 get_table_req carrying the new snapshot (validWriteIdList and table id)
    is answered by B from the database, right; once B applies the commit, from its cache, the same."""
    a, b = Gateway(gateway_settings(pg_dsn)), Gateway(gateway_settings(pg_dsn))
    await a.start()
    await b.start()
    on_a, on_b = Client(a.thrift_port), Client(b.thrift_port)
    try:
        await on_a("create_database", hms.Database(name="db", parameters={}))
        t = hms.Table(tableName="t", dbName="db", owner="u", partitionKeys=[], tableType="MANAGED_TABLE",
                      parameters={"transactional": "true", "tag": "v1"},
                      sd=hms.StorageDescriptor(cols=[hms.FieldSchema("id", "bigint", "")],
                                               serdeInfo=hms.SerDeInfo(parameters={})))
        await on_a("create_table", t)
        assert (await on_b("get_table", "db", "t")).parameters["tag"] == "v1"  # B loads and caches it
        assert b.poller is not None and b.cache is not None
        await b.poller.wait_loaded()
        b.poller.pause()

        txn = (await on_a("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids[0]
        current = await on_a("get_table", "db", "t")
        grpc_a = await connect(f"127.0.0.1:{a.port}")  # a write under a txn: Hive 2.3's Thrift API has none
        try:
            txns_a = transactions_pb2_grpc.TransactionsStub(grpc_a.channel)
            txn_list = (await txns_a.GetOpenTxns(tpb.GetOpenTxnsRequest(current_txn_id=txn))).valid_txn_list
            ids = (await txns_a.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
                full_table_names=["db.t"], valid_txn_list=txn_list))).tables[0]
            read = pb.ReadContext(valid_write_id_list=ids.valid_write_id_list, table_id=ids.table_id)
            tbl = (await grpc_a.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t", read=read))).table
            tbl.parameters["tag"] = "v2"
            await grpc_a.catalog.AlterTable(pb.AlterTableRequest(db_name="db", table_name="t", table=tbl, txn_id=txn))
        finally:
            await grpc_a.channel.close()
        await on_a("commit_txn", hms.CommitTxnRequest(txnid=txn))

        snapshot = (await on_a("get_valid_write_ids", hms.GetValidWriteIdsRequest(fullTableNames=["db.t"])))
        wl = snapshot.tblValidWriteIds[0]
        write_id_list = f"db.t:{wl.writeIdHighWaterMark}:9223372036854775807::"  # nothing open or aborted
        request = hms.GetTableRequest(dbName="db", tblName="t", validWriteIdList=write_id_list, id=current.id)
        stale_before = b.cache.stats.misses["stale"]
        assert (await on_b("get_table_req", request)).table.parameters["tag"] == "v2"
        assert b.cache.stats.misses["stale"] == stale_before + 1  # B's cache is behind: the database answered
        # Without a snapshot, B answers what its cache knows is committed (eventually consistent).
        assert (await on_b("get_table", "db", "t")).parameters["tag"] == "v1"

        b.poller.resume()
        await wait_applied(b)
        hits_before = b.cache.stats.hits
        assert (await on_b("get_table_req", request)).table.parameters["tag"] == "v2"
        assert b.cache.stats.hits == hits_before + 1  # now from the cache
        assert (await on_b("get_table", "db", "t")).parameters["tag"] == "v2"
    finally:
        on_a.close()
        on_b.close()
        await a.stop()
        await b.stop()


async def test_get_partition_req_reads_the_table_its_snapshot_sees_after_a_rename(env: Any) -> None:
    """get_partition_req makes the partition's name from its values with the table's keys: the table as
    the request's snapshot sees it, as every other read of that snapshot. (It used to read the latest
    table for them: a snapshot from before a rename then answered NoSuchObjectException "table db.t does
    not exist in this snapshot" where get_partitions_by_names_req and gRPC answer the partition, and a
    caching gateway that had not yet applied the rename answered otherwise than the database.)"""
    hms_call, grpc_client, grpc_txns = env
    (txn,) = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
    await grpc_client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", txn_id=txn, partitions=[pb.Partition(values=["a"])]))
    await hms_call("commit_txn", hms.CommitTxnRequest(txnid=txn))
    txn_list = (await grpc_txns.GetOpenTxns(tpb.GetOpenTxnsRequest())).valid_txn_list
    before = (await grpc_txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
        full_table_names=["db.t"], valid_txn_list=txn_list))).tables[0]
    ctx = pb.ReadContext(valid_write_id_list=before.valid_write_id_list, table_id=before.table_id)
    renamed = (await grpc_client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t", read=ctx))).table
    renamed.name = "u"
    (txn,) = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
    await grpc_client.catalog.AlterTable(pb.AlterTableRequest(db_name="db", table_name="t", table=renamed, txn_id=txn))
    await hms_call("commit_txn", hms.CommitTxnRequest(txnid=txn))

    snapshot = {"validWriteIdList": before.valid_write_id_list, "id": before.table_id}
    by_names = await hms_call("get_partitions_by_names_req", hms.GetPartitionsByNamesRequest(
        db_name="db", tbl_name="t", names=["p=a"], **snapshot))
    one = await hms_call("get_partition_req", hms.GetPartitionRequest(dbName="db", tblName="t", partVals=["a"],
                                                                      **snapshot))
    assert one.partition == by_names.partitions[0] and one.partition.tableName == "t"
    via_grpc = await grpc_client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
        db_name="db", table_name="t", names=["p=a"], read=ctx))
    assert [p.values for p in via_grpc.partitions] == [one.partition.values]
    with pytest.raises(hms.NoSuchObjectException, match="db.t does not exist"):  # the latest state: renamed
        await hms_call("get_partition", "db", "t", ["a"])


async def test_a_partial_specification_read_is_decided_once_by_the_cache_hit_or_miss(pg_dsn: str) -> None:
    """get_partition_names_ps_req (and every read of Hive's partial specifications) asks the cache once:
    a hit counts one hit; a miss counts one miss and reads the database, as every other read. (It used to
    ask again on a miss, for every partition, and count two misses for one read: the consistency run's
    `lookups == reads_sent` check caught it.)"""
    gw = Gateway(gateway_settings(pg_dsn))
    await gw.start()
    grpc_client = await connect(f"127.0.0.1:{gw.port}")
    hms_call = Client(gw.thrift_port)
    try:
        await grpc_client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await grpc_client.catalog.CreateTable(pb.CreateTableRequest(
            table=table("db", "t", keys=(("p", "string"), ("q", "string")), transactional=True)))
        (txn,) = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
        await grpc_client.catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name="db", table_name="t", txn_id=txn,
            partitions=[pb.Partition(values=v) for v in (["a", "1"], ["a", "2"], ["b", "1"])]))
        await hms_call("commit_txn", hms.CommitTxnRequest(txnid=txn))
        txns = transactions_pb2_grpc.TransactionsStub(grpc_client.channel)
        txn_list = (await txns.GetOpenTxns(tpb.GetOpenTxnsRequest())).valid_txn_list
        ids = (await txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
            full_table_names=["db.t"], valid_txn_list=txn_list))).tables[0]
        await wait_applied(gw)
        assert gw.cache is not None
        stats = gw.cache.stats

        async def names(partial: list[str], write_ids: str) -> tuple[list[str], int, int]:
            hits, misses = stats.hits, sum(stats.misses.values())
            got = await hms_call("get_partition_names_ps_req", hms.GetPartitionNamesPsRequest(
                dbName="db", tblName="t", partValues=partial, validWriteIdList=write_ids, id=ids.table_id))
            return got.names, stats.hits - hits, sum(stats.misses.values()) - misses

        await names([], ids.valid_write_id_list)  # the cache has the table loaded
        assert await names(["a"], ids.valid_write_id_list) == (["p=a/q=1", "p=a/q=2"], 1, 0)
        assert await names(["", "1"], ids.valid_write_id_list) == (["p=a/q=1", "p=b/q=1"], 1, 0)
        # A commit the cache has not applied: a snapshot that sees it misses once, the database answers.
        assert gw.poller is not None
        gw.poller.pause()
        (txn,) = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
        await grpc_client.catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name="db", table_name="t", txn_id=txn, partitions=[pb.Partition(values=["a", "3"])]))
        await hms_call("commit_txn", hms.CommitTxnRequest(txnid=txn))
        txn_list = (await txns.GetOpenTxns(tpb.GetOpenTxnsRequest())).valid_txn_list
        newer = (await txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
            full_table_names=["db.t"], valid_txn_list=txn_list))).tables[0].valid_write_id_list
        assert await names(["a"], newer) == (["p=a/q=1", "p=a/q=2", "p=a/q=3"], 0, 1)
        assert await names(["", "1"], newer) == (["p=a/q=1", "p=b/q=1"], 0, 1)
        gw.poller.resume()
    finally:
        hms_call.close()
        await grpc_client.channel.close()
        await gw.stop()


async def test_hive4_request_shaped_partition_reads_answer_their_snapshot(env: Any) -> None:
    """get_partition_req, get_partitions_req, get_partitions_ps_with_auth_req and
    get_partition_names_ps_req read under the snapshot they carry (a reader's snapshot from before a
    commit keeps not seeing it); without one, the latest committed state."""
    hms_call, grpc_client, grpc_txns = env

    async def write_id_list() -> tuple[str, int]:
        txn_list = (await grpc_txns.GetOpenTxns(tpb.GetOpenTxnsRequest())).valid_txn_list
        got = (await grpc_txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
            full_table_names=["db.t"], valid_txn_list=txn_list))).tables[0]
        return got.valid_write_id_list, got.table_id

    before, table_id = await write_id_list()
    (txn,) = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
    await grpc_client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", txn_id=txn, partitions=[pb.Partition(values=["a"])]))
    await hms_call("commit_txn", hms.CommitTxnRequest(txnid=txn))
    after, _ = await write_id_list()

    async def reads(snapshot: str | None) -> tuple[list[list[str]], list[list[str]], list[str]]:
        kw: dict[str, Any] = {"validWriteIdList": snapshot, "id": table_id} if snapshot else {}
        every = await hms_call("get_partitions_req", hms.PartitionsRequest(dbName="db", tblName="t", **kw))
        ps = await hms_call("get_partitions_ps_with_auth_req", hms.GetPartitionsPsWithAuthRequest(
            dbName="db", tblName="t", partVals=["a"], **kw))
        names = await hms_call("get_partition_names_ps_req", hms.GetPartitionNamesPsRequest(
            dbName="db", tblName="t", partValues=[], **kw))
        return [p.values for p in every.partitions], [p.values for p in ps.partitions], names.names

    assert await reads(before) == ([], [], [])
    assert await reads(after) == ([["a"]], [["a"]], ["p=a"])
    assert await reads(None) == ([["a"]], [["a"]], ["p=a"])
    one = await hms_call("get_partition_req", hms.GetPartitionRequest(
        dbName="db", tblName="t", partVals=["a"], validWriteIdList=after, id=table_id))
    assert one.partition.values == ["a"] and one.partition.tableName == "t"
    with pytest.raises(hms.NoSuchObjectException):
        await hms_call("get_partition_req", hms.GetPartitionRequest(
            dbName="db", tblName="t", partVals=["a"], validWriteIdList=before, id=table_id))
    with pytest.raises(hms.MetaException, match="table id"):
        await hms_call("get_partitions_req", hms.PartitionsRequest(
            dbName="db", tblName="t", validWriteIdList=after, id=table_id + 1000))
    # Another table's list is refused by every request shape, whether the cache or the database would answer.
    other = after.replace("db.t:", "db.other:", 1)
    for method, request in (
            ("get_table_req", hms.GetTableRequest(dbName="db", tblName="t", validWriteIdList=other, id=table_id)),
            ("get_partitions_req", hms.PartitionsRequest(dbName="db", tblName="t", validWriteIdList=other)),
            ("get_partitions_by_names_req", hms.GetPartitionsByNamesRequest(
                db_name="db", tbl_name="t", names=["p=a"], validWriteIdList=other)),
            ("get_partition_req", hms.GetPartitionRequest(dbName="db", tblName="t", partVals=["a"],
                                                          validWriteIdList=other)),
            ("get_partition_names_ps_req", hms.GetPartitionNamesPsRequest(dbName="db", tblName="t", partValues=[],
                                                                          validWriteIdList=other))):
        for _ in range(2):  # the first may miss the cache and fill it; the second is answered from it
            with pytest.raises(hms.MetaException, match="is for table db.other but the request reads db.t"):
                await hms_call(method, request)
    by_filter = await hms_call("get_partitions_by_filter_req", hms.GetPartitionsByFilterRequest(
        dbName="db", tblName="t", filter='p = "a"'))
    assert [p.values for p in by_filter] == [["a"]]


async def test_a_txn_or_lock_id_that_is_not_positive_is_the_declared_no_such_exception(env: Any) -> None:
    """The txn and lock methods declare neither MetaException nor InvalidObjectException: an id of 0 or
    below (names no txn or lock, as Hive's "No such transaction txnid:0") is their declared NoSuchTxn or
    NoSuchLock exception with the reason, not TApplicationException INTERNAL_ERROR. Where Hive answers such
    an id, so does the gateway (Hive Metastore 2.3.10 answers so; test_thrift_lock_stateful_differential.py
    compares them): a heartbeat of lock 0 and txn 0 heartbeats nothing and returns; abort_txns skips it; an
    unlock of it returns, as of any lock that does not exist."""
    hms_call, _, _ = env
    assert await hms_call("heartbeat", hms.HeartbeatRequest(lockid=0, txnid=0)) is None
    assert await hms_call("abort_txns", hms.AbortTxnsRequest(txn_ids=[-1, 0])) is None
    assert await hms_call("unlock", hms.UnlockRequest(lockid=-5)) is None
    refused = [
        (hms.NoSuchTxnException, "abort_txn", hms.AbortTxnRequest(txnid=0)),
        (hms.NoSuchTxnException, "commit_txn", hms.CommitTxnRequest(txnid=0)),
        (hms.NoSuchTxnException, "add_dynamic_partitions", hms.AddDynamicPartitions(
            txnid=0, writeid=1, dbname="db", tablename="t", partitionnames=["p=1"])),
        (hms.NoSuchTxnException, "lock", hms.LockRequest(component=[], user="u", hostname="h")),
        (hms.NoSuchLockException, "check_lock", hms.CheckLockRequest(lockid=0)),
        # more ids than one call may carry (hive.txn.max.open.batch)
        (hms.NoSuchTxnException, "abort_txns", hms.AbortTxnsRequest(txn_ids=[1] * 1001)),
        # a method that declares MetaException answers it, as before
        (hms.MetaException, "get_valid_write_ids", hms.GetValidWriteIdsRequest(fullTableNames=[], writeId=0)),
    ]
    for exc_type, method, request in refused:
        with pytest.raises(exc_type) as refusal:
            await hms_call(method, request)
        assert "internal error" not in refusal.value.message and len(refusal.value.message) <= 1000, method
    assert await hms_call("getVersion")


async def test_get_open_txns_reads_in_hive_2_3s_shape_and_in_hive_3s(env: Any) -> None:
    """Hive 2.3's GetOpenTxnsResponse.open_txns is a set<i64>, Hive 3's a list<i64> (both required, field 2):
    Hive 2.3's DbTxnManager calls get_open_txns before every statement and failed every one on a reply with the
    list only ("Required field 'open_txns' is unset!"). hmsclient holds Hive 2.3's structs."""
    import asyncio
    import contextlib

    from loadtest.hms import connect as connect_hive_2_3

    hms_call, _, _ = env
    a, b, c = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=3, user="hive", hostname="h"))).txn_ids
    await hms_call("commit_txn", hms.CommitTxnRequest(txnid=b))
    await hms_call("abort_txn", hms.AbortTxnRequest(txnid=c))
    newer = await hms_call("get_open_txns")
    assert (newer.txn_high_water_mark, newer.open_txns, newer.abortedBits) == (c, [a, c], bitset([False, True]))

    def read() -> Any:
        with contextlib.closing(connect_hive_2_3(f"127.0.0.1:{hms_call.port}")) as client:
            response = client.get_open_txns()
            response.validate()
            return response

    older = await asyncio.to_thread(read)
    assert (older.txn_high_water_mark, older.open_txns, older.min_open_txn) == (c, {a, c}, a)


async def test_show_locks_of_a_name_no_lock_can_hold_is_empty(env: Any) -> None:
    """Hive 2.3's SHOW LOCKS lake.orders sends tablename "lake.orders" (its DDLTask leaves the name whole); Hive's
    metastore filters its locks by that name and answers none. The gateway failed the call (TApplicationException:
    table name 'lake.orders' is not valid), and with it the statement."""
    hms_call, _, _ = env
    lock = await hms_call("lock", hms.LockRequest(component=[hms.LockComponent(
        type=SHARED_READ, level=TABLE_LEVEL, dbname="db", tablename="t")], user="u", hostname="h"))
    assert lock.state == ACQUIRED
    for request in (hms.ShowLocksRequest(dbname="db", tablename="db.t"),
                    hms.ShowLocksRequest(dbname="db", tablename="t", partname="no such=/=name")):
        assert (await hms_call("show_locks", request)).locks == []
    assert len((await hms_call("show_locks", hms.ShowLocksRequest(dbname="db", tablename="t"))).locks) == 1


async def test_a_query_reading_twenty_thousand_partitions_takes_its_lock(env: Any) -> None:
    """Hive 2.3's and 3's DbTxnManager lock each partition a query reads, one SHARED_READ component
    apiece, in one lock call: a year of hourly partitions is 8,760 of them. Past
    metastore.gateway.max.batch.size (10,000), where such a lock was refused, it is granted, conflicts
    as any other, and is released by the commit."""
    hms_call, _, _ = env
    reader, writer = (await hms_call("open_txns", hms.OpenTxnRequest(num_txns=2, user="hive", hostname="h"))).txn_ids
    read = await hms_call("lock", hms.LockRequest(txnid=reader, user="hive", hostname="h", component=[
        hms.LockComponent(type=SHARED_READ, level=3, dbname="db", tablename="t", partitionname=f"p={i}",
                          operationType=1) for i in range(20_000)]))
    assert read.state == ACQUIRED
    overwrite = await hms_call("lock", hms.LockRequest(txnid=writer, user="hive", hostname="h", component=[
        hms.LockComponent(type=EXCLUSIVE, level=3, dbname="db", tablename="t", partitionname="p=19999",
                          operationType=5)]))
    assert overwrite.state == WAITING
    await hms_call("commit_txn", hms.CommitTxnRequest(txnid=reader))
    assert (await hms_call("check_lock", hms.CheckLockRequest(lockid=overwrite.lockid))).state == ACQUIRED
    await hms_call("commit_txn", hms.CommitTxnRequest(txnid=writer))
