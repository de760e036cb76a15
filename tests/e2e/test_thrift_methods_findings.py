"""Differences from Hive Metastore 2.3.10 that tests/e2e/test_thrift_methods_differential.py and
tests/e2e/test_thrift_call_forms_differential.py found, each pinned here on the gateway alone (Hive's answers,
checked against the real one, written in): the same calls answer as Hive's do."""

from __future__ import annotations

from typing import AsyncIterator

import pytest
from hmsclient.genthrift.hive_metastore import ttypes as ht

from tests.e2e.test_thrift_api import Thrift, _table, thrift_with_database


@pytest.fixture
async def hms(pg_dsn: str) -> AsyncIterator[Thrift]:
    async with thrift_with_database(pg_dsn) as thrift:
        await thrift.call("create_table", _table("db", "t"))
        yield thrift


async def test_an_empty_name_pattern_lists_nothing(hms: Thrift) -> None:
    """Hive matches '' as a pattern, which no name matches; an unset pattern is every name."""
    await hms.call("create_function", ht.Function("f", "db", "com.example.F", "alice", ht.PrincipalType.USER, 0,
                                                  ht.FunctionType.JAVA, []))
    assert await hms.call("get_databases", "") == []
    assert await hms.call("get_tables", "db", "") == []
    assert await hms.call("get_tables_by_type", "db", "", "MANAGED_TABLE") == []
    assert await hms.call("get_table_meta", "", "*", None) == []
    assert await hms.call("get_table_meta", "db", "", None) == []
    assert await hms.call("get_functions", "db", "") == []
    # the same calls with `*` find them
    assert "db" in await hms.call("get_databases", "*")
    assert await hms.call("get_tables", "db", "*") == ["t"]
    assert await hms.call("get_tables_by_type", "db", "*", "MANAGED_TABLE") == ["t"]
    assert [m.tableName for m in await hms.call("get_table_meta", "db", "*", None)] == ["t"]
    assert await hms.call("get_functions", "db", "*") == ["f"]


async def test_the_fields_of_an_empty_table_name_are_an_unknown_table(hms: Thrift) -> None:
    """Hive looks the empty name up as any other: UnknownTableException, not MetaException."""
    for method in ("get_fields", "get_schema"):
        await hms.raises(ht.UnknownTableException, method, "db", "")
        await hms.raises(ht.UnknownTableException, method, "", "t")
        await hms.raises(ht.UnknownTableException, f"{method}_with_environment_context", "db", "", None)


async def test_an_empty_table_name_names_no_table(hms: Thrift) -> None:
    """Found by test_thrift_call_forms_differential.py: Hive looks an empty database or table name up as any
    other, so get_table and get_table_req answer NoSuchObjectException (not MetaException), and the batch reads
    leave the empty name out as a missing one (the plain form failed with an internal error, the request form
    with InvalidOperationException)."""
    for db, table in (("db", ""), ("", "t")):
        await hms.raises(ht.NoSuchObjectException, "get_table", db, table)
        await hms.raises(ht.NoSuchObjectException, "get_table_req", ht.GetTableRequest(db, table, None))
    assert [t.tableName for t in await hms.call("get_table_objects_by_name", "db", ["t", ""])] == ["t"]
    got = await hms.call("get_table_objects_by_name_req", ht.GetTablesRequest("db", ["t", ""], None))
    assert [t.tableName for t in got.tables] == ["t"]


async def test_the_tables_by_request_of_a_missing_database_are_an_unknown_database(hms: Thrift) -> None:
    """Found by test_thrift_call_forms_differential.py: get_table_objects_by_name_req of a database that does
    not exist, or of an empty name, is UnknownDBException in Hive 2.3 and 4 (both check the database); it
    answered no tables. The plain form keeps answering none (Hive's declares no exception: its client gets
    no result)."""
    for db in ("nope", ""):
        await hms.raises(ht.UnknownDBException, "get_table_objects_by_name_req", ht.GetTablesRequest(db, ["t"], None))
    assert await hms.call("get_table_objects_by_name", "nope", ["t"]) == []
    # Hive checks the names first: an unset list is InvalidOperationException, an empty one no tables, as
    # its store is then asked nothing (Hive 2.3's and 4's HMSHandler)
    await hms.raises(ht.InvalidOperationException, "get_table_objects_by_name_req", ht.GetTablesRequest("nope", None))
    assert (await hms.call("get_table_objects_by_name_req", ht.GetTablesRequest("nope", [], None))).tables == []
