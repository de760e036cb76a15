"""getMetaConf and setMetaConf over Thrift (gateway/thrift/meta_conf.py): what Hive's CLI and Beeline send
for `set metaconf:KEY=VALUE`. Hive 2.3.10's answers on one connection are compared in
tests/e2e/test_thrift_differential.py (META_CONF_STEPS); here, what takes several connections: a value
set is its connection's alone and ends with it, and it changes no rule the gateway applies."""

from __future__ import annotations

from typing import AsyncIterator

import pytest
from thriftpy2.thrift import TException

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database, thrift_table

WHITELIST = "hive.metastore.partition.name.whitelist.pattern"
DIRECT_SQL = "hive.metastore.try.direct.sql"
TIMEOUT = "hive.metastore.client.socket.timeout"


@pytest.fixture
async def port(pg_dsn: str) -> AsyncIterator[int]:
    async with running_gateway(pg_dsn, **{WHITELIST: "[^#]*"}) as gw:
        yield gw.thrift_port


async def test_a_value_set_is_the_connections_alone_and_ends_with_it(port: int) -> None:
    async with client_with_database(port) as a:
        b = ThriftClient(port)
        try:
            await a("setMetaConf", DIRECT_SQL, "false")
            await a("setMetaConf", TIMEOUT, "2m")
            assert (await a("getMetaConf", DIRECT_SQL), await a("getMetaConf", TIMEOUT)) == ("false", "2m")
            assert (await b("getMetaConf", DIRECT_SQL), await b("getMetaConf", TIMEOUT)) == ("true", "600s")
        finally:
            b.close()
    c = ThriftClient(port)  # a new connection after the first closed: Hive's defaults again
    try:
        assert await c("getMetaConf", DIRECT_SQL) == "true"
        assert await c("getMetaConf", WHITELIST) == "[^#]*"  # the gateway's own setting
    finally:
        c.close()


async def test_a_connections_whitelist_is_answered_back_and_the_servers_is_applied(port: int) -> None:
    async with client_with_database(port) as client:
        await client("setMetaConf", WHITELIST, "[a-z]*")
        assert await client("getMetaConf", WHITELIST) == "[a-z]*"
        await client("create_table", thrift_table("t", keys=("ds",)))
        await client("append_partition", "db", "t", ["2024-01-01"])  # outside [a-z]*, inside the server's
        with pytest.raises(TException, match="whitelist"):
            await client("append_partition", "db", "t", ["a#b"])
        assert await client("get_partition_names", "db", "t", -1) == ["ds=2024-01-01"]


async def test_a_connection_may_turn_off_the_column_type_check_for_its_own_alters(port: int) -> None:
    """hive-metastore-client's drop_columns_from_table (PyPI): get_table, setMetaConf of Hive 3's and 4's
    hive.metastore.disallow.incompatible.col.type.changes to false, then alter_table without the column; a
    column dropped from the middle moves the next one into its place, a type its data does not convert to."""
    async with client_with_database(port) as client:
        table = thrift_table("t")
        table.sd.cols = [hms.FieldSchema(name=n, type=t, comment="") for n, t in
                         (("id", "bigint"), ("name", "string"), ("n", "int"))]
        await client("create_table", table)
        dropped = await client("get_table", "db", "t")
        dropped.sd.cols = [c for c in dropped.sd.cols if c.name != "name"]
        other = ThriftClient(port)
        try:
            with pytest.raises(hms.InvalidOperationException, match=r"n \(string to int\)"):
                await client("alter_table", "db", "t", dropped)  # the check on: refused
            await client("setMetaConf", "metastore.disallow.incompatible.col.type.changes", "false")
            assert await client("getMetaConf", "hive.metastore.disallow.incompatible.col.type.changes") == "false"
            assert await other("getMetaConf", "hive.metastore.disallow.incompatible.col.type.changes") == "true"
            widened = await other("get_table", "db", "t")
            widened.sd.cols[2].type = "boolean"  # int to boolean on the other connection: still refused there
            with pytest.raises(hms.InvalidOperationException):
                await other("alter_table", "db", "t", widened)
            await client("alter_table", "db", "t", dropped)
            assert [c.name for c in (await other("get_table", "db", "t")).sd.cols] == ["id", "n"]
        finally:
            other.close()


@pytest.mark.parametrize(("key", "value", "says"), [
    ("hive.metastore.warehouse.dir", "/x", "Invalid configuration key hive.metastore.warehouse.dir (a connection "
                                           "may set only hive.metastore.client.capability.check"),
    (DIRECT_SQL.upper(), "false", "Invalid configuration key HIVE.METASTORE.TRY.DIRECT.SQL"),
    (TIMEOUT, "0", "Invalid configuration value 0 for key hive.metastore.client.socket.timeout: the time-out must be "
                   "more than 0"),
    (TIMEOUT, "-5", "'-5' is not a duration"),
    (TIMEOUT, "soon", "'soon' is not a duration"),
])
async def test_refusals_say_why_and_keep_the_value(port: int, key: str, value: str, says: str) -> None:
    client = ThriftClient(port)
    try:
        await client("setMetaConf", TIMEOUT, "30s")
        with pytest.raises(TException) as refused:
            await client("setMetaConf", key, value)
        assert says in str(refused.value)
        assert await client("getMetaConf", TIMEOUT) == "30s"
    finally:
        client.close()
