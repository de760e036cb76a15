"""Hive 4's writes that name a transactional table's write id instead of its txn (what Trino and Hive 4
send after writing a transaction's files): alter_table_req and alter_partitions_req under the txn that
allocated the write id, visible when it commits and gone when it aborts; and truncate_table_req, which
truncates a transactional table as Hive 4 does with hive.acid.truncate.usebase: an empty base under the
write id, so a snapshot taken before the commit still reads the old files and one after reads none."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from gateway.app import Gateway
from gateway.thrift.idl import hms
from gateway.warehouse import ACID_METADATA_FILE
from hive.writeids import ValidWriteIdList
from pipeline.acid import base_dir_name, delta_dir_name, visible_files
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import local_dir, table
from tests.conftest import connect, gateway_settings
from tests.thrift_client import ThriftClient

SKIP_DATA_DELETION = hms.EnvironmentContext(properties={"truncateSkipDataDeletion": "true"})


class Env:
    def __init__(self, client: ThriftClient, grpc_client: Any) -> None:
        self.call, self.grpc = client, grpc_client

    async def begin(self, table_name: str) -> tuple[int, int]:
        """A new txn and the write id it allocated for db.`table_name`."""
        (txn,) = (await self.call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
        (alloc,) = (await self.call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="db", tableName=table_name, txnIds=[txn]))).txnToWriteIds
        return txn, alloc.writeId

    async def commit(self, txn: int) -> None:
        await self.call("commit_txn", hms.CommitTxnRequest(txnid=txn))

    async def write_ids(self, table_name: str) -> ValidWriteIdList:
        """A reader's snapshot of db.`table_name` now, as the gateway writes it in Hive's string form."""
        txns = transactions_pb2_grpc.TransactionsStub(self.grpc.channel)
        valid_txns = (await txns.GetOpenTxns(tpb.GetOpenTxnsRequest())).valid_txn_list
        (got,) = (await txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
            full_table_names=[f"db.{table_name}"], valid_txn_list=valid_txns))).tables
        return ValidWriteIdList.parse(got.valid_write_id_list)

    async def partition(self, name: str) -> Any:
        (p,) = await self.call("get_partitions_by_names", "db", "t", [name])
        return p


@pytest.fixture
async def env(pg_dsn: str, tmp_path: Path) -> AsyncIterator[Env]:
    # The tests move tables beside the warehouse: the gateway's to change (metastore.gateway.data.roots).
    gw = Gateway(gateway_settings(pg_dsn, **{"hive.metastore.warehouse.dir": str(tmp_path / "warehouse"),
                                             "metastore.gateway.data.roots": str(tmp_path)}))
    await gw.start()
    grpc_client = await connect(f"127.0.0.1:{gw.port}")
    client = ThriftClient(gw.thrift_port)
    try:
        await grpc_client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        for name, keys in (("t", (("p", "string"),)), ("u", ())):
            await grpc_client.catalog.CreateTable(pb.CreateTableRequest(
                table=table("db", name, keys=keys, transactional=True)))
        await grpc_client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "plain", keys=())))
        env = Env(client, grpc_client)
        txn, _ = await env.begin("t")
        await grpc_client.catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name="db", table_name="t", txn_id=txn, partitions=[
                pb.Partition(values=[v], parameters={"numRows": "10"}) for v in ("a", "b")]))
        await env.commit(txn)
        yield env
    finally:
        client.close()
        await grpc_client.channel.close()
        await gw.stop()


async def test_alters_naming_a_write_id_run_under_its_txn(env: Env) -> None:
    txn, write_id = await env.begin("t")
    p = await env.partition("p=a")
    p.parameters = {**p.parameters, "numRows": "7"}
    await env.call("alter_partitions_req", hms.AlterPartitionsRequest(
        dbName="db", tableName="t", partitions=[p], writeId=write_id))
    u = await env.call("get_table", "db", "u")
    u.parameters = {**u.parameters, "comment": "loaded"}
    txn_u, write_id_u = await env.begin("u")
    await env.call("alter_table_req", hms.AlterTableRequest(dbName="db", tableName="u", table=u, writeId=write_id_u))
    # Not committed: a reader without a snapshot reads the committed state.
    assert (await env.partition("p=a")).parameters["numRows"] == "10"
    assert "comment" not in (await env.call("get_table", "db", "u")).parameters
    await env.commit(txn)
    await env.call("abort_txn", hms.AbortTxnRequest(txnid=txn_u))
    altered = await env.partition("p=a")
    assert (altered.parameters["numRows"], altered.writeId) == ("7", write_id)
    assert "comment" not in (await env.call("get_table", "db", "u")).parameters  # its txn aborted

    with pytest.raises(hms.InvalidOperationException, match=f"belongs to txn {txn}, which is committed"):
        await env.call("alter_partitions_req", hms.AlterPartitionsRequest(
            dbName="db", tableName="t", partitions=[altered], writeId=write_id))
    with pytest.raises(hms.InvalidOperationException, match="no txn holds write id 999"):
        await env.call("alter_partitions_req", hms.AlterPartitionsRequest(
            dbName="db", tableName="t", partitions=[altered], writeId=999))
    # No write id (as read, it names the write id of its last change, txn's, committed): a write outside a
    # txn, run in one of its own (gateway/thrift/own_txn.py), under the next write id.
    altered.writeId = -1
    altered.parameters = {**altered.parameters, "numRows": "8"}
    await env.call("alter_partitions_req", hms.AlterPartitionsRequest(dbName="db", tableName="t",
                                                                      partitions=[altered]))
    assert ((await env.partition("p=a")).parameters["numRows"], (await env.partition("p=a")).writeId) == (
        "8", write_id + 1)


async def test_hive4_alters_name_their_write_id_in_the_table_and_the_partitions(env: Env) -> None:
    """What Hive 4's Hive.alterTable sends for a transactional table (the end of an INSERT INTO it, its
    statistics task, a DDL on it): alter_table_req with Table.writeId set to the txn's write id and
    the request's validWriteIdList, its own writeId left at -1 (HiveMetaStoreClient.alter_table(cat,
    db, tbl, table, context, validWriteIds)); Hive.alterPartition the same with Partition.writeId
    (alter_partitions_req). Both run under the txn of that write id, as when the request names it."""
    txn, write_id = await env.begin("u")
    u = await env.call("get_table", "db", "u")
    u.parameters = {**u.parameters, "numRows": "3", "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}'}
    u.writeId = write_id
    snapshot = f"db.u:{write_id}:9223372036854775807::"
    await env.call("alter_table_req", hms.AlterTableRequest(dbName="db", tableName="u", table=u,
                                                            validWriteIdList=snapshot))
    assert "numRows" not in (await env.call("get_table", "db", "u")).parameters  # not committed yet

    txn_t, write_id_t = await env.begin("t")
    p = await env.partition("p=a")
    p.parameters = {**p.parameters, "numRows": "11"}
    p.writeId = write_id_t
    await env.call("alter_partitions_req", hms.AlterPartitionsRequest(dbName="db", tableName="t", partitions=[p]))
    assert (await env.partition("p=a")).parameters["numRows"] == "10"
    await env.commit(txn)
    await env.commit(txn_t)
    altered = await env.call("get_table", "db", "u")
    assert (altered.parameters["numRows"], altered.writeId) == ("3", write_id)
    assert ((await env.partition("p=a")).parameters["numRows"], (await env.partition("p=a")).writeId) == (
        "11", write_id_t)

    txn, write_id = await env.begin("t")
    other_txn, other_write_id = await env.begin("t")
    a, b = await env.partition("p=a"), await env.partition("p=b")
    a.writeId, b.writeId = write_id, other_write_id
    with pytest.raises(hms.InvalidOperationException, match="one write id"):
        await env.call("alter_partitions_req", hms.AlterPartitionsRequest(dbName="db", tableName="t",
                                                                          partitions=[a, b]))


async def test_new_partitions_carrying_a_write_id_are_added_in_its_txn(env: Env) -> None:
    """Hive 3's and 4's load into new partitions of a transactional table: add_partitions with each
    partition's writeId set to the one its txn allocated."""
    def new(value: str, write_id: int) -> Any:
        return hms.Partition(values=[value], dbName="db", tableName="t", parameters={}, writeId=write_id)

    txn, write_id = await env.begin("t")
    aborted, aborted_write_id = await env.begin("t")
    await env.call("add_partitions_req", hms.AddPartitionsRequest(
        dbName="db", tblName="t", parts=[new("c", write_id), new("d", write_id)], ifNotExists=False,
        needResult=True))
    await env.call("add_partition", new("e", aborted_write_id))
    assert await env.call("get_partition_names", "db", "t", -1) == ["p=a", "p=b"]  # none committed yet
    await env.commit(txn)
    await env.call("abort_txn", hms.AbortTxnRequest(txnid=aborted))
    assert await env.call("get_partition_names", "db", "t", -1) == ["p=a", "p=b", "p=c", "p=d"]
    assert (await env.partition("p=c")).writeId == write_id
    txn, write_id = await env.begin("t")
    other, other_write_id = await env.begin("t")
    with pytest.raises(hms.InvalidObjectException, match="one write id"):
        await env.call("add_partitions", [new("f", write_id), new("g", other_write_id)])
    assert await env.call("get_partition_names", "db", "t", -1) == ["p=a", "p=b", "p=c", "p=d"]
    # No write id: a write outside a txn, run and committed in one of its own (gateway/thrift/own_txn.py).
    await env.call("add_partition", new("h", -1))
    assert await env.call("get_partition_names", "db", "t", -1) == ["p=a", "p=b", "p=c", "p=d", "p=h"]


async def test_new_partitions_directories_follow_the_location_their_txn_gave_the_table(env: Env,
                                                                                      tmp_path: Path) -> None:
    """A txn that moves the table (alter_table_req under its write id) and then adds partitions: each
    partition is stored under the table's new location, and its directory is made there, where the
    store puts it, not under the location other readers still see until the commit."""
    moved = tmp_path / "moved"
    txn, write_id = await env.begin("t")
    t = await env.call("get_table", "db", "t")
    old_location = t.sd.location
    t.sd.location = f"file://{moved}"
    await env.call("alter_table_req", hms.AlterTableRequest(dbName="db", tableName="t", table=t, writeId=write_id))
    assert (await env.call("get_table", "db", "t")).sd.location == old_location  # not committed yet
    await env.call("add_partitions_req", hms.AddPartitionsRequest(
        dbName="db", tblName="t", ifNotExists=False, needResult=True,
        parts=[hms.Partition(values=["z"], dbName="db", tableName="t", parameters={}, writeId=write_id)]))
    await env.commit(txn)
    assert (await env.partition("p=z")).sd.location == f"file:{moved}/p=z"
    assert (moved / "p=z").is_dir()
    assert not Path(local_dir(old_location), "p=z").exists()


async def test_truncate_of_a_transactional_table_is_an_empty_base_under_its_write_id(env: Env) -> None:
    a, b = (await env.partition("p=a")).sd.location, (await env.partition("p=b")).sd.location
    for location in (a, b):
        (Path(local_dir(location)) / delta_dir_name(1) / "bucket_00000").parent.mkdir(parents=True)
        (Path(local_dir(location)) / delta_dir_name(1) / "bucket_00000").write_bytes(b"rows")
    txn, write_id = await env.begin("t")
    await env.call("truncate_table_req", hms.TruncateTableRequest(
        dbName="db", tableName="t", partNames=["p=a"], writeId=write_id, environmentContext=SKIP_DATA_DELETION))
    base = Path(local_dir(a)) / base_dir_name(write_id)
    assert json.loads((base / ACID_METADATA_FILE).read_text()) == {"thisFileVersion": "0", "dataFormat": "truncated"}
    assert not (Path(local_dir(b)) / base_dir_name(write_id)).exists()
    before = await env.write_ids("t")  # the truncating txn is still open
    assert [os.path.basename(f) for f, _ in visible_files(a, before)] == ["bucket_00000"]
    assert (await env.partition("p=a")).parameters["numRows"] == "10"
    await env.commit(txn)
    after = await env.write_ids("t")
    assert visible_files(a, after) == [] and len(visible_files(b, after)) == 1
    assert (Path(local_dir(a)) / delta_dir_name(1) / "bucket_00000").exists()  # the files stay for the cleaner
    assert [(await env.partition(n)).parameters["numRows"] for n in ("p=a", "p=b")] == ["0", "10"]

    # An unpartitioned table: its own location.
    txn, write_id = await env.begin("u")
    await env.call("truncate_table_req", hms.TruncateTableRequest(
        dbName="db", tableName="u", writeId=write_id, environmentContext=SKIP_DATA_DELETION))
    await env.commit(txn)
    location = (await env.call("get_table", "db", "u")).sd.location
    assert (Path(local_dir(location)) / base_dir_name(write_id) / ACID_METADATA_FILE).exists()


async def test_truncate_req_refusals_leave_the_files(env: Env) -> None:
    a = (await env.partition("p=a")).sd.location
    kept = Path(local_dir(a)) / delta_dir_name(1) / "bucket_00000"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"rows")
    txn, write_id = await env.begin("t")
    with pytest.raises(hms.MetaException, match="transactional: truncating its files in place"):
        await env.call("truncate_table_req", hms.TruncateTableRequest(dbName="db", tableName="t", writeId=write_id))
    with pytest.raises(hms.MetaException, match="transactional"):  # the base needs a write id
        await env.call("truncate_table_req", hms.TruncateTableRequest(
            dbName="db", tableName="t", environmentContext=SKIP_DATA_DELETION))
    with pytest.raises(hms.MetaException, match="is not transactional"):
        await env.call("truncate_table_req", hms.TruncateTableRequest(
            dbName="db", tableName="plain", environmentContext=SKIP_DATA_DELETION))
    await env.call("abort_txn", hms.AbortTxnRequest(txnid=txn))
    with pytest.raises(hms.MetaException, match="which is aborted"):
        await env.call("truncate_table_req", hms.TruncateTableRequest(
            dbName="db", tableName="t", writeId=write_id, environmentContext=SKIP_DATA_DELETION))
    assert kept.exists() and os.listdir(local_dir(a)) == [delta_dir_name(1)]


async def test_truncate_req_of_a_plain_table_empties_it(env: Env) -> None:
    location = (await env.call("get_table", "db", "plain")).sd.location
    data = Path(local_dir(location)) / "part-0.parquet"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_bytes(b"rows")
    await env.call("truncate_table_req", hms.TruncateTableRequest(dbName="db", tableName="plain"))
    assert os.path.isdir(local_dir(location)) and os.listdir(local_dir(location)) == []


async def test_two_hive_inserts_into_one_new_partition_both_commit(env: Env, pg_dsn: str) -> None:
    """Hive 3's INSERT into a new partition adds it (if not exists, with its write id) before the
    commit; two at once both commit, as in Hive: the second's add waits for the first txn to end and
    finds the partition there (before: its txn was aborted as a write conflict)."""
    other = ThriftClient(env.call.port)
    try:
        first_txn, first_wid = await env.begin("t")
        second_txn, second_wid = await Env(other, env.grpc).begin("t")

        def add(write_id: int) -> hms.AddPartitionsRequest:
            return hms.AddPartitionsRequest(dbName="db", tblName="t", ifNotExists=True, needResult=True, parts=[
                hms.Partition(values=["new"], dbName="db", tableName="t", parameters={}, writeId=write_id)])

        assert [p.values for p in (await env.call("add_partitions_req", add(first_wid))).partitions] == [["new"]]
        second = asyncio.create_task(other("add_partitions_req", add(second_wid)))
        await asyncio.sleep(0.5)
        assert not second.done()  # waits for the first txn
        await env.commit(first_txn)
        assert (await asyncio.wait_for(second, 10)).partitions == []  # there now: nothing to add
        await env.call("commit_txn", hms.CommitTxnRequest(txnid=second_txn))
        assert (await env.partition("p=new")).writeId == first_wid
        snapshot = await env.write_ids("t")
        assert snapshot.is_write_id_valid(first_wid) and snapshot.is_write_id_valid(second_wid)
    finally:
        other.close()
