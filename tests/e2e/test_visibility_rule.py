"""The visibility rule has one owner, `store.snapshot.is_visible`, and one SQL form, `VISIBLE` in
store/sql/catalog.py (partition reads filter in PostgreSQL). Both are evaluated here over a grid of
versions (created_wid, dropped_wid), snapshots (committed, open and aborted write ids, below and
above the high-water mark) and the reader's own write id, on the real PostgreSQL: they must agree on
every case. Column statistics take the same rule as versions (`statistics_seen`), and its SQL form,
SELECT_IN_SNAPSHOT in store/sql/column_stats.py, is held to it the same way."""

from __future__ import annotations

import itertools

import asyncpg
import pytest

from store.snapshot import is_visible, sql_params, statistics_seen
from store.sql.catalog import VISIBLE
from store.sql.column_stats import SELECT_IN_SNAPSHOT
from hive.writeids import ValidWriteIdList

SNAPSHOTS = [
    "db.t:0:9223372036854775807::",  # nothing written yet
    "db.t:5:9223372036854775807::",  # 1..5 committed
    "db.t:5:2:2:4",                  # 2 open, 4 aborted
    "db.t:7:3:3,6:5",                # 3 and 6 open, 5 aborted
    "db.t:8:1:1,2,3,8:",             # open at the bottom and at the high-water mark
]
WRITE_IDS = range(0, 10)              # 0: non-transactional; 9 is above every high-water mark
OWN_WRITE_IDS = [0, 1, 2, 3, 6, 8, 9]  # 0: the reader writes nothing; others open or above the hwm

_QUERY = f"""
SELECT ({VISIBLE.format(h="$3", x="$4", o="$5")}) AS visible
FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS v(created_wid, dropped_wid, n)
ORDER BY n
"""


@pytest.fixture
async def conn(pg_dsn: str) -> asyncpg.Connection:
    c = await asyncpg.connect(pg_dsn)
    yield c
    await c.close()


async def test_the_sql_predicate_and_is_visible_agree_on_every_case(conn: asyncpg.Connection) -> None:
    versions = [(c, d) for c in WRITE_IDS for d in [None, *WRITE_IDS]]
    created = [c for c, _ in versions]
    dropped = [d for _, d in versions]
    checked = 0
    for text, own in itertools.product(SNAPSHOTS, OWN_WRITE_IDS):
        snapshot = ValidWriteIdList.parse(text)
        rows = await conn.fetch(_QUERY, created, dropped, *sql_params(snapshot, own))
        in_sql = [r["visible"] for r in rows]
        in_python = [is_visible(snapshot, own, c, d) for c, d in versions]
        differ = [(c, d, s, p) for (c, d), s, p in zip(versions, in_sql, in_python) if s != p]
        assert not differ, f"snapshot {text}, own write id {own}: (created, dropped, sql, python) {differ}"
        checked += len(versions)
    assert checked == len(SNAPSHOTS) * len(OWN_WRITE_IDS) * 10 * 11


def test_the_grid_sees_both_answers() -> None:
    """The grid is not degenerate: each snapshot shows some versions and hides others."""
    for text in SNAPSHOTS[1:]:
        snapshot = ValidWriteIdList.parse(text)
        answers = {is_visible(snapshot, 0, c, d) for c in WRITE_IDS for d in [None, *WRITE_IDS]}
        assert answers == {True, False}


def test_the_caches_copy_agrees_with_is_visible() -> None:
    """The cache keeps its own fast form of the rule (store/cache/entry.py `visible`, no own write id:
    a reader with writes of its own is sent to the database); it must agree with the owner."""
    from store.cache.entry import Version, visible

    for text in SNAPSHOTS:
        snapshot = ValidWriteIdList.parse(text)
        for c in WRITE_IDS:
            for d in [None, *WRITE_IDS]:
                assert visible(Version(c, d, b""), snapshot) == is_visible(snapshot, 0, c, d), (text, c, d)


async def test_the_statistics_query_and_statistics_seen_agree_on_every_case(conn: asyncpg.Connection) -> None:
    """Column statistics take the rule as versions (store/snapshot.py `statistics_seen`): a committed row
    (created by write id 0), rows waiting for their txns' commits (created by the txn's write id), each
    maybe marked by a txn's drop (ended by its write id). Every combination, one column each, in one table:
    SELECT_IN_SNAPSHOT (store/sql/column_stats.py) answers, for every snapshot and own write id, the row
    `statistics_seen` picks."""
    with pytest.raises(_RollBack):
        await _check_statistics_cases(conn)


async def _check_statistics_cases(conn: asyncpg.Connection) -> None:
    marks: list[int | None] = [None, 1, 2, 3, 6, 8, 9]
    committed_options: list[int | None | str] = ["none", *marks]  # "none": no committed row; else its mark
    waiting_options = [()] + [((c, m),) for c in range(1, 10) for m in (None, 2, 6, 9) if m != c] + [
        ((2, None), (6, None)), ((3, None), (8, 6)), ((1, 9), (9, None))]
    cases: list[tuple[int | None | str, tuple[tuple[int, int | None], ...]]] = [
        (c, w) for c in committed_options for w in waiting_options]

    def txn(write_id: int) -> int:
        return 1000 + write_id  # txn 100w holds write id w of table 1

    async with conn.transaction():
        await conn.executemany("INSERT INTO txn_to_write_id (txn_id, table_id, write_id) VALUES ($1, 1, $2)",
                               [(txn(w), w) for w in range(1, 10)])
        for i, (committed, waiting) in enumerate(cases):
            if committed != "none":
                await conn.execute(
                    "INSERT INTO column_stats (table_id, part_name, column_name, column_type, kind, data, "
                    "last_analyzed, deleted_by_txn) VALUES (1, '', $1, 'bigint', 'long', '{}', 0, $2)",
                    f"c{i}", None if committed is None else txn(int(committed)))
            for created, mark in waiting:
                await conn.execute(
                    "INSERT INTO column_stats_by_txn (txn_id, table_id, part_name, column_name, column_type, kind, "
                    "data, last_analyzed, deleted_by_txn) VALUES ($1, 1, '', $2, 'bigint', 'long', '{}', $3, $4)",
                    txn(created), f"c{i}", created, None if mark is None else txn(mark))
        columns = [f"c{i}" for i in range(len(cases))]
        checked = 0
        for text, own in itertools.product(SNAPSHOTS, OWN_WRITE_IDS):
            snapshot = ValidWriteIdList.parse(text)
            rows = await conn.fetch(SELECT_IN_SNAPSHOT, 1, [""], columns, *sql_params(snapshot, own))
            in_sql = {r["column_name"]: r["last_analyzed"] for r in rows}  # the waiting row's write id, 0
            for i, (committed, waiting) in enumerate(cases):
                versions = ([] if committed == "none" else [(0, None if committed is None else int(committed))]) \
                    + [(c, m) for c, m in waiting]
                seen = statistics_seen(snapshot, own, versions)
                expected = None if seen is None else versions[seen][0]
                assert in_sql.get(f"c{i}") == expected, (text, own, committed, waiting, in_sql.get(f"c{i}"))
                checked += 1
        assert checked == len(SNAPSHOTS) * len(OWN_WRITE_IDS) * len(cases)
        raise _RollBack  # leave the database as it was


class _RollBack(Exception):
    pass
