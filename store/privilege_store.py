"""Roles and privileges as the gateway sees them (store/privileges.py): one method per operation, each
one database transaction, reads in one snapshot. Nothing here is cached or logged as an event (Hive's
metastore logs no grants either), so every gateway answers what PostgreSQL holds."""

from __future__ import annotations

import time
from typing import Sequence

from hive.privileges import ObjectRef, PrivilegeGrant, PrivilegeSet, Role, RoleGrant
from store import privileges
from store.db import Database


def _now() -> int:
    return int(time.time())


class PrivilegeStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def ensure_admin_users(self, users: Sequence[str]) -> None:
        await self._db.transact(privileges.ensure_admin_users, users, _now())

    # roles
    async def create_role(self, role: Role) -> None:
        await self._db.transact(privileges.create_role, role, _now())

    async def drop_role(self, name: str) -> None:
        await self._db.transact(privileges.drop_role, name)

    async def role_names(self) -> list[str]:
        return await self._db.read(privileges.role_names)

    async def grant_role(self, grant: RoleGrant) -> None:
        await self._db.transact(privileges.grant_role, grant, _now())

    async def revoke_role(self, role: str, principal: str, principal_type: str, *,
                          grant_option_only: bool = False) -> None:
        await self._db.transact(privileges.revoke_role, role, principal, principal_type,
                                grant_option_only=grant_option_only)

    async def list_roles(self, principal: str | None, principal_type: str) -> list[Role]:
        return await self._db.read(privileges.list_roles, principal, principal_type)

    async def role_grants_for_principal(self, principal: str | None, principal_type: str) -> list[RoleGrant]:
        return await self._db.read(privileges.role_grants_for_principal, principal, principal_type)

    async def principals_in_role(self, role: str) -> list[RoleGrant]:
        return await self._db.read(privileges.principals_in_role, role)

    # privileges
    async def grant_privileges(self, grants: Sequence[PrivilegeGrant], *, owner: str | None = None) -> None:
        await self._db.transact(privileges.grant_privileges, grants, _now(), owner=owner)

    async def revoke_privileges(self, grants: Sequence[PrivilegeGrant], *, grant_option_only: bool = False,
                                owner: str | None = None) -> None:
        await self._db.transact(privileges.revoke_privileges, grants, grant_option_only=grant_option_only,
                                owner=owner)

    async def list_privileges(self, principal: str | None, principal_type: str | None,
                              obj: ObjectRef | None) -> list[PrivilegeGrant]:
        return await self._db.read(privileges.list_privileges, principal, principal_type, obj)

    async def privilege_set(self, obj: ObjectRef, user: str | None, groups: Sequence[str]) -> PrivilegeSet:
        return await self._db.read(privileges.privilege_set, obj, user, groups)
