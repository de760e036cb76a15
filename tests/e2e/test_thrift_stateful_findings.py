"""Differences from Hive Metastore 2.3.10 that tests/e2e/test_thrift_stateful_differential.py found, each
pinned here on the gateway alone (Hive's answers, checked against the real one, written in): the same calls
answer as Hive's do."""

from __future__ import annotations

from typing import AsyncIterator

import pytest
from hmsclient.genthrift.hive_metastore import ttypes as ht

from tests.e2e.test_thrift_api import Thrift, _table, thrift_with_database


@pytest.fixture
async def hms(pg_dsn: str) -> AsyncIterator[Thrift]:
    async with thrift_with_database(pg_dsn) as thrift:
        yield thrift


def _unpartitioned(name: str) -> ht.Table:
    t = _table("db", name)
    t.partitionKeys = []
    return t


async def test_a_database_created_without_an_owner_is_read_back_without_one(hms: Thrift) -> None:
    await hms.call("create_database", ht.Database("nobody", "d", None, {}))
    assert (await hms.call("get_database", "nobody")).ownerName is None
    await hms.call("create_database", ht.Database("somebody", "d", None, {}, ownerName="alice"))
    assert (await hms.call("get_database", "somebody")).ownerName == "alice"


async def test_partition_statistics_writes_on_a_missing_table_are_invalid_object(hms: Thrift) -> None:
    """Hive 2.3 reads the partition name's values from the table first: 'db.nope table not found'."""
    stats = ht.ColumnStatistics(ht.ColumnStatisticsDesc(False, "db", "nope", "ds=1"), [ht.ColumnStatisticsObj(
        "id", "bigint", ht.ColumnStatisticsData(longStats=ht.LongColumnStatsData(1, 2, 0, 1)))])
    await hms.raises(ht.InvalidObjectException, "update_partition_column_statistics", stats)
    await hms.raises(ht.InvalidObjectException, "delete_partition_column_statistics", "db", "nope", "ds=1", "id")
    await hms.raises(ht.InvalidObjectException, "delete_partition_column_statistics", "nodb", "nope", "ds=1", None)
    # a missing partition of a table that exists stays NoSuchObjectException, as Hive's
    await hms.call("create_table", _table("db", "t"))
    await hms.raises(ht.NoSuchObjectException, "delete_partition_column_statistics", "db", "t", "ds=1", "id")
    stats.statsDesc.tableName = "t"
    await hms.raises(ht.NoSuchObjectException, "update_partition_column_statistics", stats)
    # a name that does not name the table's keys: InvalidObjectException ("incomplete partition name")
    stats.statsDesc.partName = "dx=1"
    await hms.raises(ht.InvalidObjectException, "update_partition_column_statistics", stats)
    await hms.raises(ht.InvalidObjectException, "delete_partition_column_statistics", "db", "t", "dx=1", "id")
    # a partition's of an unpartitioned table: MetaException ("Invalid partition key & values")
    await hms.call("create_table", _unpartitioned("flat"))
    await hms.raises(ht.MetaException, "delete_partition_column_statistics", "db", "flat", "ds=1", None)
    # and the table's own statistics of a missing table stay NoSuchObjectException
    await hms.raises(ht.NoSuchObjectException, "delete_table_column_statistics", "db", "nope", "id")


async def test_add_partitions_req_of_no_partitions_answers_no_list(hms: Thrift) -> None:
    """Hive 2.3's add_partitions_req returns at once for an empty list, its result's partitions unset."""
    await hms.call("create_table", _table("db", "t"))
    result = await hms.call("add_partitions_req", ht.AddPartitionsRequest("db", "t", [], True, True))
    assert result.partitions is None
    # of a table that does not exist, too: nothing is looked up
    result = await hms.call("add_partitions_req", ht.AddPartitionsRequest("nodb", "nope", [], False, True))
    assert result.partitions is None


async def test_an_unpartitioned_tables_partition_listings_are_empty(hms: Thrift) -> None:
    """Hive 2.3 lists no partitions of an unpartitioned table; a read by values refuses them."""
    await hms.call("create_table", _unpartitioned("flat"))
    for _ in range(2):  # the database's answer, then the cache's
        assert await hms.call("get_partitions", "db", "flat", -1) == []
        assert await hms.call("get_partition_names", "db", "flat", -1) == []
        assert await hms.call("get_partitions_by_names", "db", "flat", []) == []
        assert await hms.call("get_partitions_by_names", "db", "flat", ["ds=1"]) == []
        assert await hms.call("get_partitions_by_filter", "db", "flat", "", -1) == []
        assert await hms.call("get_num_partitions_by_filter", "db", "flat", "") == 0
        assert await hms.call("get_partitions_with_auth", "db", "flat", -1, "u", []) == []
        await hms.raises(ht.MetaException, "get_partitions_by_filter", "db", "flat", "ds='1'", -1)
        await hms.raises(ht.MetaException, "get_partitions_ps", "db", "flat", ["1"], -1)
        await hms.raises(ht.MetaException, "get_partition", "db", "flat", ["1"])


async def test_deleting_every_column_statistics_where_there_are_none_succeeds(hms: Thrift) -> None:
    """Hive 2.3 answers true for every column's statistics (no column named) of a table or partition that
    has none; one named column without any, or a partition that does not exist, is NoSuchObjectException."""
    await hms.call("create_table", _table("db", "t"))
    await hms.call("add_partition", ht.Partition(values=["x"], dbName="db", tableName="t", parameters={}))
    assert await hms.call("delete_table_column_statistics", "db", "t", None) is True
    assert await hms.call("delete_partition_column_statistics", "db", "t", "ds=x", None) is True
    await hms.raises(ht.NoSuchObjectException, "delete_table_column_statistics", "db", "t", "id")
    await hms.raises(ht.NoSuchObjectException, "delete_partition_column_statistics", "db", "t", "ds=x", "id")
    await hms.raises(ht.NoSuchObjectException, "delete_partition_column_statistics", "db", "t", "ds=y", None)


async def test_an_appended_partition_keeps_the_columns_the_table_had(hms: Thrift) -> None:
    """Hive 2.3's append_partition copies the table's storage descriptor, columns included: an alter of the
    table's columns without CASCADE leaves the partition's as they were (its files were written so)."""
    await hms.call("create_table", _table("db", "t"))
    await hms.call("append_partition", "db", "t", ["1"])
    await hms.call("append_partition_by_name", "db", "t", "ds=2")
    altered = await hms.call("get_table", "db", "t")
    altered.sd.cols = [ht.FieldSchema("id", "bigint", None), ht.FieldSchema("note", "string", None)]
    await hms.call("alter_table", "db", "t", altered)
    for _ in range(2):  # the database's answer, then the cache's
        for values in (["1"], ["2"]):
            part = await hms.call("get_partition", "db", "t", values)
            assert [(c.name, c.type) for c in part.sd.cols] == [("id", "bigint"), ("amount", "double")]
            assert part.sd.location.endswith(f"/db.db/t/ds={values[0]}")
