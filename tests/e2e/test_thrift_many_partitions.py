"""A table with more partitions than one batch (metastore.gateway.max.batch.size, the bound on what a
request may name) lists whole over Thrift: Spark reads every partition of a table it cannot prune with
get_partitions(-1), and Trino and Hive list a partial specification with the `_ps` calls, so an answer
cut at the batch size would be a query missing rows. Hive's own bound is
hive.metastore.limit.partition.request, refused with Hive's MetaException, never a shorter answer; which
calls it holds is Hive 2.3.10's rule (probed: get_partitions, get_partitions_with_auth and
get_partitions_by_filter, by max_parts when given, else by what matched; not the names, the `_ps` calls
or get_partitions_by_names)."""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator

import asyncpg
import pytest
from thriftpy2.thrift import TException

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database, thrift_table

DAYS = [f"2024-01-{d:02d}" for d in range(1, 5)]
HOURS = ["00", "06", "12"]
ALL_NAMES = [f"ds={d}/hr={h}" for d in DAYS for h in HOURS]  # 12, four batches of 3


@contextlib.asynccontextmanager
async def _client(pg_dsn: str, **conf: str) -> AsyncIterator[ThriftClient]:
    async with running_gateway(pg_dsn, **{"metastore.gateway.max.batch.size": "3", **conf}) as gw, \
            client_with_database(gw.thrift_port) as client:
        await client("create_table", thrift_table("t", keys=("ds", "hr")))
        for day in DAYS:
            for hour in HOURS:
                await client("append_partition", "db", "t", [day, hour])
        yield client


@pytest.fixture
async def client(pg_dsn: str) -> AsyncIterator[ThriftClient]:
    async with _client(pg_dsn) as c:
        yield c


@pytest.fixture
async def limited(pg_dsn: str) -> AsyncIterator[ThriftClient]:
    async with _client(pg_dsn, **{"hive.metastore.limit.partition.request": "4"}) as c:
        yield c


def _names(parts: list[Any]) -> list[str]:
    return [f"ds={p.values[0]}/hr={p.values[1]}" for p in parts]


async def test_every_partition_lists_whatever_the_batch_size(client: ThriftClient, pg_dsn: str) -> None:
    conn = await asyncpg.connect(pg_dsn)
    try:
        stored = [r["part_name"] for r in await conn.fetch(
            "SELECT part_name FROM partitions WHERE dropped_wid IS NULL ORDER BY part_name")]
    finally:
        await conn.close()
    assert stored == ALL_NAMES
    for _ in range(2):  # the first read may fill the cache; the second is answered from it
        assert _names(await client("get_partitions", "db", "t", -1)) == ALL_NAMES
        assert await client("get_partition_names", "db", "t", -1) == ALL_NAMES
        assert _names(await client("get_partitions_by_filter", "db", "t", "hr > '00'", -1)) == [
            n for n in ALL_NAMES if not n.endswith("hr=00")]
        assert await client("get_num_partitions_by_filter", "db", "t", "ds >= '2024-01-01'") == 12
        # The last day is past the first batch of names: a partial specification still finds it.
        assert _names(await client("get_partitions_ps", "db", "t", ["2024-01-04"], -1)) == ALL_NAMES[9:]
        assert await client("get_partition_names_ps", "db", "t", ["", "12"], -1) == [
            f"ds={d}/hr=12" for d in DAYS]
        assert _names(await client("get_partitions", "db", "t", 5)) == ALL_NAMES[:5]  # as many as asked
        assert await client("get_partition_names_ps", "db", "t", ["", "06"], 2) == [
            "ds=2024-01-01/hr=06", "ds=2024-01-02/hr=06"]


async def test_hives_partition_request_limit_refuses_and_never_cuts(limited: ThriftClient) -> None:
    calls: list[tuple[Any, ...]] = [("get_partitions", "db", "t", -1),
                                    ("get_partitions_by_filter", "db", "t", "hr > '00'", -1),
                                    ("get_partitions_with_auth", "db", "t", -1, "alice", [])]
    for call in calls:
        with pytest.raises(TException) as refused:
            await limited(*call)
        assert "Number of partitions scanned (>4) on table 't' exceeds limit (=4). This is controlled on the " \
               "metastore server by hive.metastore.limit.partition.request." in str(refused.value)
    with pytest.raises(TException, match=r"scanned \(=5\)"):  # max_parts itself is the request, as in Hive
        await limited("get_partitions", "db", "t", 5)
    assert len(await limited("get_partitions", "db", "t", 4)) == 4
    assert len(await limited("get_partitions_by_filter", "db", "t", "ds = '2024-01-02'", -1)) == 3
    # Not held to it (Hive 2.3's rule): names, partial specifications, partitions by name.
    assert await limited("get_partition_names", "db", "t", -1) == ALL_NAMES
    assert len(await limited("get_partitions_ps", "db", "t", ["", "00"], -1)) == 4
    assert len(await limited("get_partitions_ps_with_auth", "db", "t", ["2024-01-01"], -1, "alice", [])) == 3
    assert len(await limited("get_partitions_by_names", "db", "t", ALL_NAMES[:3])) == 3
    # Hive 4's get_partitions_ps_with_auth_req, what its Hive.getPartitions sends, is held to it (Hive 4's
    # rule), but for the partitions it names (partNames: Hive 4's reads by name in batches).
    for partial in ([], ["2024-01-01"]):
        request = hms.GetPartitionsPsWithAuthRequest(dbName="db", tblName="t", partVals=partial, maxParts=-1)
        if partial:
            assert len((await limited("get_partitions_ps_with_auth_req", request)).partitions) == 3
        else:
            with pytest.raises(hms.MetaException, match=r"scanned \(>4\) on table 't' exceeds limit \(=4\)"):
                await limited("get_partitions_ps_with_auth_req", request)
    named = await limited("get_partitions_ps_with_auth_req", hms.GetPartitionsPsWithAuthRequest(
        dbName="db", tblName="t", partNames=[ALL_NAMES[1], ALL_NAMES[10], "ds=2024-02-01/hr=00"]))
    assert _names(named.partitions) == [ALL_NAMES[1], ALL_NAMES[10]]  # those named that exist, no others


async def test_a_partial_specification_answers_from_the_cache_as_from_postgresql(pg_dsn: str) -> None:
    """The cache looks only at the range of sorted names under a specification's leading values (hive/names.py
    partial_name_prefix); a gateway without a cache reads PostgreSQL. Values that are prefixes of one another
    and values Hive escapes in names are where a range could go wrong."""
    async with running_gateway(pg_dsn) as cached, \
            running_gateway(pg_dsn, **{"metastore.gateway.cache.enabled": "false"}) as uncached, \
            client_with_database(cached.thrift_port) as a:
        b = ThriftClient(uncached.thrift_port)
        try:
            await a("create_table", thrift_table("t", keys=("ds", "hr")))
            days, hours = ("1", "10", "1/x", "1 0"), ("a=b", "c", "c%")
            for day in days:
                for hour in hours:
                    await a("append_partition", "db", "t", [day, hour])
            specs = [[d] for d in days] + [[d, h] for d in days for h in hours] + [["", h] for h in hours] + [
                ["1", ""], ["nope"], ["10", "nope"]]
            for _ in range(2):  # the first read may fill the cache
                for spec in specs:
                    expected = sorted(f"ds={d}/hr={h}" for d in days for h in hours
                                      if all(w in ("", v) for w, v in zip(spec, (d, h))))
                    ours = await a("get_partitions_ps", "db", "t", spec, -1)
                    assert sorted(f"ds={p.values[0]}/hr={p.values[1]}" for p in ours) == expected, spec
                    assert await a("get_partition_names_ps", "db", "t", spec, -1) == \
                        await b("get_partition_names_ps", "db", "t", spec, -1), spec
            assert cached.cache is not None and cached.cache.stats.hits > 0
        finally:
            b.close()
