"""Random sequences of the Thrift methods the other differential tests do not draw, each made on the gateway
and on the real Hive Metastore 2.3.10 from pyspark's jars, their answers compared step by step and the state
read back after every step.

The groups: permanent functions (create, alter, drop, get, get_functions by pattern, get_all_functions);
roles and privileges (roles created, dropped, granted and revoked by both call shapes; privileges granted and
revoked on every kind of object, to users, groups and roles; read back by list_roles, get_role_names,
get_principals_in_role, get_role_grants_for_principal, list_privileges and get_privilege_set); constraints
(add_primary_key, add_foreign_key, drop_constraint, create_table_with_constraints; get_primary_keys and
get_foreign_keys); tables' metadata (get_table_meta, get_tables_by_type, get_table_names_by_filter,
get_fields and get_schema and their _with_environment_context forms, get_all_tables, get_tables and
get_databases by patterns with `*`, `|` and regular expressions' characters); the partition helpers
(partition_name_to_vals and _to_spec, get_partition_with_auth, get_partitions_with_auth,
get_partitions_ps_with_auth, get_partition_names_ps); alter_database; get_config_value; setMetaConf and
getMetaConf. Among them the steps of test_thrift_stateful_differential.py that make what they read
(databases, tables and views, partitions). Partitions marked for an event (markPartitionForEvent: of
partitions that exist or not, by specifications right and wrong) and the marks asked (isPartitionMarkedForEvent).

The machinery is test_thrift_stateful_differential.py's (imported): the pool of names, the servers (Hive,
a gateway with its cache and one without, on one database; writes go to either), the normalization and
its DELIBERATE rules; this module adds its own rules (METHOD_DELIBERATE, with the reasons) for what the
new methods answer otherwise on purpose. Bad and edge inputs are drawn beside good ones: missing objects,
names differing only by case, empty strings, patterns with regular expressions' characters. Hive's
metastore runs with its default authorization (none on the metastore: every call is made as asked), the
gateways in their open mode (no authentication; tests/conftest.py): both store and answer roles and
grants as sent, which is what these calls do without an authorizer.

Roles, users and groups are named by each example's prefix, and the listings of the whole metastore
(get_all_functions, get_role_names, get_databases, get_table_meta, list_privileges of every principal)
are compared on the example's names only: the servers live for the module.

`make test` runs a short version (METHODS_DIFFERENTIAL_EXAMPLES, 3 derandomized examples of up to
METHODS_DIFFERENTIAL_STEPS, 10, steps); the `soak` run takes METHODS_DIFFERENTIAL_SOAK_EXAMPLES (200).
STATEFUL_DIFFERENTIAL_COLLECT=1 reports every difference at the end (with -s) instead of failing at the
first. Skipped when Java or pyspark's jars are missing.

Left out of the draws on purpose, each a deliberate difference that every later read would show again:
a database's description or location changed by alter_database (the gateway changes them; Hive 2.3 keeps
both: test_thrift_differential.py 'altered db'); a function altered with other resources (replaced here,
kept by Hive 2.3: 'the function with new resources'); a function without a class name and a role named ''
(refused here, made by Hive 2.3); a grant on a column the table does not have (refused here, as a grant
on a missing table is; Hive 2.3 answers true); a table created with constraints under a name not taken
(its keys would outlive the step: see below); a
function created or renamed with a name in upper case (stored lower-cased here and found by any case;
Hive 2.3 keeps the name as sent, get_all_functions answers `F1`, and get_function of `f1` does not find
it: a lookup in other case is drawn); a socket time-out not above 0 set by setMetaConf (refused on both,
but Hive 2.3 keeps it for the connection: test_thrift_differential.py 'metaconf: the time-out after the
refusals'); setMetaConf of the partition whitelist and of the direct-SQL switch to false (the servers'
connections live for the module, and what Hive then does with them is another reference than the one
compared); a foreign key of a table that exists (Hive 2.3 then refused later drops of the table, the
step's drop of Hive's keys notwithstanding: an add_foreign_key is drawn for a missing table only); one
privilege twice in one grant, with and without its grant option (refused here; Hive 2.3 stores both).
A primary or foreign key that either side accepts is dropped again on that side after the step (its
answer compared first): Hive 2.3 refuses every later column change of a table with constraints, which the
gateway makes (test_thrift_differential.py compares stored keys, their renames and drops).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable

import pytest
from hmsclient.genthrift.hive_metastore import ttypes as ht
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import random

from tests.conftest import wait_applied
from tests.e2e.test_thrift_stateful_differential import (
    PHASES, TABLES, Edit, Example, Run, Side, Step, _compare,
    _describe, _difference, _key, _raised, _sd, add_partition, base_method, add_partitions, create_database,
    create_table, drop_partition, drop_table, servers, unescape)

__all__ = ["servers"]  # the module's Hive and gateways (a fixture of the stateful test, one per module)

_U, _G, _R = ht.PrincipalType.USER, ht.PrincipalType.GROUP, ht.PrincipalType.ROLE
_OBJ = ht.HiveObjectType

# -- the pool of the new methods' names -------------------------------------------------------------------

FUNCTIONS = ("f1", "f2", "F1")
CLASSES = ("com.example.Upper", "com.example.Lower")
FUNCTION_PATTERNS = ("*", "f*", "F1|f2", "f.", "", "f[12]", ".*", "f1|nope", "x*")
TABLE_PATTERNS = ("*", "t*", "T1|t2", "t.", "", "t[12]", ".*", "t1|nope", "*1", "t+", "(t1)", "v*", "T*")
TABLE_TYPES = ("MANAGED_TABLE", "EXTERNAL_TABLE", "VIRTUAL_VIEW", "INDEX_TABLE", "nope", "")
TABLE_FILTERS = ('hive_filter_field_owner__ = "alice"', 'hive_filter_field_owner__ like "al.*"',
                 'hive_filter_field_params__k = "v"', 'hive_filter_field_last_access__ = 0',
                 'hive_filter_field_params__EXTERNAL = "TRUE"', "nope", "")
PRIVILEGES = ("SELECT", "INSERT", "ALL", "UPDATE", "select")
PRIMARY_KEYS, FOREIGN_KEYS = ("pk1", "PK1"), ("fk1", "FK1")
CONSTRAINTS = (*PRIMARY_KEYS, *FOREIGN_KEYS, "nope")
META_KEYS = ("hive.metastore.try.direct.sql", "hive.metastore.try.direct.sql.ddl",
             "hive.metastore.client.socket.timeout", "hive.metastore.client.capability.check",
             "hive.metastore.partition.name.whitelist.pattern",
             "HIVE.METASTORE.TRY.DIRECT.SQL", "hive.nope", "")
META_VALUES = {"hive.metastore.client.socket.timeout": ("600s", "20", "1000ms", "soon", ""),
               "hive.metastore.client.capability.check": ("true", "false", "yes"),
               "hive.metastore.try.direct.sql": ("true",),  # false: Hive answers its JDO way, another reference
               "hive.metastore.try.direct.sql.ddl": ("true", "false")}
CONFIG_KEYS = ("hive.metastore.warehouse.dir", "hive.metastore.partition.name.whitelist.pattern", "hive.nope.x",
               "hdfs.nope", "mapred.nope", "metastore.nope", "fs.defaultFS", "", "HIVE.nope",
               "javax.jdo.option.ConnectionPassword")
PARTITION_NAMES = ("ds=2024-01-01", "ds=a%2Fb/hr=1", "ds=", "=x", "ds", "", "ds=1/", "DS=x", "ds=x/ds=y", "a=b=c",
                   "ds=%", "ds=%2", "ds=two words/hr=-3")


class MethodsExample(Example):
    """The stateful test's pool, with the roles, users and groups of this example."""

    @property
    def roles(self) -> tuple[str, ...]:
        return (f"{self.prefix}r1", f"{self.prefix}r2", f"{self.prefix.upper()}R1")

    @property
    def users(self) -> tuple[str, ...]:
        return (f"{self.prefix}u1", f"{self.prefix}u2", f"{self.prefix.upper()}U1")

    @property
    def group(self) -> str:
        return f"{self.prefix}g"

    def role(self, *, creating: bool = False) -> str:
        r = self.rng.random()
        if r < 0.05:
            return self.rng.choice(["public", "admin"] if creating else ["public", "admin", ""])
        return self.roles[2] if r < 0.15 else self.rng.choice(self.roles[:2])

    def principal(self) -> tuple[str, int]:
        kind = self.rng.choice([_U, _U, _G, _R])
        if kind == _R:
            return self.role(), _R
        if kind == _G:
            return self.group, _G
        return (self.users[2] if self.rng.random() < 0.1 else self.rng.choice(self.users[:2])), _U

    def principals(self) -> list[tuple[str, int]]:
        return [(u, _U) for u in self.users[:2]] + [(self.group, _G)] + [(r, _R) for r in self.roles[:2]]

    def function(self) -> str:
        return FUNCTIONS[2] if self.rng.random() < 0.15 else self.rng.choice(FUNCTIONS[:2])

    def column(self, db: str, table: str, *, exact: bool = False) -> str:
        """A column of the table (on Hive's side), or else one it may not have (`exact`: one it has, when
        it has any)."""
        try:
            have = [c.name for c in self.run.hms.raw("get_table", db, table).sd.cols]
        except Exception:  # noqa: BLE001 - no such table: any column
            have = []
        if have and (exact or self.rng.random() < 0.85):
            return self.rng.choice(have)
        return self.rng.choice(["id", "nope", "ID"])

    def hive_object(self) -> tuple[ht.HiveObjectRef, list[tuple[str, str]]]:
        """An object of the pool to grant on (and the table it names, to read back)."""
        kind = self.rng.choice([_OBJ.GLOBAL, _OBJ.DATABASE, _OBJ.TABLE, _OBJ.TABLE, _OBJ.PARTITION, _OBJ.COLUMN])
        if kind == _OBJ.GLOBAL:
            return ht.HiveObjectRef(kind, None, None, None, None), []
        if kind == _OBJ.DATABASE:
            return ht.HiveObjectRef(kind, self.db(), None, None, None), []
        db, table = self.db_table()
        if kind == _OBJ.TABLE:
            return ht.HiveObjectRef(kind, db, table, None, None), [(db, table)]
        if kind == _OBJ.COLUMN:
            # (a column the table has: Hive 2.3 stores a grant on any other, see the module's docstring)
            return ht.HiveObjectRef(kind, db, table, None, self.column(db, table, exact=True)), [(db, table)]
        _, values = self.existing_or_new_values(db, table)
        return ht.HiveObjectRef(kind, db, table, values, None), [(db, table)]


Touched = list[tuple[Any, ...]]  # ("table", db, t), ("database", db), ("functions", db), ("roles",), ...
Made = tuple[str, tuple[Any, ...], Touched]


def _tables(step: Callable[[Example], Step]) -> Callable[[MethodsExample], Made]:
    """A step of the stateful test, its touched tables as this module names them."""
    def made(ex: MethodsExample) -> Made:
        method, args, touched = step(ex)
        return method, args, [("table", db, t) for db, t in touched] + [("database", db) for db, _ in touched]
    return made


# -- the steps ----------------------------------------------------------------------------------------------


def create_view(ex: MethodsExample) -> Made:
    db, name = ex.db(), ex.rng.choice(["v1", "V1", "t1"])
    view = ht.Table(tableName=name, dbName=db, owner="bob", createTime=0, lastAccessTime=0, retention=0,
                    sd=_sd(("id", "amount")), partitionKeys=[], parameters={}, tableType="VIRTUAL_VIEW",
                    viewOriginalText="select id, amount from t1", viewExpandedText=f"select `t1`.`id`, `t1`.`amount` "
                    f"from `{db}`.`t1`")
    view.sd.inputFormat = view.sd.outputFormat = None
    view.sd.serdeInfo = ht.SerDeInfo(None, None, {})
    return "create_table", (view,), [("table", db, name), ("database", db)]


def _function(ex: MethodsExample, db: str, name: str) -> ht.Function:
    owner, owner_type = ex.principal() if ex.rng.random() < 0.3 else ("alice", _U)
    return ht.Function(name, db, ex.rng.choice(CLASSES), owner, owner_type, 0,
                       ht.FunctionType.JAVA, [ht.ResourceUri(ht.ResourceType.JAR, f"file:///jars/{name.lower()}.jar")])


def create_function(ex: MethodsExample) -> Made:
    db, name = ex.db(), ex.rng.choice(FUNCTIONS[:2])  # not F1: see the module's docstring
    return "create_function", (_function(ex, db, name),), [("functions", db)]


def alter_function(ex: MethodsExample) -> Made:
    db, name = ex.db(), ex.function()
    kind = ex.rng.choice(["class", "owner", "rename", "move"])
    new_db = ex.db() if kind == "move" else db
    new_name = ex.rng.choice(FUNCTIONS[:2]) if kind == "rename" else name  # not F1, as for a create
    owner, class_name = ex.principal(), ex.rng.choice(CLASSES)

    def change(f: Any, side: Side) -> None:
        if kind == "class":
            f.className = class_name
        elif kind == "owner":
            f.ownerName, f.ownerType = owner
        f.dbName, f.functionName = new_db, new_name
    return "alter_function", (db, name, Edit("get_function", (db, name), change, kind)), [
        ("functions", db), ("functions", new_db)]


def drop_function(ex: MethodsExample) -> Made:
    db = ex.db()
    return "drop_function", (db, ex.function()), [("functions", db)]


def create_role(ex: MethodsExample) -> Made:
    return "create_role", (ht.Role(ex.role(creating=True), 0, ex.rng.choice(["bob", None])),), [("roles",)]


def drop_role(ex: MethodsExample) -> Made:
    return "drop_role", (ex.role(),), [("roles",), ("privileges",)]


def grant_role(ex: MethodsExample) -> Made:
    role, (principal, kind) = ex.role(), ex.principal()
    option = ex.rng.random() < 0.3
    shape = ex.rng.randint(0, 3)
    if shape == 0:
        return "revoke_role", (role, principal, kind), [("roles",)]
    if shape == 1:
        return "grant_role", (role, principal, kind, "bob", _U, option), [("roles",)]
    request_type = ex.rng.choice([ht.GrantRevokeType.GRANT, ht.GrantRevokeType.REVOKE])
    grantor = ("bob", _U) if request_type == ht.GrantRevokeType.GRANT else (None, None)
    return "grant_revoke_role", (ht.GrantRevokeRoleRequest(request_type, role, principal, kind, *grantor, option),), [
        ("roles",)]


def grant_privileges(ex: MethodsExample) -> Made:
    privileges: list[ht.HiveObjectPrivilege] = []
    touched: list[tuple[str, str]] = []
    for _ in range(ex.rng.randint(1, 2)):
        obj, tables = ex.hive_object()
        if _missing(ex, obj):
            # On its own: the call is refused here, where Hive 2.3 stores the others of the bag.
            privileges.clear()
            touched.clear()
        principal, kind = ex.principal()
        privilege = ex.rng.choice(PRIVILEGES)
        if any(_same_grant(p, obj, principal, kind, privilege) for p in privileges):
            # Not one privilege twice in a bag (with and without its grant option): refused here (which
            # should stand?), where Hive 2.3 stores both rows, a difference every later read would show.
            continue
        privileges.append(ht.HiveObjectPrivilege(obj, principal, kind, ht.PrivilegeGrantInfo(
            privilege, 0, "bob", _U, ex.rng.random() < 0.3)))
        touched += tables
        if _missing(ex, obj):
            break
    bag = ht.PrivilegeBag(privileges)
    done = [("privileges",)] + [("table", db, t) for db, t in touched]
    shape = ex.rng.randint(0, 3)
    if shape == 0:
        return "grant_privileges", (bag,), done
    if shape == 1:
        return "revoke_privileges", (bag,), done
    request_type = ex.rng.choice([ht.GrantRevokeType.GRANT, ht.GrantRevokeType.REVOKE])
    return "grant_revoke_privileges", (ht.GrantRevokePrivilegeRequest(request_type, bag, ex.rng.random() < 0.3),), done


def _same_grant(p: ht.HiveObjectPrivilege, obj: ht.HiveObjectRef, principal: str, kind: int, privilege: str) -> bool:
    def lowered(o: ht.HiveObjectRef) -> tuple[Any, ...]:
        return (o.objectType, (o.dbName or "").lower(), (o.objectName or "").lower(), o.partValues,
                (o.columnName or "").lower())
    return (lowered(p.hiveObject) == lowered(obj) and p.principalType == kind
            and p.principalName.lower() == principal.lower() and p.grantInfo.privilege.lower() == privilege.lower())


def _missing(ex: MethodsExample, obj: ht.HiveObjectRef) -> bool:
    """Whether the table or partition a grant names does not exist on Hive's side."""
    if obj.objectType not in (_OBJ.TABLE, _OBJ.PARTITION, _OBJ.COLUMN):
        return False
    try:
        if obj.objectType == _OBJ.PARTITION:
            ex.run.hms.raw("get_partition", obj.dbName, obj.objectName, obj.partValues)
        else:
            ex.run.hms.raw("get_table", obj.dbName, obj.objectName)
    except Exception:  # noqa: BLE001 - missing (or a bad name: as missing)
        return True
    return False


def _pk(ex: MethodsExample, db: str, table: str) -> ht.SQLPrimaryKey:
    return ht.SQLPrimaryKey(db, table, ex.column(db, table), 1, ex.rng.choice(PRIMARY_KEYS), False, False, False)


def add_constraint(ex: MethodsExample) -> Made:
    db, table = ex.db_table()
    if ex.rng.random() < 0.5:
        return "add_primary_key", (ht.AddPrimaryKeyRequest([_pk(ex, db, table)]),), [("table", db, table)]
    parent_db, parent = ex.db_table()
    # A foreign key of a table that does not exist (on both sides): one that Hive 2.3 accepts, on a table to
    # itself or to another, made Hive refuse later drops of the table (MetaException, seen in the soak) even
    # after the step dropped Hive's keys again by the names it lists, where the gateway drops the table.
    table = "nofk"
    fk = ht.SQLForeignKey(parent_db, parent, ex.column(parent_db, parent), db, table, ex.column(db, table), 1, 0, 0,
                          ex.rng.choice(FOREIGN_KEYS), ex.rng.choice([*PRIMARY_KEYS, "nope"]), False, False, False)
    return "add_foreign_key", (ht.AddForeignKeyRequest([fk]),), [("table", db, table), ("table", parent_db, parent)]


def drop_constraint(ex: MethodsExample) -> Made:
    db, table = ex.db_table()
    return "drop_constraint", (ht.DropConstraintRequest(db, table, ex.rng.choice(CONSTRAINTS)),), [
        ("table", db, table)]


def create_table_with_constraints(ex: MethodsExample) -> Made:
    """A create as Hive 2.3 sends it for a statement with constraints; with keys only under a name taken (see
    the module's docstring)."""
    method, (table,), touched = create_table(ex)
    db, name = table.dbName, table.tableName
    taken = ex.keys_of(db, name) is not None
    keys = [_pk(ex, db, name)] if taken and ex.rng.random() < 0.5 else []
    return "create_table_with_constraints", (table, keys, []), [("table", db, name), ("database", db)]


def alter_database(ex: MethodsExample) -> Made:
    db = ex.db()
    kind = ex.rng.choice(["parameters", "owner", "owner type", "rename"])
    params = ex.rng.choice([{"k": "v"}, {"k": "w", "x": ""}, {}])
    owner = ex.principal()

    def change(d: Any, side: Side) -> None:
        if kind == "parameters":
            d.parameters = params
        elif kind == "owner":
            d.ownerName, d.ownerType = owner
        elif kind == "owner type":
            d.ownerType = owner[1]
        else:
            d.name = ex.db()  # the name in the object is not the one altered
    return "alter_database", (db, Edit("get_database", (db,), change, kind)), [("database", db)]


def set_meta_conf(ex: MethodsExample) -> Made:
    key = ex.rng.choice(META_KEYS[:4]) if ex.rng.random() < 0.8 else ex.rng.choice(META_KEYS[5:])
    value = ex.rng.choice(META_VALUES.get(key, ("true", "x")))
    return "setMetaConf", (key, value), [("conf",)]


def _mark_spec(ex: MethodsExample, db: str, table: str) -> dict[str, str]:
    """A partition's specification as markPartitionForEvent takes it: mostly one of the table's partitions (or
    values of its keys), sometimes a key missing, one more, or the keys in upper case."""
    keys, values = ex.existing_or_new_values(db, table)
    spec = dict(zip(keys, values))
    kind = ex.rng.randint(0, 9)
    if kind == 0 and spec:
        del spec[ex.rng.choice(sorted(spec))]
    elif kind == 1:
        spec["extra"] = "x"
    elif kind == 2:
        spec = {k.upper(): v for k, v in spec.items()}
    return spec


def mark_partition(ex: MethodsExample) -> Made:
    db, table = ex.db_table()
    event_type = 1 if ex.rng.random() < 0.95 else 7  # LOAD_DONE, Hive's one PartitionEventType; and another
    return "markPartitionForEvent", (db, table, _mark_spec(ex, db, table), event_type), [("table", db, table)]


def probe(ex: MethodsExample) -> Made:
    """A read with bad or edge arguments, compared at once."""
    db, table = ex.db_table()
    keys, values = ex.existing_or_new_values(db, table)
    user = ex.rng.choice(ex.users)
    kind = ex.rng.randint(0, 13)
    calls: list[tuple[str, tuple[Any, ...]]] = [
        ("partition_name_to_vals", (ex.rng.choice(PARTITION_NAMES),)),
        ("partition_name_to_spec", (ex.rng.choice(PARTITION_NAMES),)),
        ("get_config_value", (ex.rng.choice(CONFIG_KEYS), ex.rng.choice(["dflt", "", None]))),
        ("getMetaConf", (ex.rng.choice(META_KEYS),)),
        ("get_databases", (ex.rng.choice(["", f"{ex.prefix}*", f"{ex.prefix}a|{ex.prefix}b", f"{ex.prefix.upper()}A",
                                          f"{ex.prefix}.", f"{ex.prefix}[ab]", f"{ex.prefix}a+", f"{ex.prefix}"]),)),
        ("get_tables", (db, ex.rng.choice(TABLE_PATTERNS))),
        ("get_table_meta", (ex.rng.choice(["", db, db.upper(), f"{ex.prefix}*", f"{ex.prefix}a|{ex.prefix}b"]),
                            ex.rng.choice(TABLE_PATTERNS), ex.rng.choice([None, [], list(TABLE_TYPES[:2]),
                                                                          [ex.rng.choice(TABLE_TYPES)]]))),
        ("get_tables_by_type", (db, ex.rng.choice(TABLE_PATTERNS), ex.rng.choice(TABLE_TYPES))),
        ("get_table_names_by_filter", (db, ex.rng.choice(TABLE_FILTERS), ex.rng.choice([-1, 0, 1]))),
        (ex.rng.choice(["get_fields", "get_schema"]), (db, ex.rng.choice([table, table.upper(), "nope", ""]))),
        ("get_partition_names_ps", (db, table, ex.rng.choice([values[:1], values + ["x"], [""], []]),
                                    ex.rng.choice([-1, 1]))),
        ("get_partition_with_auth", (db, table, ex.rng.choice([values, values[:1], []]), user, [ex.group])),
        ("get_functions", (db, ex.rng.choice(FUNCTION_PATTERNS))),
        ("isPartitionMarkedForEvent", (db, table, _mark_spec(ex, db, table), 1)),
    ]
    method, args = calls[kind]
    return method, args, []


STEPS: dict[str, tuple[Callable[[MethodsExample], Made], int]] = {  # step -> weight
    "create database": (_tables(create_database), 1),
    "create table": (_tables(create_table), 3),
    "create view": (create_view, 1),
    "drop table": (_tables(drop_table), 1),
    "add partition": (_tables(add_partition), 2),
    "add partitions": (_tables(add_partitions), 1),
    "drop partition": (_tables(drop_partition), 1),
    "create function": (create_function, 3),
    "alter function": (alter_function, 2),
    "drop function": (drop_function, 1),
    "create role": (create_role, 3),
    "drop role": (drop_role, 1),
    "grant or revoke a role": (grant_role, 3),
    "grant or revoke privileges": (grant_privileges, 4),
    "add a constraint": (add_constraint, 2),
    "drop a constraint": (drop_constraint, 1),
    "create a table with constraints": (create_table_with_constraints, 1),
    "alter database": (alter_database, 2),
    "set a metastore setting": (set_meta_conf, 1),
    "mark a partition for an event": (mark_partition, 2),
    "probe": (probe, 4),
}
_WEIGHTED = [name for name, (_, weight) in STEPS.items() for _ in range(weight)]
_PER_CONNECTION = ("setMetaConf", "getMetaConf")  # made on every connection: each keeps its own values


# -- deliberate differences of these methods ---------------------------------------------------------------

_CONSTRAINT_WRITES = ("add_primary_key", "add_foreign_key")


def _no_empty_owner(answer: Any) -> Any:
    """A function (or functions) with an owner named '' as unset."""
    if isinstance(answer, list):
        return [_no_empty_owner(a) for a in answer]
    if isinstance(answer, dict) and answer.get("type") == "Function" and answer.get("ownerName") == "":
        return {**answer, "ownerName": None}
    return answer


def _role_names(method: str, args: tuple[Any, ...]) -> tuple[str, ...]:
    """The role and principal names of a role call."""
    if method == "create_role":
        return (args[0].roleName,)
    if method == "grant_revoke_role":
        return (args[0].roleName, args[0].principalName)
    return (args[0],) if method == "drop_role" else (args[0], args[1])


def _bag(method: str, args: tuple[Any, ...]) -> list[ht.HiveObjectPrivilege]:
    bag = args[0].privileges if method == "grant_revoke_privileges" else args[0]
    return list(bag.privileges or [])


_ANY_RAISED = ("MetaException", "NoSuchObjectException", "InvalidObjectException", "TApplicationException")


METHOD_DELIBERATE: dict[str, Callable[[str, tuple[Any, ...], Any, Any], bool]] = {
    "a partition's mark is the table's (store/partition_events.py): found however the names are spelled and after "
    "a rename; Hive 2.3 keeps it under the names as the mark spelled them and finds it by those only":
        lambda m, a, ours, theirs: m == "isPartitionMarkedForEvent" and ours is True and theirs is False,
    "a partition's mark goes with its table's drop: a table re-created under the name has none; Hive 2.3 finds the "
    "dropped table's marks":
        lambda m, a, ours, theirs: m == "isPartitionMarkedForEvent" and ours is False and theirs is True,
    "a constraint of a missing table, a foreign key's missing parent, a drop of a missing constraint: "
    "NoSuchObjectException (declared), where Hive 2.3 fails with an internal error (TApplicationException; "
    "test_thrift_differential.py 'add a primary key to a missing table')":
        lambda m, a, ours, theirs: m in (*_CONSTRAINT_WRITES, "drop_constraint")
        and _raised(ours, "NoSuchObjectException") and _raised(theirs, "TApplicationException"),
    "a primary key on a partition key is stored, as Hive 3 and 4 store it (store/constraints.py); Hive 2.3 takes "
    "columns only and fails (TApplicationException)":
        lambda m, a, ours, theirs: m == "add_primary_key" and not _raised(ours, *_ANY_RAISED)
        and _raised(theirs, "TApplicationException"),
    "a role or principal named '' is refused (MetaException: a role needs a name, and none has an empty one); "
    "Hive 2.3 creates, grants, revokes and drops it, or (as for any missing one) answers true":
        lambda m, a, ours, theirs: m in ("create_role", "drop_role", "grant_role", "revoke_role", "grant_revoke_role")
        and "" in _role_names(m, a) and _raised(ours, "MetaException"),
    "a function owned by '' reads as owned by no one (ownerName unset: the gateway reads an empty stored owner "
    "as none, gateway/thrift/convert.py); Hive 2.3 answers ''":
        lambda m, a, ours, theirs: m in ("get_function", "get_all_functions") and ours == _no_empty_owner(theirs),
    "get_partition_names_ps with an empty specification: every partition's name (as the filter test's "
    "KNOWN_DIFFERENCES list for the partition listings); Hive 2.3 answers MetaException":
        lambda m, a, ours, theirs: m == "get_partition_names_ps" and not a[2] and isinstance(ours, list)
        and _raised(theirs, "MetaException"),
    "get_config_value of a key without a value and no default: '' where Hive answers null, which Thrift cannot "
    "carry (its client raises TApplicationException MISSING_RESULT; test_thrift_differential.py 'fb303: an "
    "option never set')":
        lambda m, a, ours, theirs: m == "get_config_value" and ours == "" and _raised(theirs, "TApplicationException"),
    "get_config_value of a `metastore.` key: read as Hive 3 and 4 allow (their pattern is "
    "(hive|hdfs|mapred|metastore).*, the families of their MetastoreConf names); Hive 2.3 refuses it "
    "(ConfigValSecurityException)":
        lambda m, a, ours, theirs: m == "get_config_value" and a[0].startswith("metastore.")
        and isinstance(ours, str) and _raised(theirs, "ConfigValSecurityException"),
    "alter_database with an object naming another database: refused (MetaException: Hive databases cannot be "
    "renamed) where Hive 2.3 ignores the object's name and alters the database named":
        lambda m, a, ours, theirs: m == "alter_database" and a[1].what == "rename" and _raised(ours, "MetaException")
        and theirs is None,
    "a grant on a table or partition that does not exist: refused (MetaException, saying so); Hive 2.3 answers "
    "true and stores nothing (test_thrift_differential.py 'grant on a missing table')":
        lambda m, a, ours, theirs: m in ("grant_privileges", "grant_revoke_privileges")
        and _raised(ours, "MetaException")
        and theirs in (True, {"type": "GrantRevokePrivilegeResponse", "success": True})
        and len(_bag(m, a)) == 1 and _bag(m, a)[0].hiveObject.objectType in (_OBJ.TABLE, _OBJ.PARTITION, _OBJ.COLUMN),
    "get_partitions_with_auth and get_partitions_ps_with_auth of a table that does not exist: "
    "NoSuchObjectException, as get_partitions and get_partitions_ps answer on both; Hive 2.3's _with_auth reads "
    "do not look the table up and answer no partitions":
        lambda m, a, ours, theirs: m in ("get_partitions_with_auth", "get_partitions_ps_with_auth")
        and _raised(ours, "NoSuchObjectException") and theirs == [],
    "a role or grant that exists already, a revoke of what is not held, a missing role: MetaException (declared, "
    "saying so) where Hive 2.3 fails with an internal error (test_thrift_differential.py 'create a role twice')":
        lambda m, a, ours, theirs: m in ("create_role", "grant_role", "revoke_role", "grant_revoke_role", "drop_role",
                                         "grant_privileges", "revoke_privileges", "grant_revoke_privileges")
        and _raised(ours, "MetaException") and _raised(theirs, "TApplicationException"),
    # (drawn by test_thrift_call_forms_differential.py)
    "fb303's getName answers this server's name, metastore-gateway; Hive answers its handler's, 'new db based "
    "metaserver' (no client reads it)":
        lambda m, a, ours, theirs: m == "getName" and ours == "metastore-gateway" and isinstance(theirs, str),
}


def method_explained(method: str, args: tuple[Any, ...], ours: Any, theirs: Any) -> str | None:
    for reason, rule in METHOD_DELIBERATE.items():
        if rule(base_method(method), args, ours, theirs):
            return reason
    return None


# -- comparing ----------------------------------------------------------------------------------------------


def _own(ex: MethodsExample, method: str, args: tuple[Any, ...], answer: Any) -> Any:
    """A listing of the whole metastore cut to the example's own names (the servers live for the module);
    lists in a fixed order."""
    p = ex.prefix

    def mine(name: Any) -> bool:
        return isinstance(name, str) and name.lower().startswith(p)
    if isinstance(answer, dict) and "raised" in answer:
        return answer
    if method in ("get_all_databases", "get_databases"):
        return sorted(d for d in answer if mine(d))
    if method == "get_role_names":
        return sorted(r for r in answer if mine(r) or r in ("admin", "public"))
    if method == "get_all_functions":
        return sorted((f for f in answer["functions"] or [] if mine(f["dbName"])), key=_key)
    if method == "get_table_meta":
        return sorted((t for t in answer if mine(t["dbName"])), key=_key)
    if method == "list_privileges":
        return sorted((g for g in answer if mine(g["principalName"]) or g["principalName"] == "public"), key=_key)
    if method in ("get_principals_in_role", "get_role_grants_for_principal"):
        return {**answer, "principalGrants": sorted(answer["principalGrants"] or [], key=_key)}
    if method == "get_privilege_set":
        return {k: ({n: sorted(v, key=_key) for n, v in m.items()} if isinstance(m, dict) else m)
                for k, m in answer.items()}
    if isinstance(answer, list) and method != "partition_name_to_vals":
        return sorted(answer, key=_key)
    return answer


def call(ex: MethodsExample, side: Side, method: str, args: tuple[Any, ...]) -> Any:
    return _own(ex, method, args, side.call(method, args))


_OTHER_CASE = ("the grants on an object named in other case (`DB.T`) are those of `db.t`, as every other read "
               "finds it; Hive 2.3's listings of an object's grants compare the names as sent and find none")


def _in_other_case(ex: MethodsExample, method: str, args: tuple[Any, ...], ours: Any) -> bool:
    """Whether a read of an object's grants named in other case answers on Hive, the names lower-cased, as ours."""
    if method not in ("list_privileges", "get_privilege_set"):
        return False
    at = 2 if method == "list_privileges" else 0
    obj = args[at]
    if obj is None or all(n is None or n == n.lower() for n in (obj.dbName, obj.objectName)):
        return False
    lowered = ht.HiveObjectRef(obj.objectType, obj.dbName and obj.dbName.lower(),
                               obj.objectName and obj.objectName.lower(), obj.partValues, obj.columnName)
    return bool(call(ex, ex.run.hms, method, (*args[:at], lowered, *args[at + 1:])) == ours)


_FIRST_BY_NAME = ("get_table_names_by_filter with a maximum: the first tables by name; Hive 2.3 cuts its database's "
                  "answer, in no order it promises (Derby's: the order the tables were made)")


def _first_by_name(ex: MethodsExample, method: str, args: tuple[Any, ...], ours: Any, theirs: Any) -> bool:
    """Whether a limited table filter's answers are each as many of the tables Hive finds unlimited, ours the
    first by name."""
    if method != "get_table_names_by_filter" or args[2] < 0 or not isinstance(ours, list) \
            or not isinstance(theirs, list) or len(ours) != len(theirs):
        return False
    every = call(ex, ex.run.hms, method, (args[0], args[1], -1))
    return isinstance(every, list) and ours == every[:len(ours)] and set(theirs) <= set(every)


def compare(ex: MethodsExample, method: str, args: tuple[Any, ...], ours: Any, theirs: Any, what: str) -> None:
    if ours != theirs:
        reason = method_explained(method, args, ours, theirs)
        if reason is None and _in_other_case(ex, method, args, ours):
            reason = _OTHER_CASE
        if reason is None and _first_by_name(ex, method, args, ours, theirs):
            reason = _FIRST_BY_NAME
        if reason is not None:
            ex.run.deliberate[reason] = ex.run.deliberate.get(reason, 0) + 1
            return
    _compare(ex, method, args, ours, theirs, what)


def _drop_constraints(side: Side, db: str, table: str, kind: str) -> None:
    """Drops the primary or foreign keys a side holds of a table, each by the names it answers (Hive 2.3 finds
    a constraint only by its name as stored, the gateway by any case). No foreign key outlives its step, so a
    primary key has none that refers to it."""
    if kind == "foreign":
        for fk in side.raw("get_foreign_keys", ht.ForeignKeysRequest(None, None, db, table)).foreignKeys:
            with contextlib.suppress(ht.NoSuchObjectException, ht.InvalidObjectException):  # one of several columns
                side.raw("drop_constraint", ht.DropConstraintRequest(fk.fktable_db, fk.fktable_name, fk.fk_name))
        return
    for pk in side.raw("get_primary_keys", ht.PrimaryKeysRequest(db, table)).primaryKeys:
        with contextlib.suppress(ht.NoSuchObjectException, ht.InvalidObjectException):
            side.raw("drop_constraint", ht.DropConstraintRequest(pk.table_db, pk.table_name, pk.pk_name))


def do_step(ex: MethodsExample, step: str | Made) -> Touched:
    method, args, touched = STEPS[step][0](ex) if isinstance(step, str) else step
    run = ex.run
    writers = [run.cached, run.uncached] if method in _PER_CONNECTION else [
        run.cached if ex.rng.randint(0, 2) else run.uncached]
    theirs = call(ex, run.hms, method, args)
    outcome = theirs["raised"] if isinstance(theirs, dict) and "raised" in theirs else "OK"
    run.outcomes[f"{method} {outcome}"] = run.outcomes.get(f"{method} {outcome}", 0) + 1
    ex.log.append(f"{_describe(method, args)} -> {outcome}")
    for writer in writers:
        compare(ex, method, args, call(ex, writer, method, args), theirs, "the step's answer")
    if method in _CONSTRAINT_WRITES:
        # Each side's keys are dropped again after the step (its answers compared first): Hive 2.3 refuses every
        # column change of a table with constraints, which the gateway makes (test_thrift_differential.py 'add a
        # column to the child'), a difference every later alter would show. Stored keys are compared there.
        for c in args[0].primaryKeyCols if method == "add_primary_key" else args[0].foreignKeyCols:
            for side in (run.hms, writers[0]):
                if method == "add_primary_key":
                    _drop_constraints(side, c.table_db, c.table_name, "primary")
                else:
                    _drop_constraints(side, c.fktable_db, c.fktable_name, "foreign")
    return touched


def _everything(ex: MethodsExample) -> list[ht.HiveObjectRef]:
    return [ht.HiveObjectRef(_OBJ.GLOBAL, None, None, None, None)] + [
        ht.HiveObjectRef(_OBJ.DATABASE, db, None, None, None) for db in ex.dbs[:2]]


def reads(ex: MethodsExample, touched: Touched) -> list[tuple[str, tuple[Any, ...]]]:
    """The reads of what a step touched, their arguments taken from Hive's side."""
    calls: list[tuple[str, tuple[Any, ...]]] = []
    kinds = {t[0] for t in touched}
    user, groups = ex.users[0], [ex.group]
    for db in sorted({t[1] for t in touched if t[0] == "database"}):
        calls += [("get_database", (db,)), ("get_databases", (f"{ex.prefix}*",)), ("get_all_tables", (db,)),
                  ("get_tables", (db, "*")), ("get_tables", (db, "t*|V1")),
                  ("get_table_meta", (f"{ex.prefix}*", "*", None)), ("get_table_meta", (db, "t*", ["MANAGED_TABLE"])),
                  ("get_table_names_by_filter", (db, TABLE_FILTERS[0], -1))]
        calls += [("get_tables_by_type", (db, "*", kind)) for kind in TABLE_TYPES[:3]]
    for _, db, table in sorted({t for t in touched if t[0] == "table"}):
        calls += [("get_fields", (db, table)), ("get_schema", (db, table)),
                  ("get_fields_with_environment_context", (db, table, ht.EnvironmentContext({}))),
                  ("get_schema_with_environment_context", (db, table, None)),
                  ("get_primary_keys", (ht.PrimaryKeysRequest(db, table),)),
                  ("get_foreign_keys", (ht.ForeignKeysRequest(None, None, db, table),)),
                  ("get_partitions_with_auth", (db, table, -1, user, groups))]
        names = ex.partition_names(db, table)
        for name in names[:2]:
            values = [unescape(kv.split("=", 1)[1]) for kv in name.split("/")]
            spec = {kv.split("=", 1)[0]: value for kv, value in zip(name.split("/"), values)}
            calls += [("isPartitionMarkedForEvent", (db, table, spec, 1))]
            calls += [("partition_name_to_vals", (name,)), ("partition_name_to_spec", (name,)),
                      ("get_partition_with_auth", (db, table, values, user, groups)),
                      ("get_partitions_ps_with_auth", (db, table, values[:1], -1, user, groups)),
                      ("get_partition_names_ps", (db, table, values[:1], -1))]
            if len(values) > 1:
                calls.append(("get_partition_names_ps", (db, table, [""] + values[1:], -1)))
    for db in sorted({t[1] for t in touched if t[0] == "functions"}):
        calls += [("get_functions", (db, "*")), ("get_functions", (db, "f1|F2")), ("get_all_functions", ())]
        calls += [("get_function", (db, f)) for f in FUNCTIONS[:2]]
    if "roles" in kinds:
        calls.append(("get_role_names", ()))
        calls += [("get_principals_in_role", (ht.GetPrincipalsInRoleRequest(r),)) for r in ex.roles[:2]]
        for principal, kind in ex.principals():
            calls += [("list_roles", (principal, kind)),
                      ("get_role_grants_for_principal", (ht.GetRoleGrantsForPrincipalRequest(principal, kind),))]
    if "privileges" in kinds or "roles" in kinds:
        for principal, kind in ex.principals():
            calls.append(("list_privileges", (principal, kind, ht.HiveObjectRef())))
        for obj in _everything(ex):
            calls += [("list_privileges", (None, None, obj)), ("get_privilege_set", (obj, user, groups))]
    for _, db, table in sorted({t for t in touched if t[0] == "table"} if "privileges" in kinds else set()):
        obj = ht.HiveObjectRef(_OBJ.TABLE, db, table, None, None)
        calls += [("list_privileges", (None, None, obj)), ("get_privilege_set", (obj, user, groups))]
    if "conf" in kinds:
        calls += [("getMetaConf", (key,)) for key in META_KEYS[:5]]
    return calls


Reads = Callable[[MethodsExample, Touched], list[tuple[str, tuple[Any, ...]]]]


def check_reads(ex: MethodsExample, touched: Touched, reads_of: Reads = reads) -> None:
    run = ex.run
    run.background.run(wait_applied(run.gateway))
    for method, args in reads_of(ex, touched):
        theirs = call(ex, run.hms, method, args)
        ours = call(ex, run.cached, method, args)
        uncached = call(ex, run.uncached, method, args)
        assert ours == uncached, (f"the cached gateway's answer is not the uncached one's: {_describe(method, args)}"
                                  f"\n{_difference(ours, uncached, 'cached', 'uncached')}\nsteps so far:\n"
                                  + "\n".join(ex.log[-30:]))
        compare(ex, method, args, ours, theirs, "a read after the step")


def run_example(run: Run, data: Any, max_steps: int, *, draw: Callable[[MethodsExample], Made] | None = None,
                reads_of: Reads = reads, prefix: str = "md") -> None:
    """One example: `draw` makes each step (this module's STEPS when None), `reads_of` names the reads after
    it (tests/e2e/test_thrift_call_forms_differential.py passes its own)."""
    run.examples += 1
    ex = MethodsExample(run, f"{prefix}{run.examples}x", random.Random(data.draw(st.integers(0, 2**64 - 1),
                                                                                label="seed")))
    for db in ex.dbs[:2]:
        do_step(ex, ("create_database", (ht.Database(db, "d", None, {}),), []))
    do_step(ex, "create table")
    do_step(ex, "create role")
    for _ in range(ex.rng.randint(max_steps // 2, max_steps)):
        touched = do_step(ex, draw(ex) if draw else ex.rng.choice(_WEIGHTED))
        run.steps += 1
        check_reads(ex, touched, reads_of)
    everything: Touched = [("database", db) for db in ex.dbs[:2]] + [("functions", db) for db in ex.dbs[:2]]
    check_reads(ex, everything + [("roles",), ("privileges",), ("conf",)] + [
        ("table", db, t) for db in ex.dbs[:2] for t in TABLES[:2]], reads_of)
    for db in ex.dbs[:2]:  # out of the way of the next examples' listings
        for f in FUNCTIONS:
            for side in (run.hms, run.cached):
                side.call("drop_function", (db, f))
        for side in (run.hms, run.cached):
            side.call("drop_database", (db, True, True))
    for role in ex.roles:
        for side in (run.hms, run.cached):
            side.call("drop_role", (role,))


EXAMPLES = int(os.environ.get("METHODS_DIFFERENTIAL_EXAMPLES", "3"))
SOAK_EXAMPLES = int(os.environ.get("METHODS_DIFFERENTIAL_SOAK_EXAMPLES", "200"))
STEPS_PER_EXAMPLE = int(os.environ.get("METHODS_DIFFERENTIAL_STEPS", "10"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=PHASES, database=None)
@given(data=st.data())
def test_random_calls_answer_as_hive_metastore_does(servers: Run, data: Any) -> None:
    run_example(servers, data, STEPS_PER_EXAMPLE)


@pytest.mark.soak
@pytest.mark.timeout(0)  # one test for every example, past pyproject's 300 s per test
@settings(max_examples=SOAK_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES,
          database=None)
@given(data=st.data())
def test_random_calls_answer_as_hive_metastore_does_soak(servers: Run, data: Any) -> None:
    run_example(servers, data, STEPS_PER_EXAMPLE)
