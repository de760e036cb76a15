"""Hive 4's column statistics sent with the object they describe: Table.colStats on create_table and
Partition.colStats on add_partitions, what its replication's bootstrap load sends (HMSHandler
create_table_core and AddPartitionsHandler take them off the object and write them right after it, with
the write id it carries). The gateway writes them in the object's own transaction: refused statistics
leave no table or partition behind."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.e2e.test_thrift_snapshots import hive_txn_list, hive_write_id_list
from tests.thrift_client import ThriftClient, client_with_database, thrift_table


def _stats(high: int, *, part_name: str | None = None, table_level: bool | None = None, table_name: str = "t",
           column: str = "id") -> Any:
    """Statistics of column `id`, the table's own unless they name a partition or say not."""
    level = part_name is None if table_level is None else table_level
    return hms.ColumnStatistics(
        statsDesc=hms.ColumnStatisticsDesc(isTblLevel=level, dbName="db", tableName=table_name,
                                           partName=part_name),
        statsObj=[hms.ColumnStatisticsObj(colName=column, colType="bigint", statsData=hms.ColumnStatisticsData(
            longStats=hms.LongColumnStatsData(lowValue=0, highValue=high, numNulls=0, numDVs=3)))])


def _partition(day: str, stats: Any = None, write_id: int | None = None) -> Any:
    sd = thrift_table("t").sd
    return hms.Partition(values=[day], dbName="db", tableName="t", sd=sd, parameters={}, colStats=stats,
                         writeId=write_id)


async def _partition_highs(call: ThriftClient, names: list[str], snapshot: str | None = None) -> dict[str, int]:
    """Each named partition's `id` high value as get_partitions_statistics_req answers it (under `snapshot`)."""
    got = (await call("get_partitions_statistics_req", hms.PartitionsStatsRequest(
        dbName="db", tblName="t", colNames=["id"], partNames=names, engine="hive",
        validWriteIdList=snapshot))).partStats
    return {name: objs[0].statsData.longStats.highValue for name, objs in got.items()}


async def test_hive4_create_table_with_column_stats_writes_them_with_the_table(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        created = thrift_table("t")
        created.colStats = _stats(70, table_name="T")  # the table's names as a client spells them
        await call("create_table", created)
        got = (await call("get_table_req", hms.GetTableRequest(dbName="db", tblName="t", getColumnStats=True,
                                                               engine="hive"))).table
        assert (got.colStats.statsDesc.isTblLevel, got.colStats.statsDesc.tableName) == (True, "t")
        assert [(o.colName, o.statsData.longStats.highValue) for o in got.colStats.statsObj] == [("id", 70)]
        assert '"id":"true"' in got.parameters["COLUMN_STATS_ACCURATE"]  # marked, as Hive's write marks them
        (stats,) = (await call("get_table_statistics_req", hms.TableStatsRequest(
            dbName="db", tblName="t", colNames=["id"], engine="hive"))).tableStats
        assert stats.statsData.longStats.highValue == 70

        # Statistics that cannot be written refuse the create whole: no table is left behind.
        refused = [(_stats(1, table_name="other"), "names table db.other, not db.t2"),
                   (_stats(1, table_name="t2", column="nope"), "column nope is not a column of table db.t2"),
                   (_stats(1, table_name="t2", part_name="ds=1"), "are a partition's")]
        for bad, message in refused:
            table = thrift_table("t2")
            table.colStats = bad
            with pytest.raises(hms.InvalidObjectException, match=message):
                await call("create_table", table)
            assert await call("get_tables", "db", "t2") == []
        table = thrift_table("t2")
        table.colStats = hms.ColumnStatistics(statsDesc=hms.ColumnStatisticsDesc(isTblLevel=True, dbName="db",
                                                                                 tableName="t2"), statsObj=[])
        await call("create_table", table)  # none in them: the table alone, as Hive writes nothing for them
        assert "COLUMN_STATS_ACCURATE" not in (await call("get_table", "db", "t2")).parameters


async def test_hive4_add_partitions_with_column_stats_writes_each_with_its_partition(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["ds"]))
        answer = await call("add_partitions_req", hms.AddPartitionsRequest(
            dbName="db", tblName="t", ifNotExists=False, needResult=True,
            parts=[_partition("1", _stats(10, part_name="DS=1")), _partition("2"),
                   _partition("3", _stats(30, table_level=False))]))  # no partName: the one it comes with
        assert sorted(p.values[0] for p in answer.partitions) == ["1", "2", "3"]
        assert await _partition_highs(call, ["ds=1", "ds=2", "ds=3"]) == {"ds=1": 10, "ds=3": 30}
        (three,) = (await call("get_partitions_by_names_req", hms.GetPartitionsByNamesRequest(
            db_name="db", tbl_name="t", names=["ds=3"], get_col_stats=True, engine="hive"))).partitions
        assert [(o.colName, o.statsData.longStats.highValue) for o in three.colStats.statsObj] == [("id", 30)]

        # As Hive's: with ifNotExists, the statistics of a partition already there are written too.
        await call("add_partitions_req", hms.AddPartitionsRequest(
            dbName="db", tblName="t", ifNotExists=True, needResult=False,
            parts=[_partition("2", _stats(20, part_name="ds=2")), _partition("4", _stats(40, part_name="ds=4"))]))
        assert await _partition_highs(call, ["ds=2", "ds=4"]) == {"ds=2": 20, "ds=4": 40}

        refused = [(_partition("5", _stats(1, part_name="ds=6")), "name partition 'ds=6', not ds=5"),
                   (_partition("5", _stats(1)), "the table's own"),  # isTblLevel
                   (_partition("5", _stats(1, part_name="ds=5", column="nope")), "column nope is not a column")]
        for bad, message in refused:
            with pytest.raises(hms.InvalidObjectException, match=message):
                await call("add_partitions", [_partition("7", _stats(7, part_name="ds=7")), bad])
            assert await call("get_partition_names", "db", "t", -1) == ["ds=1", "ds=2", "ds=3", "ds=4"]
        assert await _partition_highs(call, ["ds=5", "ds=7"]) == {}


async def test_hive4_add_partitions_with_column_stats_under_a_txn_shows_them_at_its_commit(pg_dsn: str) -> None:
    """A transactional table's statistics sent with it are written at once (Hive 4 writes them under a
    write-id list of the one write id the table carries, valid by construction); its partitions' added
    under the txn of their write id are that txn's, seen by its own snapshot at once and by other readers
    once it commits."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        created = thrift_table("t", keys=["ds"], transactional="true", transactional_properties="insert_only")
        created.colStats, created.writeId = _stats(5), 1  # the source's write id: no txn of it here
        await call("create_table", created)

        async def snapshot_of(txn: int) -> str:
            txns = hive_txn_list(await call("get_open_txns_req", hms.GetOpenTxnsRequest(excludeTxnTypes=[2])), txn)
            (ids,) = (await call("get_valid_write_ids", hms.GetValidWriteIdsRequest(
                fullTableNames=["db.t"], validTxnList=txns))).tblValidWriteIds
            return hive_write_id_list(ids)

        everyone = await snapshot_of(0)
        (table_stats,) = (await call("get_table_statistics_req", hms.TableStatsRequest(
            dbName="db", tblName="t", colNames=["id"], engine="hive", validWriteIdList=everyone))).tableStats
        assert table_stats.statsData.longStats.highValue == 5  # written at once, seen by every snapshot
        (txn,) = (await call("open_txns", hms.OpenTxnRequest(num_txns=1, user="hive", hostname="hs2"))).txn_ids
        (allocated,) = (await call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="db", tableName="t", txnIds=[txn]))).txnToWriteIds
        stats = _stats(10, part_name="ds=1")
        await call("add_partitions", [_partition("1", stats, write_id=allocated.writeId)])
        assert await _partition_highs(call, ["ds=1"], await snapshot_of(txn)) == {"ds=1": 10}
        assert await _partition_highs(call, ["ds=1"], await snapshot_of(0)) == {}
        await call("commit_txn", hms.CommitTxnRequest(txnid=txn))
        assert await _partition_highs(call, ["ds=1"], await snapshot_of(0)) == {"ds=1": 10}
