"""Hive's roles and privileges as values, and the rules that need no database (hive-reference: SQL-standard
authorization keeps its grants in the metastore; the engines enforce them).

Checked against Hive Metastore 2.3.10 (tests/e2e/test_thrift_differential.py): role and principal names
are kept as sent (case-sensitive); every user holds the role `public` without a grant, which therefore
can be neither granted, revoked, created nor dropped, and `admin` cannot be dropped; a privilege text
may name several privileges, comma-separated ("SELECT,INSERT"), each stored as its own grant.
"""

from __future__ import annotations

from dataclasses import dataclass

from hive import limits
from hive.errors import InvalidArgument

PRINCIPAL_TYPES = ("USER", "ROLE", "GROUP")  # Hive's PrincipalType, in the order of its ids 1, 2, 3
OBJECT_TYPES = ("GLOBAL", "DATABASE", "TABLE", "PARTITION", "COLUMN")  # HiveObjectType, ids 1 to 5
ADMIN_ROLE = "admin"
PUBLIC_ROLE = "public"
PRIVILEGE = 128  # a privilege's name (Hive's *_PRIV columns are 128 characters)


@dataclass(frozen=True, slots=True)
class Role:
    name: str
    owner: str | None = None
    create_time: int = 0


@dataclass(frozen=True, slots=True)
class RoleGrant:
    """`principal` (of `principal_type`) holds `role`."""

    role: str
    principal: str
    principal_type: str
    grant_option: bool = False
    grant_time: int = 0
    grantor: str | None = None
    grantor_type: str | None = None


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """Hive's HiveObjectRef: what a privilege is on. `table` names the table of a TABLE, PARTITION or
    COLUMN; `part_values` the partition (a COLUMN's partition, when given); `column` a COLUMN's column."""

    object_type: str
    db: str = ""
    table: str = ""
    part_values: tuple[str, ...] = ()
    column: str = ""


@dataclass(frozen=True, slots=True)
class Grant:
    """Hive's PrivilegeGrantInfo: one privilege as granted."""

    privilege: str
    create_time: int = 0
    grantor: str | None = None
    grantor_type: str | None = None
    grant_option: bool = False


@dataclass(frozen=True, slots=True)
class PrivilegeGrant:
    """Hive's HiveObjectPrivilege: `principal` holds `grant` on `obj`."""

    obj: ObjectRef
    principal: str
    principal_type: str
    grant: Grant


@dataclass(frozen=True, slots=True)
class PrivilegeSet:
    """Hive's PrincipalPrivilegeSet: a user's, its groups' and its roles' grants on one object. None where
    Hive leaves a map unset (a map for no user, or no groups), as its clients tell the two apart."""

    users: dict[str, list[Grant]] | None = None
    groups: dict[str, list[Grant]] | None = None
    roles: dict[str, list[Grant]] | None = None


def check_principal_type(principal_type: str | None, what: str) -> str:
    if principal_type not in PRINCIPAL_TYPES:
        raise InvalidArgument(f"{what}: principal type {limits.preview(str(principal_type), 40)} is not one of "
                              f"{', '.join(PRINCIPAL_TYPES)}")
    return str(principal_type)


def check_grantor_type(grantor_type: str | None, what: str) -> str | None:
    return None if grantor_type is None else check_principal_type(grantor_type, f"{what}: grantor")


def check_principal(name: str | None, what: str) -> str:
    if not name:
        raise InvalidArgument(f"{what}: a principal name is needed")
    return limits.check_text(name, f"{what}: principal name", limits.NAME)


def check_role_name(name: str | None) -> str:
    if not name:
        raise InvalidArgument("a role needs a name")
    return limits.check_text(name, "role name", limits.NAME)


def split_privileges(text: str | None, what: str) -> list[str]:
    """The privileges a grant's text names: Hive stores "SELECT,INSERT" as two grants. Each is kept as sent
    (Hive's clients send upper case); an empty one is refused (Hive 2.3 stores it, and no engine can use it)."""
    limits.check_text(text or "", f"{what}: privilege", limits.OWNER)
    names = [p.strip() for p in (text or "").split(",")]
    if not all(names):
        raise InvalidArgument(f"{what}: privilege {limits.preview(text or '', 80)!r} names an empty privilege")
    for name in names:
        limits.check_text(name, f"{what}: privilege", PRIVILEGE)
    return list(dict.fromkeys(names))


def public_role() -> Role:
    """The role every user holds, as Hive lists it (created at time 0, owned by itself)."""
    return Role(PUBLIC_ROLE, PUBLIC_ROLE, 0)


def public_grant(user: str) -> RoleGrant:
    """Every user's grant of `public`, as Hive lists it: no time, no grantor."""
    return RoleGrant(PUBLIC_ROLE, user, "USER")


def describe(obj: ObjectRef) -> str:
    """The object, as an error message names it."""
    if obj.object_type == "GLOBAL":
        return "the metastore (GLOBAL)"
    if obj.object_type == "DATABASE":
        return f"database {obj.db}"
    what = f"table {obj.db}.{obj.table}"
    if obj.part_values:
        what = f"partition {list(obj.part_values)} of {what}"
    if obj.column:
        what = f"column {obj.column} of {what}"
    return what
