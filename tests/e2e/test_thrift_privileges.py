"""Roles and privileges over Thrift (gateway/thrift/privilege_methods.py, store/privileges.py): what Hive's
SQL-standard authorization and Trino's sql-standard security keep in the metastore. Hive 2.3.10's answers
call by call are compared in tests/e2e/test_thrift_differential.py (PRIVILEGE_STEPS); here, what that
comparison cannot show: the admin users of hive.users.in.admin.role, every gateway answering what another
stored, refusals that store nothing and say why, and concurrent role grants that cannot close a cycle."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import pytest
from thriftpy2.thrift import TException

from gateway.app import Gateway
from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient, client_with_database

USER, ROLE, GROUP = 1, 2, 3
GLOBAL, DATABASE, TABLE, PARTITION, COLUMN = 1, 2, 3, 4, 5
GRANT, REVOKE = 1, 2


def _table(name: str, keys: tuple[str, ...] = ("ds",)) -> Any:
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="id", type="bigint", comment="")], inputFormat="in",
                               outputFormat="out", compressed=False, numBuckets=-1,
                               serdeInfo=hms.SerDeInfo(serializationLib="serde", parameters={}), bucketCols=[],
                               sortCols=[], parameters={})
    return hms.Table(tableName=name, dbName="db", owner="alice", sd=sd, parameters={},
                     partitionKeys=[hms.FieldSchema(name=k, type="string", comment="") for k in keys],
                     tableType="MANAGED_TABLE")


def _ref(kind: int, table: str | None = "t", values: list[str] | None = None, column: str | None = None,
         db: str | None = "db") -> Any:
    return hms.HiveObjectRef(objectType=kind, dbName=db, objectName=table, partValues=values, columnName=column)


def _bag(*grants: tuple[Any, str, int, str]) -> Any:
    return hms.PrivilegeBag(privileges=[
        hms.HiveObjectPrivilege(hiveObject=obj, principalName=principal, principalType=kind,
                                grantInfo=hms.PrivilegeGrantInfo(privilege=privilege, createTime=0, grantor="bob",
                                                                 grantorType=USER, grantOption=False))
        for obj, principal, kind, privilege in grants])


def _held(listed: list[Any]) -> set[tuple[int, str, str]]:
    return {(p.hiveObject.objectType, p.principalName, p.grantInfo.privilege) for p in listed}


@pytest.fixture
async def env(pg_dsn: str) -> AsyncIterator[tuple[Gateway, ThriftClient]]:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as client:
        await client("create_table", _table("t"))
        await client("add_partition", hms.Partition(values=["2024-01-01"], dbName="db", tableName="t", parameters={}))
        yield gw, client


async def _refused(client: ThriftClient, method: str, *args: Any) -> str:
    with pytest.raises(TException) as refused:
        await client(method, *args)
    assert type(refused.value).__name__ == "MetaException", refused.value
    return str(getattr(refused.value, "message", ""))


async def test_the_admin_users_hold_the_admin_role_from_the_start(pg_dsn: str) -> None:
    """Hive's metastore grants `admin` (with its grant option, by the role itself) to the users of
    hive.users.in.admin.role when it starts; a second gateway's start changes nothing, and `admin` holds
    every privilege on everything."""
    conf = {"hive.users.in.admin.role": "hive, ops"}
    async with running_gateway(pg_dsn, **conf) as gw, running_gateway(pg_dsn, **conf):
        client = ThriftClient(gw.thrift_port)
        try:
            held = (await client("get_principals_in_role", hms.GetPrincipalsInRoleRequest(roleName="admin")))
            assert [(g.principalName, g.principalType, g.grantOption, g.grantorName, g.grantorPrincipalType)
                    for g in held.principalGrants] == [("hive", USER, True, "admin", ROLE),
                                                       ("ops", USER, True, "admin", ROLE)]
            assert [r.roleName for r in await client("list_roles", "ops", USER)] == ["admin", "public"]
            everything = await client("list_privileges", "admin", ROLE, _ref(GLOBAL, None, db=None))
            assert [(p.grantInfo.privilege, p.grantInfo.grantOption) for p in everything] == [("All", True)]
            assert await client("get_role_names") == ["admin", "public"]
        finally:
            client.close()


async def test_what_one_gateway_stores_every_gateway_answers_at_once(env: tuple[Gateway, ThriftClient],
                                                                      pg_dsn: str) -> None:
    """Grants are not cached: a role, a grant and a revoke made on one gateway are read on another at once."""
    _, client = env
    async with running_gateway(pg_dsn) as other_gw:
        other = ThriftClient(other_gw.thrift_port)
        try:
            await client("create_role", hms.Role(roleName="analysts", ownerName="bob"))
            await client("grant_role", "analysts", "alice", USER, "bob", USER, False)
            await client("grant_privileges", _bag((_ref(TABLE), "analysts", ROLE, "SELECT")))
            assert [r.roleName for r in await other("list_roles", "alice", USER)] == ["analysts", "public"]
            seen = await other("get_privilege_set", _ref(TABLE), "alice", [])
            assert [g.privilege for g in seen.rolePrivileges["analysts"]] == ["SELECT"]
            await other("revoke_privileges", _bag((_ref(TABLE), "analysts", ROLE, "SELECT")))
            assert await client("list_privileges", None, None, _ref(TABLE)) == []
        finally:
            other.close()


@pytest.mark.parametrize(("grant", "says"), [
    ((_ref(TABLE), "carol", USER, "SELECT,"), "names an empty privilege"),
    ((_ref(COLUMN, column="nope"), "carol", USER, "SELECT"), "has no column"),
    ((_ref(PARTITION, values=["2099-01-01"]), "carol", USER, "SELECT"), "does not exist"),
    ((_ref(PARTITION, values=["a", "b"]), "carol", USER, "SELECT"), "partition"),
    ((_ref(TABLE, table="nope"), "carol", USER, "SELECT"), "does not exist"),
    ((_ref(DATABASE, table=None, db="nope"), "carol", USER, "SELECT"), "database nope does not exist"),
    ((_ref(TABLE), "nope", ROLE, "SELECT"), "role 'nope' does not exist"),
    ((_ref(TABLE), "carol", 7, "SELECT"), "principal type '7' is not one of USER, ROLE, GROUP"),
    ((_ref(9), "carol", USER, "SELECT"), "object type '9' is not one of"),
    ((_ref(TABLE), "", USER, "SELECT"), "a principal name is needed"),
    ((_ref(TABLE), "carol", USER, "S" * 200), "privilege"),
])
async def test_a_refused_grant_says_why_and_stores_nothing_of_its_call(
        env: tuple[Gateway, ThriftClient], grant: tuple[Any, str, int, str], says: str) -> None:
    """A bad grant, after a good one in the same call: MetaException (the only exception Hive declares)
    with a message naming the problem, neither grant stored, the connection still serving."""
    _, client = env
    good = (_ref(TABLE), "dave", USER, "SELECT")
    message = await _refused(client, "grant_privileges", _bag(good, grant))
    assert says in message and len(message) <= 1000
    assert await client("list_privileges", "dave", USER, _ref(TABLE)) == []
    assert await client("grant_privileges", _bag(good))


async def test_roles_refuse_what_hive_refuses_and_say_why(env: tuple[Gateway, ThriftClient]) -> None:
    _, client = env
    await client("create_role", hms.Role(roleName="r", ownerName="bob"))
    assert "already exists" in await _refused(client, "create_role", hms.Role(roleName="r"))
    assert "a role needs a name" in await _refused(client, "create_role", hms.Role(roleName=""))
    assert "can't be created" in await _refused(client, "create_role", hms.Role(roleName="public"))
    assert "can't be dropped" in await _refused(client, "drop_role", "admin")
    assert "every user holds it" in await _refused(client, "grant_role", "public", "u", USER, "bob", USER, False)
    assert "can't be revoked" in await _refused(client, "revoke_role", "public", "u", USER)
    assert "no cycles" in await _refused(client, "grant_role", "r", "r", ROLE, "bob", USER, False)
    assert "role 'nope' does not exist" in await _refused(client, "grant_role", "r", "nope", ROLE, "bob", USER, False)
    assert "principal type" in await _refused(client, "list_roles", "u", None)
    request = hms.GrantRevokeRoleRequest(requestType=REVOKE, roleName="r", principalName="u", principalType=USER,
                                         grantOption=True)
    assert "does not have grant option" in await _refused(client, "grant_revoke_role", request)
    request.requestType = 5
    assert "neither GRANT (1) nor REVOKE (2)" in await _refused(client, "grant_revoke_role", request)
    assert await client("get_role_names") == ["admin", "public", "r"]


async def test_a_user_holds_the_privileges_of_the_roles_of_its_roles_and_groups(
        env: tuple[Gateway, ThriftClient]) -> None:
    """get_privilege_set lists the user's, each group's and each role's grants, the roles found through
    the user, its groups and other roles, and `public`; after a role is dropped, neither it nor what it
    held is listed."""
    _, client = env
    for role in ("analysts", "readers", "etl_role"):
        await client("create_role", hms.Role(roleName=role, ownerName="bob"))
    await client("grant_role", "analysts", "alice", USER, "bob", USER, False)
    await client("grant_role", "readers", "analysts", ROLE, "bob", USER, False)
    await client("grant_role", "etl_role", "etl", GROUP, "bob", USER, False)
    await client("grant_privileges", _bag((_ref(TABLE), "readers", ROLE, "SELECT"),
                                          (_ref(TABLE), "etl_role", ROLE, "INSERT"),
                                          (_ref(TABLE), "etl", GROUP, "UPDATE"),
                                          (_ref(TABLE), "alice", USER, "DELETE")))
    got = await client("get_privilege_set", _ref(TABLE), "alice", ["etl"])
    assert {u: [g.privilege for g in gs] for u, gs in got.userPrivileges.items()} == {"alice": ["DELETE"]}
    assert {u: [g.privilege for g in gs] for u, gs in got.groupPrivileges.items()} == {"etl": ["UPDATE"]}
    assert {r: [g.privilege for g in gs] for r, gs in got.rolePrivileges.items()} == {
        "analysts": [], "etl_role": ["INSERT"], "public": [], "readers": ["SELECT"]}
    await client("drop_role", "readers")
    got = await client("get_privilege_set", _ref(TABLE), "alice", ["etl"])
    assert sorted(got.rolePrivileges) == ["analysts", "etl_role", "public"]
    assert ("readers" not in {p.principalName for p in await client("list_privileges", None, None, _ref(TABLE))})


async def test_grants_follow_their_table_and_go_with_it(env: tuple[Gateway, ThriftClient]) -> None:
    """A rename keeps a table's grants (of the table, its partitions and columns); dropping a partition
    drops its grants, dropping the table drops the rest: a new table of the same name starts with none."""
    _, client = env
    await client("grant_privileges", _bag((_ref(TABLE), "carol", USER, "SELECT,INSERT"),
                                          (_ref(PARTITION, values=["2024-01-01"]), "carol", USER, "SELECT"),
                                          (_ref(COLUMN, column="id"), "carol", USER, "SELECT")))
    renamed = await client("get_table", "db", "t")
    renamed.tableName = "t2"
    await client("alter_table", "db", "t", renamed)
    assert _held(await client("list_privileges", "carol", USER, hms.HiveObjectRef())) == {
        (TABLE, "carol", "SELECT"), (TABLE, "carol", "INSERT"), (PARTITION, "carol", "SELECT"),
        (COLUMN, "carol", "SELECT")}
    assert {p.hiveObject.objectName for p in await client("list_privileges", "carol", USER, hms.HiveObjectRef())} \
        == {"t2"}
    await client("drop_partition", "db", "t2", ["2024-01-01"], True)
    assert _held(await client("list_privileges", "carol", USER, hms.HiveObjectRef())) == {
        (TABLE, "carol", "SELECT"), (TABLE, "carol", "INSERT"), (COLUMN, "carol", "SELECT")}
    await client("drop_table", "db", "t2", True)
    await client("create_table", _table("t2"))
    assert await client("list_privileges", "carol", USER, hms.HiveObjectRef()) == []


async def test_revokes_take_the_privilege_or_only_its_grant_option(env: tuple[Gateway, ThriftClient]) -> None:
    _, client = env
    bag = _bag((_ref(TABLE), "carol", USER, "SELECT"))
    bag.privileges[0].grantInfo.grantOption = True
    await client("grant_privileges", bag)
    only_option = hms.GrantRevokePrivilegeRequest(requestType=REVOKE, privileges=bag, revokeGrantOption=True)
    assert (await client("grant_revoke_privileges", only_option)).success
    [held] = await client("list_privileges", "carol", USER, _ref(TABLE))
    assert (held.grantInfo.privilege, held.grantInfo.grantOption) == ("SELECT", False)
    assert "does not have grant option" in await _refused(client, "grant_revoke_privileges", only_option)
    await client("revoke_privileges", bag)
    assert "does not hold SELECT" in await _refused(client, "revoke_privileges", bag)
    assert await client("list_privileges", "carol", USER, _ref(TABLE)) == []


async def test_concurrent_role_grants_never_close_a_cycle(env: tuple[Gateway, ThriftClient], pg_dsn: str) -> None:
    """Granting a to b and b to a at once, on two gateways, round after round: one of each pair is
    refused, so no role ever holds itself."""
    gw, client = env
    async with running_gateway(pg_dsn) as other_gw:
        other = ThriftClient(other_gw.thrift_port)
        try:
            for i in range(15):
                a, b = f"a{i}", f"b{i}"
                for role in (a, b):
                    await client("create_role", hms.Role(roleName=role))
                outcomes = await asyncio.gather(client("grant_role", a, b, ROLE, "x", USER, False),
                                                other("grant_role", b, a, ROLE, "x", USER, False),
                                                return_exceptions=True)
                refused = [o for o in outcomes if isinstance(o, TException)]
                assert len(refused) == 1 and "no cycles" in getattr(refused[0], "message", ""), outcomes
        finally:
            other.close()


async def test_a_table_is_created_with_its_creators_grants_or_not_at_all(env: tuple[Gateway, ThriftClient]) -> None:
    """Hive's CREATE TABLE sends the owner's grants in Table.privileges: stored with the table, in the same
    transaction, so a refused grant (a role that does not exist) leaves no table behind."""
    _, client = env
    owned = _table("owned")
    owned.privileges = hms.PrincipalPrivilegeSet(userPrivileges={"alice": [hms.PrivilegeGrantInfo(
        privilege="SELECT", createTime=0, grantor="alice", grantorType=USER, grantOption=True)]})
    await client("create_table", owned)
    assert _held(await client("list_privileges", None, None, _ref(TABLE, "owned"))) == {(TABLE, "alice", "SELECT")}
    refused = _table("refused")
    refused.privileges = hms.PrincipalPrivilegeSet(rolePrivileges={"nope": [hms.PrivilegeGrantInfo(
        privilege="SELECT", createTime=0, grantor="alice", grantorType=USER, grantOption=False)]})
    with pytest.raises(TException) as failed:
        await client("create_table", refused)
    assert "role 'nope' does not exist" in getattr(failed.value, "message", "")
    assert await client("get_all_tables", "db") == ["owned", "t"]

