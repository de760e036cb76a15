"""Hive's write notification log over Thrift (store/write_notifications.py): add_write_notification_log and
its batch form, as Hive 3's and 4's loads into transactional tables send them with hive.metastore.dml.events,
read back by get_all_write_event_info (what Hive's REPL DUMP and Impala's event processor read at each
COMMIT_TXN), and trimmed with the notification log."""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

import asyncpg
import pytest
from thriftpy2.thrift import TApplicationException

from gateway.thrift.idl import hms
from store.housekeeping import trim_event_log
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database, thrift_table


class Env:
    def __init__(self, call: ThriftClient, dsn: str) -> None:
        self.call, self.dsn = call, dsn

    async def begin(self, table: str = "t") -> tuple[int, int]:
        (txn,) = (await self.call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
        (alloc,) = (await self.call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="db", tableName=table, txnIds=[txn]))).txnToWriteIds
        return txn, alloc.writeId

    async def note(self, txn: int, write_id: int, files: list[str], values: list[str] | None = None,
                   table: str = "t", **info: Any) -> None:
        await self.call("add_write_notification_log", hms.WriteNotificationLogRequest(
            txnId=txn, writeId=write_id, db="db", table=table, partitionVals=values,
            fileInfo=hms.InsertEventRequestData(replace=True, filesAdded=files, **info)))

    async def infos(self, txn: int, db: str | None = None, table: str | None = None) -> list[Any]:
        return list(await self.call("get_all_write_event_info",
                                    hms.GetAllWriteEventInfoRequest(txnId=txn, dbName=db, tableName=table)))


@pytest.fixture
async def env(pg_dsn: str) -> AsyncIterator[Env]:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["ds"], transactional="true"))
        await call("create_table", thrift_table("u", transactional="true"))
        await call("create_table", thrift_table("plain", keys=["ds"]))
        env = Env(call, pg_dsn)
        txn, write_id = await env.begin()
        parts = [hms.Partition(dbName="db", tableName="t", values=[v], parameters={}, writeId=write_id) for v in "ab"]
        await call("add_partitions_req", hms.AddPartitionsRequest(dbName="db", tblName="t", parts=parts))
        await call("commit_txn", hms.CommitTxnRequest(txnid=txn))
        yield env


async def test_a_txns_loads_are_kept_and_read_back(env: Env) -> None:
    txn, write_id = await env.begin()
    for _ in range(2):  # the second a retry: nothing changes
        await env.note(txn, write_id, ["file:/w/t/ds=a/delta_2_2_0000/bucket_0"], ["a"],
                       subDirectoryList=["delta_2_2_0000"])
    await env.note(txn, write_id, ["file:/w/t/ds=a/delta_2_2_0001/bucket_0"], ["a"],  # a second statement: first
                   subDirectoryList=["delta_2_2_0001"])
    await env.call("add_write_notification_log_in_batch", hms.WriteNotificationLogBatchRequest(
        catalog="hive", db="db", table="t", requestList=[
            hms.WriteNotificationLogRequest(txnId=txn, writeId=write_id, db="db", table="t", partitionVals=values,
                                            fileInfo=hms.InsertEventRequestData(filesAdded=[f"file:/w/t/ds={v}/f"]))
            for values, v in ((["b"], "b"), (["zz"], "zz"))]))  # a partition that does not exist: passed over
    (u_txn, u_write_id) = await env.begin("u")
    await env.note(u_txn, u_write_id, ["file:/w/u/f1", "file:/w/u/f2"], table="u")

    infos = await env.infos(txn)
    assert [(i.writeId, i.database, i.table, i.partition) for i in infos] == [
        (write_id, "db", "t", "ds=a"), (write_id, "db", "t", "ds=b")]
    assert infos[0].files == ("file:/w/t/ds=a/delta_2_2_0001/bucket_0###delta_2_2_0001]"
                              "file:/w/t/ds=a/delta_2_2_0000/bucket_0###delta_2_2_0000")
    assert infos[1].files == "file:/w/t/ds=b/f###"
    assert json.loads(infos[0].tableObj)["1"] == {"str": "t"}  # TJSON: tableName, field 1
    assert json.loads(infos[0].partitionObj)["1"] == {"lst": ["str", 1, "a"]}
    (u_info,) = await env.infos(u_txn, "db", "u")
    assert (u_info.partition, u_info.partitionObj, u_info.files) == ("", None, "file:/w/u/f1###]file:/w/u/f2###")
    assert await env.infos(txn, "DB", "t") == infos and await env.infos(txn, "*", "*") == infos
    assert await env.infos(txn, "db", "u") == [] and await env.infos(txn, "other") == []
    assert await env.infos(-1) == []  # no such txn: none, as Hive answers

    # Trimmed with the notification log, by age.
    conn = await asyncpg.connect(env.dsn)
    try:
        await trim_event_log(conn, 3600)
        assert len(await env.infos(txn)) == 2
        await trim_event_log(conn, 0)
    finally:
        await conn.close()
    assert await env.infos(txn) == [] and await env.infos(u_txn) == []


@pytest.mark.parametrize(("case", "says"), [
    ("not transactional", "db.plain is not transactional"),
    ("another txn's write id", "is not txn"),
    ("a missing partition", "partition ds=zz of db.t does not exist"),
    ("a committed txn", "is no longer open"),
    ("files and sub-directories", "subDirectoryList has 1 entries for 2 files"),
])
async def test_a_notification_in_error_is_refused_and_nothing_is_kept(env: Env, case: str, says: str) -> None:
    txn, write_id = await env.begin()
    other, _ = await env.begin()
    files = ["file:/w/f"]
    with pytest.raises(TApplicationException, match=says):  # the method declares no exception (Hive's IDL)
        if case == "not transactional":
            await env.note(txn, write_id, files, ["a"], table="plain")
        elif case == "another txn's write id":
            await env.note(other, write_id, files, ["a"])
        elif case == "a missing partition":
            await env.note(txn, write_id, files, ["zz"])
        elif case == "a committed txn":
            await env.call("commit_txn", hms.CommitTxnRequest(txnid=txn))
            await env.note(txn, write_id, files, ["a"])
        else:
            await env.note(txn, write_id, ["file:/w/f", "file:/w/g"], ["a"], subDirectoryList=["d"])
    assert await env.infos(txn) == [] and await env.infos(other) == []


async def test_a_batch_is_all_or_none_and_names_this_catalog(env: Env) -> None:
    txn, write_id = await env.begin()

    def request(values: list[str], write: int) -> Any:
        return hms.WriteNotificationLogRequest(txnId=txn, writeId=write, db="db", table="t", partitionVals=values,
                                               fileInfo=hms.InsertEventRequestData(filesAdded=["file:/w/f"]))

    with pytest.raises(TApplicationException, match="is not txn"):
        await env.call("add_write_notification_log_in_batch", hms.WriteNotificationLogBatchRequest(
            catalog="hive", db="db", table="t", requestList=[request(["a"], write_id), request(["b"], write_id + 7)]))
    with pytest.raises(TApplicationException, match="catalog 'spark' does not exist"):
        await env.call("add_write_notification_log_in_batch", hms.WriteNotificationLogBatchRequest(
            catalog="spark", db="db", table="t", requestList=[request(["a"], write_id)]))
    await env.call("add_write_notification_log_in_batch", hms.WriteNotificationLogBatchRequest(
        catalog="hive", db="db", table="t", requestList=[]))
    assert await env.infos(txn) == []
