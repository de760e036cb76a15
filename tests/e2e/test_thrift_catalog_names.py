"""Hive 3's and 4's catalog-qualified database names over Thrift: the client names a database
`@hive#db` in every call whose arguments have no catalog (MetaStoreUtils.prependCatalogToDbName in
HiveMetaStoreClient: dropTable, truncateTableInternal, getAllDatabases, listPartitionNames,
getPartitionsByNames, ...), and Hive's HMSHandler reads it back with parseDbName."""

from __future__ import annotations

import pytest

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import client_with_database, thrift_table


async def test_hive4_names_databases_with_their_catalog(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("t", keys=["p"]))
        await call("create_table", thrift_table("gone"))
        await call("add_partitions", [hms.Partition(values=["a"], dbName="db", tableName="t", parameters={})])

        assert (await call("get_database", "@hive#db")).name == "db"
        assert sorted(await call("get_databases", "@hive#")) == ["db", "default"]  # getAllDatabases: every one
        assert await call("get_databases", "@hive#def*") == ["default"]
        assert sorted(await call("get_all_tables", "@hive#db")) == ["gone", "t"]
        assert await call("get_partition_names", "@HIVE#db", "t", -1) == ["p=a"]  # catalog names: any case
        (p,) = (await call("get_partitions_by_names_req", hms.GetPartitionsByNamesRequest(
            db_name="@hive#db", tbl_name="t", names=["p=a"]))).partitions
        assert p.values == ["a"]
        await call("truncate_table_req", hms.TruncateTableRequest(dbName="@hive#db", tableName="gone"))
        await call("drop_table_with_environment_context", "@hive#db", "gone", True, None)  # Hive 4's DROP TABLE
        assert await call("get_all_tables", "db") == ["t"]

        with pytest.raises(hms.NoSuchObjectException, match="catalog 'spark' does not exist"):
            await call("get_database", "@spark#db")
        with pytest.raises(hms.NoSuchObjectException, match="catalog 'spark' does not exist"):
            await call("drop_table_with_environment_context", "@spark#db", "t", True, None)
        with pytest.raises(hms.MetaException, match="does not appear to have a catalog name"):
            await call("get_all_tables", "@hive")
        assert await call("get_all_tables", "db") == ["t"]
