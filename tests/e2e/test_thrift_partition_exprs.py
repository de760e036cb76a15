"""get_partitions_by_expr and drop_partitions_req by expression, with Hive 2.3.10's own Kryo bytes
(tests/e2e/hive_expr_goldens.json): what Hive 2.3's DROP PARTITION and partition pruning send.

Before the gateway read them, get_partitions_by_expr answered UNKNOWN_METHOD for every expression and
drop_partitions_req refused expressions, so every DROP PARTITION of Hive 2.3's own engine failed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
from thriftpy2.thrift import TApplicationException

from gateway.app import Gateway
from gateway.thrift.idl import hms
from hive.names import DEFAULT_PARTITION_NAME as DEFAULT
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database, thrift_table

GOLDENS = {name: bytes.fromhex(text) for name, text in
           json.loads((Path(__file__).parent / "hive_expr_goldens.json").read_text()).items()}
# (The gateway refuses a value its key's type does not accept, hr=x: a partition the expression cannot
# decide is a default partition here, which Hive's rule leaves out; tests/unit/test_kryo_expr.py has the rest.)
VALUES = [("a", "1"), ("a", "2"), ("b", "2"), (DEFAULT, "2"), ("a", DEFAULT)]


@contextlib.asynccontextmanager
async def two_gateways(pg_dsn: str) -> AsyncIterator[tuple[ThriftClient, ThriftClient, Gateway]]:
    """A cached and an uncached gateway on one database, with table db.t (ds string, hr int) holding
    VALUES' partitions: (cached client, uncached client, the cached gateway)."""
    async with running_gateway(pg_dsn) as gw, \
            running_gateway(pg_dsn, **{"metastore.gateway.cache.enabled": "false"}) as direct, \
            client_with_database(gw.thrift_port) as cached:
        uncached = ThriftClient(direct.thrift_port)
        try:
            table = thrift_table("t", keys=["ds", "hr"])
            table.partitionKeys[1].type = "int"
            await cached("create_table", table)
            await cached("add_partitions", [hms.Partition(values=list(v), dbName="db", tableName="t", parameters={})
                                            for v in VALUES])
            yield cached, uncached, gw
        finally:
            uncached.close()


def by_expr(name: str | bytes, max_parts: int = -1, table: str = "t", default: str | None = DEFAULT) -> Any:
    expr = GOLDENS[name] if isinstance(name, str) else name
    return hms.PartitionsByExprRequest(dbName="db", tblName=table, expr=expr, defaultPartitionName=default,
                                       maxParts=max_parts)


def names_of(result: Any) -> tuple[list[str], bool]:
    return [p.values[0] + "/" + p.values[1] for p in result.partitions], result.hasUnknownPartitions


async def test_get_partitions_by_expr_selects_as_hives_partition_pruner(pg_dsn: str) -> None:
    async with two_gateways(pg_dsn) as (cached, uncached, _):
        for call in (cached, uncached, cached):  # the cache's answer, loaded and then from memory
            async def get(name: str, max_parts: int = -1) -> tuple[list[str], bool]:
                return names_of(await call("get_partitions_by_expr", by_expr(name, max_parts)))  # noqa: B023

            assert await get("ds_a_and_hr_2") == (["a/2"], False)  # a/default is undecided: left out
            assert await get("hr_gt_1") == ([f"{DEFAULT}/2", "a/2", "b/2"], False)  # in name order
            assert await get("ds_not_a") == (["b/2"], False)  # the default partition is NULL, not its text
            assert await get("ds_is_default") == ([f"{DEFAULT}/2"], False)
            assert await get("ds_in_a_b", max_parts=2) == (["a/1", "a/2"], False)
            assert await get("ds_null_or_not_hr_not_null") == ([f"{DEFAULT}/2", f"a/{DEFAULT}"], False)
            with pytest.raises(hms.NoSuchObjectException):
                await call("get_partitions_by_expr", by_expr("ds_is_a", table="missing"))


@pytest.mark.parametrize("expr, why", [
    (b"", "at byte 0"),
    (b"\x01kryo", "not an expression of Hive 2.3's client"),
    (GOLDENS["ds_is_a"][:-1], "the bytes end inside the expression"),
    (GOLDENS["ds_is_a"] + b"\x00", "1 byte(s) after the expression"),
    (GOLDENS["ds_is_a"].replace(b"GenericUDFOPEqua\xec", b"GenericUDFOPPlu\xf3"), "GenericUDFOPPlus"),
    (GOLDENS["payload_is_a"], "column payload is not a partition key"),
    (GOLDENS["hr_is_string_2"], "a constant of type string compared with a key of kind int"),
])
async def test_an_expression_the_gateway_does_not_read_answers_unknown_method(pg_dsn: str, expr: bytes,
                                                                              why: str) -> None:
    """Hive's clients evaluate the expression themselves on UNKNOWN_METHOD (PartitionPruner's fallback
    to the partition names), the one answer that keeps them right; the connection goes on."""
    async with two_gateways(pg_dsn) as (cached, _, _):
        with pytest.raises(TApplicationException) as caught:
            await cached("get_partitions_by_expr", by_expr(expr))
        assert caught.value.type == TApplicationException.UNKNOWN_METHOD
        assert why in (caught.value.message or "")
        with pytest.raises(TApplicationException, match="default partition name"):
            await cached("get_partitions_by_expr", by_expr("ds_is_a", default="__OTHER__"))
        assert names_of(await cached("get_partitions_by_expr", by_expr("ds_is_a", default=None)))[0] == \
            ["a/1", "a/2", f"a/{DEFAULT}"]


def drop(*names: str | bytes, if_exists: bool | None = None, need_result: bool | None = None,
         delete_data: bool | None = None) -> Any:
    exprs = [hms.DropPartitionsExpr(expr=GOLDENS[n] if isinstance(n, str) else n, partArchiveLevel=2)
             for n in names]
    return hms.DropPartitionsRequest(dbName="db", tblName="t", parts=hms.RequestPartsSpec(exprs=exprs),
                                     ifExists=if_exists, needResult=need_result, deleteData=delete_data)


async def partition_names(call: ThriftClient) -> list[str]:
    return list(await call("get_partition_names", "db", "t", -1))


async def test_drop_partitions_req_by_expression_as_hive_23(pg_dsn: str) -> None:
    async with two_gateways(pg_dsn) as (cached, uncached, _):
        everything = await partition_names(cached)
        # refused, nothing dropped: an expression not read, fewer partitions than expressions
        with pytest.raises(hms.MetaException, match="not a partition key"):
            await cached("drop_partitions_req", drop("ds_is_a", "payload_is_a"))
        with pytest.raises(hms.NoSuchObjectException, match="Some partitions to drop are missing"):
            await cached("drop_partitions_req", drop("ds_is_default", "ds_not_between_a_b"))
        assert await partition_names(uncached) == everything
        # Hive 4's rule: each expression must select a partition (Hive 2.3 counts partitions against expressions
        # and would drop these three); with ifExists none need
        with pytest.raises(hms.NoSuchObjectException, match="Some partitions to drop are missing"):
            await cached("drop_partitions_req", drop("hr_gt_1", "ds_not_between_a_b"))
        got = await cached("drop_partitions_req", drop("hr_gt_1", "ds_not_between_a_b", "ds_not_a", if_exists=True))
        # each expression's partitions in turn, b/2 twice, as Hive answers
        assert [p.values for p in got.partitions] == [[DEFAULT, "2"], ["a", "2"], ["b", "2"], ["b", "2"]]
        assert got.partitions[0].sd.cols  # answered whole, as Hive's needResult
        got = await cached("drop_partitions_req", drop("ds_not_between_a_b", if_exists=True, need_result=False))
        assert got.partitions is None
        for call in (cached, uncached):
            assert await partition_names(call) == ["ds=a/hr=1", f"ds=a/hr={DEFAULT}"]


async def test_drop_by_expression_deletes_data_as_the_drop_by_names(pg_dsn: str) -> None:
    async with two_gateways(pg_dsn) as (cached, _, _):
        table = await cached("get_table", "db", "t")
        parts = await cached("get_partitions", "db", "t", -1)
        dirs = {tuple(p.values): Path(p.sd.location.removeprefix("file:")) for p in parts}
        assert all(d.is_dir() for d in dirs.values()), table.sd.location
        await cached("drop_partitions_req", drop("ds_not_a", delete_data=True))
        assert not dirs[("b", "2")].exists()
        await cached("drop_partitions_req", drop("ds_in_a_b"))  # deleteData unset: the files stay
        assert dirs[("a", "1")].is_dir()
        assert await partition_names(cached) == [f"ds={DEFAULT}/hr=2"]


async def test_a_varchar_key_is_pruned_by_its_hive_varchar_constant(pg_dsn: str) -> None:
    """Hive's DROP PARTITION converts a varchar key's value to a HiveVarchar constant (it was refused, so the
    statement failed: DDLSemanticAnalyzer does not fall back)."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        table = thrift_table("v", keys=["vc"])
        table.partitionKeys[0].type = "varchar(8)"
        await call("create_table", table)
        await call("add_partitions", [hms.Partition(values=[v], dbName="db", tableName="v", parameters={})
                                      for v in ("a", "a/b", DEFAULT)])
        got = await call("get_partitions_by_expr", by_expr("vc_is_a_b", table="v"))
        assert [p.values for p in got.partitions] == [["a/b"]]


async def test_a_timestamp_key_is_pruned_and_dropped_by_its_timestamp_constant(pg_dsn: str) -> None:
    """Hive's DROP PARTITION (ts='...') of a timestamp key sends a java.sql.Timestamp constant: the gateway
    evaluated no expression over a timestamp key, answering UNKNOWN_METHOD, on which Hive 2.3's
    DDLSemanticAnalyzer fails ('Partition not found', IF EXISTS or not; drop_partitions_req refused it),
    where Hive's metastore drops the partition (found by test_hive_engine_random_differential.py with
    timestamp keys drawn, seed 11301)."""
    # The golden's constant is 2024-03-01 00:00:00.5 where it was made (TZ=UTC), read in this process's zone;
    # the values as Hive's engine writes them (Timestamp.toString).
    half_past = dt.datetime.fromtimestamp(dt.datetime(2024, 3, 1, 0, 0, 0, tzinfo=dt.timezone.utc).timestamp())
    wanted = f"{half_past:%Y-%m-%d %H:%M:%S}.5"
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        table = thrift_table("w", keys=["ts"])
        table.partitionKeys[0].type = "timestamp"
        await call("create_table", table)
        await call("add_partitions", [hms.Partition(values=[v], dbName="db", tableName="w", parameters={})
                                      for v in ("2024-01-01 10:00:00.0", wanted, DEFAULT)])
        got = await call("get_partitions_by_expr", by_expr("ts_is_2024_03_01_half_past", table="w"))
        assert names_of_one(got) == ([wanted], False)
        dropped = await call("drop_partitions_req", hms.DropPartitionsRequest(
            dbName="db", tblName="w", parts=hms.RequestPartsSpec(exprs=[hms.DropPartitionsExpr(
                expr=GOLDENS["ts_is_2024_03_01_half_past"], partArchiveLevel=2)]), needResult=True))
        assert [p.values for p in dropped.partitions] == [[wanted]]
        assert [p.values for p in await call("get_partitions", "db", "w", -1)] == \
            [["2024-01-01 10:00:00.0"], [DEFAULT]]


def names_of_one(result: Any) -> tuple[list[str], bool]:
    return [p.values[0] for p in result.partitions], result.hasUnknownPartitions


async def test_a_table_without_partitions_answers_no_partitions_whatever_the_expression(pg_dsn: str) -> None:
    """Hive's metastore evaluates an expression over each partition name, so of a table without partitions
    it answers none, with no undecided one, even for an expression the gateway does not evaluate (a column
    that is no key; Hive 2.3's DROP IF EXISTS PARTITION of a key the table does not have): the gateway
    answered UNKNOWN_METHOD, on which Hive's DROP PARTITION fails ('Partition not found'; found by
    test_hive_engine_random_differential.py, seed 3002)."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as client:
        await client("create_table", thrift_table("empty", keys=["ds", "hr"]))
        request = by_expr("payload_is_a", table="empty")
        assert names_of(await client("get_partitions_by_expr", request)) == ([], False)
        dropped = await client("drop_partitions_req", hms.DropPartitionsRequest(
            dbName="db", tblName="empty", parts=hms.RequestPartsSpec(exprs=[hms.DropPartitionsExpr(
                expr=GOLDENS["payload_is_a"], partArchiveLevel=2)]), ifExists=True))
        assert dropped.partitions == []
        with pytest.raises(hms.NoSuchObjectException, match="missing"):
            await client("drop_partitions_req", hms.DropPartitionsRequest(
                dbName="db", tblName="empty", parts=hms.RequestPartsSpec(exprs=[hms.DropPartitionsExpr(
                    expr=GOLDENS["payload_is_a"], partArchiveLevel=2)])))
