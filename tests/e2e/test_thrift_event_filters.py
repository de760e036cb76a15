"""get_next_notification's Hive 4 filters (NotificationEventRequest fields 3 to 7: Impala's event processor
sends a skip list): each that is set keeps only the events of its database, its tables, no type in its skip
list and a type in its type list, by the type as answered (an alter of several partitions is answered as
Hive 4's ALTER_PARTITIONS: gateway/thrift/hive_events.py)."""

from __future__ import annotations

from typing import Any

import pytest
from thriftpy2.thrift import TApplicationException

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database, thrift_table


def _partition(db: str, table: str, value: str) -> Any:
    return hms.Partition(dbName=db, tableName=table, values=[value], parameters={})


async def test_hive4_filters_keep_only_what_they_name(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port, "a") as call:
        start = (await call("get_current_notificationEventId")).eventId
        await call("create_database", hms.Database(name="b", description="", parameters={}))
        for db, name in (("a", "t1"), ("a", "t2"), ("b", "t1")):
            await call("create_table", thrift_table(name, db=db, keys=["ds"]))
        for value in ("1", "2"):
            await call("add_partition", _partition("a", "t1", value))
        parts = await call("get_partitions", "a", "t1", -1)
        await call("alter_partitions", "a", "t1", parts)  # several: ALTER_PARTITIONS
        await call("alter_partitions", "a", "t1", parts[:1])  # one: ALTER_PARTITION
        (txn,) = (await call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
        await call("commit_txn", hms.CommitTxnRequest(txnid=txn))

        async def read(**filters: Any) -> list[tuple[str, str | None, str | None]]:
            request = hms.NotificationEventRequest(lastEvent=start, maxEvents=100, **filters)
            return [(e.eventType, e.dbName, e.tableName) for e in (await call("get_next_notification", request)).events]

        everything = await read()
        assert [t for t, _, _ in everything] == [
            "CREATE_DATABASE", "CREATE_TABLE", "CREATE_TABLE", "CREATE_TABLE", "ADD_PARTITION", "ADD_PARTITION",
            "ALTER_PARTITIONS", "ALTER_PARTITION", "OPEN_TXN", "COMMIT_TXN"]
        assert await read(dbName="b") == [("CREATE_DATABASE", "b", None), ("CREATE_TABLE", "b", "t1")]
        assert [e for e in await read(dbName="A", tableNames=["T1"]) if e[0] == "CREATE_TABLE"] == [
            ("CREATE_TABLE", "a", "t1")]  # names as Hive lower-cases them
        assert await read(tableNames=["t2"]) == [("CREATE_TABLE", "a", "t2")]
        skipped = await read(eventTypeSkipList=["OPEN_TXN", "COMMIT_TXN", "ADD_PARTITION"])
        assert [t for t, _, _ in skipped] == ["CREATE_DATABASE", "CREATE_TABLE", "CREATE_TABLE", "CREATE_TABLE",
                                              "ALTER_PARTITIONS", "ALTER_PARTITION"]
        # By the type answered: skipping ALTER_PARTITION keeps ALTER_PARTITIONS, and the reverse.
        assert [t for t, _, _ in await read(eventTypeList=["ALTER_PARTITION", "ALTER_PARTITIONS"],
                                            eventTypeSkipList=["ALTER_PARTITION"])] == ["ALTER_PARTITIONS"]
        assert [t for t, _, _ in await read(eventTypeList=["ALTER_PARTITIONS"])] == ["ALTER_PARTITIONS"]
        assert [t for t, _, _ in await read(eventTypeList=["ALTER_PARTITION"])] == ["ALTER_PARTITION"]
        assert await read(eventTypeList=[]) == []
        assert await read(catName="hive") == everything
        with pytest.raises(TApplicationException, match="catalog 'spark' does not exist"):
            await read(catName="spark")


async def test_a_filter_in_error_is_refused(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw:
        client = ThriftClient(gw.thrift_port)
        try:
            with pytest.raises(TApplicationException, match="db_name"):
                await client("get_next_notification", hms.NotificationEventRequest(lastEvent=0, dbName="x" * 300))
        finally:
            client.close()
