"""Table constraints over Thrift (gateway/thrift/constraint_methods.py): none are stored, so Hive 3's and
4's reads (what DESCRIBE EXTENDED sends) answer empty lists, a create without constraints creates the
table, and one with any of the six kinds is refused with nothing created. Hive 2.3's calls are compared
with Hive Metastore 2.3.10 in tests/e2e/test_thrift_differential.py (CONSTRAINT_STEPS)."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest
from thriftpy2.thrift import TException

from gateway.app import Gateway
from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database


@pytest.fixture
async def client(pg_dsn: str) -> AsyncIterator[ThriftClient]:
    gw: Gateway
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as client:
        yield client


def _table(name: str) -> Any:
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="id", type="bigint", comment="")], inputFormat="in",
                               outputFormat="out", compressed=False, numBuckets=-1,
                               serdeInfo=hms.SerDeInfo(serializationLib="serde", parameters={}), bucketCols=[],
                               sortCols=[], parameters={})
    return hms.Table(tableName=name, dbName="db", owner="alice", sd=sd, parameters={}, partitionKeys=[],
                     tableType="MANAGED_TABLE")


async def test_hive_4s_describe_reads_no_constraints(client: ThriftClient) -> None:
    await client("create_table_with_constraints", _table("t"), [], [], [], [], [], [])
    assert (await client("get_table", "db", "t")).tableName == "t"
    every = await client("get_all_table_constraints", hms.AllTableConstraintsRequest(
        dbName="db", tblName="t", catName="hive", validWriteIdList="db.t:0:9223372036854775807::", tableId=1))
    assert every.allTableConstraints == hms.SQLAllTableConstraints(
        primaryKeys=[], foreignKeys=[], uniqueConstraints=[], notNullConstraints=[], defaultConstraints=[],
        checkConstraints=[])
    for method, request, field in (
            ("get_unique_constraints", hms.UniqueConstraintsRequest, "uniqueConstraints"),
            ("get_not_null_constraints", hms.NotNullConstraintsRequest, "notNullConstraints"),
            ("get_default_constraints", hms.DefaultConstraintsRequest, "defaultConstraints"),
            ("get_check_constraints", hms.CheckConstraintsRequest, "checkConstraints")):
        assert getattr(await client(method, request(catName="hive", db_name="db", tbl_name="t")), field) == []
    with pytest.raises(TException) as refused:  # a request that names no table is a mistake, said as one
        await client("get_foreign_keys", hms.ForeignKeysRequest())
    assert type(refused.value).__name__ == "MetaException" and "names no table" in str(refused.value)


async def test_a_create_with_any_constraint_is_refused_and_creates_nothing(client: ThriftClient) -> None:
    not_null = hms.SQLNotNullConstraint(catName="hive", table_db="db", table_name="t", column_name="id",
                                        nn_name="nn_id", enable_cstr=True, validate_cstr=False, rely_cstr=True)
    check = hms.SQLCheckConstraint(catName="hive", table_db="db", table_name="t", column_name="id",
                                   check_expression="id > 0", dc_name="ck_id", enable_cstr=True,
                                   validate_cstr=False, rely_cstr=False)
    arguments: tuple[list[Any], ...]
    for arguments in (([], [], [], [not_null], [], []), ([], [], [], [], [], [check])):
        with pytest.raises(TException) as refused:
            await client("create_table_with_constraints", _table("t"), *arguments)
        assert type(refused.value).__name__ == "InvalidObjectException"
        assert "stores no table constraints" in str(refused.value) and "db.t" in str(refused.value)
    assert await client("get_all_tables", "db") == []
    with pytest.raises(TException) as missing:
        await client("drop_constraint", hms.DropConstraintRequest(dbname="db", tablename="t", constraintname="nn_id"))
    assert type(missing.value).__name__ == "NoSuchObjectException"


async def test_hive3s_alter_table_add_constraint_of_every_kind_is_refused(client: ThriftClient) -> None:
    """Hive 3's and 4's ALTER TABLE t ADD CONSTRAINT ... UNIQUE / NOT NULL / DEFAULT / CHECK send their own
    calls: each answers MetaException saying no constraint is stored (not an unknown method), and adds none."""
    await client("create_table", _table("t"))
    common = {"catName": "hive", "table_db": "db", "table_name": "t", "column_name": "id", "enable_cstr": True,
              "validate_cstr": False, "rely_cstr": True}
    for method, request in (
            ("add_unique_constraint", hms.AddUniqueConstraintRequest(
                [hms.SQLUniqueConstraint(key_seq=1, uk_name="uk_id", **common)])),
            ("add_not_null_constraint", hms.AddNotNullConstraintRequest([hms.SQLNotNullConstraint(
                nn_name="nn_id", **common)])),
            ("add_default_constraint", hms.AddDefaultConstraintRequest([hms.SQLDefaultConstraint(
                default_value="0", dc_name="dc_id", **common)])),
            ("add_check_constraint", hms.AddCheckConstraintRequest([hms.SQLCheckConstraint(
                check_expression="id > 0", dc_name="ck_id", **common)]))):
        with pytest.raises(TException) as refused:
            await client(method, request)
        assert type(refused.value).__name__ == "MetaException", method
        assert "stores no table constraints" in str(refused.value) and "of db.t was not added" in str(refused.value)
    every = await client("get_all_table_constraints", hms.AllTableConstraintsRequest(dbName="db", tblName="t",
                                                                                    catName="hive"))
    assert every.allTableConstraints.notNullConstraints == []
