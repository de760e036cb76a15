"""Table constraints: Hive's primary and foreign keys (Hive 2.3), unique, not-null, default and check
constraints (Hive 3 and 4), what CREATE TABLE ... (id int, PRIMARY KEY (id) DISABLE NOVALIDATE) and ALTER
TABLE ... ADD CONSTRAINT store, as Hive's ObjectStore stores them (KEY_CONSTRAINTS; here the table of
store/schema/0039). Hive enforces none of them: they are declarations its optimizer may trust (RELY).

A constraint is one or more rows, one per column, under one name. The rules, Hive's (Hive 3's and 4's where
they are stricter than Hive 2.3's; checked against Hive Metastore 2.3.10 in tests/e2e/test_thrift_differential.py):

- Names are unique in their database (Hive 4's rule; Hive 2.3 and 3 in the whole metastore) across kinds, and
  kept in lower case (Hive 3 and 4 lower-case them; Hive 2.3 keeps them as sent and then drops none of a
  name in upper case). A row without a name gets Hive's generated one, `<kind>_<hash>_<millis>_<n>` (pk, fk,
  uk, nn, dc: ObjectStore.generateConstraintName, the hash Java's of its arguments), one per key starting at
  key_seq 1, one per row for not-null, default and check constraints.
- The table must exist ("Parent table not found"), each column must be one of its columns or partition keys
  (Hive 3; Hive 2.3 takes columns only) ("Parent column not found", "Child column not found"), a table has at
  most one primary key ("Primary key already exists for: db.t"), a key's key_seq numbers its columns 1 to n.
- A foreign key's referenced columns, in key_seq order, must be the parent's primary key or one of its unique
  constraints, column for column (Hive 3's check; Hive 2.3 stores any and then answers none of it).
- A drop names the constraint and its table, or for a foreign key the table it refers to (as Hive).
- They are kept by table id: they follow a rename and a move, and go with a drop of their table; a foreign
  key also goes with a drop of the table it refers to (Hive 2.3's dropTable deletes both). Dropping the
  primary key a foreign key refers to is allowed, and the foreign key is then answered by no read until a key
  holding its columns is back (Hive's reads join the parent's key). An alter that drops or renames a column a
  constraint names is refused (store/catalog.py; Hive 2.3 refuses every column change of a table with
  constraints, failing in its datastore: here columns may be added, retyped or commented).

Writes are logged as Hive 3 and 4 log them: one ADD_PRIMARYKEY, ADD_FOREIGNKEY, ADD_UNIQUECONSTRAINT,
ADD_NOTNULLCONSTRAINT, ADD_DEFAULTCONSTRAINT or ADD_CHECKCONSTRAINT event per kind added, after the table's
CREATE_TABLE for a create, and DROP_CONSTRAINT. Constraints are neither versioned nor cached (the cache
ignores their events): every read is PostgreSQL's.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from typing import Any, Sequence

import asyncpg

from hive import limits
from hive import names as n
from store import catalog
from store.errors import ConstraintRefused, InvalidArgument, NotFound
from store.events import EventType, NewEvent, Outcome
from store.models import Table
from store.sql import constraints as sql

MAX_NAME = 400  # Hive's KEY_CONSTRAINTS.CONSTRAINT_NAME
_GENERATE_TRIES = 10  # as Hive's generateConstraintName


class Kind(StrEnum):
    """The kinds, in the order a create adds them: the keys a foreign key may refer to come first."""

    PRIMARY_KEY = "primary_key"
    UNIQUE = "unique"
    NOT_NULL = "not_null"
    DEFAULT = "default"
    CHECK = "check"
    FOREIGN_KEY = "foreign_key"

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def is_key(self) -> bool:
        return self in (Kind.PRIMARY_KEY, Kind.UNIQUE, Kind.FOREIGN_KEY)


_LABELS = {Kind.PRIMARY_KEY: "primary key", Kind.UNIQUE: "unique constraint", Kind.NOT_NULL: "not null constraint",
           Kind.DEFAULT: "default constraint", Kind.CHECK: "check constraint", Kind.FOREIGN_KEY: "foreign key"}
# Hive's suffix of a generated name (a check constraint's is "dc" too in Hive's ObjectStore).
_GENERATED = {Kind.PRIMARY_KEY: "pk", Kind.UNIQUE: "uk", Kind.NOT_NULL: "nn", Kind.DEFAULT: "dc", Kind.CHECK: "dc",
              Kind.FOREIGN_KEY: "fk"}
EVENT_OF = {Kind.PRIMARY_KEY: EventType.ADD_PRIMARYKEY, Kind.FOREIGN_KEY: EventType.ADD_FOREIGNKEY,
            Kind.UNIQUE: EventType.ADD_UNIQUECONSTRAINT, Kind.NOT_NULL: EventType.ADD_NOTNULLCONSTRAINT,
            Kind.DEFAULT: EventType.ADD_DEFAULTCONSTRAINT, Kind.CHECK: EventType.ADD_CHECKCONSTRAINT}
KIND_OF_EVENT = {e: k for k, e in EVENT_OF.items()}


@dataclass(frozen=True, slots=True)
class ConstraintColumn:
    """One row of a constraint, as Hive's SQLPrimaryKey, SQLForeignKey, ... carry it. A foreign key's own
    table (the child) is `db_name`.`table_name`, the one it refers to `parent_*`; `key_name` is, in a read,
    the name of the parent's key that holds `parent_column` (SQLForeignKey.pk_name). `value` is a default's
    value or a check's expression."""

    kind: Kind
    db_name: str | None
    table_name: str | None
    column_name: str | None
    name: str | None = None
    key_seq: int | None = None
    parent_db: str | None = None
    parent_table: str | None = None
    parent_column: str | None = None
    update_rule: int | None = None
    delete_rule: int | None = None
    value: str | None = None
    enable: bool = False
    validate: bool = False
    rely: bool = False
    key_name: str | None = None


def to_json(c: ConstraintColumn) -> dict[str, Any]:
    return {k: v for k, v in asdict(c).items() if v is not None}


def from_json(d: dict[str, Any]) -> ConstraintColumn:
    return ConstraintColumn(**{**d, "kind": Kind(d["kind"])})


def java_string_hash(text: str) -> int:
    """Java's String.hashCode (UTF-16 code units), as Hive's generated names carry it."""
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _generated_base(c: ConstraintColumn) -> str:
    """Hive's generateConstraintName: the last of its arguments, then the hash of commons-lang's
    ArrayUtils.toString of them all (`{a,b,...}`, null as `<null>`)."""
    parts: tuple[str | None, ...]
    if c.kind is Kind.FOREIGN_KEY:
        parts = (c.db_name, c.table_name, c.parent_db, c.parent_table, c.parent_column, c.column_name, "fk")
    else:
        parts = (c.db_name, c.table_name, c.column_name, _GENERATED[c.kind])
    text = "{" + ",".join("<null>" if p is None else p for p in parts) + "}"
    return f"{parts[-1]}_{java_string_hash(text)}"


def _name(name: str, what: str) -> str:
    name = name.strip().lower()
    if not name:
        raise InvalidArgument(f"{what}: a constraint name must not be empty (leave it unset for a generated one)")
    limits.check_text(name, f"{what}: constraint name", MAX_NAME)
    return name


def _column(name: str | None, what: str) -> str:
    if not name:
        raise InvalidArgument(f"{what} names no column")
    return name.strip().lower()


@dataclass
class _Pending:
    """One constraint of a call: its rows, with their table (and a foreign key's parent) resolved."""

    kind: Kind
    name: str
    table: Table
    rows: list[ConstraintColumn]
    parent: Table | None = None

    @property
    def what(self) -> str:
        return f"{self.kind.label} {self.name} of {self.table.full_name}"


class _Tables:
    """The tables a call names, each read once and row-locked: a constraint's own table for update (one
    add of a primary key at a time), a foreign key's parent for share (not dropped meanwhile)."""

    def __init__(self, conn: asyncpg.Connection, created: Table | None) -> None:
        self._conn = conn
        self._tables: dict[tuple[str, str], Table] = {}
        if created is not None:
            self._tables[(created.db_name, created.name)] = created

    async def get(self, db_name: str | None, table_name: str | None, what: str, lock: str) -> Table:
        if not db_name or not table_name:
            raise InvalidArgument(f"{what} names no table: set its database and table names")
        try:
            key = n.table_key(db_name, table_name)
        except InvalidArgument:
            raise NotFound(f"Parent table not found: {table_name} ({what}: no table {db_name}.{table_name})") from None
        if key not in self._tables:
            try:
                self._tables[key] = await catalog.get_table(self._conn, *key, lock=lock)
            except NotFound:
                raise NotFound(f"Parent table not found: {key[1]} ({what}: no table {key[0]}.{key[1]})") from None
        return self._tables[key]


def _columns_of(table: Table) -> set[str]:
    return {c.name for c in table.columns} | {k.name for k in table.partition_keys}


def _group(rows: Sequence[ConstraintColumn]) -> list[tuple[Kind, str | None, list[ConstraintColumn]]]:
    """The call's rows as constraints, in order: named rows under their (lower-cased) name; an unnamed key's
    rows from one at key_seq 1 to the next (Hive's rule: a composite key's rows are sent in order), an
    unnamed not-null, default or check row alone. None for a name still to generate."""
    groups: list[tuple[Kind, str | None, list[ConstraintColumn]]] = []
    named: dict[str, int] = {}
    for r in rows:
        what = f"{r.kind.label} of {r.db_name}.{r.table_name}"
        if r.name is not None:
            name = _name(r.name, what)
            if name in named:
                kind, _, members = groups[named[name]]
                if kind is not r.kind:
                    raise ConstraintRefused(f"Constraint name already exists: {name} (used for a {kind.label} and "
                                            f"a {r.kind.label} in one call)")
                members.append(r)
            else:
                named[name] = len(groups)
                groups.append((r.kind, name, [r]))
        elif r.kind.is_key and r.key_seq != 1:
            if not groups or groups[-1][1] is not None or groups[-1][0] is not r.kind:
                raise InvalidArgument(f"{what}: an unnamed key's rows must come in key_seq order, from 1 (column "
                                      f"{r.column_name} has key_seq {r.key_seq})")
            groups[-1][2].append(r)
        else:
            groups.append((r.kind, None, [r]))
    return groups


async def add_constraints(conn: asyncpg.Connection, rows: Sequence[ConstraintColumn], *, created: Table | None = None,
                          now_ms: int | None = None) -> Outcome[list[str]]:
    """Store the constraints of `rows` (of any kinds; a create's with `created`, the table its transaction
    just created, whose constraints must name it), all or none; their names back, in order. The rules: the
    module's docstring. One event per kind, in Kind's order."""
    if not rows:
        return Outcome([])
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    tables = _Tables(conn, created)
    order = list(Kind)
    rows = sorted(rows, key=lambda r: order.index(r.kind))  # stable: each kind's rows as sent
    if created is not None:
        rows = [_of_created(r, created) for r in rows]
    # Lock the constraints' own tables in name order (two adds to two tables do not deadlock), then parents.
    for db_name, table_name in sorted({(r.db_name or "", r.table_name or "") for r in rows}):
        await tables.get(db_name, table_name, f"the constraint of {db_name}.{table_name}", "update")
    pending: list[_Pending] = []
    for kind, name, members in _group(rows):
        first = members[0]
        table = await tables.get(first.db_name, first.table_name, f"the {kind.label}", "update")
        for r in members[1:]:
            if n.table_key(r.db_name or "?", r.table_name or "?") != (table.db_name, table.name):
                raise InvalidArgument(f"{kind.label} {name or ''} names two tables, {table.full_name} and "
                                      f"{r.db_name}.{r.table_name}: a constraint is of one table")
        parent = None
        if kind is Kind.FOREIGN_KEY:
            parent = await tables.get(first.parent_db, first.parent_table, f"the foreign key {name or ''}", "share")
        resolved = [_checked_row(r, table, parent) for r in members]
        pending.append(_Pending(kind, name or "", table, resolved, parent))
    await _name_generated(conn, pending, now_ms)
    _check_keys(pending)
    for p in pending:
        if p.kind is Kind.PRIMARY_KEY and await conn.fetchval(sql.PRIMARY_KEY_NAME, p.table.table_id) is not None:
            raise ConstraintRefused(f"Primary key already exists for: {p.table.full_name}")
        if p.kind is Kind.FOREIGN_KEY:
            await _check_references(conn, p, pending)
    by_db: dict[str, list[str]] = {}
    for p in pending:
        by_db.setdefault(p.table.db_name, []).append(p.name)
    for db_name, names in by_db.items():
        taken = await conn.fetch(sql.NAMES_TAKEN, db_name, names)
        if taken:
            raise ConstraintRefused(f"Constraint name already exists: {taken[0]['constraint_name']} (in database "
                                    f"{db_name}: a constraint name is unique in its database)")
    records = [_record(p, i, r) for p in pending for i, r in enumerate(p.rows)]
    status = await conn.execute(sql.INSERT, records)  # jsonb: the pool's codec encodes the list
    if int(status.rsplit(" ", 1)[-1]) != len(records):  # a concurrent add took a name since the check
        raise ConstraintRefused("Constraint name already exists: one of "
                                f"{', '.join(p.name for p in pending)} was added meanwhile by another call")
    return Outcome([p.name for p in pending], tuple(_events(pending)))


def _of_created(r: ConstraintColumn, created: Table) -> ConstraintColumn:
    """A row of a create's constraint: of the created table (named so when its names are unset)."""
    db_name, table_name = r.db_name or created.db_name, r.table_name or created.name
    try:
        same = n.table_key(db_name, table_name) == (created.db_name, created.name)
    except InvalidArgument:
        same = False
    if not same:
        raise InvalidArgument(f"the {r.kind.label} {r.name or ''} names table {db_name}.{table_name}, not "
                              f"{created.full_name}, the table created with it")
    parent_db = (r.parent_db or created.db_name) if r.kind is Kind.FOREIGN_KEY else r.parent_db
    return replace(r, db_name=created.db_name, table_name=created.name, parent_db=parent_db)


def _checked_row(r: ConstraintColumn, table: Table, parent: Table | None) -> ConstraintColumn:
    what = f"the {r.kind.label} {r.name or ''} of {table.full_name}"
    column = _column(r.column_name, what)
    if column not in _columns_of(table):
        side = "Child" if r.kind is Kind.FOREIGN_KEY else "Parent"
        raise InvalidArgument(f"{side} column not found: {column} ({what}: not a column of the table)")
    if r.kind in (Kind.DEFAULT, Kind.CHECK):
        if r.value is None:
            raise InvalidArgument(f"{what} has no {'default value' if r.kind is Kind.DEFAULT else 'check expression'}")
        limits.check_text(r.value, f"{what}: value", limits.PARAM_VALUE)
    checked = replace(r, db_name=table.db_name, table_name=table.name, column_name=column,
                      enable=bool(r.enable), validate=bool(r.validate), rely=bool(r.rely), key_name=None)
    if parent is not None:
        parent_column = _column(r.parent_column, f"{what}: its referenced column")
        if parent_column not in _columns_of(parent):
            raise InvalidArgument(f"Parent column not found: {parent_column} ({what}: not a column of "
                                  f"{parent.full_name})")
        checked = replace(checked, parent_db=parent.db_name, parent_table=parent.name, parent_column=parent_column)
    return checked


async def _name_generated(conn: asyncpg.Connection, pending: list[_Pending], now_ms: int) -> None:
    """Hive's generated names for the constraints sent without one, each free in its database."""
    for p in pending:
        if p.name:
            continue
        base = _generated_base(p.rows[0])
        for counter in range(_GENERATE_TRIES):
            name = f"{base}_{now_ms}_{counter}"
            if (all(o.name != name for o in pending)
                    and not await conn.fetch(sql.NAMES_TAKEN, p.table.db_name, [name])):
                p.name = name
                break
        else:
            raise ConstraintRefused(f"Error while trying to generate the constraint name for {p.what}")


def _check_keys(pending: list[_Pending]) -> None:
    """Each key's key_seq numbers its columns 1 to n, none twice; a table has one primary key."""
    keyed: set[int] = set()
    for p in pending:
        if p.kind is Kind.PRIMARY_KEY:
            if p.table.table_id in keyed:
                raise ConstraintRefused(f"Primary key already exists for: {p.table.full_name} (two in one call)")
            keyed.add(p.table.table_id)
        if not p.kind.is_key:
            continue
        seqs = sorted(r.key_seq if r.key_seq is not None else i + 1 for i, r in enumerate(p.rows))
        if seqs != list(range(1, len(p.rows) + 1)):
            raise InvalidArgument(f"{p.what}: key_seq must number its {len(p.rows)} columns 1 to {len(p.rows)}, "
                                  f"got {seqs}")
        p.rows = [replace(r, key_seq=r.key_seq if r.key_seq is not None else i + 1) for i, r in enumerate(p.rows)]
        columns = [r.column_name for r in p.rows]
        if len(set(columns)) != len(columns):
            raise InvalidArgument(f"{p.what} names a column twice: {', '.join(c or '' for c in columns)}")


async def _check_references(conn: asyncpg.Connection, fk: _Pending, pending: list[_Pending]) -> None:
    """Hive 3's rule: the referenced columns, in key_seq order, are the parent's primary key or one of its
    unique constraints (stored, or added by the same call)."""
    assert fk.parent is not None
    keys: dict[str, tuple[str, list[str]]] = {}
    for r in await conn.fetch(sql.KEYS_OF_TABLE, fk.parent.table_id):
        keys.setdefault(r["constraint_name"], (r["kind"], []))[1].append(r["column_name"])
    for p in pending:
        if p.kind in (Kind.PRIMARY_KEY, Kind.UNIQUE) and p.table.table_id == fk.parent.table_id:
            keys[p.name] = (p.kind.value, [str(r.column_name) for r in sorted(p.rows, key=lambda r: r.key_seq or 0)])
    referenced = [str(r.parent_column) for r in sorted(fk.rows, key=lambda r: r.key_seq or 0)]
    if not keys:
        raise ConstraintRefused(f"Trying to define foreign key but there are no primary keys or unique keys for "
                                f"referenced table {fk.parent.full_name} ({fk.what})")
    if referenced not in [cols for _, cols in keys.values()]:
        possible = "; ".join(f"{name} ({', '.join(cols)})" for name, (_, cols) in sorted(keys.items()))
        raise ConstraintRefused(f"Foreign key references {fk.parent.full_name} ({', '.join(referenced)}) but no "
                                f"corresponding primary key or unique key exists ({fk.what}). Possible keys: "
                                f"{possible}")


def _record(p: _Pending, position: int, r: ConstraintColumn) -> dict[str, Any]:
    return {"db_name": p.table.db_name, "constraint_name": p.name, "position": position, "kind": p.kind.value,
            "table_id": p.table.table_id, "column_name": r.column_name, "key_seq": r.key_seq,
            "parent_table_id": p.parent.table_id if p.parent is not None else None,
            "parent_column": r.parent_column, "update_rule": r.update_rule, "delete_rule": r.delete_rule,
            "value": r.value, "enable_cstr": r.enable, "validate_cstr": r.validate, "rely_cstr": r.rely}


def _events(pending: list[_Pending]) -> list[NewEvent]:
    """One event per kind and table, Hive's ADD_* (its message: the constraints' rows as stored)."""
    grouped: dict[tuple[Kind, int], list[_Pending]] = {}
    for p in pending:
        grouped.setdefault((p.kind, p.table.table_id), []).append(p)
    out = []
    for (kind, table_id), ps in grouped.items():
        table = ps[0].table
        out.append(NewEvent(EVENT_OF[kind], db_name=table.db_name, table_name=table.name, table_id=table_id,
                            message={"constraints": [to_json(replace(r, name=p.name)) for p in ps for r in p.rows]}))
    return out


async def drop_constraint(conn: asyncpg.Connection, db_name: str, table_name: str, name: str) -> Outcome[None]:
    """Drop the constraint `name` of the table, or the foreign key `name` that refers to it (as Hive)."""
    table = await catalog.get_table(conn, db_name, table_name, lock="update")
    key = name.strip().lower() if name else ""
    rows = await conn.fetch(sql.DROP, table.table_id, key) if key else []
    if not rows:
        raise NotFound(f"The constraint: {key or name!r} does not exist for the associated table: {table.full_name}")
    return Outcome(None, (NewEvent(EventType.DROP_CONSTRAINT, db_name=table.db_name, table_name=table.name,
                                   table_id=table.table_id,
                                   message={"db_name": table.db_name, "table_name": table.name,
                                            "constraint_name": key}),))


async def _table_or_none(conn: asyncpg.Connection, db_name: str | None, table_name: str | None) -> Table | None:
    if not db_name or not table_name:
        return None
    try:
        return await catalog.get_table(conn, db_name, table_name)
    except (NotFound, InvalidArgument):
        return None


def _row(r: asyncpg.Record, **extra: Any) -> ConstraintColumn:
    return ConstraintColumn(kind=Kind(r["kind"]), db_name=r["table_db"], table_name=r["table_name"],
                            column_name=r["column_name"], name=r["constraint_name"], key_seq=r["key_seq"],
                            update_rule=r["update_rule"], delete_rule=r["delete_rule"], value=r["value"],
                            enable=r["enable_cstr"], validate=r["validate_cstr"], rely=r["rely_cstr"], **extra)


async def table_constraints(conn: asyncpg.Connection, db_name: str, table_name: str,
                            kinds: Sequence[Kind]) -> list[ConstraintColumn]:
    """The table's constraints of `kinds` (not foreign keys: `foreign_keys`), each constraint's rows in the
    order added; none for a table that does not exist (Hive answers so)."""
    table = await _table_or_none(conn, db_name, table_name)
    if table is None:
        return []
    return [_row(r) for r in await conn.fetch(sql.OF_TABLE, table.table_id, [k.value for k in kinds])]


async def foreign_keys(conn: asyncpg.Connection, parent_db: str | None, parent_table: str | None,
                       foreign_db: str | None, foreign_table: str | None) -> list[ConstraintColumn]:
    """The foreign keys of the foreign table that refer to the parent table; either side may be unset (any
    table), not both. None when a table named does not exist."""
    if not (foreign_table or parent_table):
        raise InvalidArgument("ForeignKeysRequest names no table: set foreign_db_name and foreign_tbl_name (the "
                              "keys a table has), parent_db_name and parent_tbl_name (the keys that refer to "
                              "a table), or both")
    ids: list[int | None] = []
    for db, name in ((foreign_db, foreign_table), (parent_db, parent_table)):
        if not name:
            ids.append(None)
            continue
        table = await _table_or_none(conn, db, name)
        if table is None:
            return []
        ids.append(table.table_id)
    rows = await conn.fetch(sql.FOREIGN_KEYS, *ids)
    return [_row(r, parent_db=r["parent_db"], parent_table=r["parent_name"], parent_column=r["parent_column"],
                 key_name=r["key_name"]) for r in rows]
