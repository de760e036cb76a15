"""Roles, role grants, privileges and constraints, written into a real Hive Metastore over Thrift, for the
import's tests; and the read calls that show them, on either side.

Database `authz`: a table partitioned by day with PARTITION_LEVEL_PRIVILEGE=TRUE (Hive's switch for partition
grants) and a plain one. Roles: `analysts`, held by a user (with the grant option) and a group; `readers`,
held by a user and by the role `analysts` (nested); `loners`, held by nobody; and an explicit grant of `admin`.
Privileges on GLOBAL, the database, both tables, a partition, a column and a partition's column, to users, a
group, roles and `public`, some with the grant option. Database `keys`: a composite primary key, a
table's own primary key, and a foreign key from it to the first table's key.
"""

from __future__ import annotations

from typing import Any, Callable

from gateway.thrift.idl import hms
from tests.e2e.hms_catalog import TEXT, _cols, _partition, _sd, _table

U, R, G = hms.PrincipalType.USER, hms.PrincipalType.ROLE, hms.PrincipalType.GROUP
GLOBAL = hms.HiveObjectRef(objectType=hms.HiveObjectType.GLOBAL)
AUTHZ_DB = hms.HiveObjectRef(objectType=hms.HiveObjectType.DATABASE, dbName="authz")
DAYS = ("2024-01-01", "2024-01-02")
ROLES = ("analysts", "readers", "loners")
# Every principal the grants name, and some that hold nothing.
PRINCIPALS = [("alice", U), ("bob", U), ("carol", U), ("dave", U), ("erin", U), ("ops", U), ("nobody", U),
              ("etl", G), ("analysts", R), ("readers", R), ("loners", R), ("public", R), ("admin", R)]


def _on(table: str, *, part: str | None = None, column: str | None = None) -> Any:
    kind = hms.HiveObjectType.COLUMN if column else hms.HiveObjectType.PARTITION if part else hms.HiveObjectType.TABLE
    return hms.HiveObjectRef(objectType=kind, dbName="authz", objectName=table,
                             partValues=[part] if part else None, columnName=column)


FACTS = _on("facts")
# The objects whose grants are read on both sides (list_privileges of every principal on each).
OBJECTS = [GLOBAL, AUTHZ_DB, _on("facts"), _on("plain"), _on("facts", part=DAYS[0]), _on("facts", part=DAYS[1]),
           _on("facts", column="amount"), _on("facts", column="id"), _on("plain", column="a"),
           _on("facts", part=DAYS[1], column="amount")]


def _grant(obj: Any, principal: str, kind: int, privilege: str, option: bool = False, grantor: str = "hive") -> Any:
    return hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
        hiveObject=obj, principalName=principal, principalType=kind, grantInfo=hms.PrivilegeGrantInfo(
            privilege=privilege, createTime=0, grantor=grantor, grantorType=U, grantOption=option))])


GRANTS = [  # (object, principal, its type, privilege, grant option)
    (GLOBAL, "alice", U, "SELECT", True),
    (AUTHZ_DB, "analysts", R, "SELECT", False),
    (AUTHZ_DB, "etl", G, "CREATE", True),
    (_on("facts"), "carol", U, "SELECT", True),
    (_on("facts"), "carol", U, "INSERT", False),
    (_on("facts"), "public", R, "SELECT", False),
    (_on("facts"), "readers", R, "SELECT", False),
    (_on("plain"), "etl", G, "UPDATE", False),
    (_on("facts", part=DAYS[0]), "dave", U, "SELECT", False),
    (_on("facts", column="amount"), "erin", U, "SELECT", True),
    (_on("facts", part=DAYS[1], column="amount"), "erin", U, "SELECT", False),
]
ROLE_GRANTS = [  # (role, principal, its type, grantor, grantor's type, grant option)
    ("analysts", "alice", U, "bob", U, True),
    ("analysts", "etl", G, "bob", U, False),
    ("readers", "analysts", R, "bob", U, False),
    ("readers", "carol", U, "hive", U, False),
    ("admin", "ops", U, "hive", U, False),
]
ROLE_OWNERS = {"analysts": "bob", "readers": "carol", "loners": "dave"}


def _key(db: str, table: str, column: str, seq: int, name: str) -> Any:
    return hms.SQLPrimaryKey(table_db=db, table_name=table, column_name=column, key_seq=seq, pk_name=name,
                             enable_cstr=False, validate_cstr=False, rely_cstr=True)


def _foreign(column: str, parent_column: str, seq: int) -> Any:
    return hms.SQLForeignKey(pktable_db="keys", pktable_name="dim", pkcolumn_name=parent_column, fktable_db="keys",
                             fktable_name="fact", fkcolumn_name=column, key_seq=seq, update_rule=0, delete_rule=0,
                             fk_name="fk_fact_dim", pk_name="pk_dim", enable_cstr=False, validate_cstr=False,
                             rely_cstr=False)


def fill_authz(call: Callable[..., Any], lake: str) -> None:
    call("create_database", hms.Database(name="authz", description="grants", locationUri=f"file:{lake}/authz",
                                         parameters={}, ownerName="alice", ownerType=U))
    facts = _table("authz", "facts", _sd(_cols(("id", "bigint"), ("amount", "double")), TEXT),
                   _cols(("ds", "string")), params={"PARTITION_LEVEL_PRIVILEGE": "TRUE"})
    call("create_table", facts)
    call("create_table", _table("authz", "plain", _sd(_cols(("a", "string"), ("b", "int")), TEXT)))
    facts = call("get_table", "authz", "facts")
    call("add_partitions", [_partition(facts, [day]) for day in DAYS])
    for role in ROLES:
        call("create_role", hms.Role(roleName=role, createTime=0, ownerName=ROLE_OWNERS[role]))
    for grant in ROLE_GRANTS:
        call("grant_role", *grant)
    for obj, principal, kind, privilege, option in GRANTS:
        call("grant_privileges", _grant(obj, principal, kind, privilege, option))

    call("create_database", hms.Database(name="keys", description="", locationUri=f"file:{lake}/keys",
                                         parameters={}, ownerName="alice", ownerType=U))
    call("create_table", _table("keys", "dim", _sd(_cols(("a", "string"), ("b", "int"), ("label", "string")), TEXT)))
    call("create_table", _table("keys", "fact", _sd(_cols(("id", "bigint"), ("a", "string"), ("b", "int")), TEXT)))
    call("add_primary_key", hms.AddPrimaryKeyRequest(primaryKeyCols=[_key("keys", "dim", "a", 1, "pk_dim"),
                                                                     _key("keys", "dim", "b", 2, "pk_dim")]))
    call("add_primary_key", hms.AddPrimaryKeyRequest(primaryKeyCols=[_key("keys", "fact", "id", 1, "pk_fact")]))
    call("add_foreign_key", hms.AddForeignKeyRequest(foreignKeyCols=[_foreign("a", "a", 1), _foreign("b", "b", 2)]))


def read_grants(call: Callable[..., Any], normal: Callable[[Any], Any]) -> dict[str, Any]:
    """Every read call that shows roles, role grants and privileges, each answer made plain by `normal`, lists
    in a fixed order (each metastore lists in its own database's order)."""
    def listed(answer: Any) -> Any:
        return sorted(normal(answer), key=repr)

    seen: dict[str, Any] = {"role names": sorted(call("get_role_names"))}
    for role in ("admin", *ROLES):
        seen[f"principals in {role}"] = listed(call(
            "get_principals_in_role", hms.GetPrincipalsInRoleRequest(roleName=role)).principalGrants)
    for name, kind in PRINCIPALS:
        seen[f"roles of {name} {kind}"] = listed(call("list_roles", name, kind))
        seen[f"role grants of {name} {kind}"] = listed(call("get_role_grants_for_principal",
                                                            hms.GetRoleGrantsForPrincipalRequest(name, kind))
                                                       .principalGrants)
        seen[f"all privileges of {name} {kind}"] = listed(call("list_privileges", name, kind, hms.HiveObjectRef()))
    for obj in OBJECTS:
        seen[f"privileges on {obj}"] = listed(call("list_privileges", None, None, obj))
    for obj in (GLOBAL, AUTHZ_DB, _on("facts"), _on("facts", part=DAYS[0]), _on("facts", column="amount")):
        held = normal(call("get_privilege_set", obj, "alice", ["etl"]))
        seen[f"privilege set of alice on {obj}"] = {k: {p: sorted(g, key=repr) for p, g in v.items()}
                                                    if isinstance(v, dict) else v for k, v in held.items()}
    return seen


def read_constraints(call: Callable[..., Any], normal: Callable[[Any], Any]) -> dict[str, Any]:
    seen = {}
    for table in ("dim", "fact"):
        seen[f"primary keys of {table}"] = normal(call("get_primary_keys", hms.PrimaryKeysRequest("keys", table))
                                                  .primaryKeys)
        seen[f"foreign keys of {table}"] = normal(call("get_foreign_keys", hms.ForeignKeysRequest(
            foreign_db_name="keys", foreign_tbl_name=table)).foreignKeys)
    return seen
