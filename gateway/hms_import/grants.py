"""Roles, their grants and privileges: what Hive's SQL-standard (and legacy) authorization keeps in the
metastore, copied as the other phases copy objects (copier.py's rules: read the gateway's first; missing:
written; the same: identical; otherwise differing, or written over with --replace-differing; a dry run
writes nothing; the verifier compares only).

- Roles (get_role_names; create_role): every role but the built-in `admin` and `public`, which every
  metastore has. A role's owner is copied when Hive answers it: only list_roles of a principal that holds
  the role names it (Hive has no call that reads one role). A role whose owner differs is reported and kept:
  changing it would take dropping the role, and with it every grant it holds and is held by.
- Role grants (get_principals_in_role; grant_role, with the source's grantor and grant option): of each
  role, `admin` included, to users, groups and other roles (after every role is created, so a role granted
  to a role finds both). Left out, as Hive leaves them: `public`, which every user holds without a grant, and
  the grants of `admin` each metastore makes itself at its start to the users of hive.users.in.admin.role
  (granted by the role `admin`).
- Privileges (list_privileges of every principal on one object; grant_privileges): on GLOBAL, the selected
  databases, their tables and views, each column of those, and the partitions (and partitions' columns) of
  tables with PARTITION_LEVEL_PRIVILEGE=TRUE, Hive's switch for partition grants: without it Hive's
  authorization checks a partition's table, never reads its grants, and so they are not read here (one call
  per partition of every table would be the import's slowest phase). Left out: the `admin` role's ALL on
  GLOBAL, each metastore's own. Compared: principal, privilege, grant option and grantor; the grant time is
  each metastore's.

Roles, role grants and GLOBAL privileges are the metastore's, not a database's: every run copies them,
whatever --databases selects.

The gateway lets only an admin (hive.users.in.admin.role) manage roles, and keeps the grantor of an
admin's grant as sent (a non-admin's grants name the caller as grantor, and only on what it owns): the
first write the gateway refuses for that reason stops the phase's writes, the rest reported skipped with
what to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from gateway.hms_import import compare
from gateway.hms_import.endpoint import ThriftEndpoint
from gateway.hms_import.settle import Settler
from gateway.thrift.idl import hms
from hive.names import partition_spec_from_name

ADMIN, PUBLIC = "admin", "public"
BUILT_IN_ROLES = frozenset({ADMIN, PUBLIC})
USER, ROLE, GROUP = hms.PrincipalType.USER, hms.PrincipalType.ROLE, hms.PrincipalType.GROUP
GLOBAL, DATABASE, TABLE, PARTITION, COLUMN = (hms.HiveObjectType.GLOBAL, hms.HiveObjectType.DATABASE,
                                              hms.HiveObjectType.TABLE, hms.HiveObjectType.PARTITION,
                                              hms.HiveObjectType.COLUMN)
_TYPE_NAMES = {USER: "user", ROLE: "role", GROUP: "group"}


def is_implicit_role_grant(grant: Any) -> bool:
    """A metastore's own start-up grant of `admin` to a user of its hive.users.in.admin.role (granted by the
    role `admin` itself): each metastore makes its own."""
    return ((grant.roleName or "").lower() == ADMIN and (grant.grantorName or "").lower() == ADMIN
            and grant.grantorPrincipalType == ROLE)


def is_implicit_privilege(p: Any) -> bool:
    """The `admin` role's ALL on GLOBAL, which every metastore grants itself at its start."""
    info = p.grantInfo
    return (p.hiveObject is not None and p.hiveObject.objectType == GLOBAL and p.principalType == ROLE
            and (p.principalName or "").lower() == ADMIN and info is not None
            and (info.grantor or "").lower() == ADMIN and info.grantorType == ROLE)


def principal(name: str | None, kind: int | None) -> str:
    return f"{_TYPE_NAMES.get(kind, str(kind)) if kind is not None else '?'} {name}"


def partition_level(table: Any) -> bool:
    """Whether Hive reads the table's partitions' own grants (its PARTITION_LEVEL_PRIVILEGE switch)."""
    return str((table.parameters or {}).get("PARTITION_LEVEL_PRIVILEGE", "")).upper() == "TRUE"


@dataclass(frozen=True)
class GrantObject:
    """One object privileges are granted on, as list_privileges names it, and how the summary names it."""

    ref: Any
    name: str


@dataclass(frozen=True)
class SourceTable:
    """A source table whose privileges and constraints are read, and whether they may be written (else why
    not: the tables phase refused or kept it)."""

    db: str
    name: str
    table: Any
    usable: bool = True
    reason: str = ""


def table_objects(source: ThriftEndpoint, t: SourceTable) -> list[GrantObject]:
    """The table, its columns (partition keys too), and with PARTITION_LEVEL_PRIVILEGE each partition and
    partition's column."""
    full = f"{t.db}.{t.name}"
    columns = [c.name for c in [*((t.table.sd.cols if t.table.sd else None) or []), *(t.table.partitionKeys or [])]]
    objects = [GrantObject(hms.HiveObjectRef(objectType=TABLE, dbName=t.db, objectName=t.name), f"table {full}")]
    objects += [GrantObject(hms.HiveObjectRef(objectType=COLUMN, dbName=t.db, objectName=t.name, columnName=c),
                            f"column {full}.{c}") for c in columns]
    if t.table.partitionKeys and partition_level(t.table):
        for part_name in source.call("get_partition_names", t.db, t.name, -1):
            values = list(partition_spec_from_name(part_name).values())
            objects.append(GrantObject(hms.HiveObjectRef(objectType=PARTITION, dbName=t.db, objectName=t.name,
                                                         partValues=values), f"partition {full} {part_name}"))
            objects += [GrantObject(hms.HiveObjectRef(objectType=COLUMN, dbName=t.db, objectName=t.name,
                                                      partValues=values, columnName=c),
                                    f"column {full}.{c} of partition {part_name}") for c in columns]
    return objects


@dataclass
class _Members:
    """The source's grants of each role to be copied, and the roles' owners as list_roles answers them."""

    grants: dict[str, list[Any]] = field(default_factory=dict)
    owners: dict[str, str | None] = field(default_factory=dict)


class GrantCopier(Settler):
    """Copies (or, `verify`, compares) roles, role grants and privileges (the module's docstring)."""

    def run(self, databases: list[str], tables: list[SourceTable]) -> None:
        members = self.copy_roles()
        self.copy_role_grants(members)
        self.copy_privileges(databases, tables)

    # -- roles ----------------------------------------------------------------------------------------

    def _members(self, endpoint: ThriftEndpoint, role: str) -> list[Any]:
        answer = endpoint.call("get_principals_in_role", hms.GetPrincipalsInRoleRequest(roleName=role))
        return [g for g in answer.principalGrants or [] if not is_implicit_role_grant(g)]

    def _owners(self, endpoint: ThriftEndpoint, principals: Iterable[tuple[str, int]]) -> dict[str, str | None]:
        """Each role's owner, as list_roles of the principals that hold it answers it."""
        owners: dict[str, str | None] = {}
        for name, kind in principals:
            for role in endpoint.call("list_roles", name, kind) or []:
                owners.setdefault(role.roleName, role.ownerName)
        return owners

    def copy_roles(self) -> _Members:
        source_roles = sorted(r for r in self._source.call("get_role_names") if r.lower() not in BUILT_IN_ROLES)
        self._progress.start("roles", len(source_roles))
        members = _Members({role: self._members(self._source, role) for role in [ADMIN, *source_roles]})
        holders = sorted({(g.principalName, g.principalType) for gs in members.grants.values() for g in gs})
        members.owners = self._owners(self._source, holders)
        gateway_roles = [r for r in self._gateway.call("get_role_names") if r.lower() not in BUILT_IN_ROLES]
        gateway_owners = self._owners(self._gateway, holders)

        def role(name: str, owners: dict[str, str | None]) -> Any:
            # An owner is compared where both sides answer it (a role nobody holds has none to read).
            known = name in members.owners and name in gateway_owners
            return hms.Role(roleName=name, createTime=0, ownerName=owners.get(name) if known else None)

        self._settle("roles", {r: role(r, members.owners) for r in source_roles},
                     {r: role(r, gateway_owners) for r in gateway_roles}, lambda r: r.roleName,
                     lambda r: self._gateway.call("create_role", hms.Role(roleName=r.roleName, createTime=0,
                                                                          ownerName=members.owners.get(r.roleName))),
                     None, kept=" (a role's owner is not replaced: that would drop the role and every grant it "
                                "holds or is held by; drop it on the gateway and import again)")
        self._progress.advance(len(source_roles))
        self._progress.finish()
        return members

    def copy_role_grants(self, members: _Members) -> None:
        self._progress.start("role grants", sum(len(gs) for gs in members.grants.values()))
        for role, grants in members.grants.items():
            ours = self._members(self._gateway, role)
            if not grants and not (self._verify and ours):
                continue
            self._settle("role grants", {(g.principalName, g.principalType): g for g in grants},
                         {(g.principalName, g.principalType): g for g in ours},
                         lambda g: f"{g.roleName} to {principal(g.principalName, g.principalType)}",
                         self._grant_role, self._replace_role_grant)
            self._progress.advance(len(grants), note=role)
        self._progress.finish()

    def _grant_role(self, g: Any) -> None:
        self._gateway.call("grant_role", g.roleName, g.principalName, g.principalType, g.grantorName,
                           g.grantorPrincipalType, bool(g.grantOption))

    def _replace_role_grant(self, theirs: Any, ours: Any) -> None:
        self._gateway.call("revoke_role", ours.roleName, ours.principalName, ours.principalType)
        self._grant_role(theirs)

    # -- privileges -----------------------------------------------------------------------------------

    def copy_privileges(self, databases: list[str], tables: list[SourceTable]) -> None:
        objects = [GrantObject(hms.HiveObjectRef(objectType=GLOBAL), "GLOBAL")]
        objects += [GrantObject(hms.HiveObjectRef(objectType=DATABASE, dbName=db), f"database {db}")
                    for db in databases]
        for t in tables:
            if t.usable:
                objects += table_objects(self._source, t)
            elif any(self._listed(self._source, o.ref) for o in table_objects(self._source, t)):
                self._summary.add("privileges", "skipped", name=f"on {t.db}.{t.name} (every grant)",
                                  reason=f"neither copied nor compared: {t.reason}")
        self._progress.start("privileges", len(objects))
        for obj in objects:
            self._settle_object(obj)
            self._progress.advance(note=obj.name)
        self._progress.finish()

    def _listed(self, endpoint: ThriftEndpoint, ref: Any) -> dict[tuple[str, int, str], Any]:
        listed = endpoint.call("list_privileges", None, None, ref) or []
        return {(p.principalName, p.principalType, p.grantInfo.privilege): p for p in listed
                if not is_implicit_privilege(p)}

    def _settle_object(self, obj: GrantObject) -> None:
        theirs = self._listed(self._source, obj.ref)
        if not theirs and not self._verify:
            return
        ours = self._listed(self._gateway, obj.ref)

        def name_of(p: Any) -> str:
            return f"{p.grantInfo.privilege} on {obj.name} to {principal(p.principalName, p.principalType)}"

        def grant(p: Any) -> None:
            self._gateway.call("grant_privileges", _bag(obj.ref, p))

        def replace(theirs: Any, ours: Any) -> None:
            self._gateway.call("revoke_privileges", _bag(obj.ref, ours))
            grant(theirs)

        # The object is the key already; the grant time each metastore's (compare.TIMES).
        self._settle("privileges", theirs, ours, name_of, grant, replace,
                     compared=lambda p: compare.plain([p.principalName, p.principalType, p.grantInfo]))


def _bag(ref: Any, p: Any) -> Any:
    info = p.grantInfo
    return hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
        hiveObject=ref, principalName=p.principalName, principalType=p.principalType,
        grantInfo=hms.PrivilegeGrantInfo(privilege=info.privilege, createTime=0, grantor=info.grantor,
                                         grantorType=info.grantorType, grantOption=bool(info.grantOption)))])
