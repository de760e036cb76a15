"""markPartitionForEvent and isPartitionMarkedForEvent as Paimon's Hive catalog calls them (its mark-done action
`mark-event`, then its partition listing): LOAD_DONE marks of a partition's specification, kept by the table's
id (store/partition_events.py); compared call by call with Hive 2.3.10 in test_thrift_methods_differential.py."""

from __future__ import annotations

import asyncio

import pytest

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import client_with_database, thrift_table

LOAD_DONE = 1


async def test_a_partition_marked_load_done_is_found_marked(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["dt", "hr"]))
        done = {"dt": "2024-01-01", "hr": "1"}
        assert not await call("isPartitionMarkedForEvent", "db", "t", done, LOAD_DONE)
        await call("markPartitionForEvent", "db", "t", done, LOAD_DONE)  # the partition need not exist
        await call("markPartitionForEvent", "db", "t", done, LOAD_DONE)  # again: no error
        assert await call("isPartitionMarkedForEvent", "DB", "T", done, LOAD_DONE)
        assert not await call("isPartitionMarkedForEvent", "db", "t", {"dt": "2024-01-01", "hr": "2"}, LOAD_DONE)

        # The specification names each key, as stored, and no other: InvalidPartitionException, as Hive's.
        for bad in ({"dt": "2024-01-01"}, {**done, "x": "1"}, {"DT": "2024-01-01", "hr": "1"}, {}):
            with pytest.raises(hms.InvalidPartitionException):
                await call("markPartitionForEvent", "db", "t", bad, LOAD_DONE)
        with pytest.raises(hms.UnknownTableException):
            await call("markPartitionForEvent", "db", "nope", done, LOAD_DONE)
        with pytest.raises(hms.MetaException, match="PartitionEventType"):
            await call("markPartitionForEvent", "db", "t", done, 7)

        # The marks follow a rename and go with a drop (a table re-created under the name has none).
        table = await call("get_table", "db", "t")
        table.tableName = "u"
        await call("alter_table", "db", "t", table)
        assert await call("isPartitionMarkedForEvent", "db", "u", done, LOAD_DONE)
        await call("drop_table", "db", "u", True)
        await call("create_table", thrift_table("u", keys=["dt", "hr"]))
        assert not await call("isPartitionMarkedForEvent", "db", "u", done, LOAD_DONE)


async def test_a_mark_older_than_the_expiry_no_longer_counts(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn, **{"hive.metastore.event.expiry.duration": "1s"}) as gw, \
            client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["dt"]))
        await call("markPartitionForEvent", "db", "t", {"dt": "a"}, LOAD_DONE)
        assert await call("isPartitionMarkedForEvent", "db", "t", {"dt": "a"}, LOAD_DONE)
        await asyncio.sleep(1.2)
        assert not await call("isPartitionMarkedForEvent", "db", "t", {"dt": "a"}, LOAD_DONE)
        await call("markPartitionForEvent", "db", "t", {"dt": "a"}, LOAD_DONE)  # marked again: counts again
        assert await call("isPartitionMarkedForEvent", "db", "t", {"dt": "a"}, LOAD_DONE)
