"""Roles and privileges: what SQL-standard authorization in Hive (CREATE ROLE, GRANT, REVOKE, SHOW GRANT,
SHOW ROLE GRANT) and Trino's `sql-standard` security keep in the metastore. The metastore stores and
answers them; the engines enforce them.

Hive's rules (checked against Hive Metastore 2.3.10: tests/e2e/test_thrift_differential.py; the values
and the rules that need no database in hive/privileges.py):
- `admin` and `public` always exist (schema 0014); every user holds `public` without a grant (so it is
  listed with each user's roles), and the users of hive.users.in.admin.role hold `admin`, with the grant
  option (`ensure_admin_users`, at each gateway's start). Neither can be dropped; `public` can be neither
  created, granted nor revoked.
- A role may be granted to a user, a group or another role, never so that a role holds itself. Dropping
  a role drops its memberships and what it was granted. Dropping a role that does not exist succeeds.
- A principal holds a privilege on an object once, whoever granted it; a revoke names the principal,
  the object and the privilege (its grantor is not compared); REVOKE GRANT OPTION FOR keeps the
  privilege and takes the grant option. Each grant or revoke call is all or nothing.
- A table's grants follow it through a rename (keyed by its stable id) and go when it, its partition
  or its database is dropped.

Where this differs from Hive 2.3 on purpose (its metastore answers these with an internal error, true,
or stores what no engine can use): a grant on an object that does not exist, of an empty privilege, or on a
column the table does not have, and a grant to a role that does not exist, are refused with a message.
With authentication on, a non-admin grants and revokes only on what it owns (`owner`: the object's, or
its table's or database's, USER owner), as Hive's SQL-standard authorization lets the owner do (the
owner holds every privilege with the grant option); GLOBAL privileges are an admin's.
Not versioned and not cached: every read is PostgreSQL's, on any gateway.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import asyncpg

from hive import limits
from hive import names as n
from hive import privileges as hp
from hive.privileges import Grant, ObjectRef, PrivilegeGrant, PrivilegeSet, Role, RoleGrant
from store import catalog
from store.errors import AlreadyExists, FailedPrecondition, InvalidArgument, NeverAllowed, NotFound, PermissionDenied
from store.events import Outcome
from store.models import Table
from store.sql import privileges as sql

# -- roles --------------------------------------------------------------------------------------


async def create_role(conn: asyncpg.Connection, role: Role, now: int) -> None:
    name = hp.check_role_name(role.name)
    if name == hp.PUBLIC_ROLE:
        raise NeverAllowed(f"{hp.PUBLIC_ROLE} role implicitly exists: every user holds it. It can't be created.")
    limits.check_text(role.owner or "", f"role {name}: owner", limits.OWNER)
    if await conn.fetchval(sql.INSERT_ROLE, name, role.owner, now) is None:
        raise AlreadyExists(f"role {name} already exists")


async def drop_role(conn: asyncpg.Connection, name: str) -> None:
    """Drops the role, its memberships and what it was granted; a role that does not exist is no error
    (as in Hive)."""
    name = hp.check_role_name(name)
    if name in (hp.ADMIN_ROLE, hp.PUBLIC_ROLE):
        raise NeverAllowed(f"{hp.PUBLIC_ROLE},{hp.ADMIN_ROLE} roles can't be dropped.")
    await conn.execute(sql.DELETE_ROLE, name)  # first: it waits for grants under way, which then find no role
    await conn.execute(sql.DELETE_ROLE_AS_MEMBER, name)
    await conn.execute(sql.DELETE_PRIVILEGES_OF_ROLE, name)


async def role_names(conn: asyncpg.Connection) -> list[str]:
    return [r["role_name"] for r in await conn.fetch(sql.ROLE_NAMES)]


async def _lock_role(conn: asyncpg.Connection, name: str, what: str) -> None:
    if await conn.fetchval(sql.LOCK_ROLE, name) is None:
        raise NotFound(f"{what}: role {limits.preview(name, 80)} does not exist")


def _checked_grant(grant: RoleGrant) -> RoleGrant:
    role = hp.check_role_name(grant.role)
    what = f"role {role}"
    principal_type = hp.check_principal_type(grant.principal_type, what)
    principal = hp.check_principal(grant.principal, what)
    limits.check_text(grant.grantor or "", f"{what}: grantor", limits.NAME)
    return RoleGrant(role, principal, principal_type, grant.grant_option, grant.grant_time, grant.grantor,
                     hp.check_grantor_type(grant.grantor_type, what))


async def grant_role(conn: asyncpg.Connection, grant: RoleGrant, now: int) -> None:
    g = _checked_grant(grant)
    if g.role == hp.PUBLIC_ROLE:
        raise NeverAllowed(f"No one can be granted {hp.PUBLIC_ROLE}: every user holds it already.")
    what = f"grant role {g.role} to {g.principal_type.lower()} {g.principal}"
    await _lock_role(conn, g.role, what)
    if g.principal_type == "ROLE":
        await _lock_role(conn, g.principal, what)
        await conn.execute(sql.LOCK_ROLE_GRAPH)
        inside = {r["role_name"] for r in await conn.fetch(sql.ROLE_ANCESTORS, g.role)}
        if g.principal == g.role or g.principal in inside:
            raise FailedPrecondition(f"Cannot {what}: {g.principal} already belongs to the role {g.role}, "
                                     "directly or through other roles (no cycles allowed)")
    inserted = await conn.fetchval(sql.INSERT_ROLE_GRANT, g.role, g.principal, g.principal_type, g.grant_option, now,
                                   g.grantor, g.grantor_type)
    if inserted is None:
        raise AlreadyExists(f"{g.principal_type.lower()} {g.principal} already holds the role {g.role}")


async def revoke_role(conn: asyncpg.Connection, role: str, principal: str, principal_type: str, *,
                      grant_option_only: bool = False) -> None:
    """Takes the role from the principal (one who does not hold it keeps not holding it, as in Hive), or
    (`grant_option_only`: REVOKE ADMIN OPTION FOR) only its right to grant the role on."""
    g = _checked_grant(RoleGrant(role, principal, principal_type))
    if g.role == hp.PUBLIC_ROLE:
        raise NeverAllowed(f"{hp.PUBLIC_ROLE} role can't be revoked: every user holds it.")
    key = (g.role, g.principal, g.principal_type)
    await _lock_role(conn, g.role, f"revoke role {g.role}")
    row = await conn.fetchrow(sql.SELECT_ROLE_GRANT_FOR_UPDATE, *key)
    if not grant_option_only:
        await conn.execute(sql.DELETE_ROLE_GRANT, *key)  # (a role not held: nothing to do, as in Hive)
    elif row is None or not row["grant_option"]:
        raise FailedPrecondition(f"{g.principal_type.lower()} {g.principal} does not have grant option with role "
                                 f"{g.role}")
    else:
        await conn.execute(sql.DROP_ROLE_GRANT_OPTION, *key)


def _role_grant(row: asyncpg.Record) -> RoleGrant:
    return RoleGrant(row["role_name"], row["principal_name"], row["principal_type"], row["grant_option"],
                     row["grant_time"], row["grantor"], row["grantor_type"])


async def _roles_of(conn: asyncpg.Connection, principal: str | None, principal_type: str) -> list[asyncpg.Record]:
    principal_type = hp.check_principal_type(principal_type, "the roles of a principal")
    limits.check_text(principal or "", "principal name", limits.NAME)
    return list(await conn.fetch(sql.ROLES_OF_PRINCIPAL, principal or "", principal_type))


async def list_roles(conn: asyncpg.Connection, principal: str | None, principal_type: str) -> list[Role]:
    """The roles the principal holds directly, by name; a user's end with `public`."""
    rows = await _roles_of(conn, principal, principal_type)
    roles = [Role(r["role_name"], r["owner_name"], r["create_time"]) for r in rows]
    return roles + [hp.public_role()] if principal_type == "USER" else roles


async def role_grants_for_principal(conn: asyncpg.Connection, principal: str | None,
                                    principal_type: str) -> list[RoleGrant]:
    """The principal's grants of roles (SHOW ROLE GRANT); a user's end with its implicit `public`."""
    grants = [_role_grant(r) for r in await _roles_of(conn, principal, principal_type)]
    return grants + [hp.public_grant(principal or "")] if principal_type == "USER" else grants


async def principals_in_role(conn: asyncpg.Connection, role: str) -> list[RoleGrant]:
    """Who holds the role directly (SHOW PRINCIPALS); nobody is listed for `public`."""
    return [_role_grant(r) for r in await conn.fetch(sql.PRINCIPALS_IN_ROLE, hp.check_role_name(role))]


async def ensure_admin_users(conn: asyncpg.Connection, users: Sequence[str], now: int) -> None:
    """Hive's metastore start-up rule: the users of hive.users.in.admin.role hold `admin`, with the grant
    option, granted by the role itself. A grant made earlier stays as it is."""
    for user in users:
        await conn.execute(sql.INSERT_ROLE_GRANT, hp.ADMIN_ROLE, user, "USER", True, now, hp.ADMIN_ROLE, "ROLE")


# -- the objects privileges are on ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Key:
    """An object as its rows name it: type, database (DATABASE only), table id, partition name, column."""

    object_type: str
    db_name: str | None = None
    table_id: int = 0
    part_name: str = ""
    column_name: str = ""

    def args(self) -> tuple[str, str | None, int, str, str]:
        return self.object_type, self.db_name, self.table_id, self.part_name, self.column_name


async def _key_of(conn: asyncpg.Connection, obj: ObjectRef, *, for_grant: bool) -> _Key | None:
    """The rows' key of `obj`; None when its database or table does not exist (nothing can be held on
    it), or, when `for_grant`, NotFound (for a missing partition too; InvalidArgument for a column the
    table does not have). A grant holds the table's row in share, so a concurrent drop cannot leave its
    grants behind. Partition values count for a PARTITION and a COLUMN (a partition's column) only."""
    if obj.object_type not in hp.OBJECT_TYPES:
        raise InvalidArgument(f"object type {limits.preview(obj.object_type, 40)} is not one of "
                              f"{', '.join(hp.OBJECT_TYPES)}")
    if obj.object_type == "GLOBAL":
        return _Key("GLOBAL")
    db_name = n.normalize_identifier(obj.db, "database")
    if obj.object_type == "DATABASE":
        if await conn.fetchval(sql.LOCK_DATABASE if for_grant else sql.DATABASE_EXISTS, db_name) is None:
            if for_grant:
                raise NotFound(f"database {db_name} does not exist")
            return None
        return _Key("DATABASE", db_name=db_name)
    try:
        table = await catalog.get_table(conn, db_name, obj.table, lock="share" if for_grant else "")
    except NotFound:
        if for_grant:
            raise
        return None
    part_name = ""
    if obj.object_type == "PARTITION" or (obj.object_type == "COLUMN" and obj.part_values):
        if not table.partition_keys:
            raise InvalidArgument(f"{hp.describe(obj)}: table {table.full_name} is not partitioned")
        values = n.validate_partition_values(table.partition_keys, obj.part_values)
        part_name = n.make_partition_name(table.partition_keys, values)
        if for_grant and await conn.fetchval(sql.PARTITION_EXISTS, table.table_id, part_name) is None:
            raise NotFound(f"partition {part_name} of {table.full_name} does not exist")
    column = ""
    if obj.object_type == "COLUMN":
        column = n.normalize_column_name(obj.column)
        if for_grant and column not in {f.name for f in (*table.columns, *table.partition_keys)}:
            raise InvalidArgument(f"table {table.full_name} has no column {limits.preview(column, 80)}")
    return _Key(obj.object_type, table_id=table.table_id, part_name=part_name, column_name=column)


def _grant(row: asyncpg.Record) -> Grant:
    return Grant(row["privilege"], row["create_time"], row["grantor"], row["grantor_type"], row["grant_option"])


def _listed(row: asyncpg.Record) -> PrivilegeGrant:
    part_values = tuple(n.partition_spec_from_name(row["part_name"]).values()) if row["part_name"] else ()
    obj = ObjectRef(row["object_type"], row["db_name"], row["tbl_name"], part_values, row["column_name"])
    return PrivilegeGrant(obj, row["principal_name"], row["principal_type"], _grant(row))


def _principal_of(p: PrivilegeGrant, what: str) -> tuple[str, str]:
    principal_type = hp.check_principal_type(p.principal_type, what)
    return hp.check_principal(p.principal, what), principal_type


# -- privileges ---------------------------------------------------------------------------------


async def _check_owner(conn: asyncpg.Connection, obj: ObjectRef, key: _Key, owner: str | None, what: str) -> None:
    """PermissionDenied unless `owner` is None (the open mode, or an admin) or the USER owning `obj`
    (a partition's or column's table, a database); `key` is `obj`'s, so `obj` exists."""
    if owner is None:
        return
    if key.object_type == "GLOBAL":
        held: tuple[str | None, str] | None = None
    elif key.object_type == "DATABASE":
        row = await conn.fetchrow(sql.DATABASE_OWNER, key.db_name)
        held = (row["owner"], row["owner_type"]) if row is not None else None
    else:
        table = await catalog.get_table(conn, n.normalize_identifier(obj.db, "database"), obj.table)
        held = (table.owner, table.owner_type)
    if held != (owner, "USER"):
        raise PermissionDenied(f"{what}: {owner} does not own it; only its owner or an admin "
                               "(hive.users.in.admin.role) may grant or revoke privileges on it")


async def grant_privileges(conn: asyncpg.Connection, grants: Sequence[PrivilegeGrant], now: int, *,
                           owner: str | None = None) -> None:
    """Stores each grant (GRANT ... ON ... TO ...), all or none; a privilege held already is refused.
    Unless `owner` is None, every object must be that user's (_check_owner)."""
    limits.check_count(len(grants), "grants in one call")
    for p in grants:
        what = f"grant on {hp.describe(p.obj)}"
        principal, principal_type = _principal_of(p, what)
        grantor_type = hp.check_grantor_type(p.grant.grantor_type, what)
        limits.check_text(p.grant.grantor or "", f"{what}: grantor", limits.NAME)
        privileges = hp.split_privileges(p.grant.privilege, what)
        key = await _key_of(conn, p.obj, for_grant=True)
        assert key is not None  # (for_grant: NotFound instead)
        await _check_owner(conn, p.obj, key, owner, what)
        if principal_type == "ROLE":
            await _lock_role(conn, principal, what)
        for privilege in privileges:
            inserted = await conn.fetchval(sql.INSERT_PRIVILEGE, *key.args(), principal, principal_type, privilege,
                                           p.grant.grant_option, now, p.grant.grantor, grantor_type)
            if inserted is None:
                raise AlreadyExists(f"{principal_type.lower()} {principal} already holds {privilege} on "
                                    f"{hp.describe(p.obj)}; nothing was granted")


async def revoke_privileges(conn: asyncpg.Connection, grants: Sequence[PrivilegeGrant], *,
                            grant_option_only: bool = False, owner: str | None = None) -> None:
    """Takes each privilege (or, `grant_option_only`, only the right to grant it on), all or none; a
    privilege the principal does not hold is refused. Unless `owner` is None, every object must be that
    user's (_check_owner)."""
    limits.check_count(len(grants), "revokes in one call")
    for p in grants:
        what = f"revoke on {hp.describe(p.obj)}"
        principal, principal_type = _principal_of(p, what)
        privileges = hp.split_privileges(p.grant.privilege, what)
        key = await _key_of(conn, p.obj, for_grant=False)
        if key is not None:
            await _check_owner(conn, p.obj, key, owner, what)
        for privilege in privileges:
            args = (*key.args(), principal, principal_type, privilege) if key is not None else None
            held = await conn.fetchval(sql.SELECT_PRIVILEGE_FOR_UPDATE, *args) if args is not None else None
            if args is None or held is None:  # (the object does not exist, or holds no such grant)
                raise NotFound(f"{principal_type.lower()} {principal} does not hold {privilege} on "
                               f"{hp.describe(p.obj)}; nothing was revoked")
            if not grant_option_only:
                await conn.execute(sql.DELETE_PRIVILEGE, *args)
            elif not held:
                raise FailedPrecondition(f"{principal_type.lower()} {principal} does not have grant option with "
                                         f"privilege {privilege} on {hp.describe(p.obj)}")
            else:
                await conn.execute(sql.DROP_PRIVILEGE_GRANT_OPTION, *args)


async def list_privileges(conn: asyncpg.Connection, principal: str | None, principal_type: str | None,
                          obj: ObjectRef | None) -> list[PrivilegeGrant]:
    """SHOW GRANT: the grants on `obj` (of every principal when `principal` is None), or, with no object
    (its type None), everything `principal` holds; none for an object that does not exist."""
    if principal is not None:
        principal_type = hp.check_principal_type(principal_type, "list privileges")
        limits.check_text(principal, "principal name", limits.NAME)
    if obj is None:
        if principal is None:
            raise InvalidArgument("list privileges: name an object, a principal, or both")
        return [_listed(r) for r in await conn.fetch(sql.LIST_OF_PRINCIPAL, principal, principal_type)]
    key = await _key_of(conn, obj, for_grant=False)
    if key is None:
        return []
    return [_listed(r) for r in await conn.fetch(sql.LIST_ON_OBJECT, *key.args(), principal, principal_type)]


async def privilege_set(conn: asyncpg.Connection, obj: ObjectRef, user: str | None,
                        groups: Sequence[str]) -> PrivilegeSet:
    """What `user`, its `groups` and every role they hold (through other roles too, and `public`) were
    granted on `obj`, each by name, as Hive answers get_privilege_set: on GLOBAL, only a user or group that
    holds something is listed and roles are not; elsewhere each is listed, with what it holds or nothing."""
    limits.check_text(user or "", "user name", limits.NAME)
    limits.check_count(len(groups), "group names")
    key = await _key_of(conn, obj, for_grant=False)
    seeds = [hp.PUBLIC_ROLE] if user is not None else []
    roles: list[str] = []
    if obj.object_type != "GLOBAL" and (user is not None or groups):
        held_roles = await conn.fetch(sql.ROLES_IN_HIERARCHY, user or "", list(groups), seeds)
        roles = sorted(r["role_name"] for r in held_roles)
    names = ([user] if user is not None else []) + list(groups) + roles
    types = (["USER"] if user is not None else []) + ["GROUP"] * len(groups) + ["ROLE"] * len(roles)
    held: dict[tuple[str, str], list[Grant]] = {(nm, t): [] for nm, t in zip(names, types)}
    if key is not None and names:
        for r in await conn.fetch(sql.GRANTS_ON_OBJECT_FOR, *key.args(), names, types):
            held[r["principal_name"], r["principal_type"]].append(_grant(r))
    if obj.object_type == "GLOBAL":
        users = {user: held[user, "USER"]} if user is not None and held[user, "USER"] else None
        return PrivilegeSet(users, {g: held[g, "GROUP"] for g in groups if held[g, "GROUP"]} if groups else None)
    return PrivilegeSet({user: held[user, "USER"]} if user is not None else None,
                        {g: held[g, "GROUP"] for g in groups} if groups else None,
                        {r: held[r, "ROLE"] for r in roles} if roles else None)


async def create_table_with_grants(conn: asyncpg.Connection, table: Table, grants: Sequence[PrivilegeGrant],
                                   now: int, make_locations: catalog.MakeLocations | None = None) -> Outcome[Table]:
    """A new table and the grants its creator sends with it (Hive's CREATE TABLE sends the owner's, as
    hive.security.authorization.createtable.owner.grants says; Hive's metastore stores them with the
    table), in one transaction: a refused grant creates no table. Each grant's object is the new table."""
    created = await catalog.create_table(conn, table, make_locations)
    on_table = ObjectRef("TABLE", created.value.db_name, created.value.name)
    await grant_privileges(conn, [replace(g, obj=on_table) for g in grants], now)
    return created
