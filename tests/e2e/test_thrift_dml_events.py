"""fire_listener_event: the INSERT events Hive's clients fire after a load when hive.metastore.dml.events is
on (store/dml_events.py), answered with their ids, read back through get_next_notification in Hive's
JSONInsertMessage (gateway/thrift/hive_events.py), and passed over by the poller. Hive 4's shape from a client
of the gateway's IDL; Hive 2.3's, whose InsertEventRequestData has its fields at other ids
(gateway/thrift/layouts.py), from hmsclient, Hive 2.3's own generated client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import hmsclient
import pytest
from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
from hmsclient.genthrift.hive_metastore import ttypes as ht
from thriftpy2.thrift import TApplicationException

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database, thrift_table


def _insert(files: list[str], **fields: Any) -> Any:
    return hms.InsertEventRequestData(filesAdded=files, **fields)


async def _events_after(call: ThriftClient, last: int) -> list[Any]:
    return list((await call("get_next_notification", hms.NotificationEventRequest(lastEvent=last))).events)


async def test_insert_events_are_logged_in_order_and_read_as_hives(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["ds"]))
        await call("create_table", thrift_table("plain"))
        await call("add_partition", hms.Partition(dbName="db", tableName="t", values=["2024-01-01"], parameters={}))
        before = (await call("get_current_notificationEventId")).eventId

        # Hive 4's loadPartition into an existing partition, replacing, files under an ACID directory.
        one = await call("fire_listener_event", hms.FireEventRequest(
            successful=True, dbName="db", tableName="t", partitionVals=["2024-01-01"],
            data=hms.FireEventRequestData(insertData=_insert(
                ["file:/w/t/ds=2024-01-01/base_1/000000_0"], replace=True, filesAddedChecksum=["abc"],
                subDirectoryList=["base_1"]))))
        # Several at once (Hive 4's batch), each naming its partition; one not added yet.
        two = await call("fire_listener_event", hms.FireEventRequest(
            successful=True, dbName="DB", tableName="T", data=hms.FireEventRequestData(insertDatas=[
                _insert(["file:/w/t/ds=2024-01-01/000001_0"], replace=False, partitionVal=["2024-01-01"]),
                _insert(["file:/w/t/ds=2024-01-02/000000_0"], replace=False, partitionVal=["2024-01-02"])])))
        # A table's own insert; `replace` unset counts as true, as Hive's InsertEvent reads it.
        three = await call("fire_listener_event", hms.FireEventRequest(
            successful=True, dbName="db", tableName="plain",
            data=hms.FireEventRequestData(insertData=_insert(["file:/w/plain/000000_0", "file:/w/plain/000001_0"]))))
        assert one.eventIds == [before + 1] and two.eventIds == [before + 2, before + 3]
        assert three.eventIds == [before + 4]

        events = await _events_after(call, before)
        assert [(e.eventId, e.eventType, e.dbName, e.tableName) for e in events] == [
            (before + 1, "INSERT", "db", "t"), (before + 2, "INSERT", "db", "t"), (before + 3, "INSERT", "db", "t"),
            (before + 4, "INSERT", "db", "plain")]
        messages = [json.loads(e.message) for e in events]
        assert {e.messageFormat for e in events} == {"json-0.2"}
        first, _, not_yet, plain = messages
        assert (first["db"], first["table"], first["tableType"]) == ("db", "t", "MANAGED_TABLE")
        assert first["replace"] == "true"
        assert first["files"] == ["file:/w/t/ds=2024-01-01/base_1/000000_0###base_1"]
        assert first["partKeyVals"] == {"ds": "2024-01-01"}
        assert json.loads(first["ptnObjJson"])["1"] == {"lst": ["str", 1, "2024-01-01"]}  # TJSON: values, field 1
        assert first["tableObjJson"] and first["timestamp"] > 0
        assert not_yet["replace"] == "false" and not_yet["ptnObjJson"] is None  # fired before its add (Hive 2.3)
        assert not_yet["partKeyVals"] == {"ds": "2024-01-02"}
        assert plain["files"] == ["file:/w/plain/000000_0###", "file:/w/plain/000001_0###"]
        assert (plain["replace"], plain["ptnObjJson"], plain["partKeyVals"]) == ("true", None, {})

        # The poller passes over them: the cache follows the log to its head and still answers reads.
        assert gw.poller is not None
        for _ in range(200):
            if gw.poller.position >= before + 4:
                break
            await asyncio.sleep(0.01)
        assert gw.poller.position >= before + 4
        assert [p.values for p in await call("get_partitions", "db", "t", -1)] == [["2024-01-01"]]


@pytest.mark.parametrize(("request_", "says"), [
    (hms.FireEventRequest(successful=True, dbName="db", tableName="nosuch",
                          data=hms.FireEventRequestData(insertData=_insert(["f"]))), "table db.nosuch does not exist"),
    (hms.FireEventRequest(successful=True, dbName="db", tableName="t", partitionVals=["a", "b"],
                          data=hms.FireEventRequestData(insertData=_insert(["f"]))),
     "has 2 values but the table has 1"),
    (hms.FireEventRequest(successful=True, dbName="db", tableName="t", data=hms.FireEventRequestData(
        insertDatas=[_insert(["f"], partitionVal=["a"]), _insert(["g"])])),
     "Partition values must be set when firing multiple insert events"),
    (hms.FireEventRequest(successful=True, dbName="db", tableName="t", partitionVals=["a"],
                          data=hms.FireEventRequestData(insertData=_insert(["f", "g"], filesAddedChecksum=["x"]))),
     "filesAddedChecksum has 1 entries for 2 files"),
    (hms.FireEventRequest(successful=True, dbName="db", tableName="t",
                          data=hms.FireEventRequestData(refreshEvent=True)),
     r"logs no RELOAD \(refresh\) events"),
    (hms.FireEventRequest(successful=True, dbName="db", tableName="t", catName="spark",
                          data=hms.FireEventRequestData(insertData=_insert(["f"]))), "catalog 'spark' does not exist"),
])
async def test_a_request_in_error_is_refused_with_the_reason_and_logs_nothing(pg_dsn: str, request_: Any,
                                                                              says: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["ds"]))
        before = (await call("get_current_notificationEventId")).eventId
        with pytest.raises(TApplicationException, match=says):  # the method declares no exception (Hive's IDL)
            await call("fire_listener_event", request_)
        assert (await call("get_current_notificationEventId")).eventId == before


async def test_hive23_clients_insert_event_in_its_own_layout(pg_dsn: str) -> None:
    """Hive 2.3's InsertEventRequestData: filesAdded at field 1 and the checksums at field 2, no replace."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["ds"]))
        before = (await call("get_current_notificationEventId")).eventId
        client = hmsclient.HMSClient(host="127.0.0.1", port=gw.thrift_port)
        client.open()
        try:
            request = ht.FireEventRequest(
                successful=True, dbName="db", tableName="t", partitionVals=["2024-01-03"],
                data=ht.FireEventRequestData(insertData=ht.InsertEventRequestData(
                    filesAdded=["file:/w/t/ds=2024-01-03/000000_0"], filesAddedChecksum=["0a1b"])))
            answer = await asyncio.to_thread(ThriftHiveMetastore.Client.fire_listener_event, client, request)
        finally:
            client.close()
        assert isinstance(answer, ht.FireEventResponse)  # 2.3's is empty: it skips the ids
        (event,) = await _events_after(call, before)
        message = json.loads(event.message)
        assert message["files"] == ["file:/w/t/ds=2024-01-03/000000_0###"]  # the file, not its checksum
        assert (message["replace"], message["partKeyVals"]) == ("true", {"ds": "2024-01-03"})
