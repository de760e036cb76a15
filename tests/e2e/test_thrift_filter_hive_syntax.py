"""get_partitions_by_filter as Spark SQL's built-in Hive 2.3 client sends it (Shim_v2_0.convertFilters),
over Thrift, answered alike from the cache and from PostgreSQL.

Spark writes an IN list on a partition key as `(ds) in ("a", "b")`, the only IN form Hive 2.3's filter
grammar accepts, and StartsWith, EndsWith and Contains as `ds like "2024.*"`, `ds like ".*01"` and
`ds like ".*-01-.*"`, a Java regular expression Hive 2.3.10's metastore matches as SQL LIKE with `.*`
any run and `.` one character (hive/partition_filter.py `_hive_like`). Also listings that answered
otherwise than Hive 2.3.10. tests/e2e/test_thrift_differential.py has the real Hive Metastore 2.3.10
confirm these answers."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest
from thriftpy2.thrift import TException

from gateway.thrift.idl import hms
from tests.conftest import running_gateway, wait_applied
from tests.thrift_client import ThriftClient, client_with_database, thrift_table

DAYS = ["2024-01-01", "2024-01-02", "2025-01-01"]
PATHS = ["a\\b", "a.b", "a\\\\b", "ab"]  # a\b, a.b, a\\b, ab


@pytest.fixture(params=["cached", "uncached"])
async def client(request: pytest.FixtureRequest, pg_dsn: str) -> AsyncIterator[ThriftClient]:
    conf = {} if request.param == "cached" else {"metastore.gateway.cache.enabled": "false"}
    async with running_gateway(pg_dsn, **conf) as gw, client_with_database(gw.thrift_port) as c:
        await c("create_table", thrift_table("orders", keys=["ds"]))
        for ds in DAYS:
            await c("append_partition", "db", "orders", [ds])
        await c("create_table", thrift_table("paths", keys=["p"]))
        for p in PATHS:
            await c("append_partition", "db", "paths", [p])
        if gw.cache is not None and gw.cache.enabled:
            await wait_applied(gw)
        yield c


async def _days(client: ThriftClient, text: str) -> list[str]:
    return [p.values[0] for p in await client("get_partitions_by_filter", "db", "orders", text, -1)]


@pytest.mark.parametrize(("text", "hive_answer"), [
    ('(ds) in ("2024-01-01", "2025-01-01")', ["2024-01-01", "2025-01-01"]),
    ('(ds) not in ("2024-01-01", "2025-01-01")', ["2024-01-02"]),
    ('ds in ("2024-01-02")', ["2024-01-02"]),  # the gateway's form too, as gRPC callers write it
    ('( ( ds ) ) in ("2024-01-02") or (ds) = "2025-01-01"', ["2024-01-02", "2025-01-01"]),
    ('((ds) in ("2024-01-01") and ds > "2023")', ["2024-01-01"]),
])
async def test_spark_in_lists_are_hive_2_3_syntax(client: ThriftClient, text: str, hive_answer: list[str]) -> None:
    assert await _days(client, text) == hive_answer


@pytest.mark.parametrize(("text", "hive_answer"), [
    ('ds like "2024.*"', ["2024-01-01", "2024-01-02"]),
    ('ds like ".*01"', ["2024-01-01", "2025-01-01"]),
    ('ds like ".*-01-.*"', ["2024-01-01", "2024-01-02", "2025-01-01"]),
    ('ds like "2024-01-0%"', []),  # % is itself, as in Hive 2.3.10
    ('ds like "2024-01-0[12]"', []),  # so are brackets: only `.` and `.*` are special (probed)
    ('ds like "2024-01-0."', ["2024-01-01", "2024-01-02"]),
    ('not ds like "2024.*"', ["2025-01-01"]),
    ('ds like "(?i)2024.*" and (ds) in ("2024-01-02")', ["2024-01-02"]),
])
async def test_spark_like_patterns_are_hive_2_3_regular_expressions(client: ThriftClient, text: str,
                                                                    hive_answer: list[str]) -> None:
    assert await _days(client, text) == hive_answer
    assert await client("get_num_partitions_by_filter", "db", "orders", text) == len(hive_answer)


@pytest.mark.parametrize(("text", "hive_answer"), [
    (r'p = "a\b"', ["a\\b"]),  # what Spark sends for the value a\b: quoted, nothing escaped
    (r'p = "a\\b"', ["a\\\\b"]),
    (r'p <> "a\b"', ["a.b", "a\\\\b", "ab"]),
    (r'(p) in ("a\b", "ab")', ["a\\b", "ab"]),
    (r'p like "a\.b"', ["a.b"]),  # \. is a dot
    (r'p like "a\%"', ["a\\b", "a\\\\b"]),  # a backslash, then any run
])
async def test_strings_keep_their_backslashes_as_in_hive_2_3(client: ThriftClient, text: str,
                                                             hive_answer: list[str]) -> None:
    assert sorted(p.values[0] for p in await client("get_partitions_by_filter", "db", "paths", text, -1)) == \
        sorted(hive_answer)
    assert await client("get_num_partitions_by_filter", "db", "paths", text) == len(hive_answer)


async def test_what_hive_refuses_in_a_like_is_refused(client: ThriftClient) -> None:
    for text, why in [('ds like "(?i)É.*"', "with (?i), a LIKE pattern may hold ASCII letters only")]:
        for call, extra in (("get_partitions_by_filter", (-1,)), ("get_num_partitions_by_filter", ())):
            with pytest.raises(TException) as caught:
                await client(call, "db", "orders", text, *extra)
            assert type(caught.value).__name__ == "MetaException" and why in str(caught.value), caught.value


@pytest.mark.parametrize("text", [
    "ds = 01", "ds = 2024", "ds > 5", "ds <> 1", "5 < ds", "(ds) in (1, 2)", "(ds) not in (1)", "ds between 1 and 5",
    'ds = "2024-01-01" or ds = 1', 'ds like "2024.*" and ds = 1',
])
async def test_a_number_against_a_string_key_is_refused_as_hive_refuses_it(client: ThriftClient, text: str) -> None:
    """Hive Metastore 2.3.10 answers each with MetaException "Filtering is supported only on partition keys of
    type string" (its direct SQL will not compare a string key with a number, and its JDO fallback filters
    strings only; probed on PostgreSQL and Derby). The gateway compared the number's text before."""
    for call, extra in (("get_partitions_by_filter", (-1,)), ("get_num_partitions_by_filter", ())):
        with pytest.raises(TException) as caught:
            await client(call, "db", "orders", text, *extra)
        message = getattr(caught.value, "message", "")
        assert type(caught.value).__name__ == "MetaException", caught.value
        assert "key 'ds' has type string, but" in message and "is a number: quote it" in message, message
    assert await _days(client, 'ds = "2024-01-01"') == ["2024-01-01"]  # quoted, as Spark sends it


async def test_partition_names_max_parts_zero_is_every_name_as_in_hive(client: ThriftClient) -> None:
    assert await client("get_partition_names", "db", "orders", 0) == [f"ds={d}" for d in DAYS]
    assert await client("get_partitions", "db", "orders", 0) == []  # Hive's other calls: none


async def test_table_objects_by_name_answers_each_table_once(client: ThriftClient) -> None:
    tables = await client("get_table_objects_by_name", "db", ["orders", "ORDERS", "nope", "orders"])
    assert [t.tableName for t in tables] == ["orders"]
    request = hms.GetTablesRequest(dbName="db", tblNames=["Orders", "orders"])
    assert [t.tableName for t in (await client("get_table_objects_by_name_req", request)).tables] == ["orders"]


@pytest.mark.parametrize("text", [
    "hr < 99999999999999999999", "hr > -9223372036854775809", "hr = +5", "hr = 1.5", "hr = 1e3",
    'ds = "2024-01-01" or hr between 1 and 99999999999999999999',
])
async def test_a_number_hive_cannot_read_as_a_long_is_refused_as_hive_refuses_it(client: ThriftClient,
                                                                                  text: str) -> None:
    """Hive 2.3's filter grammar reads a number as digits after an optional minus, parsed as a Java long: a
    sign, a fraction or an exponent is a syntax error, a number beyond a long a NumberFormatException, each
    a MetaException (Hive Metastore 2.3.10, probed; tests/e2e/test_thrift_filter_differential.py drew
    `sm between 001 and 99999999999999999999`). The gateway read any decimal number and answered."""
    await client("create_table", _typed_table("hours", (("ds", "string"), ("hr", "int"))))
    await client("append_partition", "db", "hours", ["2024-01-01", "1"])
    for call, extra in (("get_partitions_by_filter", (-1,)), ("get_num_partitions_by_filter", ())):
        with pytest.raises(TException) as caught:
            await client(call, "db", "hours", text, *extra)
        assert type(caught.value).__name__ == "MetaException", caught.value
    assert [p.values for p in await client("get_partitions_by_filter", "db", "hours",
                                           "hr = 001 and hr > -9223372036854775808", -1)] == [["2024-01-01", "1"]]


def _typed_table(name: str, keys: tuple[tuple[str, str], ...]) -> Any:
    table = thrift_table(name)
    table.partitionKeys = [hms.FieldSchema(name=k, type=t, comment="") for k, t in keys]
    return table


@pytest.mark.parametrize("space", ["\u00a0", "\u2003", "\x0b", "\x0c", "\u2028"])
async def test_whitespace_is_hive_2_3_lexers_alone(client: ThriftClient, space: str) -> None:
    """Hive 2.3's filter lexer skips space, tab, CR and LF between tokens and refuses any other character
    there (MetaException "no viable alternative at character", Hive Metastore 2.3.10, probed with a no-break
    space, an em space, \\v and \\f); the gateway took every Unicode space and answered. Inside a quoted
    string any character is itself."""
    for call, extra in (("get_partitions_by_filter", (-1,)), ("get_num_partitions_by_filter", ())):
        with pytest.raises(TException) as caught:
            await client(call, "db", "orders", f'ds{space}= "2024-01-01"', *extra)
        assert type(caught.value).__name__ == "MetaException", caught.value
        assert "unexpected character" in str(caught.value), caught.value
    assert await _days(client, 'ds\t=\r\n"2024-01-01"') == ["2024-01-01"]
    assert await _days(client, f'ds = "2024-01-01" or ds = "a{space}b"') == ["2024-01-01"]


async def test_an_unpartitioned_tables_listings_are_empty_as_in_hive(client: ThriftClient) -> None:
    """Hive Metastore 2.3.10 lists no partitions of a table without partition keys (get_partitions,
    get_partition_names, get_partitions_by_filter and get_num_partitions_by_filter of no filter), and refuses a
    filter or a partial specification that names a key (MetaException); the gateway refused them all
    (MetaException 'not partitioned'). Found by tests/e2e/test_thrift_filter_differential.py."""
    await client("create_table", thrift_table("flat"))
    assert await client("get_partitions", "db", "flat", -1) == []
    assert await client("get_partition_names", "db", "flat", -1) == []
    assert await client("get_partitions_by_filter", "db", "flat", "", -1) == []
    assert await client("get_num_partitions_by_filter", "db", "flat", "") == 0
    assert (await client("get_partitions_req", hms.PartitionsRequest(dbName="db", tblName="flat"))).partitions == []
    for call, args in (("get_partitions_by_filter", ('ds = "a"', -1)), ("get_num_partitions_by_filter", ('ds = "a"',)),
                       ("get_partition_names_ps", (["a"], -1)), ("get_partitions_ps", (["a"], -1))):
        with pytest.raises(TException) as caught:
            await client(call, "db", "flat", *args)
        assert type(caught.value).__name__ == "MetaException", (call, caught.value)
