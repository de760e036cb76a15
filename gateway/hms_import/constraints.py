"""Table constraints, copied as the other phases copy objects (settle.py's rules).

Read per table from the source: Hive 2.3's get_primary_keys and get_foreign_keys (the keys the table has),
and Hive 3's get_unique_constraints, get_not_null_constraints, get_default_constraints and
get_check_constraints when the source serves them (a Hive 2.3 source answers those UNKNOWN_METHOD: said once
in a note, and only its primary and foreign keys are read). Each constraint is its columns' rows under one
name, compared with the gateway's reads of the same table (the catalog name is each metastore's own).

Written with add_primary_key, add_unique_constraint, add_not_null_constraint, add_default_constraint,
add_check_constraint and add_foreign_key, in that order over every table of the import, so a foreign key
comes after the key it refers to, in another table or another database of the same run (a key of a
database the run does not select must be on the gateway already, or the foreign key is refused, named).
A differing constraint is reported, or with --replace-differing dropped (drop_constraint) and added again.
Views have none. The gateway applies Hive 3's rules (store/constraints.py): it keeps names in lower case (a
Hive 2.3 source's name in other case reads as differing) and refuses a foreign key that refers to no key of
its parent (Hive 2.3 stores one, reported failed here with the gateway's words).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from gateway.hms_import.endpoint import ThriftEndpoint
from gateway.hms_import.grants import SourceTable
from gateway.hms_import.settle import Settler
from gateway.thrift.idl import hms

VIEW = "VIRTUAL_VIEW"
CATALOG = "hive"  # Hive 3's requests name the catalog; the default one


@dataclass(frozen=True)
class Kind:
    label: str
    read: str  # the read's method
    request: Callable[[str, str], Any]
    answer_field: str
    name_field: str
    add: str
    add_request: Callable[[list[Any]], Any]
    hive3: bool = False


# In the order they are written: the keys a foreign key may refer to first, foreign keys last.
KINDS = (
    Kind("primary key", "get_primary_keys", lambda db, t: hms.PrimaryKeysRequest(db_name=db, tbl_name=t),
         "primaryKeys", "pk_name", "add_primary_key", lambda cols: hms.AddPrimaryKeyRequest(primaryKeyCols=cols)),
    Kind("unique constraint", "get_unique_constraints",
         lambda db, t: hms.UniqueConstraintsRequest(catName=CATALOG, db_name=db, tbl_name=t), "uniqueConstraints",
         "uk_name", "add_unique_constraint",
         lambda cols: hms.AddUniqueConstraintRequest(uniqueConstraintCols=cols), hive3=True),
    Kind("not null constraint", "get_not_null_constraints",
         lambda db, t: hms.NotNullConstraintsRequest(catName=CATALOG, db_name=db, tbl_name=t), "notNullConstraints",
         "nn_name", "add_not_null_constraint",
         lambda cols: hms.AddNotNullConstraintRequest(notNullConstraintCols=cols), hive3=True),
    Kind("default constraint", "get_default_constraints",
         lambda db, t: hms.DefaultConstraintsRequest(catName=CATALOG, db_name=db, tbl_name=t), "defaultConstraints",
         "dc_name", "add_default_constraint",
         lambda cols: hms.AddDefaultConstraintRequest(defaultConstraintCols=cols), hive3=True),
    Kind("check constraint", "get_check_constraints",
         lambda db, t: hms.CheckConstraintsRequest(catName=CATALOG, db_name=db, tbl_name=t), "checkConstraints",
         "dc_name", "add_check_constraint",
         lambda cols: hms.AddCheckConstraintRequest(checkConstraintCols=cols), hive3=True),
    Kind("foreign key", "get_foreign_keys",
         lambda db, t: hms.ForeignKeysRequest(foreign_db_name=db, foreign_tbl_name=t), "foreignKeys", "fk_name",
         "add_foreign_key", lambda cols: hms.AddForeignKeyRequest(foreignKeyCols=cols)),
)
HIVE3_NOTE = ("the source does not serve Hive 3's get_unique_constraints, get_not_null_constraints, "
              "get_default_constraints and get_check_constraints (a Hive 2.3 metastore, whose tables have only "
              "primary and foreign keys): only primary and foreign keys were read")

Constraints = dict[str, dict[str, list[Any]]]  # kind's label -> constraint name -> its rows


def _rows_in_order(rows: list[Any]) -> list[Any]:
    return sorted(rows, key=lambda r: (getattr(r, "key_seq", 0) or 0, r.column_name if hasattr(r, "column_name")
                                       else r.fkcolumn_name))


class ConstraintCopier(Settler):
    """Copies (or, `verify`, compares) the tables' constraints (the module's docstring)."""

    _hive3: bool | None = None  # whether the source serves Hive 3's kinds; None until asked

    def _kinds(self) -> list[Kind]:
        return [k for k in KINDS if not k.hive3 or self._hive3]

    def _read(self, endpoint: ThriftEndpoint, db: str, table: str) -> Constraints:
        found: Constraints = {}
        for kind in KINDS:
            if kind.hive3 and endpoint is self._source and self._hive3 is None:
                served, answer = endpoint.has_method(kind.read, kind.request(db, table))
                self._hive3 = served
                if not served:
                    self._summary.note(HIVE3_NOTE)
                    continue
            elif kind.hive3 and not self._hive3:
                continue
            else:
                answer = endpoint.call(kind.read, kind.request(db, table))
            by_name: dict[str, list[Any]] = {}
            for row in getattr(answer, kind.answer_field) or []:
                by_name.setdefault(getattr(row, kind.name_field) or "", []).append(row)
            found[kind.label] = {name: _rows_in_order(rows) for name, rows in by_name.items()}
        return found

    def run(self, tables: list[SourceTable]) -> None:
        tables = [t for t in tables if t.table.tableType != VIEW]
        self._progress.start("constraints", len(tables))
        both: list[tuple[SourceTable, Constraints, Constraints]] = []
        for t in tables:
            theirs = self._read(self._source, t.db, t.name)
            held = any(theirs.values())
            if not t.usable:
                if held:
                    self._summary.add("constraints", "skipped", name=f"of {t.db}.{t.name} (every constraint)",
                                      reason=f"neither copied nor compared: {t.reason}")
            elif held or self._verify:
                both.append((t, theirs, self._read(self._gateway, t.db, t.name)))
            self._progress.advance(note=f"{t.db}.{t.name}")
        for kind in self._kinds():
            for t, theirs, ours in both:
                self._settle_kind(kind, t, theirs.get(kind.label, {}), ours.get(kind.label, {}))
        self._progress.finish()

    def _settle_kind(self, kind: Kind, t: SourceTable, theirs: dict[str, list[Any]],
                     ours: dict[str, list[Any]]) -> None:
        def name_of(rows: list[Any]) -> str:
            return f"{kind.label} {getattr(rows[0], kind.name_field)} of {t.db}.{t.name}"

        def add(rows: list[Any]) -> None:
            self._gateway.call(kind.add, kind.add_request(rows))

        def replace(theirs: list[Any], ours: list[Any]) -> None:
            self._gateway.call("drop_constraint", hms.DropConstraintRequest(
                dbname=t.db, tablename=t.name, constraintname=getattr(ours[0], kind.name_field)))
            add(theirs)

        self._settle("constraints", theirs, ours, name_of, add, replace)
