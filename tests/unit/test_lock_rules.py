"""The lock rules without a database: Hive 4's matrix cell by cell, scopes, request ordering,
and seed 002's table of which statement takes which lock, row by row."""

from __future__ import annotations

import pytest

from store.errors import InvalidArgument
from hive.lock_rules import (
    DataOperationType,
    LockComponent,
    LockLevel,
    LockPlan,
    LockPolicy,
    LockScope,
    LockType,
    Statement,
    TableRef,
    blocks,
    conflict_keys,
    conflicts,
    make_scope,
    normalize_components,
    statement_locks,
    write_set_entries,
)

SR, SW, XW, X = LockType.SHARED_READ, LockType.SHARED_WRITE, LockType.EXCL_WRITE, LockType.EXCLUSIVE
DB, TBL, PART = LockLevel.DB, LockLevel.TABLE, LockLevel.PARTITION

# hive-reference §6.3, H4: rows requested, columns existing; True = blocks.
MATRIX = {
    SR: {SR: False, SW: False, XW: False, X: True},
    SW: {SR: False, SW: False, XW: True, X: True},
    XW: {SR: False, SW: True, XW: True, X: True},
    X: {SR: True, SW: True, XW: True, X: True},
}
CELLS = [(r, e, MATRIX[r][e]) for r in MATRIX for e in MATRIX[r]]


@pytest.mark.parametrize("requested,existing,expected", CELLS, ids=[f"{r.name}-after-{e.name}" for r, e, _ in CELLS])
@pytest.mark.parametrize("level", [DB, TBL, PART])
def test_matrix_cell_on_the_same_scope(requested: LockType, existing: LockType, expected: bool,
                                       level: LockLevel) -> None:
    assert conflicts(requested, level, existing, level) is expected


@pytest.mark.parametrize("requested,requested_level,existing,existing_level,expected", [
    (SR, DB, X, TBL, False),   # Hive's exception: a db read lock only keeps the db from being dropped
    (SR, DB, X, PART, False),
    (X, TBL, SR, DB, False),
    (X, PART, SR, DB, False),
    (SR, TBL, X, DB, True),    # an exclusive database lock covers its tables
    (X, DB, SR, TBL, True),    # dropping a database waits for readers of its tables
    (SR, TBL, X, PART, True),  # "EXCLUSIVE lock on partition should prevent SHARED_READ on the table"
    (X, TBL, SR, PART, True),  # a partition read implies a shared lock on the table
    (SW, DB, X, TBL, True),
    (XW, TBL, SR, DB, False),
])
def test_matrix_across_levels(requested: LockType, requested_level: LockLevel, existing: LockType,
                              existing_level: LockLevel, expected: bool) -> None:
    assert conflicts(requested, requested_level, existing, existing_level) is expected


def test_sql_keys_are_exactly_the_conflicting_cells() -> None:
    keys = set(conflict_keys())
    for r in LockType:
        for rl in LockLevel:
            for e in LockType:
                for el in LockLevel:
                    assert (f"{r.value}{rl.value}{e.value}{el.value}" in keys) is conflicts(r, rl, e, el)


def test_seed_002_matrix_is_the_shared_read_exclusive_corner() -> None:
    # Seed 002: S/S compatible; every pair with an X conflicts.
    assert [conflicts(a, TBL, b, TBL) for a in (SR, X) for b in (SR, X)] == [False, True, True, True]


# -- scopes --------------------------------------------------------------------------------------


def test_scopes_overlap_when_one_contains_the_other() -> None:
    db, t, p, pq = LockScope("d"), LockScope("d", "t"), LockScope("d", "t", "p=1"), LockScope("d", "t", "p=1/q=2")
    assert all(a.overlaps(b) for a in (db, t, p, pq) for b in (db, t, p, pq))
    assert db.contains(pq) and t.contains(pq) and p.contains(pq) and not pq.contains(p)
    assert not LockScope("d", "t", "p=1").overlaps(LockScope("d", "t", "p=10"))  # a prefix ends at '/'
    assert not LockScope("d", "t", "p=1").overlaps(LockScope("d", "t", "p=2/q=1"))
    assert not LockScope("d", "t").overlaps(LockScope("d", "u"))
    assert not LockScope("d").overlaps(LockScope("e", "t"))
    assert pq.ancestors() == [db, t, p]


def test_locks_of_one_txn_never_block_each_other_and_txn_zero_is_checked_against_all() -> None:
    held = LockComponent(LockScope("d", "t"), X)
    wanted = LockComponent(LockScope("d", "t", "p=1"), SR)
    assert not blocks(held, 7, wanted, 7)
    assert blocks(held, 7, wanted, 8)
    assert blocks(held, 0, wanted, 0)  # two standalone requests are different owners
    assert blocks(held, 7, wanted, 0)
    assert not blocks(LockComponent(LockScope("d", "t", "p=2"), X), 0, wanted, 0)


def test_requests_are_sorted_lexicographically_and_duplicates_keep_the_strongest_type() -> None:
    got = normalize_components([
        LockComponent(make_scope("D", "b"), SR),
        LockComponent(make_scope("d", "a", "P=1/q=x%3Ay"), SR),
        LockComponent(make_scope("d"), SR),
        LockComponent(make_scope("d", "B"), X, DataOperationType.NO_TXN),
        LockComponent(make_scope("d", "b"), SW),
    ])
    assert [(str(c.scope), c.type) for c in got] == [("d", SR), ("d.a/p=1/q=x%3Ay", SR), ("d.b", X)]
    assert got[-1].operation is DataOperationType.NO_TXN


def test_a_partition_of_keys_named_by_any_text_is_a_lock_scope_in_its_stored_form() -> None:
    # `Event Date` and `a:b` are the keys of a Spark data source table (hive/names.py normalize_partition_key).
    assert str(make_scope("d", "t", "Event Date=1/a%3ab=x").partition) == "event date=1/a%3Ab=x"


@pytest.mark.parametrize("db,table,partition,message", [
    ("", "t", None, "needs a database"),
    ("d", None, "p=1", "has no table"),
    ("d-x", "t", None, "not valid"),
    ("d", "t", "p", "not of the form"),
    ("d", "t", "p=", "not of the form"),
    ("d", "t", "=1", "must not be empty"),
])
def test_bad_scopes_are_refused_with_a_reason(db: str, table: str | None, partition: str | None, message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        make_scope(db, table, partition)


def test_an_empty_request_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="at least one component"):
        normalize_components([])


# -- seed 002's table, row by row ----------------------------------------------------------------

T1 = TableRef("db", "T1")
T1P1 = TableRef("db", "T1", "p=P1")

# (statement as seed 002 writes it, the plan, the locks seed 002 lists). Partition P1 is `p=P1`,
# P.Q is `p=P/q=Q`; S = SHARED_READ, X = EXCLUSIVE; shared locks on parents included.
SEED_002_ROWS = [
    ("select .. T1 partition P1",
     statement_locks(Statement.SELECT, inputs=[T1P1]), {"S on t1", "S on t1.p=P1"}),
    ("insert into T2(partition P2) select .. T1 partition P1",
     statement_locks(Statement.INSERT, TableRef("db", "T2", "p=P2"), [T1P1]),
     {"S on t2", "S on t1", "S on t1.p=P1", "X on t2.p=P2"}),
    ("insert into T2(partition P.Q) select .. T1 partition P1",
     statement_locks(Statement.INSERT, TableRef("db", "T2", "p=P/q=Q"), [T1P1]),
     {"S on t2", "S on t2.p=P", "S on t1", "S on t1.p=P1", "X on t2.p=P.q=Q"}),
    ("alter table T1 rename T2", statement_locks(Statement.RENAME, T1), {"X on t1"}),
    ("alter table T1 add cols", statement_locks(Statement.ADD_COLS, T1), {"X on t1"}),
    ("alter table T1 replace cols", statement_locks(Statement.REPLACE_COLS, T1), {"X on t1"}),
    ("alter table T1 change cols", statement_locks(Statement.CHANGE_COLS, T1), {"X on t1"}),
    ("alter table T1 add partition P1", statement_locks(Statement.ADD_PARTITION, T1P1), {"S on t1", "X on t1.p=P1"}),
    ("alter table T1 drop partition P1", statement_locks(Statement.DROP_PARTITION, T1P1), {"S on t1", "X on t1.p=P1"}),
    ("alter table T1 touch partition P1", statement_locks(Statement.TOUCH_PARTITION, T1P1), {"S on t1",
                                                                                             "X on t1.p=P1"}),
    ("alter table T1 set serdeproperties", statement_locks(Statement.SET_SERDEPROPERTIES, T1), {"S on t1"}),
    ("alter table T1 set serializer", statement_locks(Statement.SET_SERIALIZER, T1), {"S on t1"}),
    ("alter table T1 set file format", statement_locks(Statement.SET_FILEFORMAT, T1), {"S on t1"}),
    ("alter table T1 set tblproperties", statement_locks(Statement.SET_TBLPROPERTIES, T1), {"X on t1"}),
    ("drop table T1", statement_locks(Statement.DROP_TABLE, T1), {"X on t1"}),
    # Dynamic partitions: "an exclusive lock is taken on the table, or the prefix that is known".
    ("insert into T2(partition P, Q dynamic) select .. T1 partition P1",
     statement_locks(Statement.INSERT_DYNAMIC, TableRef("db", "T2", "p=P"), [T1P1]),
     {"S on t2", "X on t2.p=P", "S on t1", "S on t1.p=P1"}),
    ("insert into T2(partition P, Q all dynamic) select .. T1",
     statement_locks(Statement.INSERT_DYNAMIC, TableRef("db", "T2"), [T1]), {"X on t2", "S on t1"}),
]


@pytest.mark.parametrize("row", SEED_002_ROWS, ids=[r[0] for r in SEED_002_ROWS])
def test_seed_002_row(row: tuple[str, LockPlan, set[str]]) -> None:
    _, plan, expected = row
    assert plan.notation() == expected
    # Every lock also implies a shared lock on its database.
    assert LockScope("db") in plan.implied()


def test_the_explicit_components_are_the_objects_themselves_and_parents_stay_implied() -> None:
    plan = statement_locks(Statement.INSERT, TableRef("db", "T2", "p=P/q=Q"), [T1P1])
    assert [(str(c.scope), c.type, c.operation) for c in plan.components] == [
        ("db.t1/p=P1", SR, DataOperationType.SELECT), ("db.t2/p=P/q=Q", X, DataOperationType.INSERT)]
    assert [str(s) for s in plan.implied()] == ["db", "db.t1", "db.t2", "db.t2/p=P"]


def _blocks_between(first: LockPlan, second: LockPlan) -> bool:
    """Would `second` (requested later, another owner) wait for `first`?"""
    return any(blocks(a, 0, b, 0) for a in first.components for b in second.components)


def test_seed_002_consequences_hold_under_the_scope_rule() -> None:
    select_p1 = statement_locks(Statement.SELECT, inputs=[T1P1])
    insert_p2 = statement_locks(Statement.INSERT, TableRef("db", "T1", "p=P2"))
    insert_p1 = statement_locks(Statement.INSERT, T1P1)
    drop = statement_locks(Statement.DROP_TABLE, T1)
    add_p3 = statement_locks(Statement.ADD_PARTITION, TableRef("db", "T1", "p=P3"))
    set_serde = statement_locks(Statement.SET_SERDEPROPERTIES, T1)
    select_all = statement_locks(Statement.SELECT, inputs=[T1])
    assert not _blocks_between(select_p1, insert_p2)   # readers of one partition, writers of another
    assert _blocks_between(select_p1, insert_p1)
    assert _blocks_between(select_p1, drop)            # a read keeps the table from being dropped
    assert _blocks_between(add_p3, drop) and _blocks_between(drop, add_p3)
    assert not _blocks_between(add_p3, insert_p2)      # partitions are independent
    assert not _blocks_between(set_serde, select_p1)   # S on the table: readers go on
    assert _blocks_between(set_serde, drop)
    assert _blocks_between(select_all, insert_p2)      # a whole-table read covers every partition


def test_dynamic_partition_prefix_lock_covers_the_partitions_below_it() -> None:
    dynamic = statement_locks(Statement.INSERT_DYNAMIC, TableRef("db", "T2", "p=P"))
    assert _blocks_between(dynamic, statement_locks(Statement.SELECT, inputs=[TableRef("db", "T2", "p=P/q=1")]))
    assert not _blocks_between(dynamic, statement_locks(Statement.SELECT, inputs=[TableRef("db", "T2", "p=R/q=1")]))


# -- policies: strict mode, transactional tables (hive-reference §6.6, seed 003) -----------------


def _types(plan: LockPlan) -> list[LockType]:
    return [c.type for c in plan.components]


def test_strict_locking_mode_decides_inserts_into_non_transactional_tables() -> None:
    target = TableRef("db", "t", "p=1")
    assert _types(statement_locks(Statement.INSERT, target)) == [X]
    assert _types(statement_locks(Statement.INSERT, target, policy=LockPolicy(strict_locking_mode=False))) == [SR]


def test_inserts_into_transactional_tables_take_shared_locks() -> None:
    acid = TableRef("db", "t", "p=1", transactional=True)
    assert _types(statement_locks(Statement.INSERT, acid)) == [SR]  # even in strict mode
    assert _types(statement_locks(Statement.INSERT_DYNAMIC, TableRef("db", "t", transactional=True))) == [SR]
    shared_write = LockPolicy(xlock_write=False)
    assert _types(statement_locks(Statement.INSERT, acid, policy=shared_write)) == [SW]
    assert not _blocks_between(statement_locks(Statement.INSERT, acid), statement_locks(Statement.INSERT, acid))


def test_update_delete_and_insert_overwrite_follow_hive_4() -> None:
    acid = TableRef("db", "t", transactional=True)
    assert _types(statement_locks(Statement.UPDATE, acid)) == [XW]
    assert _types(statement_locks(Statement.DELETE, acid, policy=LockPolicy(xlock_write=False))) == [SW]
    assert _types(statement_locks(Statement.INSERT_OVERWRITE, acid)) == [X]
    assert _types(statement_locks(Statement.INSERT_OVERWRITE, acid, policy=LockPolicy(xlock_iow=False))) == [XW]
    assert _types(statement_locks(Statement.INSERT_OVERWRITE, TableRef("db", "t"))) == [X]
    with pytest.raises(InvalidArgument, match="needs a transactional table"):
        statement_locks(Statement.UPDATE, TableRef("db", "t"))


@pytest.mark.parametrize("statement,target,message", [
    (Statement.ADD_PARTITION, T1, "needs the partition"),
    (Statement.DROP_TABLE, T1P1, "locks the whole table"),
    (Statement.INSERT, None, "needs a target"),
    (Statement.SELECT, None, "at least one table"),
])
def test_statements_missing_their_objects_are_refused(statement: Statement, target: TableRef | None,
                                                      message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        statement_locks(statement, target)


def test_write_set_entries_are_the_updates_and_deletes_of_transactional_tables() -> None:
    t, p = LockScope("db", "t"), LockScope("db", "t", "ds=1")
    update, delete = DataOperationType.UPDATE, DataOperationType.DELETE
    components = [
        LockComponent(p, SW, update), LockComponent(p, SW, delete), LockComponent(p, SW, update),  # one each
        LockComponent(LockScope("db", "t", "ds=2"), SW, DataOperationType.INSERT),  # inserts conflict with nothing
        LockComponent(LockScope("db", "t", "ds=3"), SR, DataOperationType.SELECT),
        LockComponent(LockScope("db", "t", "ds=4"), SW, DataOperationType.UNSET),
        LockComponent(LockScope("db", "t", "ds=5"), SW, DataOperationType.NO_TXN),
        LockComponent(LockScope("db", "plain"), SW, update, transactional=False),  # a non-ACID table
        LockComponent(LockScope("db"), SW, update),  # a database is no write target
        # a dynamic-partition delete is an update of its table until the partitions are named
        LockComponent(LockScope("db", "t", "ds=6"), SW, delete, dynamic_partition_write=True),
        LockComponent(t, SW, update, dynamic_partition_write=True),
    ]
    assert write_set_entries(components) == [(p, "u"), (p, "d"), (t, "u")]
    assert write_set_entries([]) == []
