"""Hive 4's request-shaped forms of calls older clients make by arguments, the only forms Hive 4's
HiveMetaStoreClient sends (standalone-metastore/metastore-common/.../HiveMetaStoreClient.java):
getDatabase -> get_database_req, createTable -> create_table_req, dropDatabase(cascade) ->
drop_database_req, renamePartition -> rename_partition_req. Each is answered as its older form."""

from __future__ import annotations

import pytest

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import client_with_database


async def test_hive4_reads_a_database_with_get_database_req(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        got = await call("get_database_req", hms.GetDatabaseRequest(name="DB", catalogName="hive",
                                                                    processorIdentifier="HMSClient-@h"))
        assert (got.name, got.locationUri) == ("db", (await call("get_database", "db")).locationUri)
        assert (await call("get_database_req", hms.GetDatabaseRequest(name="default"))).name == "default"
        with pytest.raises(hms.NoSuchObjectException, match="nope"):
            await call("get_database_req", hms.GetDatabaseRequest(name="nope", catalogName="hive"))
        with pytest.raises(hms.NoSuchObjectException, match="catalog 'spark' does not exist"):
            await call("get_database_req", hms.GetDatabaseRequest(name="db", catalogName="spark"))
