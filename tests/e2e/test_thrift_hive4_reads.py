"""Hive 4's read-side calls on its ordinary statements (SHOW TABLES, partition pruning), in the shapes
its HiveMetaStoreClient sends them (standalone-metastore/metastore-common/.../HiveMetaStoreClient.java)."""

from __future__ import annotations


import pytest

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
        request = hms.GetTablesRequest(dbName="nodb", tablesPattern=".*")
        assert (await call("get_table_objects_by_name_req", request)).tables == []
