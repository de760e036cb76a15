"""Hive's table constraints over Thrift: primary and foreign keys (Hive 2.3), unique, not-null, default
and check constraints (Hive 3 and 4). Hive's DESCRIBE EXTENDED and FORMATTED read a table's keys every
time (Hive 2.3: primary and foreign; Hive 4: all six kinds in one call) and fail when the metastore does
not answer; CREATE TABLE with constraints sends create_table_with_constraints (Hive 4: create_table_req),
ALTER TABLE ... ADD CONSTRAINT the add_* call of its kind, ... DROP CONSTRAINT drop_constraint.

The constraints are stored (store/constraints.py, which holds the rules): a create stores its table and
constraints in one transaction, nothing when one is refused; the reads answer a missing table's as empty
lists, as Hive does. Errors are Hive's declared exceptions: a name taken, a second primary key and a foreign
key that refers to no key are MetaException (as Hive's); a missing table or column in a create is
InvalidObjectException, in an add_* NoSuchObjectException (a table) or MetaException (a column).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from gateway.thrift.catalog_names import DEFAULT_CATALOG_NAME, check_catalog
from gateway.thrift.convert import required
from gateway.thrift.idl import hms
from store.catalog_store import CatalogStore
from store.constraints import ConstraintColumn, Kind

_NON_KEY_KINDS = (Kind.PRIMARY_KEY, Kind.UNIQUE, Kind.NOT_NULL, Kind.DEFAULT, Kind.CHECK)


def _flags(c: Any) -> dict[str, Any]:
    return {"enable": bool(c.enable_cstr), "validate": bool(c.validate_cstr), "rely": bool(c.rely_cstr)}


def from_thrift(kind: Kind, c: Any) -> ConstraintColumn:
    """One SQL*Constraint struct (SQLPrimaryKey, SQLForeignKey, ...) as a constraint's row."""
    check_catalog(getattr(c, "catName", None))
    if kind is Kind.FOREIGN_KEY:
        return ConstraintColumn(kind, c.fktable_db, c.fktable_name, c.fkcolumn_name, c.fk_name, c.key_seq,
                                c.pktable_db, c.pktable_name, c.pkcolumn_name, c.update_rule, c.delete_rule,
                                **_flags(c))
    if kind is Kind.PRIMARY_KEY:
        name = c.pk_name
    elif kind is Kind.UNIQUE:
        name = c.uk_name
    elif kind is Kind.NOT_NULL:
        name = c.nn_name
    elif kind in (Kind.DEFAULT, Kind.CHECK):
        name = c.dc_name
    value = c.default_value if kind is Kind.DEFAULT else c.check_expression if kind is Kind.CHECK else None
    key_seq = c.key_seq if kind in (Kind.PRIMARY_KEY, Kind.UNIQUE) else None
    return ConstraintColumn(kind, c.table_db, c.table_name, c.column_name, name, key_seq, value=value, **_flags(c))


def to_thrift(c: ConstraintColumn) -> Any:
    """A stored row as Hive's struct of its kind (catName: the one catalog, which Hive 3 and 4 answer)."""
    flags = {"enable_cstr": c.enable, "validate_cstr": c.validate, "rely_cstr": c.rely}
    common = {"catName": DEFAULT_CATALOG_NAME, "table_db": c.db_name, "table_name": c.table_name,
              "column_name": c.column_name, **flags}
    if c.kind is Kind.FOREIGN_KEY:
        return hms.SQLForeignKey(pktable_db=c.parent_db, pktable_name=c.parent_table, pkcolumn_name=c.parent_column,
                                 fktable_db=c.db_name, fktable_name=c.table_name, fkcolumn_name=c.column_name,
                                 key_seq=c.key_seq, update_rule=c.update_rule, delete_rule=c.delete_rule,
                                 fk_name=c.name, pk_name=c.key_name, catName=DEFAULT_CATALOG_NAME, **flags)
    if c.kind is Kind.PRIMARY_KEY:
        return hms.SQLPrimaryKey(key_seq=c.key_seq, pk_name=c.name, **common)
    if c.kind is Kind.UNIQUE:
        return hms.SQLUniqueConstraint(key_seq=c.key_seq, uk_name=c.name, **common)
    if c.kind is Kind.NOT_NULL:
        return hms.SQLNotNullConstraint(nn_name=c.name, **common)
    if c.kind is Kind.DEFAULT:
        return hms.SQLDefaultConstraint(default_value=c.value, dc_name=c.name, **common)
    return hms.SQLCheckConstraint(check_expression=c.value, dc_name=c.name, **common)


def _rows(kind: Kind, items: Sequence[Any] | None) -> list[ConstraintColumn]:
    return [from_thrift(kind, required(c, f"a {kind.label}")) for c in items or []]


def _table_of(request: Any, what: str, db_field: str = "db_name", table_field: str = "tbl_name") -> tuple[str, str]:
    request = required(request, what)
    check_catalog(getattr(request, "catName", None))
    return (required(getattr(request, db_field), f"{what}.{db_field}"),
            required(getattr(request, table_field), f"{what}.{table_field}"))


class ConstraintMethods:
    """Mixed into the Thrift handler; needs `_catalog` and `create_table`."""

    _catalog: CatalogStore

    if TYPE_CHECKING:
        async def create_table(self, tbl: Any, constraints: Sequence[ConstraintColumn] = ()) -> None: ...

    async def _of_kind(self, request: Any, kind: Kind) -> list[Any]:
        what = {Kind.PRIMARY_KEY: "PrimaryKeysRequest", Kind.UNIQUE: "UniqueConstraintsRequest",
                Kind.NOT_NULL: "NotNullConstraintsRequest", Kind.DEFAULT: "DefaultConstraintsRequest",
                Kind.CHECK: "CheckConstraintsRequest"}[kind]
        return [to_thrift(c) for c in await self._catalog.table_constraints(*_table_of(request, what), [kind])]

    async def get_primary_keys(self, request: Any) -> Any:
        return hms.PrimaryKeysResponse(primaryKeys=await self._of_kind(request, Kind.PRIMARY_KEY))

    async def get_foreign_keys(self, request: Any) -> Any:
        """The keys of the foreign table that refer to the parent table; either may be left unset."""
        request = required(request, "ForeignKeysRequest")
        check_catalog(request.catName)
        found = await self._catalog.foreign_keys(request.parent_db_name, request.parent_tbl_name,
                                                 request.foreign_db_name, request.foreign_tbl_name)
        return hms.ForeignKeysResponse(foreignKeys=[to_thrift(c) for c in found])

    async def get_unique_constraints(self, request: Any) -> Any:
        return hms.UniqueConstraintsResponse(uniqueConstraints=await self._of_kind(request, Kind.UNIQUE))

    async def get_not_null_constraints(self, request: Any) -> Any:
        return hms.NotNullConstraintsResponse(notNullConstraints=await self._of_kind(request, Kind.NOT_NULL))

    async def get_default_constraints(self, request: Any) -> Any:
        return hms.DefaultConstraintsResponse(defaultConstraints=await self._of_kind(request, Kind.DEFAULT))

    async def get_check_constraints(self, request: Any) -> Any:
        return hms.CheckConstraintsResponse(checkConstraints=await self._of_kind(request, Kind.CHECK))

    async def get_all_table_constraints(self, request: Any) -> Any:
        """Hive 4's DESCRIBE: the six kinds of the table in one answer (its foreign keys: those it has)."""
        db_name, table_name = _table_of(request, "AllTableConstraintsRequest", "dbName", "tblName")
        rows = await self._catalog.table_constraints(db_name, table_name, _NON_KEY_KINDS)
        foreign = await self._catalog.foreign_keys(None, None, db_name, table_name)

        def of(kind: Kind) -> list[Any]:
            return [to_thrift(c) for c in rows if c.kind is kind]

        return hms.AllTableConstraintsResponse(allTableConstraints=hms.SQLAllTableConstraints(
            primaryKeys=of(Kind.PRIMARY_KEY), foreignKeys=[to_thrift(c) for c in foreign],
            uniqueConstraints=of(Kind.UNIQUE), notNullConstraints=of(Kind.NOT_NULL),
            defaultConstraints=of(Kind.DEFAULT), checkConstraints=of(Kind.CHECK)))

    async def create_table_with_constraints(self, tbl: Any, primaryKeys: list[Any] | None,  # noqa: N803
                                            foreignKeys: list[Any] | None, uniqueConstraints: list[Any] | None = None,
                                            notNullConstraints: list[Any] | None = None,
                                            defaultConstraints: list[Any] | None = None,
                                            checkConstraints: list[Any] | None = None) -> None:
        """Hive's CREATE TABLE when its statement declares constraints (Hive 2.3 sends the first three
        arguments, Hive 3 and 4 all seven): the table and its constraints, all or nothing."""
        tbl = required(tbl, "tbl")
        rows = [*_rows(Kind.PRIMARY_KEY, primaryKeys), *_rows(Kind.FOREIGN_KEY, foreignKeys),
                *_rows(Kind.UNIQUE, uniqueConstraints), *_rows(Kind.NOT_NULL, notNullConstraints),
                *_rows(Kind.DEFAULT, defaultConstraints), *_rows(Kind.CHECK, checkConstraints)]
        await self.create_table(tbl, constraints=rows)

    async def create_table_req(self, request: Any) -> None:
        """Hive 4's CREATE TABLE (HiveMetaStoreClient.createTable sends only this): the request's table and
        constraints, as create_table_with_constraints takes them."""
        request = required(request, "request")
        await self.create_table_with_constraints(
            required(request.table, "table"), request.primaryKeys, request.foreignKeys, request.uniqueConstraints,
            request.notNullConstraints, request.defaultConstraints, request.checkConstraints)

    async def _add_constraints(self, kind: Kind, items: list[Any] | None, what: str) -> None:
        await self._catalog.add_constraints(_rows(kind, required(items, what)))

    async def add_primary_key(self, req: Any) -> None:
        await self._add_constraints(Kind.PRIMARY_KEY, req.primaryKeyCols if req else None, "primaryKeyCols")

    async def add_foreign_key(self, req: Any) -> None:
        await self._add_constraints(Kind.FOREIGN_KEY, req.foreignKeyCols if req else None, "foreignKeyCols")

    async def add_unique_constraint(self, req: Any) -> None:
        await self._add_constraints(Kind.UNIQUE, req.uniqueConstraintCols if req else None, "uniqueConstraintCols")

    async def add_not_null_constraint(self, req: Any) -> None:
        await self._add_constraints(Kind.NOT_NULL, req.notNullConstraintCols if req else None, "notNullConstraintCols")

    async def add_default_constraint(self, req: Any) -> None:
        await self._add_constraints(Kind.DEFAULT, req.defaultConstraintCols if req else None, "defaultConstraintCols")

    async def add_check_constraint(self, req: Any) -> None:
        await self._add_constraints(Kind.CHECK, req.checkConstraintCols if req else None, "checkConstraintCols")

    async def drop_constraint(self, req: Any) -> None:
        req = required(req, "DropConstraintRequest")
        check_catalog(req.catName)
        await self._catalog.drop_constraint(required(req.dbname, "DropConstraintRequest.dbname"),
                                            required(req.tablename, "DropConstraintRequest.tablename"),
                                            required(req.constraintname, "DropConstraintRequest.constraintname"))
