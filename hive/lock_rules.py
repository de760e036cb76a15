"""Hive's lock rules, pure: lock types, scopes, the compatibility matrix, and which locks a
statement takes. No I/O: store/locks.py applies these rules in SQL; tests check them directly.

Design note.

*Matrix.* Hive 4's, with its four types SHARED_READ, SHARED_WRITE, EXCL_WRITE and EXCLUSIVE
(hive-reference §6.3, `CheckLockFunction`). Seed 002's S/X matrix is its SHARED_READ/EXCLUSIVE
corner; SHARED_WRITE and EXCL_WRITE are the finer types transactional tables use (readers are not
blocked by writers; EXCL_WRITE excludes other writers only).

*Hierarchy: scopes, as Hive does, not stored implied components.* A component locks a database, a
table, or a partition (or a prefix `k1=v1` of a partition name: seed 002's `T2.P`). Two components
can only conflict when one scope contains the other. A table lock covers all its partitions, so a
lock on a partition behaves exactly like a shared lock on its table, its name prefixes and its
database: everything that conflicts with such a shared lock (an EXCLUSIVE on the table or the
database: a drop, a rename) conflicts with the partition lock. Storing the implied shared locks as
rows instead would make them cover the whole table and block writers of the table's other
partitions, which seed 002 wants to allow. `LockPlan.implied()` lists them for people and tests.
Hive's one exception is kept: a SHARED_READ on a database and an EXCLUSIVE on a table or partition
in it do not conflict (a database-level shared lock only keeps the database from being dropped).

*A deviation from seed 002, shared with Hive's DbLockManager:* seed 002's "S on T1" alter rows (set
serdeproperties / serializer / file format) let exclusive writers of T1's existing partitions run
beside them; here T1's shared lock covers its partitions, so an EXCLUSIVE partition writer (a
strict-mode insert into a non-transactional partition) waits. Shared-lock writers (transactional
inserts, or non-strict mode) are not blocked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Sequence

from hive.limits import PARTITION_NAME, check_text, preview
from hive import names
from hive.errors import InvalidArgument


class LockType(str, Enum):
    """Hive's LockType; the value is Hive's HL_LOCK_TYPE character."""

    SHARED_READ = "r"
    SHARED_WRITE = "w"
    EXCL_WRITE = "x"
    EXCLUSIVE = "e"


# Weakest to strongest: duplicates of one scope in a request merge into the strongest.
_STRENGTH = {LockType.SHARED_READ: 0, LockType.SHARED_WRITE: 1, LockType.EXCL_WRITE: 2, LockType.EXCLUSIVE: 3}


class LockState(str, Enum):
    ACQUIRED = "a"
    WAITING = "w"


class LockLevel(str, Enum):
    DB = "d"
    TABLE = "t"
    PARTITION = "p"


class DataOperationType(str, Enum):
    """Hive's DataOperationType: what the statement does with a component (shown by SHOW LOCKS)."""

    SELECT = "SELECT"
    INSERT = "INSERT"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    UNSET = "UNSET"
    NO_TXN = "NO_TXN"


def conflicts(requested: LockType, requested_level: LockLevel, existing: LockType, existing_level: LockLevel) -> bool:
    """Hive 4's matrix: does an earlier `existing` lock block a `requested` one whose scopes overlap?

    | requested \\ existing | SHARED_READ | SHARED_WRITE | EXCL_WRITE | EXCLUSIVE |
    | SHARED_READ           | no          | no           | no         | yes (1)   |
    | SHARED_WRITE          | no          | no           | yes        | yes       |
    | EXCL_WRITE            | no          | yes          | yes        | yes       |
    | EXCLUSIVE             | yes (1)     | yes          | yes        | yes       |

    (1) except a SHARED_READ on a database against an EXCLUSIVE on a table or partition in it.
    """
    if requested is LockType.SHARED_READ:
        return existing is LockType.EXCLUSIVE and not (requested_level is LockLevel.DB
                                                       and existing_level is not LockLevel.DB)
    if requested is LockType.SHARED_WRITE:
        return existing in (LockType.EXCL_WRITE, LockType.EXCLUSIVE)
    if requested is LockType.EXCL_WRITE:
        return existing is not LockType.SHARED_READ
    return not (existing is LockType.SHARED_READ and existing_level is LockLevel.DB
                and requested_level is not LockLevel.DB)


def conflict_keys() -> tuple[str, ...]:
    """Every conflicting (requested type, requested level, existing type, existing level) as the
    4-character key the SQL check compares against, so the matrix is written down only here."""
    return tuple(f"{rt.value}{rl.value}{et.value}{el.value}"
                 for rt in LockType for rl in LockLevel for et in LockType for el in LockLevel
                 if conflicts(rt, rl, et, el))


@dataclass(frozen=True, slots=True)
class LockScope:
    """What a component locks: a database, a table, or a partition (or partition-name prefix)."""

    db: str
    table: str | None = None
    partition: str | None = None

    @property
    def level(self) -> LockLevel:
        if self.table is None:
            return LockLevel.DB
        return LockLevel.TABLE if self.partition is None else LockLevel.PARTITION

    @property
    def sort_key(self) -> tuple[str, str, str]:
        return self.db, self.table or "", self.partition or ""

    def contains(self, other: LockScope) -> bool:
        """True when `other` lies within this scope (a scope contains itself)."""
        if self.db != other.db:
            return False
        if self.table is None:
            return True
        if self.table != other.table:
            return False
        if self.partition is None:
            return True
        return other.partition is not None and (other.partition == self.partition
                                                or other.partition.startswith(self.partition + "/"))

    def overlaps(self, other: LockScope) -> bool:
        return self.contains(other) or other.contains(self)

    def ancestors(self) -> list[LockScope]:
        """The enclosing scopes, outermost first: the database, the table, each partition-name prefix."""
        if self.table is None:
            return []
        out = [LockScope(self.db)]
        if self.partition is None:
            return out
        out.append(LockScope(self.db, self.table))
        segments = self.partition.split("/")
        out += [LockScope(self.db, self.table, "/".join(segments[:i])) for i in range(1, len(segments))]
        return out

    def __str__(self) -> str:
        text = self.db if self.table is None else f"{self.db}.{self.table}"
        return text if self.partition is None else f"{text}/{self.partition}"


@dataclass(frozen=True, slots=True)
class LockComponent:
    scope: LockScope
    type: LockType
    operation: DataOperationType = DataOperationType.UNSET
    # Hive's LockComponent.isTransactional (isAcid in 2.3): False for a non-ACID table locked in a txn.
    transactional: bool = True
    # Hive's isDynamicPartitionWrite: the table-level lock of a write whose partitions are known only
    # after it ran; the client names them later (add_dynamic_partitions).
    dynamic_partition_write: bool = False


def blocks(existing: LockComponent, existing_txn: int, requested: LockComponent, requested_txn: int) -> bool:
    """Whether an earlier request's component blocks a later one's (Hive's checkLock rule, for
    one pair; the caller applies it only to earlier requests). Locks of one txn never block
    each other; a standalone request (txn 0) is checked against everything."""
    if requested_txn and existing_txn == requested_txn:
        return False
    return (existing.scope.overlaps(requested.scope)
            and conflicts(requested.type, requested.scope.level, existing.type, existing.scope.level))


# -- the write-set: what a txn's locks say it updates or deletes -----------------------------------

_WRITE_SET_OPERATIONS = {DataOperationType.UPDATE: "u", DataOperationType.DELETE: "d"}


def write_set_entries(components: Iterable[LockComponent]) -> list[tuple[LockScope, str]]:
    """The (table or partition scope, 'u' or 'd') pairs a txn's lock request adds to its write-set,
    Hive's TXN_COMPONENTS rows of operation UPDATE or DELETE (hive-reference §6.2): only components
    of transactional tables, on a table or a partition. A dynamic-partition write is recorded on its
    table, as an update, until the client names the partitions (add_dynamic_partitions replaces the
    table's entry). Inserts, reads and components without an operation (UNSET, NO_TXN) enter
    nothing: the commit-time check compares updates and deletes only. Scopes must be canonical."""
    out: dict[tuple[LockScope, str], None] = {}
    for c in components:
        op = _WRITE_SET_OPERATIONS.get(c.operation)
        if op is None or not c.transactional or c.scope.table is None:
            continue
        if c.dynamic_partition_write:
            out[LockScope(c.scope.db, c.scope.table), "u"] = None
        else:
            out[c.scope, op] = None
    return list(out)


# -- validating and ordering a request -------------------------------------------------------------


def normalize_partition_name(name: str) -> str:
    """`k1=v1/k2=v2` (or a prefix of one) with keys lower-cased and Hive's escaping canonical."""
    check_text(name, "lock component partition name", PARTITION_NAME)
    out = []
    for segment in name.split("/"):
        key, sep, value = segment.partition("=")
        if not sep or not value:
            raise InvalidArgument(f"partition name {preview(name)} is not of the form k1=v1/k2=v2 "
                                  f"(segment {preview(segment, 80)})")
        key = names.escape_path_name(names.normalize_partition_key(names.unescape_path_name(key)))
        out.append(f"{key}={names.escape_path_name(names.unescape_path_name(value))}")
    return "/".join(out)


def make_scope(db: str, table: str | None = None, partition: str | None = None) -> LockScope:
    """A validated, normalized scope; empty strings mean 'not given'."""
    if not db:
        raise InvalidArgument("a lock component needs a database name (db_name)")
    if partition and not table:
        raise InvalidArgument(f"lock component on partition {preview(partition)} of database {preview(db, 40)} has "
                              "no table name")
    return LockScope(names.normalize_identifier(db, "database"),
                     names.normalize_identifier(table, "table") if table else None,
                     normalize_partition_name(partition) if partition else None)


def normalize_components(components: Iterable[LockComponent]) -> tuple[LockComponent, ...]:
    """Components in lexicographic order of their scopes, one per scope (duplicates keep the
    strongest type): the order Hive handles them in and the order of their component ids."""
    merged: dict[LockScope, LockComponent] = {}
    for c in components:
        held = merged.get(c.scope)
        if held is None or _STRENGTH[c.type] > _STRENGTH[held.type]:
            merged[c.scope] = c
    if not merged:
        raise InvalidArgument("a lock request needs at least one component")
    return tuple(sorted(merged.values(), key=lambda c: c.scope.sort_key))


# -- which locks a statement takes (seed 002's table; hive-reference §6.6) ------------------------


class Statement(str, Enum):
    SELECT = "select"
    INSERT = "insert"                        # into a table or one (static) partition
    INSERT_DYNAMIC = "insert dynamic"        # dynamic partitions: target partition = the known static prefix, if any
    INSERT_OVERWRITE = "insert overwrite"
    UPDATE = "update"
    DELETE = "delete"
    RENAME = "alter table rename"
    ADD_COLS = "alter table add cols"
    REPLACE_COLS = "alter table replace cols"
    CHANGE_COLS = "alter table change cols"
    ADD_PARTITION = "alter table add partition"
    DROP_PARTITION = "alter table drop partition"
    TOUCH_PARTITION = "alter table touch partition"
    SET_SERDEPROPERTIES = "alter table set serdeproperties"
    SET_SERIALIZER = "alter table set serializer"
    SET_FILEFORMAT = "alter table set file format"
    SET_TBLPROPERTIES = "alter table set tblproperties"
    DROP_TABLE = "drop table"


_TABLE_DDL = {
    Statement.RENAME: LockType.EXCLUSIVE,
    Statement.ADD_COLS: LockType.EXCLUSIVE,
    Statement.REPLACE_COLS: LockType.EXCLUSIVE,
    Statement.CHANGE_COLS: LockType.EXCLUSIVE,
    Statement.SET_TBLPROPERTIES: LockType.EXCLUSIVE,
    Statement.DROP_TABLE: LockType.EXCLUSIVE,
    # Seed 002: the change applies to new partitions only, so existing ones stay readable.
    Statement.SET_SERDEPROPERTIES: LockType.SHARED_READ,
    Statement.SET_SERIALIZER: LockType.SHARED_READ,
    Statement.SET_FILEFORMAT: LockType.SHARED_READ,
}
_PARTITION_DDL = (Statement.ADD_PARTITION, Statement.DROP_PARTITION, Statement.TOUCH_PARTITION)


@dataclass(frozen=True, slots=True)
class TableRef:
    """A table a statement reads or writes; `partition` is a full partition name, or for
    INSERT_DYNAMIC the static prefix of the partition spec (None: fully dynamic)."""

    db: str
    table: str
    partition: str | None = None
    transactional: bool = False

    @property
    def scope(self) -> LockScope:
        return make_scope(self.db, self.table, self.partition)


@dataclass(frozen=True, slots=True)
class LockPolicy:
    """The client-side settings that decide lock types, with Hive's names and defaults."""

    strict_locking_mode: bool = True   # hive.txn.strict.locking.mode
    xlock_write: bool = True           # hive.txn.xlock.write (false: Hive's "sharedWrite" mode)
    xlock_iow: bool = True             # hive.txn.xlock.iow


_SYMBOL = {LockType.SHARED_READ: "S", LockType.SHARED_WRITE: "SW", LockType.EXCL_WRITE: "XW", LockType.EXCLUSIVE: "X"}


@dataclass(frozen=True, slots=True)
class LockPlan:
    """The components to request for a statement (already in request order)."""

    components: tuple[LockComponent, ...]
    statement: Statement | None = field(default=None, compare=False)

    def implied(self) -> tuple[LockScope, ...]:
        """The shared locks the components imply on their enclosing scopes (seed 002's parents),
        which the scope rule enforces without storing them."""
        explicit = {c.scope for c in self.components}
        return tuple(sorted({a for c in self.components for a in c.scope.ancestors() if a not in explicit},
                            key=lambda s: s.sort_key))

    def notation(self) -> frozenset[str]:
        """Seed 002's notation ("S on T1", "X on T2.P2"), explicit and implied, databases left out."""
        def where(s: LockScope) -> str:
            return str(s.table) if s.partition is None else f"{s.table}.{s.partition.replace('/', '.')}"

        out = {f"{_SYMBOL[c.type]} on {where(c.scope)}" for c in self.components if c.scope.table is not None}
        out |= {f"S on {where(s)}" for s in self.implied() if s.table is not None}
        return frozenset(out)


def _write_type(statement: Statement, target: TableRef, policy: LockPolicy) -> tuple[LockType, DataOperationType]:
    acid = target.transactional
    if statement in (Statement.INSERT, Statement.INSERT_DYNAMIC):
        if acid:  # seed 003: inserts into transactional tables always take shared locks
            return (LockType.SHARED_READ if policy.xlock_write else LockType.SHARED_WRITE), DataOperationType.INSERT
        return (LockType.EXCLUSIVE if policy.strict_locking_mode else LockType.SHARED_READ), DataOperationType.INSERT
    if statement is Statement.INSERT_OVERWRITE:
        if acid and not (policy.xlock_iow and policy.xlock_write):
            return LockType.EXCL_WRITE, DataOperationType.INSERT
        return LockType.EXCLUSIVE, DataOperationType.INSERT
    if not acid:
        raise InvalidArgument(f"{statement.value.upper()} needs a transactional table; "
                              f"{target.db}.{target.table} is not")
    operation = DataOperationType.UPDATE if statement is Statement.UPDATE else DataOperationType.DELETE
    return (LockType.EXCL_WRITE if policy.xlock_write else LockType.SHARED_WRITE), operation


def statement_locks(
    statement: Statement, target: TableRef | None = None, inputs: Sequence[TableRef] = (),
    policy: LockPolicy = LockPolicy(),
) -> LockPlan:
    """The lock request for one statement: SHARED_READ on every input (a table, or each partition
    read; a whole-table read of a partitioned table locks the table), plus the target's lock.

    Seed 002's rows map as follows (S = SHARED_READ, X = EXCLUSIVE; parents implied):
    select -> S on each input; insert -> X on the target partition or table (S with
    hive.txn.strict.locking.mode=false; S, or SHARED_WRITE without hive.txn.xlock.write, into a
    transactional table); insert with dynamic partitions -> the same type on the known static
    prefix, or the table; rename, add/replace/change cols, set tblproperties, drop table -> X on
    the table; add/drop/touch partition -> X on the partition; set serdeproperties / serializer /
    file format -> S on the table. INSERT OVERWRITE, UPDATE and DELETE follow Hive 4 (§6.6).
    """
    components = [LockComponent(t.scope, LockType.SHARED_READ, DataOperationType.SELECT) for t in inputs]
    if statement is Statement.SELECT:
        if target is not None:
            components.append(LockComponent(target.scope, LockType.SHARED_READ, DataOperationType.SELECT))
        if not components:
            raise InvalidArgument("a SELECT needs at least one table to read")
        return LockPlan(normalize_components(components), statement)
    if target is None:
        raise InvalidArgument(f"{statement.value.upper()} needs a target table")
    if statement in _TABLE_DDL:
        if target.partition is not None:
            raise InvalidArgument(f"{statement.value.upper()} locks the whole table; "
                                  "drop the partition from the target")
        components.append(LockComponent(target.scope, _TABLE_DDL[statement], DataOperationType.NO_TXN))
    elif statement in _PARTITION_DDL:
        if target.partition is None:
            raise InvalidArgument(f"{statement.value.upper()} needs the partition in the target")
        components.append(LockComponent(target.scope, LockType.EXCLUSIVE, DataOperationType.NO_TXN))
    else:
        lock_type, operation = _write_type(statement, target, policy)
        components.append(LockComponent(target.scope, lock_type, operation))
    return LockPlan(normalize_components(components), statement)
