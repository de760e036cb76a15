"""Hive 4's MSCK REPAIR TABLE over Thrift, in the calls its Msck sends (ql's MsckOperation and
standalone-metastore's Msck): setMetaConf of `metastore.expression.proxy` to MsckPartitionExpressionProxy
first (a refusal fails the whole statement: "Unable to create msck instance"), the table's partitions,
add_partitions_req of the directories the metastore lacks (ifNotExists, no result), and drop_partitions_req
of the partitions whose directories are gone by the text of their names (hive/msck_expr.py)."""

from __future__ import annotations

import pytest

from gateway.thrift.idl import hms
from hive.msck_expr import MSCK_EXPRESSION_PROXY
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database, thrift_table

PROXY_KEY = "metastore.expression.proxy"  # MetastoreConf.ConfVars.EXPRESSION_PROXY_CLASS.getVarname()


def _partition(values: list[str]) -> hms.Partition:
    return hms.Partition(dbName="db", tableName="t", values=values, parameters={})


def _drop_by_names_text(text: bytes) -> hms.DropPartitionsRequest:
    """Msck.dropPartitionsInBatches: one expression naming the batch, files kept, missing ones no error."""
    parts = hms.RequestPartsSpec(exprs=[hms.DropPartitionsExpr(expr=text, partArchiveLevel=2)])
    return hms.DropPartitionsRequest(dbName="db", tblName="t", parts=parts, deleteData=False, ifExists=True,
                                     needResult=False)


async def test_hive4_msck_repair_sync_partitions(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", table_type="EXTERNAL_TABLE", keys=["ds", "hr"], EXTERNAL="TRUE"))
        for values in (["2024-01-01", "1"], ["2024-01-01", "2"], ["a/b 'c'", "3"], ["2024-01-02", "1"]):
            await call("add_partition", _partition(values))

        await call("setMetaConf", PROXY_KEY, MSCK_EXPRESSION_PROXY)
        assert await call("getMetaConf", "hive.metastore.expression.proxy") == MSCK_EXPRESSION_PROXY
        # ADD PARTITIONS: the directories the metastore lacks; one it already has is skipped (ifNotExists).
        await call("add_partitions_req", hms.AddPartitionsRequest(
            dbName="db", tblName="t", parts=[_partition(["2024-01-03", "1"]), _partition(["2024-01-01", "1"])],
            ifNotExists=True, needResult=False))
        # DROP PARTITIONS: those whose directories are gone, named by their escaped names; one that another
        # drop took meanwhile is no error (ifExists).
        text = b"(ds='2024-01-01' AND hr='2') OR (ds='a%2Fb %27c%27' AND hr='3') OR (ds='2029-01-01' AND hr='9')"
        await call("drop_partitions_req", _drop_by_names_text(text))
        assert await call("get_partition_names", "db", "t", -1) == [
            "ds=2024-01-01/hr=1", "ds=2024-01-02/hr=1", "ds=2024-01-03/hr=1"]

        # The same text on a connection that did not set the proxy is read as Hive's own expression, which it
        # is not: refused with the reason, nothing dropped.
        other = ThriftClient(gw.thrift_port)
        try:
            with pytest.raises(hms.MetaException, match="drop_partitions_req of db.t: .*"):
                await other("drop_partitions_req", _drop_by_names_text(b"(ds='2024-01-02' AND hr='1')"))
            assert len(await other("get_partition_names", "db", "t", -1)) == 3
            assert await other("getMetaConf", PROXY_KEY) == (
                "org.apache.hadoop.hive.ql.optimizer.ppr.PartitionExpressionForMetastore")
        finally:
            other.close()

        # Under MSCK's proxy, bytes that are not its text are refused too, saying what was expected.
        with pytest.raises(hms.MetaException, match="is not one of MSCK's k='v' comparisons"):
            await call("drop_partitions_req", _drop_by_names_text(b"(ds=2024-01-02)"))
        # Back to Hive's own reading on the same connection, by its Hive name.
        await call("setMetaConf", "hive.metastore.expression.proxy",
                   "org.apache.hadoop.hive.ql.optimizer.ppr.PartitionExpressionForMetastore")
        with pytest.raises(hms.MetaException, match="drop_partitions_req of db.t"):
            await call("drop_partitions_req", _drop_by_names_text(b"(ds='2024-01-02' AND hr='1')"))
        assert len(await call("get_partition_names", "db", "t", -1)) == 3


async def test_an_expression_proxy_this_metastore_does_not_read_is_refused(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw:
        client = ThriftClient(gw.thrift_port)
        try:
            with pytest.raises(hms.MetaException, match="Invalid configuration value com.example.Proxy for key "
                                                        "hive.metastore.expression.proxy: this metastore reads"):
                await client("setMetaConf", PROXY_KEY, "com.example.Proxy")
            # Hive 3's and 4's names of Hive 2.3's settings are the same settings.
            await client("setMetaConf", "metastore.client.socket.timeout", "42s")
            assert await client("getMetaConf", "hive.metastore.client.socket.timeout") == "42s"
        finally:
            client.close()
