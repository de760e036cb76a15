"""Hive 4's read-side calls on its ordinary statements (SHOW TABLES, partition pruning), in the shapes
its HiveMetaStoreClient sends them (standalone-metastore/metastore-common/.../HiveMetaStoreClient.java)."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from pathlib import Path

import pytest
import thriftpy2
import thriftpy2.rpc
from thriftpy2.thrift import TApplicationException

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import client_with_database, thrift_table


async def test_hive4_show_tables_lists_with_get_table_objects_by_name_req(pg_dsn: str) -> None:
    """Hive 4's SHOW TABLES [LIKE p]: HiveMetaStoreClient.getTables(cat, db, pattern) sends
    get_table_objects_by_name_req with tablesPattern (`.*` without LIKE), no tblNames and a projection;
    Hive's ObjectStore matches the pattern as get_tables' (`*` made `.*`, then JDO's matches run as SQL
    LIKE: `.*` and `*` any run, `.` one character)."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        for name in ("t1", "t2", "other"):
            await call("create_table", thrift_table(name))

        async def show(pattern: str | None, names: list[str] | None = None) -> list[str]:
            request = hms.GetTablesRequest(
                dbName="db", catName="hive", tblNames=names, tablesPattern=pattern,
                processorIdentifier="HMSClient-@h",
                projectionSpec=hms.GetProjectionsSpec(fieldList=["dbName", "tableName", "owner", "ownerType"]))
            return sorted(t.tableName for t in (await call("get_table_objects_by_name_req", request)).tables)

        assert await show(".*") == ["other", "t1", "t2"]
        assert await show("t*") == ["t1", "t2"]
        assert await show("T.|oth*") == ["other", "t1", "t2"]  # `.` one character, `|` alternatives
        assert await show("t.*", ["t1", "other", "nope"]) == ["t1"]  # both: the named tables that match
        assert await show(".*", []) == []
        assert await show(None, ["t2"]) == ["t2"]  # the older form, names only
        assert await call("get_tables", "@hive#db", ".*") == ["other", "t1", "t2"]  # Hive 4.0's get_tables path
        assert await call("get_tables", "db", "t_") == []  # `_` is itself
        with pytest.raises(hms.InvalidOperationException, match="cannot find null tables"):
            await show(None)
        with pytest.raises(hms.UnknownDBException, match="catalog 'spark' does not exist"):
            await call("get_table_objects_by_name_req", hms.GetTablesRequest(dbName="db", catName="spark",
                                                                              tablesPattern=".*"))
        # A database that does not exist: UnknownDBException, as Hive 4's ObjectStore.getTableObjectsByName
        # answers when it finds no table (it then looks the database up), and Hive 2.3's HMSHandler
        request = hms.GetTablesRequest(dbName="nodb", tablesPattern=".*")
        with pytest.raises(hms.UnknownDBException, match="nodb does not exist"):
            await call("get_table_objects_by_name_req", request)


_HIVE4_EXPR_CALLS = """
struct PartitionsByExprRequest {
  1: required string dbName, 2: required string tblName, 3: required binary expr,
  4: optional string defaultPartitionName, 5: optional i16 maxParts = -1, 6: optional string catName,
  7: optional string order, 8: optional string validWriteIdList, 9: optional i64 id = -1
}
exception MetaException { 1: string message }
exception NoSuchObjectException { 1: string message }
service ThriftHiveMetastore {
  bool get_partitions_by_expr(1: PartitionsByExprRequest req) throws (1: MetaException o1),
  bool get_partitions_spec_by_expr(1: PartitionsByExprRequest req) throws (1: MetaException o1),
}
"""


async def test_hive4_partition_pruning_falls_back_to_names_when_the_expression_is_not_served(
        pg_dsn: str, tmp_path: Path) -> None:
    """Hive's PartitionPruner sends the filter as a Kryo-serialized expression: Hive 4's
    Hive.getPartitionsByExpr -> HiveMetaStoreClient.listPartitionsSpecByExpr (get_partitions_spec_by_expr;
    older clients listPartitionsByExpr, get_partitions_by_expr), which turn TApplicationException
    UNKNOWN_METHOD, and only it, into IncompatibleMetastoreException; PartitionPruner.getPartitionsFromServer
    catches that and prunes client-side (pruneBySequentialScan): the partition names, then the
    partitions by name. The gateway cannot read Kryo, so it answers UNKNOWN_METHOD (any other answer
    would fail the query), then serves the fallback's calls."""
    idl = tmp_path / "hive4_expr.thrift"
    idl.write_text(_HIVE4_EXPR_CALLS)
    expr_idl = thriftpy2.load(str(idl), module_name="hive4_expr_thrift")
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["ds"]))
        await call("add_partitions", [hms.Partition(values=[d], dbName="db", tableName="t", parameters={})
                                      for d in ("a", "b")])
        raw = thriftpy2.rpc.make_client(expr_idl.ThriftHiveMetastore, "127.0.0.1", gw.thrift_port, timeout=30_000)
        try:
            request = expr_idl.PartitionsByExprRequest(dbName="db", tblName="t", expr=b"\x01kryo",
                                                      defaultPartitionName="__HIVE_DEFAULT_PARTITION__",
                                                      catName="hive", id=-1)
            for method in ("get_partitions_spec_by_expr", "get_partitions_by_expr"):
                with pytest.raises(TApplicationException) as caught:
                    await asyncio.to_thread(getattr(raw, method), request)  # the gateway runs on this loop
                assert caught.value.type == TApplicationException.UNKNOWN_METHOD
        finally:
            raw.close()
        names = await call("get_partition_names", "@hive#db", "t", -1)
        assert names == ["ds=a", "ds=b"]
        got = await call("get_partitions_by_names_req", hms.GetPartitionsByNamesRequest(
            db_name="@hive#db", tbl_name="t", names=names[1:]))
        assert [p.values for p in got.partitions] == [["b"]]


async def test_hive4_show_partitions_lists_names_with_fetch_partition_names_req(pg_dsn: str) -> None:
    """A plain SHOW PARTITIONS (no WHERE, no ORDER BY: ShowPartitionsOperation) asks
    Hive.getPartitionNames(db, t, limit) -> HiveMetaStoreClient.listPartitionNames(cat, db, t, max).
    Hive 4.0's client sends get_partition_names('@hive#db', t, max) (Hive.getPartitionNames sends
    get_partition_names_ps_req with its snapshot for a transactional table); the clients after HIVE-26537
    send fetch_partition_names_req(PartitionsRequest{dbName, tblName, catName, maxParts}) instead, with no
    fallback. The WHERE and ORDER BY forms go by get_partition_names_req (the test below). maxParts 0
    answers no name, as Hive 4 answers it
    (HMSHandler.fetch_partition_names_req -> RawStore.listPartitionNames -> ObjectStore.getPartitionNamesNoTxn,
    which returns none for max 0; Hive 2.3, which has no fetch_partition_names_req, answers every name to
    get_partition_names(0), and still does here)."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["ds"]))
        await call("add_partitions", [hms.Partition(values=[d], dbName="db", tableName="t", parameters={})
                                      for d in ("a", "b", "c")])

        async def fetch(max_parts: int, cat: str | None = "hive", table: str = "t") -> list[str]:
            return await call("fetch_partition_names_req", hms.PartitionsRequest(
                catName=cat, dbName="db", tblName=table, maxParts=max_parts))

        assert await fetch(-1) == ["ds=a", "ds=b", "ds=c"]
        assert await fetch(2) == ["ds=a", "ds=b"]
        # None for 0 (Hive 4's ObjectStore.getPartitionNamesNoTxn); Hive 2.3's get_partition_names answers all.
        assert await fetch(0) == []
        assert await call("get_partition_names", "@hive#db", "t", 0) == ["ds=a", "ds=b", "ds=c"]
        with pytest.raises(hms.NoSuchObjectException, match="db.nope does not exist"):
            await fetch(0, table="nope")
        assert await fetch(-1, cat=None) == ["ds=a", "ds=b", "ds=c"]
        with pytest.raises(hms.NoSuchObjectException, match="db.nope does not exist"):
            await fetch(-1, table="nope")
        assert await call("get_partition_names", "@hive#db", "t", -1) == ["ds=a", "ds=b", "ds=c"]  # Hive 4.0
        with pytest.raises(hms.NoSuchObjectException, match="catalog 'spark' does not exist"):
            await fetch(-1, cat="spark")


async def test_hive4_show_partitions_with_order_by_where_and_limit_by_get_partition_names_req(pg_dsn: str) -> None:
    """SHOW PARTITIONS t [WHERE ...] [ORDER BY ...] [LIMIT n] with a WHERE or an ORDER BY: Hive 4's
    Hive.getPartitionNames(Table, expr, order, maxParts) sends get_partition_names_req, expr one byte -1
    without a WHERE, order `positions:signs`; Hive's metastore filters, sorts (integral keys as numbers,
    the default partition as NULL: last ascending, first descending) and cuts after the sort. A WHERE in
    Hive 2.3's layout is served; one in another (Hive 4 writes Kryo 5) is refused, saying so."""
    goldens = {name: bytes.fromhex(text) for name, text in json.loads(
        (Path(__file__).parent / "hive_expr_goldens.json").read_text()).items()}
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        table = thrift_table("t")
        table.partitionKeys = [hms.FieldSchema(name="ds", type="string", comment=""),
                               hms.FieldSchema(name="hr", type="int", comment="")]
        await call("create_table", table)
        rows = [("a", "1"), ("a", "10"), ("a", "9"), ("b", "2"), ("a", "__HIVE_DEFAULT_PARTITION__")]
        await call("add_partitions", [hms.Partition(values=list(r), dbName="db", tableName="t", parameters={})
                                      for r in rows])

        async def show(order: str | None = None, expr: bytes = b"\xff", max_parts: int = -1,
                       table_name: str = "t") -> list[str]:
            return await call("get_partition_names_req", hms.PartitionsByExprRequest(
                dbName="db", tblName=table_name, expr=expr, defaultPartitionName="__HIVE_DEFAULT_PARTITION__",
                maxParts=max_parts, catName="hive", order=order))

        default = "hr=__HIVE_DEFAULT_PARTITION__"
        assert await show("1:+") == ["ds=a/hr=1", "ds=b/hr=2", "ds=a/hr=9", "ds=a/hr=10", f"ds=a/{default}"]
        assert await show("0,1:-+", max_parts=3) == ["ds=b/hr=2", "ds=a/hr=1", "ds=a/hr=9"]
        assert await show() == sorted(f"ds={d}/hr={h}" for d, h in rows)  # no order: by name
        assert await show("1:-", expr=goldens["ds_is_a"]) == [f"ds=a/{default}", "ds=a/hr=10", "ds=a/hr=9",
                                                               "ds=a/hr=1"]
        assert await show("1:+", expr=goldens["hr_gt_1"], max_parts=2) == ["ds=b/hr=2", "ds=a/hr=9"]
        assert await show("1:+", max_parts=0) == []
        with pytest.raises(hms.MetaException, match="reads Hive 2.3's serialized expressions only"):
            await show("1:+", expr=b"\x01\x00kryo5")
        with pytest.raises(hms.MetaException, match="not one of the table's 2 partition keys"):
            await show("2:+")
        with pytest.raises(hms.NoSuchObjectException, match="db.nope does not exist"):
            await show("0:+", table_name="nope")


_HIVE4_GET_TABLE = """
struct ClientCapabilities { 1: required list<i32> values }
struct GetTableRequest {
  1: required string dbName, 2: required string tblName, 3: optional ClientCapabilities capabilities,
  4: optional string catName, 6: optional string validWriteIdList, 7: optional bool getColumnStats,
  8: optional list<string> processorCapabilities, 9: optional string processorIdentifier,
  10: optional string engine = "hive", 11: optional i64 id = -1
}
struct Table { 1: string tableName, 2: string dbName }
struct GetTableResult { 1: required Table table, 2: optional bool isStatsCompliant }
exception MetaException { 1: string message }
exception NoSuchObjectException { 1: string message }
service ThriftHiveMetastore {
  GetTableResult get_table_req(1: GetTableRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
}
"""


async def test_hive4_describe_reads_the_table_with_fields_the_idl_does_not_declare(
        pg_dsn: str, tmp_path: Path) -> None:
    """Test only. DESCRIBE [EXTENDED|FORMATTED] (DescTableOperation.getTable) reads the table through
    Hive.getTable(db, t, metaRef, false, false, getColumnStats=false) -> HiveMetaStoreClient.getTable
    (GetTableRequest), which also sets processorCapabilities (8) and processorIdentifier (9) and, with
    getColumnStats, engine (10): the gateway reads getColumnStats only. Its answer's Table may hold
    fields this client's IDL does not declare (colStats), which its decoder skips."""
    idl = tmp_path / "hive4_get_table.thrift"
    idl.write_text(_HIVE4_GET_TABLE)
    side = thriftpy2.load(str(idl), module_name="hive4_get_table_thrift")
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["ds"]))
        raw = thriftpy2.rpc.make_client(side.ThriftHiveMetastore, "127.0.0.1", gw.thrift_port, timeout=30_000)
        try:
            for stats in (False, True):
                request = side.GetTableRequest(
                    dbName="db", tblName="t", catName="hive", capabilities=side.ClientCapabilities(values=[1]),
                    getColumnStats=stats, processorCapabilities=["HIVEMANAGEDINSERTWRITE", "EXTWRITE"],
                    processorIdentifier="HMSClient-@h", engine="hive")
                got = await asyncio.to_thread(raw.get_table_req, request)  # the gateway runs on this loop
                assert (got.table.dbName, got.table.tableName) == ("db", "t")
        finally:
            raw.close()


async def test_hive4_get_table_req_answers_the_column_statistics_when_asked(pg_dsn: str) -> None:
    """HiveMetaStoreClient.getTable(db, t, getColumnStats=true, engine) (Hive's TestStats checks it so):
    the statistics of the columns the table's COLUMN_STATS_ACCURATE names go in Table.colStats, and
    none are sent when not asked for or when there are none."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t"))

        async def col_stats(asked: bool = True) -> Any:
            return (await call("get_table_req", hms.GetTableRequest(
                dbName="db", tblName="t", getColumnStats=asked, engine="hive"))).table.colStats

        assert await col_stats() is None
        await call("update_table_column_statistics", hms.ColumnStatistics(
            statsDesc=hms.ColumnStatisticsDesc(isTblLevel=True, dbName="db", tableName="t"),
            statsObj=[hms.ColumnStatisticsObj(colName="id", colType="bigint", statsData=hms.ColumnStatisticsData(
                longStats=hms.LongColumnStatsData(lowValue=-3, highValue=70, numNulls=1, numDVs=12)))]))
        got = await col_stats()
        assert (got.statsDesc.isTblLevel, got.statsDesc.dbName, got.statsDesc.tableName) == (True, "db", "t")
        assert got.statsDesc.lastAnalyzed > 0
        (obj,) = got.statsObj
        assert (obj.colName, obj.colType, obj.statsData.longStats) == ("id", "bigint", hms.LongColumnStatsData(
            lowValue=-3, highValue=70, numNulls=1, numDVs=12))
        assert await col_stats(asked=False) is None
        await call("delete_table_column_statistics", "db", "t", "id")
        assert await col_stats() is None


async def test_hive4_get_partitions_by_names_req_answers_each_partitions_column_statistics_when_asked(
        pg_dsn: str) -> None:
    """GetPartitionsByNamesRequest.get_col_stats (Hive's TestStats reads each partition so): each
    partition's statistics of the columns its own COLUMN_STATS_ACCURATE names go in its colStats; one
    without any, and every one when not asked, has none."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["ds"]))
        for day in ("1", "2", "3"):
            await call("append_partition", "db", "t", [day])
        for day, high in (("1", 10), ("3", 30)):
            await call("update_partition_column_statistics", hms.ColumnStatistics(
                statsDesc=hms.ColumnStatisticsDesc(isTblLevel=False, dbName="db", tableName="t", partName=f"ds={day}"),
                statsObj=[hms.ColumnStatisticsObj(colName="id", colType="bigint", statsData=hms.ColumnStatisticsData(
                    longStats=hms.LongColumnStatsData(lowValue=0, highValue=high, numNulls=0, numDVs=3)))]))
        unmarked = await call("get_partition", "db", "t", ["3"])  # its statistics stay, no longer marked
        unmarked.parameters = {k: v for k, v in unmarked.parameters.items() if k != "COLUMN_STATS_ACCURATE"}
        await call("alter_partition", "db", "t", unmarked)

        async def col_stats(asked: bool = True) -> list[Any]:
            got = (await call("get_partitions_by_names_req", hms.GetPartitionsByNamesRequest(
                db_name="db", tbl_name="t", names=["ds=3", "ds=2", "ds=1"], get_col_stats=asked,
                engine="hive"))).partitions
            return [p.colStats for p in sorted(got, key=lambda p: p.values, reverse=True)]

        three, two, one = await col_stats()
        assert (three, two) == (None, None)
        assert (one.statsDesc.isTblLevel, one.statsDesc.tableName, one.statsDesc.partName) == (False, "t", "ds=1")
        assert [(o.colName, o.statsData.longStats.highValue) for o in one.statsObj] == [("id", 10)]
        assert await col_stats(asked=False) == [None, None, None]


async def test_hive4s_materialized_view_rewriting_finds_none_as_none_can_be_created(pg_dsn: str) -> None:
    """Hive 4's planner asks for the materialized views it could rewrite a query with (its registry loads
    them all at start; the planner asks per database): this metastore refuses to create one, so it
    answers none, with tables and views of other types in place."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t"))
        view = thrift_table("v", table_type="VIRTUAL_VIEW")
        view.viewOriginalText = view.viewExpandedText = "select id from db.t"
        await call("create_table", view)
        materialized = thrift_table("mv", table_type="MATERIALIZED_VIEW")
        with pytest.raises(hms.InvalidObjectException, match="MATERIALIZED_VIEW"):
            await call("create_table", materialized)
        assert await call("get_materialized_views_for_rewriting", "@hive#db") == []
        assert await call("get_materialized_views_for_rewriting", "nodb") == []
        assert await call("get_all_materialized_view_objects_for_rewriting") == []
        assert sorted(await call("get_all_tables", "db")) == ["t", "v"]


async def test_hive4s_msck_reads_partitions_with_get_partitions_with_specs(pg_dsn: str) -> None:
    """Hive 4's MSCK REPAIR TABLE (HiveMetaStoreChecker.checkMetastore) lists the partition names, then reads
    them in batches with get_partitions_with_specs BY_NAMES and a projection (sd.location, createTime,
    values); MetaStoreServerUtils.getPartitionsByProjectSpec reads each PartitionSpec's partitions. Each
    partition comes whole, as get_partitions_by_names answers it; BY_VALUES and BY_EXPR select as the
    older calls; no filters, every partition; a table without partitions, no PartitionSpec."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["ds", "hr"]))
        await call("create_table", thrift_table("empty", keys=["ds"]))
        rows = [("a", "1"), ("a", "2"), ("b", "1")]
        await call("add_partitions", [hms.Partition(values=list(r), dbName="db", tableName="t", parameters={})
                                      for r in rows])
        projection = hms.GetProjectionsSpec(fieldList=["sd.location", "createTime", "values"])

        async def with_specs(mode: int | None, filters: list[str] | None, table: str = "t") -> list[Any]:
            response = await call("get_partitions_with_specs", hms.GetPartitionsRequest(
                catName="hive", dbName="db", tblName=table, projectionSpec=projection,
                filterSpec=hms.GetPartitionsFilterSpec(filterMode=mode, filters=filters)))
            return response.partitionSpec

        (spec,) = await with_specs(0, ["ds=b/hr=1", "ds=a/hr=1"])
        location = (await call("get_table", "db", "t")).sd.location
        assert (spec.dbName, spec.tableName, spec.rootPath, spec.catName) == ("db", "t", location, "hive")
        by_names = await call("get_partitions_by_names", "db", "t", ["ds=a/hr=1", "ds=b/hr=1"])
        assert spec.partitionList.partitions == by_names
        assert [p.values for p in (await with_specs(None, None))[0].partitionList.partitions] == [list(r) for r in rows]
        assert [p.values for p in (await with_specs(1, ["a"]))[0].partitionList.partitions] == [["a", "1"], ["a", "2"]]
        (by_expr,) = await with_specs(2, ["ds = \"a\"", "hr = \"2\""])
        assert [p.values for p in by_expr.partitionList.partitions] == [["a", "2"]]
        assert await with_specs(0, ["ds=c/hr=9"]) == [] and await with_specs(None, [], "empty") == []
        with pytest.raises(hms.MetaException, match="filterMode 7"):
            await with_specs(7, ["x"])
        with pytest.raises(hms.MetaException, match="db.nope does not exist"):
            await with_specs(None, None, "nope")
