"""fb303 over Thrift as Hive 2.3.10 answers it (probed: status, counters by call, options shared by every
connection of the process) and flushCache, which Hive's Driver sends before it compiles each query:
answered at once, and it leaves the cache as warm as it was."""

from __future__ import annotations

import asyncio
import time

import pytest
from thriftpy2.thrift import TApplicationException

from gateway.thrift.fb303 import MAX_OPTIONS
from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database, thrift_table


async def test_status_and_counters_as_monitoring_polls_them(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as client:
        assert (await client("getStatus"), await client("getStatusDetails")) == (2, "")  # ALIVE
        assert abs(await client("aliveSince") - time.time()) < 600
        before = await client("getCounters")
        assert before["create_database"] == 1
        for _ in range(3):
            await client("get_all_databases")
        with pytest.raises(hms.NoSuchObjectException):
            await client("get_database", "nosuch")  # a failed call counts, as in Hive
        after = await client("getCounters")
        assert after["get_all_databases"] - before.get("get_all_databases", 0) == 3
        assert after["get_database"] - before.get("get_database", 0) == 1
        assert await client("getCounter", "get_all_databases") == after["get_all_databases"]
        assert await client("getCounter", "no_such_method") == 0
        assert await client("getCpuProfile", 1) == ""
        await client("reinitialize")  # oneway: nothing answers; the connection goes on
        assert await client("getStatus") == 2


async def test_options_are_the_processs_shared_by_connections_and_bounded(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw:
        first, second = ThriftClient(gw.thrift_port), ThriftClient(gw.thrift_port)
        try:
            assert await first("getOption", "a") == "" and await first("getOptions") == {}
            await first("setOption", "a", "b")
            assert await second("getOption", "a") == "b"
            await second("setOption", "a", "c")
            assert await first("getOptions") == {"a": "c"}
            for n in range(MAX_OPTIONS - 1):
                await first("setOption", f"k{n}", "v")
            with pytest.raises(TApplicationException, match=f"at most {MAX_OPTIONS}"):
                await first("setOption", "one_too_many", "v")
            await first("setOption", "a", "d")  # a key it has may still change
            assert await second("getOption", "a") == "d" and await second("getOption", "one_too_many") == ""
        finally:
            first.close()
            second.close()


async def test_flush_cache_answers_and_keeps_the_cache_warm(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as client:
        assert gw.cache is not None
        await client("create_table", thrift_table("t", keys=("ds",)))
        await client("append_partition", "db", "t", ["a"])
        for _ in range(100):  # a miss asks the poller to fill the table's entry; read until a read hits
            hits = gw.cache.stats.hits
            await client("get_partitions", "db", "t", -1)
            if gw.cache.stats.hits > hits:
                break
            await asyncio.sleep(0.05)
        entries, hits = len(gw.cache.entries()), gw.cache.stats.hits
        assert entries == 1
        assert await client("flushCache") is None
        parts = await client("get_partitions", "db", "t", -1)
        assert [p.values for p in parts] == [["a"]]
        assert len(gw.cache.entries()) == entries and gw.cache.stats.hits > hits
