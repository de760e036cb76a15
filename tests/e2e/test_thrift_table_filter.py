"""get_table_names_by_filter over Thrift (hive/table_filter.py, store/catalog.py): Trino lists a schema's
views with it. Hive 2.3.10's answers call by call are compared in tests/e2e/test_thrift_differential.py
(LISTING_STEPS); here, what that comparison cannot show: a change made on one gateway selected on another
at once, refusals that say why, and LIKE over values with line ends as Hive 2.3.10 matches it."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest
from thriftpy2.thrift import TException

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database, thrift_table

VIEW_FLAG = 'hive_filter_field_params__presto_view = "true"'


@pytest.fixture
async def two_gateways(pg_dsn: str) -> AsyncIterator[tuple[ThriftClient, ThriftClient]]:
    async with running_gateway(pg_dsn) as first, running_gateway(pg_dsn) as second, \
            client_with_database(first.thrift_port) as a:
        b = ThriftClient(second.thrift_port)
        try:
            yield a, b
        finally:
            b.close()


async def _refused(client: ThriftClient, *args: Any) -> Any:
    with pytest.raises(TException) as caught:
        await client("get_table_names_by_filter", *args)
    return caught.value


async def test_views_trino_lists_follow_each_write_on_every_gateway(
        two_gateways: tuple[ThriftClient, ThriftClient]) -> None:
    a, b = two_gateways
    await a("create_table", thrift_table("v1", presto_view="true"))
    await a("create_table", thrift_table("plain"))
    await a("create_database", hms.Database(name="other", description="", parameters={}))
    other = thrift_table("v_elsewhere", presto_view="true")
    other.dbName = "other"
    await a("create_table", other)
    assert await b("get_table_names_by_filter", "db", VIEW_FLAG, -1) == ["v1"]

    plain = await a("get_table", "db", "plain")
    plain.parameters["presto_view"] = "true"
    await a("alter_table", "db", "plain", plain)  # becomes a view
    assert await b("get_table_names_by_filter", "db", VIEW_FLAG, -1) == ["plain", "v1"]
    await a("drop_table", "db", "v1", True)
    assert await b("get_table_names_by_filter", "db", VIEW_FLAG, -1) == ["plain"]

    renamed = await a("get_table", "db", "plain")
    renamed.tableName = "listed_after_rename"  # a directory no other test makes
    await a("alter_table", "db", "plain", renamed)
    assert await b("get_table_names_by_filter", "db", 'hive_filter_field_params__presto_view LIKE "true"', -1) == [
        "listed_after_rename"]
    assert await b("get_table_names_by_filter", "other", VIEW_FLAG, -1) == ["v_elsewhere"]


async def test_bad_filters_are_refused_saying_why_and_the_connection_serves_on(
        two_gateways: tuple[ThriftClient, ThriftClient]) -> None:
    a, _ = two_gateways
    await a("create_table", thrift_table("t", owner="a" * 80 + "!"))
    for bad, why in [
        ("hive_filter_field_params__k = 1.5", "a number in a table filter is a whole number"),
        ('hive_filter_field_params__k > "5"', "a table parameter takes =, <>, != or LIKE only"),
        ('hive_filter_field_last_access__ LIKE "5"', "LIKE does not apply to hive_filter_field_last_access__"),
        ('owner = "alice"', "unknown field 'owner'"),
        ("hive_filter_field_owner__ = ", "expected a value"),
    ]:
        refused = await _refused(a, "db", bad, -1)
        assert type(refused).__name__ == "MetaException" and why in refused.message, (bad, refused)
        assert "position" in refused.message
    refused = await _refused(a, "db", None, -1)
    assert type(refused).__name__ == "MetaException" and "filter is required" in refused.message
    refused = await _refused(a, "", VIEW_FLAG, -1)
    assert type(refused).__name__ == "UnknownDBException"
    # Regular expression syntax is itself in Hive's LIKE, so no pattern costs a regular expression engine time.
    assert await a("get_table_names_by_filter", "db", 'hive_filter_field_owner__ LIKE "(a*)*!"', -1) == []
    assert await a("get_table_names_by_filter", "db", 'hive_filter_field_owner__ LIKE "a.*!"', -1) == ["t"]
    assert await a("get_all_tables", "db") == ["t"]


async def test_parameters_and_owners_by_like_as_hive_2_3_matches_them(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as client:
        await client("create_table", thrift_table("upper", owner="Alice", Mode="Batch"))
        await client("create_table", thrift_table("lower", owner="alice", mode="batch\nstream"))
        got = [
            await client("get_table_names_by_filter", "db", text, -1) for text in (
                'hive_filter_field_owner__ LIKE "(?i)ALICE"',
                'hive_filter_field_params__Mode = "Batch"',  # parameter keys keep their case
                'hive_filter_field_params__mode LIKE "batch.*"',  # `.*` runs over line ends, as Hive's LIKE
                'hive_filter_field_params__mode LIKE "batch.stream"',
                'hive_filter_field_params__mode LIKE "batch"',  # the whole value, not a part of it
                'hive_filter_field_owner__ LIKE "[aA]lice"',  # brackets are themselves
                'hive_filter_field_owner__ in ("Alice", "bob")',
                'hive_filter_field_owner__ = "Alice" or hive_filter_field_params__mode = "x"',  # upper has no mode
            )]
        assert got == [["lower", "upper"], ["upper"], ["lower"], ["lower"], [], [], ["upper"], []]
