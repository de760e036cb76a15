"""Roles and privileges over Thrift: what Hive's SQL-standard authorization (CREATE ROLE, GRANT, REVOKE,
SHOW GRANT, SHOW ROLE GRANT, SHOW PRINCIPALS) and Trino's `sql-standard` security send. The rules are
the store's (store/privileges.py); nothing is cached, so every gateway answers what PostgreSQL holds.
Every method declares only MetaException: each refusal is one, with the store's message.

With authentication on (the connection's certificate names the caller), only an admin
(`hive.users.in.admin.role`) manages roles: creates or drops one, grants or revokes membership, as in
Hive's SQL-standard authorization, where that takes the admin role; else anyone could make themselves
`admin`. A non-admin grants and revokes privileges only on objects it owns (Hive's owner holds every
privilege with the grant option); GLOBAL privileges are an admin's. The open mode checks nothing.
"""

from __future__ import annotations

from typing import Any

from gateway.auth import thrift_identity
from gateway.thrift.convert import PRINCIPAL_IDS, PRINCIPAL_TYPES, required
from gateway.thrift.idl import hms
from hive.privileges import OBJECT_TYPES, Grant, ObjectRef, PrivilegeGrant, PrivilegeSet, Role, RoleGrant
from store.errors import InvalidArgument, PermissionDenied
from store.privilege_store import PrivilegeStore

_OBJECT_TYPE_IDS = {name: i for i, name in enumerate(OBJECT_TYPES, start=1)}  # Hive's HiveObjectType
_GRANT, _REVOKE = 1, 2  # Hive's GrantRevokeType


def _principal_type(value: int | None, what: str) -> str:
    """Hive's PrincipalType id as its name; an id Hive does not define passes on as its number, for the
    store to refuse by name."""
    if value is None:
        raise InvalidArgument(f"{what}: a principal type is needed (USER, ROLE or GROUP)")
    return PRINCIPAL_TYPES.get(value, str(value))


def _optional_type(value: int | None) -> str | None:
    return None if value is None else PRINCIPAL_TYPES.get(value, str(value))


def _type_id(name: str | None) -> int | None:
    return None if name is None else PRINCIPAL_IDS[name]


def _object_from_thrift(ref: Any) -> ObjectRef:
    ref = required(ref, "hiveObject")
    if ref.objectType is None:
        raise InvalidArgument("hiveObject: an object type is needed (GLOBAL, DATABASE, TABLE, PARTITION or COLUMN)")
    type_name = OBJECT_TYPES[ref.objectType - 1] if 1 <= ref.objectType <= len(OBJECT_TYPES) else str(ref.objectType)
    return ObjectRef(type_name, ref.dbName or "", ref.objectName or "", tuple(ref.partValues or ()),
                     ref.columnName or "")


def _object_to_thrift(obj: ObjectRef) -> Any:
    global_or_db = obj.object_type in ("GLOBAL", "DATABASE")
    return hms.HiveObjectRef(objectType=_OBJECT_TYPE_IDS[obj.object_type], dbName=obj.db or None,
                             objectName=None if global_or_db else obj.table,
                             partValues=list(obj.part_values) or None, columnName=obj.column or None)


def _grant_to_thrift(g: Grant) -> Any:
    return hms.PrivilegeGrantInfo(privilege=g.privilege, createTime=g.create_time, grantor=g.grantor,
                                  grantorType=_type_id(g.grantor_type), grantOption=g.grant_option)


def _grant_from_thrift(info: Any) -> Grant:
    """A PrivilegeGrantInfo as sent; its createTime is the metastore's to stamp. An authenticated
    non-admin grants as itself whatever grantor it names (SHOW GRANT's grantor is an audit trail, as
    HiveServer2 fills it with the session's user); an admin's, or the open mode's, is kept as sent."""
    info = required(info, "grantInfo")
    caller = thrift_identity.get().limited_to
    grantor, grantor_type = (info.grantor, _optional_type(info.grantorType)) if caller is None else (caller, "USER")
    return Grant(info.privilege or "", 0, grantor, grantor_type, bool(info.grantOption))


def _privileges_from_thrift(bag: Any) -> list[PrivilegeGrant]:
    return [PrivilegeGrant(_object_from_thrift(p.hiveObject), p.principalName or "",
                           _principal_type(p.principalType, "privilege"), _grant_from_thrift(p.grantInfo))
            for p in required(bag, "privileges").privileges or []]


def grants_of_privilege_set(privileges: Any) -> list[PrivilegeGrant]:
    """The grants a PrincipalPrivilegeSet holds (what Hive's CREATE TABLE sends in Table.privileges), each
    on the object they come with (set by the store)."""
    if privileges is None:
        return []
    return [PrivilegeGrant(ObjectRef("TABLE"), principal, kind, _grant_from_thrift(info))
            for held, kind in ((privileges.userPrivileges, "USER"), (privileges.groupPrivileges, "GROUP"),
                               (privileges.rolePrivileges, "ROLE"))
            for principal, infos in (held or {}).items() for info in infos or []]


def _privilege_to_thrift(p: PrivilegeGrant) -> Any:
    return hms.HiveObjectPrivilege(hiveObject=_object_to_thrift(p.obj), principalName=p.principal,
                                   principalType=PRINCIPAL_IDS[p.principal_type], grantInfo=_grant_to_thrift(p.grant))


def _privilege_set_to_thrift(s: PrivilegeSet) -> Any:
    def grants(held: dict[str, list[Grant]] | None) -> dict[str, list[Any]] | None:
        return None if held is None else {name: [_grant_to_thrift(g) for g in gs] for name, gs in held.items()}

    return hms.PrincipalPrivilegeSet(userPrivileges=grants(s.users), groupPrivileges=grants(s.groups),
                                     rolePrivileges=grants(s.roles))


def _role_to_thrift(r: Role) -> Any:
    return hms.Role(roleName=r.name, createTime=r.create_time, ownerName=r.owner)


def _role_grant_to_thrift(g: RoleGrant) -> Any:
    return hms.RolePrincipalGrant(roleName=g.role, principalName=g.principal,
                                  principalType=PRINCIPAL_IDS[g.principal_type], grantOption=g.grant_option,
                                  grantTime=g.grant_time, grantorName=g.grantor,
                                  grantorPrincipalType=_type_id(g.grantor_type))


def _request_type(value: int | None, what: str) -> int:
    if value not in (_GRANT, _REVOKE):
        raise InvalidArgument(f"{what}: requestType {value} is neither GRANT (1) nor REVOKE (2)")
    return value


def _check_role_admin(what: str) -> None:
    identity = thrift_identity.get()
    if identity.limited_to is not None:
        raise PermissionDenied(f"{what}: {identity.user} may not manage roles; only an admin "
                               "(hive.users.in.admin.role) may create, drop, grant or revoke a role")


def _grantor_owner() -> str | None:
    """Whose objects the caller may grant and revoke privileges on: None (any) open or for an admin."""
    return thrift_identity.get().limited_to


class PrivilegeMethods:
    """Mixed into the Thrift handler; needs `_privileges`."""

    _privileges: PrivilegeStore

    # -- roles --------------------------------------------------------------------------------------

    async def create_role(self, role: Any) -> bool:
        role = required(role, "role")
        _check_role_admin("create_role")
        await self._privileges.create_role(Role(role.roleName or "", role.ownerName))
        return True

    async def drop_role(self, role_name: str | None) -> bool:
        _check_role_admin("drop_role")
        await self._privileges.drop_role(required(role_name, "role_name"))
        return True

    async def get_role_names(self) -> list[str]:
        return await self._privileges.role_names()

    async def grant_role(self, role_name: str | None, principal_name: str | None, principal_type: int | None,
                         grantor: str | None, grantorType: int | None, grant_option: bool | None) -> bool:  # noqa: N803
        _check_role_admin("grant_role")
        await self._privileges.grant_role(RoleGrant(
            required(role_name, "role_name"), principal_name or "", _principal_type(principal_type, "grant_role"),
            bool(grant_option), 0, grantor, _optional_type(grantorType)))
        return True

    async def revoke_role(self, role_name: str | None, principal_name: str | None,
                          principal_type: int | None) -> bool:
        _check_role_admin("revoke_role")
        await self._privileges.revoke_role(required(role_name, "role_name"), principal_name or "",
                                           _principal_type(principal_type, "revoke_role"))
        return True

    async def grant_revoke_role(self, request: Any) -> Any:
        """GRANT ROLE and REVOKE ROLE (REVOKE ADMIN OPTION FOR, with grantOption) in one request shape."""
        req = required(request, "request")
        kind = _request_type(req.requestType, "grant_revoke_role")
        _check_role_admin("grant_revoke_role")
        principal_type = _principal_type(req.principalType, "grant_revoke_role")
        if kind == _GRANT:
            await self._privileges.grant_role(RoleGrant(
                required(req.roleName, "roleName"), req.principalName or "", principal_type, bool(req.grantOption), 0,
                req.grantor, _optional_type(req.grantorType)))
        else:
            await self._privileges.revoke_role(required(req.roleName, "roleName"), req.principalName or "",
                                               principal_type, grant_option_only=bool(req.grantOption))
        return hms.GrantRevokeRoleResponse(success=True)

    async def list_roles(self, principal_name: str | None, principal_type: int | None) -> list[Any]:
        roles = await self._privileges.list_roles(principal_name, _principal_type(principal_type, "list_roles"))
        return [_role_to_thrift(r) for r in roles]

    async def get_principals_in_role(self, request: Any) -> Any:
        grants = await self._privileges.principals_in_role(required(required(request, "request").roleName, "roleName"))
        return hms.GetPrincipalsInRoleResponse(principalGrants=[_role_grant_to_thrift(g) for g in grants])

    async def get_role_grants_for_principal(self, request: Any) -> Any:
        req = required(request, "request")
        grants = await self._privileges.role_grants_for_principal(
            req.principal_name, _principal_type(req.principal_type, "get_role_grants_for_principal"))
        return hms.GetRoleGrantsForPrincipalResponse(principalGrants=[_role_grant_to_thrift(g) for g in grants])

    # -- privileges ---------------------------------------------------------------------------------

    async def get_privilege_set(self, hiveObject: Any, user_name: str | None,  # noqa: N803 - Hive's names
                                group_names: list[str] | None) -> Any:
        found = await self._privileges.privilege_set(_object_from_thrift(hiveObject), user_name, group_names or [])
        return _privilege_set_to_thrift(found)

    async def list_privileges(self, principal_name: str | None, principal_type: int | None,
                              hiveObject: Any) -> list[Any]:  # noqa: N803
        obj = None if hiveObject is None or hiveObject.objectType is None else _object_from_thrift(hiveObject)
        listed = await self._privileges.list_privileges(principal_name, _optional_type(principal_type), obj)
        return [_privilege_to_thrift(p) for p in listed]

    async def grant_privileges(self, privileges: Any) -> bool:
        await self._privileges.grant_privileges(_privileges_from_thrift(privileges), owner=_grantor_owner())
        return True

    async def revoke_privileges(self, privileges: Any) -> bool:
        await self._privileges.revoke_privileges(_privileges_from_thrift(privileges), owner=_grantor_owner())
        return True

    async def grant_revoke_privileges(self, request: Any) -> Any:
        """GRANT and REVOKE (REVOKE GRANT OPTION FOR, with revokeGrantOption) in one request shape."""
        req = required(request, "request")
        grants = _privileges_from_thrift(req.privileges)
        if _request_type(req.requestType, "grant_revoke_privileges") == _GRANT:
            await self._privileges.grant_privileges(grants, owner=_grantor_owner())
        else:
            await self._privileges.revoke_privileges(grants, grant_option_only=bool(req.revokeGrantOption),
                                                     owner=_grantor_owner())
        return hms.GrantRevokePrivilegeResponse(success=True)
