"""Listing tables over Thrift whatever a database holds: get_tables_by_type and get_table_meta (Spark's
and Trino's view listings, Hive JDBC's getTables) are one statement each, not a fetch of every table's
definition, so a database with more tables than one batch may name still lists. The answers call by
call against Hive 2.3.10 are in tests/e2e/test_thrift_differential.py (LISTING_STEPS)."""

from __future__ import annotations

from typing import AsyncIterator

import pytest
from thriftpy2.thrift import TException

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database, thrift_table

BATCH = 3  # metastore.gateway.max.batch.size: fewer than the tables below


@pytest.fixture
async def client(pg_dsn: str) -> AsyncIterator[ThriftClient]:
    async with running_gateway(pg_dsn, **{"metastore.gateway.max.batch.size": str(BATCH)}) as gw, \
            client_with_database(gw.thrift_port) as c:
        yield c


async def test_more_tables_than_a_batch_list_by_type_and_as_table_meta(client: ThriftClient) -> None:
    await client("create_database", hms.Database(name="other", description="", parameters={}))
    for i in range(5):
        await client("create_table", thrift_table(f"m{i}", comment=f"managed {i}"))
        await client("create_table", thrift_table(f"e{i}", table_type="EXTERNAL_TABLE", EXTERNAL="TRUE"))
    await client("create_table", thrift_table("o1", db="other"))
    await client("drop_table", "db", "m4", True)

    assert await client("get_tables_by_type", "db", "*", "MANAGED_TABLE") == ["m0", "m1", "m2", "m3"]
    assert await client("get_tables_by_type", "db", "e*", "EXTERNAL_TABLE") == [f"e{i}" for i in range(5)]
    assert await client("get_tables_by_type", "db", "*", "MATERIALIZED_VIEW") == []
    assert await client("get_tables_by_type", "db", "*", "VIRTUAL_VIEW") == []

    metas = await client("get_table_meta", "*", "*", ["MANAGED_TABLE"])
    assert [(m.dbName, m.tableName, m.tableType, m.comments) for m in metas] == [
        ("db", f"m{i}", "MANAGED_TABLE", f"managed {i}") for i in range(4)] + [
        ("other", "o1", "MANAGED_TABLE", None)]
    metas = await client("get_table_meta", "d*", "e1|m0", [])
    assert [(m.tableName, m.tableType) for m in metas] == [("e1", "EXTERNAL_TABLE"), ("m0", "MANAGED_TABLE")]
    assert await client("get_table_meta", "nowhere", "*", []) == []

    # Fetching the definitions themselves is what the batch bounds.
    with pytest.raises(TException, match="max.batch.size"):
        await client("get_table_objects_by_name", "db", ["m0", "m1", "m2", "m3"])


async def test_a_type_hive_does_not_have_is_refused_and_a_missing_database_has_no_tables(
        client: ThriftClient) -> None:
    await client("create_table", thrift_table("t"))
    for wrong in ("managed_table", "", "TABLE"):  # Hive's TableType.valueOf: exact names only
        with pytest.raises(TException, match="not one of Hive's table types: EXTERNAL_TABLE, INDEX_TABLE"):
            await client("get_tables_by_type", "db", "*", wrong)
    assert await client("get_tables_by_type", "nowhere", "*", "MANAGED_TABLE") == []
    assert await client("get_tables", "nowhere", "*") == []
    assert await client("get_all_tables", "nowhere") == []
