"""A transactional table's write over Thrift that names no txn runs in a txn of its own
(gateway/thrift/own_txn.py): what Hive 2.3's DDLTask sends for ALTER TABLE, ADD, ALTER and DROP PARTITION of
such a table, and Hive 4's MSCK REPAIR for the partitions it finds (with get_max_allocated_table_write_id,
seed_write_id and seed_txn_id first, standalone-metastore's Msck.validateAndAddMaxTxnIdAndWriteId).

Each write is visible to the snapshots taken after it and to none taken before, in the caches of this gateway
and of another one as in PostgreSQL; a write that fails leaves nothing, and no txn open."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import pytest

from gateway.app import Gateway
from gateway.thrift.idl import hms
from hive.msck_expr import MSCK_EXPRESSION_PROXY
from tests.conftest import gateway_settings, wait_applied
from tests.e2e.test_thrift_snapshots import hive_txn_list, hive_write_id_list
from tests.thrift_client import ThriftClient, thrift_table

ABORTED, OPEN = 2, 3  # TxnState


class Env:
    def __init__(self, gateways: list[Gateway], call: ThriftClient, other: ThriftClient) -> None:
        self.gateways = gateways
        self.call, self.other = call, other  # clients of the two gateways on one database

    async def snapshot(self, client: ThriftClient | None = None, table: str = "t") -> str:
        """A reader's ValidWriteIdList of db.`table` now, as Hive's clients build it."""
        client = client or self.call
        txns = hive_txn_list(await client("get_open_txns"))
        (ids,) = (await client("get_valid_write_ids", hms.GetValidWriteIdsRequest(
            fullTableNames=[f"db.{table}"], validTxnList=txns))).tblValidWriteIds
        return hive_write_id_list(ids)

    async def names(self, snapshot: str, client: ThriftClient | None = None, table: str = "t") -> list[str]:
        """The partitions of db.`table` among p=a..p=d the snapshot sees."""
        client = client or self.call
        table_id = (await client("get_table", "db", table)).id  # Hive 4 names the table's id with a snapshot
        got = await client("get_partitions_by_names_req", hms.GetPartitionsByNamesRequest(
            db_name="db", tbl_name=table, names=[f"p={v}" for v in "abcd"], validWriteIdList=snapshot, id=table_id))
        return sorted("p=" + p.values[0] for p in got.partitions)

    async def open_txns(self) -> list[tuple[int, int]]:
        return [(t.id, t.state) for t in (await self.call("get_open_txns_info")).open_txns]


def _partition(value: str, **fields: Any) -> hms.Partition:
    return hms.Partition(dbName="db", tableName="t", values=[value], parameters={}, **fields)


@pytest.fixture
async def env(pg_dsn: str) -> AsyncIterator[Env]:
    gateways = [Gateway(gateway_settings(pg_dsn)) for _ in range(2)]
    for gw in gateways:
        await gw.start()
    call, other = (ThriftClient(gw.thrift_port) for gw in gateways)
    try:
        await call("create_database", hms.Database(name="db", parameters={}))
        await call("create_table", thrift_table("t", keys=["p"], transactional="true"))
        yield Env(gateways, call, other)
    finally:
        call.close()
        other.close()
        for gw in gateways:
            await gw.stop()


async def _eventually(read: Any, expected: Any) -> None:
    """The other gateway's poller applies a commit within a bound; its reads answer until then from
    PostgreSQL or from what it has applied, never a mix."""
    for _ in range(200):
        if await read() == expected:
            return
        await asyncio.sleep(0.01)
    assert await read() == expected


async def test_hive23_ddl_of_a_transactional_table_runs_in_a_txn_of_its_own(env: Env) -> None:
    before = await env.snapshot()
    await env.call("add_partition", _partition("a"))  # Hive 2.3's ALTER TABLE t ADD PARTITION (p='a')
    await env.call("add_partitions", [_partition("b"), _partition("c")])
    after_add = await env.snapshot()
    assert after_add.startswith("db.t:2:")  # one write id per write
    assert await env.names(before) == []
    assert await env.names(after_add) == ["p=a", "p=b", "p=c"]
    assert await env.names(after_add, env.other) == ["p=a", "p=b", "p=c"]
    assert await env.open_txns() == []  # each txn committed

    # ALTER TABLE ... SET TBLPROPERTIES and ALTER TABLE ... PARTITION ... SET ...: versions under new write ids.
    table = await env.call("get_table", "db", "t")
    table.parameters = {**table.parameters, "owner.note": "x"}
    await env.call("alter_table", "db", "t", table)
    (p,) = await env.call("get_partitions_by_names", "db", "t", ["p=a"])
    p.parameters = {**p.parameters, "numRows": "5"}
    await env.call("alter_partition", "db", "t", p)
    assert (await env.call("get_table", "db", "t")).parameters["owner.note"] == "x"
    (p,) = await env.call("get_partitions_by_names", "db", "t", ["p=a"])
    assert p.parameters["numRows"] == "5" and p.writeId == 4

    # ALTER TABLE t DROP PARTITION (p='b'): a snapshot taken before still reads it, in either gateway's cache.
    before_drop = await env.snapshot()
    assert await env.call("drop_partition", "db", "t", ["b"], False)
    after_drop = await env.snapshot()
    for client in (env.call, env.other):
        assert await env.names(before_drop, client) == ["p=a", "p=b", "p=c"]
        await _eventually(lambda c=client: env.names(after_drop, c), ["p=a", "p=c"])
    assert await env.names(after_add) == ["p=a", "p=b", "p=c"]
    assert await env.open_txns() == []


async def test_a_failed_write_outside_a_txn_leaves_nothing_and_no_txn_open(env: Env) -> None:
    await env.call("add_partition", _partition("a"))
    before = await env.snapshot()
    with pytest.raises(hms.AlreadyExistsException):
        await env.call("add_partitions", [_partition("b"), _partition("a")])
    assert await env.names(await env.snapshot()) == ["p=a"]
    # The write's txn was aborted, not left open until it timed out.
    assert [state for _, state in await env.open_txns()] == [ABORTED]
    assert await env.snapshot() == before  # its write id rolled back with the write: the reads unchanged
    assert await env.names(before) == ["p=a"]

    # A partition another txn is writing: the write outside a txn conflicts and changes nothing.
    (txn,) = (await env.call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
    (alloc,) = (await env.call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
        dbName="db", tableName="t", txnIds=[txn]))).txnToWriteIds
    await env.call("add_partitions_req", hms.AddPartitionsRequest(
        dbName="db", tblName="t", parts=[_partition("c", writeId=alloc.writeId)], ifNotExists=False,
        needResult=False))
    with pytest.raises(hms.MetaException, match=f"write conflict: .*txn {txn}, which is still open"):
        await env.call("drop_partition", "db", "t", ["c"], False)
    assert [(t, s) for t, s in await env.open_txns() if s == OPEN] == [(txn, OPEN)]
    await env.call("commit_txn", hms.CommitTxnRequest(txnid=txn))
    assert await env.names(await env.snapshot()) == ["p=a", "p=c"]


async def test_hive4_msck_repair_of_a_transactional_table(env: Env) -> None:
    """Msck.repair with MsckOperation's Msck(acquireLock=false): its own txn, the write ids checked and
    seeded from the files (a table restored from a backup whose deltas go up to write id 7, compacted by
    txn 40), the partitions added stamped with the table's write id, then its commit."""
    await env.call("setMetaConf", "metastore.expression.proxy", MSCK_EXPRESSION_PROXY)
    table = await env.call("get_table", "db", "t")
    (msck_txn,) = (await env.call("open_txns", hms.OpenTxnRequest(num_txns=1, user="hive", hostname="hs2"))).txn_ids
    max_request = hms.MaxAllocatedTableWriteIdRequest(dbName="db", tableName="t")
    assert (await env.call("get_max_allocated_table_write_id", max_request)).maxWriteId == 0
    await env.call("seed_write_id", hms.SeedTableWriteIdsRequest(dbName="db", tableName="t", seedWriteId=7))
    await env.call("seed_txn_id", hms.SeedTxnIdRequest(seedTxnId=41))
    await env.call("add_partitions_req", hms.AddPartitionsRequest(
        dbName="db", tblName="t", parts=[_partition(v, writeId=table.writeId) for v in "ab"], ifNotExists=True,
        needResult=False))
    await env.call("commit_txn", hms.CommitTxnRequest(txnid=msck_txn))

    # Write ids 1..7 count as committed (the files' deltas are read), the add took 8; txn ids went past 40.
    snapshot = await env.snapshot()
    assert snapshot == "db.t:8:9223372036854775807::"
    assert await env.names(snapshot) == ["p=a", "p=b"]
    await _eventually(lambda: env.snapshot(env.other), snapshot)
    await _eventually(lambda: env.names(snapshot, env.other), ["p=a", "p=b"])
    assert (await env.call("get_open_txns")).txn_high_water_mark >= 41
    assert (await env.call("get_max_allocated_table_write_id", max_request)).maxWriteId == 8
    assert await env.open_txns() == []

    # A table that has had write ids is not seeded again; ids never go back.
    with pytest.raises(hms.MetaException, match=r"has had write ids already \(up to 8\)"):
        await env.call("seed_write_id", hms.SeedTableWriteIdsRequest(dbName="db", tableName="t", seedWriteId=20))
    with pytest.raises(hms.MetaException, match="Invalid txnId seed 5, the highWaterMark is"):
        await env.call("seed_txn_id", hms.SeedTxnIdRequest(seedTxnId=5))
    with pytest.raises(hms.MetaException, match="is not transactional"):
        await env.call("create_table", thrift_table("plain"))
        await env.call("seed_write_id", hms.SeedTableWriteIdsRequest(dbName="db", tableName="plain", seedWriteId=3))
    with pytest.raises(hms.MetaException, match="seedWriteId must be at least 1"):
        await env.call("seed_write_id", hms.SeedTableWriteIdsRequest(dbName="db", tableName="t", seedWriteId=0))


async def test_a_seeded_table_is_read_from_the_caches_at_once(env: Env) -> None:
    """Replication's bootstrap seeds a table's write ids with no write after it: each gateway's cache takes
    the seed from its event and serves the snapshots taken after it, where without it every read of the
    table would miss (its snapshots' high-water mark beyond what the cache knows committed) until a commit."""
    await env.call("create_table", thrift_table("r", keys=["p"]))
    await env.call("add_partition", hms.Partition(dbName="db", tableName="r", values=["a"], parameters={}))
    table = await env.call("get_table", "db", "r")
    table.parameters = {**table.parameters, "transactional": "true"}
    await env.call("alter_table", "db", "r", table)  # made transactional: no write ids yet
    for client in (env.call, env.other):
        assert await env.names(await env.snapshot(client, "r"), client, "r") == ["p=a"]  # each cache holds it

    await env.call("seed_write_id", hms.SeedTableWriteIdsRequest(dbName="db", tableName="r", seedWriteId=5))
    for gw, client in zip(env.gateways, (env.call, env.other)):
        await wait_applied(gw)
        snapshot = await env.snapshot(client, "r")
        assert snapshot == "db.r:5:9223372036854775807::"
        assert gw.cached_catalog is not None
        stats = gw.cached_catalog.cache.stats
        hits, misses = stats.hits, sum(stats.misses.values())
        assert await env.names(snapshot, client, "r") == ["p=a"]
        # Two hits (the table's id, then its partitions), no miss.
        assert (stats.hits, sum(stats.misses.values())) == (hits + 2, misses)


async def test_hive_streaming_adds_its_partitions_outside_its_txn_batch(env: Env) -> None:
    """Hive 3's and 4's streaming API (HiveStreamingConnection, what NiFi's PutHive3Streaming and Flink's Hive
    sink drive): a batch of txns and their write ids, a SHARED_READ lock of a dynamic-partition INSERT, each new
    partition added with add_partition and no write id (createPartitionIfNotExists, which takes
    AlreadyExistsException as 'there already'), add_dynamic_partitions, heartbeats, the commits, and an abort of
    what is left of the batch when the connection closes."""
    batch = list((await env.call("open_txns", hms.OpenTxnRequest(num_txns=3, user="nifi", hostname="n1"))).txn_ids)
    ids = (await env.call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
        dbName="db", tableName="t", txnIds=batch))).txnToWriteIds
    write_id = {a.txnId: a.writeId for a in ids}
    first = batch[0]
    lock = await env.call("lock", hms.LockRequest(component=[hms.LockComponent(
        type=1, level=2, dbname="db", tablename="t", operationType=2, isAcid=True, isDynamicPartitionWrite=True)],
        txnid=first, user="nifi", hostname="n1", agentInfo="streaming"))
    assert lock.state == 1  # ACQUIRED (SHARED_READ, TABLE, INSERT: DataOperationType 2)
    for value in ("a", "b", "a"):  # a second record of p=a finds it there
        try:
            await env.call("add_partition", _partition(value))
        except hms.AlreadyExistsException:
            assert value == "a"
    await env.call("add_dynamic_partitions", hms.AddDynamicPartitions(
        txnid=first, writeid=write_id[first], dbname="db", tablename="t", partitionnames=["p=a", "p=b"],
        operationType=2))
    heartbeat = await env.call("heartbeat_txn_range", hms.HeartbeatTxnRangeRequest(min=batch[0], max=batch[-1]))
    assert not heartbeat.aborted and not heartbeat.nosuch
    # The partitions are there for every reader at once; the batch's own writes (its data) wait for its commits.
    snapshot = await env.snapshot()
    assert await env.names(snapshot) == ["p=a", "p=b"]
    assert ",".join(str(write_id[t]) for t in batch) in snapshot  # the batch's write ids still open
    await env.call("commit_txn", hms.CommitTxnRequest(txnid=first))
    await env.call("abort_txns", hms.AbortTxnsRequest(txn_ids=batch[1:]))
    assert [t for t, state in await env.open_txns() if state == OPEN] == []
    assert await env.names(await env.snapshot(env.other)) == ["p=a", "p=b"]


async def test_the_own_txn_is_the_user_the_connection_set_ugi_named(env: Env) -> None:
    """SHOW TRANSACTIONS names a failed write's txn after the connection's user (Hive's engine sends set_ugi
    first on an unsecured connection), not a blank; a later set_ugi on another connection does not change it."""
    hive = ThriftClient(env.gateways[0].thrift_port)
    try:
        assert await hive("set_ugi", "etl", ["etl"]) == ["etl"]
        await env.other("set_ugi", "someone_else", [])
        await hive("add_partition", _partition("a"))
        with pytest.raises(hms.AlreadyExistsException):
            await hive("add_partition", _partition("a"))
        with pytest.raises(hms.AlreadyExistsException):
            await env.call("add_partition", _partition("a"))  # a connection that named no user
    finally:
        hive.close()
    aborted = [(t.user, t.agentInfo) for t in (await env.call("get_open_txns_info")).open_txns]
    assert aborted == [("etl", "metastore gateway, for a write outside a txn: add partitions to db.t"),
                       ("", "metastore gateway, for a write outside a txn: add partitions to db.t")]
