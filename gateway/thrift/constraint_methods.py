"""Hive's table constraints over Thrift: primary and foreign keys (Hive 2.3), unique, not-null, default
and check constraints (Hive 3 and 4). Hive's DESCRIBE EXTENDED and FORMATTED read a table's keys every
time (Hive 2.3: primary and foreign; Hive 4: all six kinds in one call) and fail when the metastore does
not answer.

The gateway stores no constraints. Every read answers an empty list, as Hive answers for a table that
has none (a missing table too); a create that carries none is an ordinary create; a create that carries
one, and adding one, are refused with a declared exception that says so (Hive does not enforce them:
its optimizer only trusts those marked RELY); dropping one answers that it does not exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.thrift.convert import required
from gateway.thrift.idl import hms
from store.errors import InvalidArgument, NeverAllowed, NotFound

_NOT_STORED = "this gateway stores no table constraints"


def _refuse_added(columns: list[Any], kind: str) -> None:
    """ALTER TABLE ... ADD CONSTRAINT of a primary key, or (Hive 3's and 4's) of a unique, not null,
    default or check constraint: each of their SQL*Constraint structs names its table by table_db and
    table_name."""
    of = _table_of(columns[0].table_db, columns[0].table_name) if columns else "the table"
    raise NeverAllowed(f"{_NOT_STORED}: the {kind} of {of} was not added")


def _table_of(db_name: str | None, table_name: str | None) -> str:
    return f"{db_name or '?'}.{table_name or '?'}"


def _none_of(request: Any, response: Any, field: str) -> Any:
    """The empty answer to a read of one kind of a table's constraints; its request (Hive names it as
    the response, `...Request`) names the table by `db_name` and `tbl_name`."""
    what = response.__name__.replace("Response", "Request")
    required(request.db_name if request else None, f"{what}.db_name")
    required(request.tbl_name, f"{what}.tbl_name")
    return response(**{field: []})


class ConstraintMethods:
    """Mixed into the Thrift handler; needs `create_table`."""

    if TYPE_CHECKING:
        async def create_table(self, tbl: Any) -> None: ...

    async def get_primary_keys(self, request: Any) -> Any:
        return _none_of(request, hms.PrimaryKeysResponse, "primaryKeys")

    async def get_foreign_keys(self, request: Any) -> Any:
        """The keys of the foreign table that refer to the parent table; either may be left unset."""
        request = required(request, "ForeignKeysRequest")
        if not (request.foreign_tbl_name or request.parent_tbl_name):
            raise InvalidArgument("ForeignKeysRequest names no table: set foreign_db_name and foreign_tbl_name (the "
                                  "keys a table has), parent_db_name and parent_tbl_name (the keys that refer to "
                                  "a table), or both")
        return hms.ForeignKeysResponse(foreignKeys=[])

    async def get_unique_constraints(self, request: Any) -> Any:
        return _none_of(request, hms.UniqueConstraintsResponse, "uniqueConstraints")

    async def get_not_null_constraints(self, request: Any) -> Any:
        return _none_of(request, hms.NotNullConstraintsResponse, "notNullConstraints")

    async def get_default_constraints(self, request: Any) -> Any:
        return _none_of(request, hms.DefaultConstraintsResponse, "defaultConstraints")

    async def get_check_constraints(self, request: Any) -> Any:
        return _none_of(request, hms.CheckConstraintsResponse, "checkConstraints")

    async def get_all_table_constraints(self, request: Any) -> Any:
        required(request.dbName if request else None, "AllTableConstraintsRequest.dbName")
        required(request.tblName, "AllTableConstraintsRequest.tblName")
        return hms.AllTableConstraintsResponse(allTableConstraints=hms.SQLAllTableConstraints(
            primaryKeys=[], foreignKeys=[], uniqueConstraints=[], notNullConstraints=[], defaultConstraints=[],
            checkConstraints=[]))

    async def create_table_with_constraints(self, tbl: Any, primaryKeys: list[Any] | None,  # noqa: N803
                                            foreignKeys: list[Any] | None, uniqueConstraints: list[Any] | None = None,
                                            notNullConstraints: list[Any] | None = None,
                                            defaultConstraints: list[Any] | None = None,
                                            checkConstraints: list[Any] | None = None) -> None:
        """Hive's CREATE TABLE when its statement declares constraints (Hive 2.3 sends the first three
        arguments, Hive 3 and 4 all seven); one without any is created as by create_table."""
        tbl = required(tbl, "tbl")
        given = [kind for kind, items in (("primary key", primaryKeys), ("foreign key", foreignKeys),
                                          ("unique", uniqueConstraints), ("not null", notNullConstraints),
                                          ("default", defaultConstraints), ("check", checkConstraints)) if items]
        if given:
            raise InvalidArgument(f"{_NOT_STORED} ({', '.join(given)} given): create "
                                  f"{_table_of(tbl.dbName, tbl.tableName)} without them")
        await self.create_table(tbl)

    async def create_table_req(self, request: Any) -> None:
        """Hive 4's CREATE TABLE (HiveMetaStoreClient.createTable sends only this): the request's table and
        constraints, as create_table_with_constraints takes them."""
        request = required(request, "request")
        await self.create_table_with_constraints(
            required(request.table, "table"), request.primaryKeys, request.foreignKeys, request.uniqueConstraints,
            request.notNullConstraints, request.defaultConstraints, request.checkConstraints)

    async def add_primary_key(self, req: Any) -> None:
        _refuse_added(required(req.primaryKeyCols if req else None, "AddPrimaryKeyRequest.primaryKeyCols"),
                      "primary key")

    async def add_foreign_key(self, req: Any) -> None:
        columns = required(req.foreignKeyCols if req else None, "AddForeignKeyRequest.foreignKeyCols")
        of = _table_of(columns[0].fktable_db, columns[0].fktable_name) if columns else "the table"
        raise NeverAllowed(f"{_NOT_STORED}: the foreign key of {of} was not added")

    async def add_unique_constraint(self, req: Any) -> None:
        _refuse_added(required(req.uniqueConstraintCols if req else None, "uniqueConstraintCols"), "unique constraint")

    async def add_not_null_constraint(self, req: Any) -> None:
        _refuse_added(required(req.notNullConstraintCols if req else None, "notNullConstraintCols"),
                      "not null constraint")

    async def add_default_constraint(self, req: Any) -> None:
        _refuse_added(required(req.defaultConstraintCols if req else None, "defaultConstraintCols"),
                      "default constraint")

    async def add_check_constraint(self, req: Any) -> None:
        _refuse_added(required(req.checkConstraintCols if req else None, "checkConstraintCols"), "check constraint")

    async def drop_constraint(self, req: Any) -> None:
        name = required(req.constraintname if req else None, "DropConstraintRequest.constraintname")
        raise NotFound(f"constraint {name} of {_table_of(req.dbname, req.tablename)} does not exist ({_NOT_STORED})")
