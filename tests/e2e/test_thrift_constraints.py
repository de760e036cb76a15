"""Table constraints over Thrift (gateway/thrift/constraint_methods.py, store/constraints.py), stored: Hive 3's
and 4's creates with all six kinds read back by each read and by get_all_table_constraints; a create with a
constraint refused stores nothing; the add_* calls, drop_constraint and their refusals; constraints follow a
rename and a move, go with a drop (a foreign key with its parent's drop), and keep the columns they name; the
notification log holds Hive's events for them, which the poller applies. Hive 2.3's calls are compared with
Hive Metastore 2.3.10 in tests/e2e/test_thrift_differential.py (CONSTRAINT_STEPS)."""

from __future__ import annotations

import json
import re
from typing import Any, AsyncIterator

import pytest
from thriftpy2.thrift import TException

from gateway.app import Gateway
from gateway.thrift.idl import hms
from tests.conftest import running_gateway, wait_applied
from tests.thrift_client import ThriftClient, client_with_database

COMMON = {"catName": "hive", "enable_cstr": False, "validate_cstr": False, "rely_cstr": True}


@pytest.fixture
async def served(pg_dsn: str) -> AsyncIterator[tuple[Gateway, ThriftClient]]:
    gw: Gateway
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as client:
        yield gw, client


def _table(name: str, db: str = "db", columns: tuple[str, ...] = ("id", "amount", "note")) -> Any:
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name=c, type="bigint", comment="") for c in columns],
                               inputFormat="in", outputFormat="out", compressed=False, numBuckets=-1,
                               serdeInfo=hms.SerDeInfo(serializationLib="serde", parameters={}), bucketCols=[],
                               sortCols=[], parameters={})
    return hms.Table(tableName=name, dbName=db, owner="alice", sd=sd, parameters={}, partitionKeys=[],
                     tableType="MANAGED_TABLE")


def _pk(table: str, column: str, name: str | None, seq: int = 1, db: str = "db") -> Any:
    return hms.SQLPrimaryKey(table_db=db, table_name=table, column_name=column, key_seq=seq, pk_name=name, **COMMON)


def _fk(table: str, column: str, parent: str, parent_column: str, name: str | None, seq: int = 1,
        db: str = "db", parent_db: str = "db") -> Any:
    return hms.SQLForeignKey(pktable_db=parent_db, pktable_name=parent, pkcolumn_name=parent_column, fktable_db=db,
                             fktable_name=table, fkcolumn_name=column, key_seq=seq, update_rule=0, delete_rule=0,
                             fk_name=name, **COMMON)


def _kind(column: str, **fields: Any) -> dict[str, Any]:
    return {"table_db": "db", "table_name": "t", "column_name": column, **COMMON, **fields}


async def _raises(client: ThriftClient, expected: str, words: str, method: str, *args: Any) -> None:
    with pytest.raises(TException) as refused:
        await client(method, *args)
    assert type(refused.value).__name__ == expected, (method, refused.value)
    assert words in str(refused.value), (method, str(refused.value))


async def _pks(client: ThriftClient, table: str, db: str = "db") -> list[tuple[str, str, int]]:
    got = (await client("get_primary_keys", hms.PrimaryKeysRequest(db_name=db, tbl_name=table))).primaryKeys
    return [(k.pk_name, k.column_name, k.key_seq) for k in got]


async def _fks(client: ThriftClient, table: str | None, parent: str | None = None,
               db: str = "db") -> list[tuple[str, str, str, str, str]]:
    got = (await client("get_foreign_keys", hms.ForeignKeysRequest(
        parent_db_name=db if parent else None, parent_tbl_name=parent, foreign_db_name=db if table else None,
        foreign_tbl_name=table))).foreignKeys
    return [(k.fk_name, f"{k.fktable_db}.{k.fktable_name}.{k.fkcolumn_name}",
             f"{k.pktable_db}.{k.pktable_name}.{k.pkcolumn_name}", k.pk_name, str(k.key_seq)) for k in got]


async def test_hive_4s_create_with_every_kind_is_read_back_by_each_read(
        served: tuple[Gateway, ThriftClient]) -> None:
    gw, client = served
    await client("create_table_with_constraints", _table("parent"), [_pk("parent", "id", "pk_parent")], [], [], [],
                 [], [])
    await client("create_table_req", hms.CreateTableRequest(
        table=_table("t"),
        primaryKeys=[_pk("t", "id", None), _pk("t", "amount", None, 2)],
        foreignKeys=[_fk("t", "note", "parent", "id", "FK_Note")],
        uniqueConstraints=[hms.SQLUniqueConstraint(**_kind("note", key_seq=1, uk_name="uk_note"))],
        notNullConstraints=[hms.SQLNotNullConstraint(**_kind("amount", nn_name=None))],
        defaultConstraints=[hms.SQLDefaultConstraint(**_kind("note", default_value="0", dc_name="dc_note"))],
        checkConstraints=[hms.SQLCheckConstraint(**_kind("amount", check_expression="amount > 0",
                                                         dc_name="ck_amount"))]))
    every = (await client("get_all_table_constraints", hms.AllTableConstraintsRequest(
        dbName="db", tblName="t", catName="hive"))).allTableConstraints
    (pk_name,) = {k.pk_name for k in every.primaryKeys}
    # Hive's generated name: the kind, Java's hash of "{db,t,id,pk}", the time in ms, a counter.
    assert re.fullmatch(r"pk_-?\d+_\d{13}_0", pk_name) and pk_name.startswith("pk_-1108416484_"), pk_name
    assert [(k.column_name, k.key_seq, k.catName, k.rely_cstr) for k in every.primaryKeys] == [
        ("id", 1, "hive", True), ("amount", 2, "hive", True)]
    assert every.primaryKeys == (await client("get_primary_keys", hms.PrimaryKeysRequest(
        db_name="DB", tbl_name="T"))).primaryKeys
    assert [(k.fk_name, k.pk_name, k.pktable_name, k.pkcolumn_name, k.fkcolumn_name) for k in every.foreignKeys] == [
        ("fk_note", "pk_parent", "parent", "id", "note")]  # names are kept in lower case, as Hive 3 and 4 do
    assert [(u.uk_name, u.column_name) for u in every.uniqueConstraints] == [("uk_note", "note")]
    (nn,) = every.notNullConstraints
    assert nn.column_name == "amount" and re.fullmatch(r"nn_-?\d+_\d{13}_0", nn.nn_name)
    assert [(d.dc_name, d.default_value) for d in every.defaultConstraints] == [("dc_note", "0")]
    assert [(c.dc_name, c.check_expression) for c in every.checkConstraints] == [("ck_amount", "amount > 0")]
    for method, request, field in (
            ("get_unique_constraints", hms.UniqueConstraintsRequest, "uniqueConstraints"),
            ("get_not_null_constraints", hms.NotNullConstraintsRequest, "notNullConstraints"),
            ("get_default_constraints", hms.DefaultConstraintsRequest, "defaultConstraints"),
            ("get_check_constraints", hms.CheckConstraintsRequest, "checkConstraints")):
        assert getattr(await client(method, request(catName="hive", db_name="db", tbl_name="t")), field) == getattr(
            every, field), method
        assert getattr(await client(method, request(catName="hive", db_name="db", tbl_name="nope")), field) == []
    assert await _fks(client, None, "parent") == await _fks(client, "t", "parent") == await _fks(client, "t")
    await _raises(client, "MetaException", "names no table", "get_foreign_keys", hms.ForeignKeysRequest())

    # The log: CREATE_TABLE, then one event per kind, Hive's messages (JSONAddPrimaryKeyMessage and its kin).
    await wait_applied(gw)
    events = (await client("get_next_notification", hms.NotificationEventRequest(lastEvent=0))).events
    tail = [(e.eventType, e.tableName) for e in events[-7:]]
    assert tail == [("CREATE_TABLE", "t"), ("ADD_PRIMARYKEY", "t"), ("ADD_UNIQUECONSTRAINT", "t"),
                    ("ADD_NOTNULLCONSTRAINT", "t"), ("ADD_DEFAULTCONSTRAINT", "t"), ("ADD_CHECKCONSTRAINT", "t"),
                    ("ADD_FOREIGNKEY", "t")]
    message = json.loads(events[-1].message)
    (fk_json,) = message["foreignKeyListJson"]
    assert '"fk_note"' in fk_json and '"pk_parent"' not in fk_json  # as added: the key it refers to is read
    assert len(json.loads(events[-6].message)["primaryKeyListJson"]) == 2


async def test_a_create_with_a_constraint_refused_creates_nothing(served: tuple[Gateway, ThriftClient]) -> None:
    _, client = served
    await client("create_table_with_constraints", _table("parent"), [_pk("parent", "id", "pk_parent")], [])
    for expected, words, primary, foreign in (
            ("InvalidObjectException", "Parent column not found: nope", [_pk("t", "nope", "pk_t")], []),
            ("InvalidObjectException", "Child column not found: nope", [], [_fk("t", "nope", "parent", "id", "f")]),
            ("InvalidObjectException", "Parent table not found: missing", [],
             [_fk("t", "id", "missing", "id", "fk_t")]),
            ("MetaException", "no corresponding primary key or unique key", [],
             [_fk("t", "id", "parent", "amount", "fk_t")]),
            ("MetaException", "Constraint name already exists: pk_parent", [_pk("t", "id", "PK_Parent")], []),
            ("InvalidObjectException", "not db.t, the table created with it", [_pk("parent", "id", "pk_x")], [])):
        await _raises(client, expected, words, "create_table_with_constraints", _table("t"), primary, foreign)
        assert await client("get_all_tables", "db") == ["parent"]
    # A foreign key to the table's own key, added in the same create.
    await client("create_table_with_constraints", _table("t"), [_pk("t", "id", "pk_t")],
                 [_fk("t", "amount", "t", "id", "fk_self")])
    assert await _fks(client, "t") == [("fk_self", "db.t.amount", "db.t.id", "pk_t", "1")]


async def test_keys_added_and_dropped_by_alter_table_add_and_drop_constraint(
        served: tuple[Gateway, ThriftClient]) -> None:
    _, client = served
    for name in ("parent", "child"):
        await client("create_table", _table(name))
    await client("create_database", hms.Database(name="other", description="", parameters={}))
    await client("create_table", _table("parent", "other"))
    add_pk, add_fk = "add_primary_key", "add_foreign_key"
    await client(add_pk, hms.AddPrimaryKeyRequest([_pk("parent", "id", "pk_p"), _pk("parent", "amount", "pk_p", 2)]))
    assert await _pks(client, "parent") == [("pk_p", "id", 1), ("pk_p", "amount", 2)]
    await _raises(client, "MetaException", "Primary key already exists for: db.parent", add_pk,
                  hms.AddPrimaryKeyRequest([_pk("parent", "note", "pk_p2")]))
    await _raises(client, "NoSuchObjectException", "Parent table not found: nope", add_pk,
                  hms.AddPrimaryKeyRequest([_pk("nope", "id", "pk_n")]))
    await _raises(client, "MetaException", "Parent column not found: nope", add_pk,
                  hms.AddPrimaryKeyRequest([_pk("child", "nope", "pk_n")]))
    await _raises(client, "MetaException", "key_seq must number", add_pk,
                  hms.AddPrimaryKeyRequest([_pk("child", "id", "pk_c"), _pk("child", "amount", "pk_c", 3)]))
    # Names are unique in a database, not across databases.
    await _raises(client, "MetaException", "Constraint name already exists: pk_p", "add_unique_constraint",
                  hms.AddUniqueConstraintRequest([hms.SQLUniqueConstraint(**_kind("id", table_name="child",
                                                                                  key_seq=1, uk_name="pk_p"))]))
    await client(add_pk, hms.AddPrimaryKeyRequest([_pk("parent", "id", "pk_p", db="other")]))
    # A foreign key must refer to the whole key, column for column.
    await _raises(client, "MetaException", "Possible keys: pk_p (id, amount)", add_fk,
                  hms.AddForeignKeyRequest([_fk("child", "id", "parent", "id", "fk_c")]))
    await client(add_fk, hms.AddForeignKeyRequest([_fk("child", "id", "parent", "id", "fk_c"),
                                                   _fk("child", "amount", "parent", "amount", "fk_c", 2)]))
    assert await _fks(client, "child") == [("fk_c", "db.child.id", "db.parent.id", "pk_p", "1"),
                                           ("fk_c", "db.child.amount", "db.parent.amount", "pk_p", "2")]
    await _raises(client, "NoSuchObjectException", "The constraint: 'nope' does not exist", "drop_constraint",
                  hms.DropConstraintRequest(dbname="db", tablename="child", constraintname="nope"))
    # The primary key a foreign key refers to may be dropped: the foreign key is then read by no read (Hive's
    # reads join the parent's key) until a key holding its columns is back.
    await client("drop_constraint", hms.DropConstraintRequest(dbname="db", tablename="parent", constraintname="PK_P"))
    assert await _pks(client, "parent") == [] and await _fks(client, "child") == []
    await client(add_pk, hms.AddPrimaryKeyRequest([_pk("parent", "id", "pk_q"), _pk("parent", "amount", "pk_q", 2)]))
    assert [k[3] for k in await _fks(client, "child")] == ["pk_q", "pk_q"]
    # A foreign key is dropped by its name and its table, or the table it refers to (as Hive), in any database.
    await client("drop_constraint", hms.DropConstraintRequest(dbname="db", tablename="parent", constraintname="fk_c"))
    assert await _fks(client, "child") == []
    await client("create_table", _table("kid", "other"))
    await client(add_fk, hms.AddForeignKeyRequest([_fk("kid", "id", "parent", "id", "fk_kid", db="other"),
                                                   _fk("kid", "amount", "parent", "amount", "fk_kid", 2, db="other")]))
    assert [k[2] for k in await _fks(client, "kid", db="other")] == ["db.parent.id", "db.parent.amount"]
    await client("drop_constraint", hms.DropConstraintRequest(dbname="db", tablename="parent",
                                                              constraintname="fk_kid"))
    assert await _fks(client, "kid", db="other") == []
    assert await _pks(client, "parent", "other") == [("pk_p", "id", 1)]


async def test_constraints_follow_a_rename_and_go_with_a_drop(served: tuple[Gateway, ThriftClient]) -> None:
    gw, client = served
    await client("create_table_with_constraints", _table("parent"), [_pk("parent", "id", "pk_parent")], [])
    await client("create_table_with_constraints", _table("child"), [_pk("child", "id", "pk_child")],
                 [_fk("child", "amount", "parent", "id", "fk_child")])
    renamed = await client("get_table", "db", "parent")
    renamed.tableName = "parent2"
    await client("alter_table", "db", "parent", renamed)
    assert await _pks(client, "parent2") == [("pk_parent", "id", 1)] and await _pks(client, "parent") == []
    assert await _fks(client, "child") == [("fk_child", "db.child.amount", "db.parent2.id", "pk_parent", "1")]
    # Columns a constraint names stay: neither dropped nor renamed, as the parent's key column nor as the
    # child's; others may change (Hive 2.3 refuses every column change of a table with constraints).
    for table, column in (("parent2", "id"), ("child", "amount"), ("child", "id")):
        altered = await client("get_table", "db", table)
        altered.sd.cols = [c for c in altered.sd.cols if c.name != column]
        await _raises(client, "MetaException", f"({column} by", "alter_table", "db", table, altered)
        altered = await client("get_table", "db", table)
        altered.sd.cols = [hms.FieldSchema(name=f"{c.name}_2" if c.name == column else c.name, type=c.type,
                                           comment="") for c in altered.sd.cols]
        await _raises(client, "MetaException", "drop those constraints first", "alter_table", "db", table, altered)
    altered = await client("get_table", "db", "child")
    altered.sd.cols = [c for c in altered.sd.cols if c.name != "note"] + [hms.FieldSchema("added", "string", "")]
    await client("alter_table", "db", "child", altered)
    assert [c.name for c in (await client("get_table", "db", "child")).sd.cols] == ["id", "amount", "added"]
    # A move to another database takes the names there.
    await client("create_database", hms.Database(name="other", description="", parameters={}))
    moved = await client("get_table", "db", "child")
    moved.dbName = "other"
    await client("alter_table", "db", "child", moved)
    assert await _pks(client, "child", "other") == [("pk_child", "id", 1)]
    await client("create_table_with_constraints", _table("again"), [_pk("again", "id", "pk_child")], [])
    # The parent's drop takes the foreign keys that refer to it; the child's keeps nothing.
    await client("drop_table", "db", "parent2", True)
    assert await _fks(client, "child", db="other") == []
    await client("create_table_with_constraints", _table("parent2"), [_pk("parent2", "id", "pk_parent")], [])
    assert await _fks(client, "child", db="other") == []
    await client("drop_table", "other", "child", True)
    await client("create_table_with_constraints", _table("child", "other"),
                 [_pk("child", "id", "pk_child", db="other")], [])
    await client("drop_database", "other", True, True)
    await client("create_database", hms.Database(name="other", description="", parameters={}))
    await client("create_table_with_constraints", _table("child", "other"),
                 [_pk("child", "id", "pk_child", db="other")], [])
    await wait_applied(gw)  # the poller applies (ignores) the constraints' events
    types = [e.eventType for e in (await client("get_next_notification", hms.NotificationEventRequest(
        lastEvent=0))).events]
    assert types.count("ADD_PRIMARYKEY") == 6 and types.count("ADD_FOREIGNKEY") == 1
