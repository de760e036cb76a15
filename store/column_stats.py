"""Column statistics of tables and partitions (Hive's TAB_COL_STATS and PART_COL_STATS): what query
planners read (Trino before every plan, and at the end of every INSERT it merges and writes them back).

Rules, Hive 2.3's unless said (tests/e2e/test_thrift_differential.py checks them against it):
- A write names columns of the table (not its partition keys) and replaces the statistics of each
  column it names, a value it leaves unset (a low or high value, a sketch) keeping the old one
  (hive/column_stats.py's `overlay`, Hive's setFieldsIntoOldStats), or merges into them (`merge`);
  the other columns keep theirs. A partition's statistics need the partition.
- Statistics come in the kind the column's type has (hive/column_stats.py). Hive 2.3 stores any kind
  and reads it back as garbage; here a kind that does not fit the column is refused.
- They go with what they describe, in the same database transaction: dropping the table, a partition
  (a partition rename is a drop and an add, and Hive 2.3 loses them there too), or a column, or
  changing its type, deletes them: a table's column its table-level statistics (alter_table), a
  partition's own column (its storage descriptor's; one without reads as having the table's) that
  partition's (alter_partitions: Hive's updateOrGetPartitionColumnStats), by one rule
  (store/catalog.py's lost_columns and _restate_column_stats: what the alter no longer has with the
  same name and type), which also takes them out of COLUMN_STATS_ACCURATE. So does the abort that
  discards a partition its txn added (store/txns.py). A table rename keeps them: they are keyed by the
  table's stable id (Hive 2.3 loses the partitions' statistics on rename).
- Under a txn (a transactional table's write, versioned by write id) these deletions wait for its
  commit, as the write's new versions (the partition dropped, the table or partition with the column
  dropped or retyped) do: the rows are marked with the txn (store/schema/0022), every reader still sees
  them, the commit deletes them and an abort, which brings the old versions back, unmarks them. A
  partition the txn itself added exists nowhere once it drops it again, so that drop deletes them at once. A
  write without a txn to a partition (or the table's own) some of whose rows an open txn marked, or to
  a partition an open txn dropped and added again (store/schema/0028 tells that from an alter), describes
  that txn's version (it replaced the partition, or changed the columns):
  it waits for that txn's commit as the txn's own write would (below), and its abort, which brings the
  old version back with its marked rows, discards it; so do that abort, and that txn's drop of its new
  partition, with what another txn wrote under its own txn for it (store/txns.py discard_versions,
  store/catalog.py drop_partitions). A write under another txn that replaces its own waiting row
  marked by a drop keeps the mark (whether it describes the old partition or the dropping txn's new
  one cannot be told; a row lost is rewritten by the next ANALYZE, a wrong one would mislead a
  planner).
- Statistics a txn writes (Hive 3's set_aggr_stats_for names the write id its txn allocated for the
  table) wait for its commit in column_stats_by_txn (store/schema/0023): a reader whose
  ValidWriteIdList counts the txn's write id as committed (the txn itself) reads them, and not the
  committed rows its own drops marked; every other reader, and one without a list, sees the committed
  ones meanwhile (store/snapshot.py `statistics_seen`, Hive's isCurrentStatsValidForTheQuery). A write
  merges into (or overlays) the txn's own row else the committed one, the commit moves them in, and an
  abort deletes them. A drop of the partition, or of the column or a change of its type, takes them as it
  takes committed ones (store/schema/0025): another txn's drop marks them, its commit deletes them
  (before or after theirs: moved in, they keep the mark), its abort unmarks them; the writing txn's
  own drop, and a drop of a partition that exists nowhere else, delete them at once. So a partition of
  that name added again after a drop does not get them. A table dropped meanwhile takes them with it.
  Written without a txn (Hive 2.3, Trino), they replace the old ones at once, for every reader (but
  over an open txn's marks, or to a partition an open txn dropped and added again, whose old one may
  have had no statistics to mark: above).
- The statistics themselves are not versioned beyond that (a commit moves its rows in for every
  reader, older snapshots included) and carry no notification event (Hive 2.3 has neither), and
  nothing caches them: each read is one indexed query, over either gateway path (cache on or off).
  Hive's planner reads them aggregated over partitions
  (`aggregate_partition_stats`, computed by hive/stats_aggregation.py).
- A write marks its columns in the table's or partition's COLUMN_STATS_ACCURATE parameter
  (hive/stats_accuracy.py), as Hive does, so Hive's optimizer may answer from statistics alone; that
  change is an ALTER_TABLE or ALTER_PARTITION event, which caches apply (Hive 2.3 logs none, and keeps
  no cache). A delete leaves the parameter as it was (Hive's rule). A transactional table's, and its
  partitions', parameters are left unmarked: its metadata changes only under a write id, which Hive's
  statistics calls do not carry (Hive 3 and later likewise do not trust such statistics).

Every function takes a connection inside the caller's transaction.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence, TypeVar

import asyncpg

from hive import names as n
from hive import stats_accuracy, stats_aggregation
from hive.column_stats import BYTES, DECIMAL, FIELDS, FLOAT, ColumnStats, check, merge, overlay
from store import catalog, codec, txns
from store.errors import InvalidArgument, NeverAllowed, NotFound
from store.events import NewEvent, Outcome
from store.models import Partition, Table
from store.snapshot import ReadSnapshot, sql_params
from store.sql import column_stats as sql

T = TypeVar("T")

TABLE_LEVEL = ""  # the partition name of a table's own statistics

# -- JSON form (binary fields base64) --------------------------------------------------------------

def _to_json(kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in data.items():
        if value is None:
            continue
        type_ = FIELDS[kind][name][0]
        if type_ == BYTES:
            value = base64.b64encode(value).decode("ascii")
        elif type_ == DECIMAL:
            value = {"unscaled": base64.b64encode(value["unscaled"]).decode("ascii"), "scale": value["scale"]}
        elif type_ == FLOAT and not math.isfinite(value):
            value = repr(float(value))  # JSON has no NaN or infinity
        out[name] = value
    return out


def _from_json(kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in data.items():
        type_ = FIELDS[kind][name][0]
        if type_ == BYTES:
            value = base64.b64decode(value)
        elif type_ == DECIMAL:
            value = {"unscaled": base64.b64decode(value["unscaled"]), "scale": value["scale"]}
        elif type_ == FLOAT:
            value = float(value)
        out[name] = value
    return out


def _from_row(row: asyncpg.Record) -> ColumnStats:
    return ColumnStats(row["column_name"], row["column_type"], row["kind"], _from_json(row["kind"], row["data"]),
                       row["last_analyzed"])


def _in_column_order(table: Table, stats: Sequence[ColumnStats]) -> list[ColumnStats]:
    position = {c.name: i for i, c in enumerate(table.columns)}
    return sorted(stats, key=lambda s: position.get(s.column, len(position)))


# -- writes ----------------------------------------------------------------------------------------

async def _locked_partition(conn: asyncpg.Connection, table: Table, part_name: str) -> Partition:
    """The partition, its row locked so a concurrent drop waits for this write."""
    name = catalog.canonical_names(table, [part_name])[0]
    rows = await catalog.lock_partitions(conn, table, [name])
    if not rows:
        raise NotFound(f"partition {name} of table {table.full_name} does not exist")
    return codec.partition_from_row(table.db_name, table.name, rows[0])


async def update(conn: asyncpg.Connection, db_name: str, table_name: str, part_name: str | None,
                 stats: Sequence[ColumnStats], now_s: int, *, merge_old: bool = False,
                 txn_id: int = 0) -> tuple[NewEvent, ...]:
    """Write the named columns' statistics of the table (`part_name` None) or of one partition over the
    old ones (`overlay`), or with `merge_old` merge them into the old ones (`merge`); column names are
    stored lower case, `last_analyzed` is `now_s`. Under `txn_id` (open; a transactional table's write)
    they wait for its commit (the module's docstring). Answers the events of marking them accurate (none:
    already marked)."""
    if not stats:
        raise InvalidArgument("no column statistics given")
    # A lock on the table's row: a drop or rename waits until these rows are in, then sees them. Exclusive
    # for the table's own statistics, whose marking alters the table (taken at once: two writers that both
    # held a shared lock would deadlock upgrading it).
    table = await catalog.get_table(conn, db_name, table_name, lock="share" if part_name is not None else "update")
    partition = None if part_name is None else await _locked_partition(conn, table, part_name)
    key = TABLE_LEVEL if partition is None else partition.name
    types = {c.name: c.type for c in table.columns}
    stored: dict[str, ColumnStats] = {}  # a column named twice: the last one, as Hive's loop leaves it
    for s in stats:
        column = n.normalize_column_name(s.column)
        if column not in types:
            raise InvalidArgument(f"column {column} is not a column of table {table.full_name} (partition keys "
                                  f"have no statistics); its columns: {', '.join(types) or 'none'}")
        s = ColumnStats(column, (s.column_type or types[column]).lower(), s.kind, s.data, now_s)
        check(s, types[column])
        stored[column] = s
    if not txn_id and table.is_acid:
        # Rows marked by an open txn's drop or column change, or a partition an open txn dropped and added
        # again (whose old one may have had none to mark): what the write describes is that txn's version,
        # so it waits for that txn's commit, which takes the marked rows, and goes with its abort, which
        # brings the old version back.
        txn_id = int(await conn.fetchval(sql.MARKING_OPEN_TXN, table.table_id, key) or 0)
        if not txn_id and partition is not None:
            txn_id = int(await conn.fetchval(sql.REPLACING_OPEN_TXN, table.table_id, key) or 0)
    if txn_id:
        if not table.is_acid:
            raise InvalidArgument(f"table {table.full_name} is not transactional: its statistics are written "
                                  "without a txn (leave the write id out)")
        await txns.require_open(conn, [txn_id])  # held FOR SHARE: the commit waits for these rows
    old = (await conn.fetch(sql.SELECT_FOR_MERGE_BY_TXN, table.table_id, [key], list(stored), txn_id) if txn_id
           else await conn.fetch(sql.SELECT_FOR_UPDATE, table.table_id, [key], list(stored)))
    for row in old:
        stored[row["column_name"]] = (merge if merge_old else overlay)(_from_row(row), stored[row["column_name"]])
    rows = [{"part_name": key, "column_name": s.column, "column_type": s.column_type, "kind": s.kind,
             "data": _to_json(s.kind, s.data)} for s in stored.values()]
    if txn_id:
        await conn.execute(sql.UPSERT_BY_TXN, table.table_id, rows, now_s, txn_id)
        return ()  # a transactional table's parameters are never marked (_mark_accurate)
    await conn.execute(sql.UPSERT, table.table_id, rows, now_s)
    return await _mark_accurate(conn, table, partition, list(stored))


async def _mark_accurate(conn: asyncpg.Connection, table: Table, partition: Partition | None,
                         columns: Sequence[str]) -> tuple[NewEvent, ...]:
    """Mark `columns` accurate in the table's (`partition` None) or the partition's parameters, as
    an alter of it, when that changes them; never on a transactional table (the module's docstring)."""
    if table.is_acid:
        return ()
    if partition is None:
        marked = stats_accuracy.mark_columns(table.parameters, columns)
        if marked == table.parameters:
            return ()
        return (await catalog.alter_table(conn, table.db_name, table.name, replace(table, parameters=marked))).events
    marked = stats_accuracy.mark_columns(partition.parameters, columns)
    if marked == partition.parameters:
        return ()
    return (await catalog.alter_partitions(conn, table.db_name, table.name,
                                           [replace(partition, parameters=marked)])).events


@dataclass(frozen=True, slots=True)
class StatsUpdate:
    """A write of some columns' statistics of a table (`part_name` None) or of one of its partitions."""

    db_name: str
    table_name: str
    part_name: str | None
    stats: tuple[ColumnStats, ...]
    merge_old: bool = False  # merge into the old statistics (`merge`) rather than replace them
    txn_id: int = 0  # the open txn they are written under (visible at its commit); 0: at once


async def update_all(conn: asyncpg.Connection, updates: Sequence[StatsUpdate],
                     now_s: int) -> Outcome[list[tuple[str, str]]]:
    """Several writes, all or nothing (Hive's set_aggr_stats_for). Answers the (database, table) names
    whose table or partitions the writes altered (marking their statistics accurate)."""
    events: list[NewEvent] = []
    for u in updates:
        events.extend(await update(conn, u.db_name, u.table_name, u.part_name, u.stats, now_s, merge_old=u.merge_old,
                                   txn_id=u.txn_id))
    return Outcome(list(dict.fromkeys((e.db_name, e.table_name) for e in events)), tuple(events))


async def written_with(conn: asyncpg.Connection, written: Outcome[T], updates: Sequence[StatsUpdate],
                       now_s: int) -> Outcome[T]:
    """A write of tables or partitions and the statistics sent with them (Hive 4's create_table and
    add_partitions with colStats), in its transaction: statistics refused leave nothing written. The
    marking's events come after the write's."""
    if not updates:
        return written
    return Outcome(written.value, written.events + (await update_all(conn, updates, now_s)).events)


async def delete(conn: asyncpg.Connection, db_name: str, table_name: str, part_name: str | None,
                 column: str | None) -> None:
    """Delete one column's statistics (every column's when `column` is None) of the table or a
    partition; NotFound when the column had none, or the partition does not exist. Every column's of
    a table or partition that has none deletes nothing and succeeds, as in Hive 2.3."""
    table = await catalog.get_table(conn, db_name, table_name, lock="share")
    key = TABLE_LEVEL if part_name is None else catalog.canonical_names(table, [part_name])[0]
    wanted = None if column is None else n.normalize_column_name(column)
    status = await conn.execute(sql.DELETE, table.table_id, key, wanted)
    if status == "DELETE 0" and wanted is None:
        if part_name is not None:
            await _locked_partition(conn, table, part_name)  # NotFound when it does not exist
        return
    if status == "DELETE 0":
        of = f"partition {key} of table {table.full_name}" if part_name is not None else f"table {table.full_name}"
        raise NotFound(f"no column statistics {'for column ' + wanted + ' ' if wanted else ''}of {of}")


async def delete_many(conn: asyncpg.Connection, db_name: str, table_name: str, part_names: Sequence[str],
                      columns: Sequence[str], *, table_level: bool) -> None:
    """Hive 4's delete_column_statistics_req, all or nothing: the named columns' statistics (every column's
    when none are named) of the table's own (`table_level`, or an unpartitioned table: as Hive's HMSHandler
    reads the request) or of the named partitions (every partition's when none are named). A transactional
    table is refused, as Hive 4 refuses it: its statistics are versioned by write id, and a delete outside
    a txn would change what open snapshots read. A named partition that does not exist, or a named column
    that had statistics in none of them, is NotFound, as the older calls answer one such."""
    table = await catalog.get_table(conn, db_name, table_name, lock="share")
    if table.is_acid:
        raise NeverAllowed(f"Cannot delete stats via this API for a transactional table ({table.full_name}): its "
                           "statistics are versioned by write id; write new ones under a txn instead")
    own = table_level or not table.is_partitioned
    keys: list[str] | None = [TABLE_LEVEL]
    if not own:
        keys = catalog.canonical_names(table, part_names) if part_names else None
        if keys:
            found = {r["part_name"] for r in await catalog.lock_partitions(conn, table, keys)}
            if missing := [k for k in keys if k not in found]:
                raise NotFound(f"partition(s) {', '.join(missing[:5])} of table {table.full_name} do not exist")
    wanted = _columns(columns) or None
    deleted = {r["column_name"] for r in await conn.fetch(sql.DELETE_MANY, table.table_id, keys, wanted)}
    if wanted and (none := [c for c in wanted if c not in deleted]):
        of = f"table {table.full_name}" if own else f"the partitions of table {table.full_name} named"
        raise NotFound(f"no column statistics for column(s) {', '.join(none[:5])} of {of}")


# -- reads -----------------------------------------------------------------------------------------

def _columns(columns: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(n.normalize_column_name(c) for c in columns))


async def _table_read(conn: asyncpg.Connection, db_name: str, table_name: str, snapshot: ReadSnapshot | None) -> Table:
    table = await catalog.get_table(conn, db_name, table_name)
    if snapshot is not None:
        snapshot.check_table_name(table.full_name)
        catalog.check_table_id(table, snapshot.expected_table_id)
    return table


def _lookup_names(table: Table, part_names: Sequence[str]) -> list[tuple[str, bool]]:
    """Each name as a read of statistics by name looks it up, and whether it fits a partition of the table
    (hive/names.py `statistics_lookup_name`: Hive's conversion; one that fits none finds nothing)."""
    if not part_names:
        return []
    catalog.require_partitioned(table)
    return [n.statistics_lookup_name(table.partition_keys, name) for name in part_names]


async def _rows(conn: asyncpg.Connection, table: Table, part_names: list[str], columns: list[str],
                snapshot: ReadSnapshot | None) -> list[asyncpg.Record]:
    """The rows a reader sees: with a ValidWriteIdList, by the rule of store/snapshot.py
    (`statistics_seen`); without one, the committed rows."""
    if snapshot is None or snapshot.write_ids is None:
        return list(await conn.fetch(sql.SELECT, table.table_id, part_names, columns))
    own_write_id = await txns.write_id_of(conn, snapshot.txn_id, table.table_id)
    return list(await conn.fetch(sql.SELECT_IN_SNAPSHOT, table.table_id, part_names, columns,
                                 *sql_params(snapshot.write_ids, own_write_id)))


async def table_stats(conn: asyncpg.Connection, db_name: str, table_name: str, columns: Sequence[str],
                      snapshot: ReadSnapshot | None = None) -> list[ColumnStats]:
    """The table's own statistics of the named columns that have them, in the table's column order, as
    `snapshot` sees them (None: the committed ones)."""
    table = await _table_read(conn, db_name, table_name, snapshot)
    rows = await _rows(conn, table, [TABLE_LEVEL], _columns(columns), snapshot)
    return _in_column_order(table, [_from_row(r) for r in rows])


async def partition_stats(conn: asyncpg.Connection, db_name: str, table_name: str, part_names: Sequence[str],
                          columns: Sequence[str], snapshot: ReadSnapshot | None = None) -> dict[str, list[ColumnStats]]:
    """Partition name -> its statistics of the named columns, for the named partitions that have any,
    as `snapshot` sees them (None: the committed ones); a name that fits no partition finds none."""
    table = await _table_read(conn, db_name, table_name, snapshot)
    names = list(dict.fromkeys(name for name, fits in _lookup_names(table, part_names) if fits))
    rows = await _rows(conn, table, names, _columns(columns), snapshot)
    by_partition: dict[str, list[ColumnStats]] = {}
    for row in rows:
        by_partition.setdefault(row["part_name"], []).append(_from_row(row))
    return {name: _in_column_order(table, by_partition[name]) for name in names if name in by_partition}


async def aggregate_partition_stats(conn: asyncpg.Connection, db_name: str, table_name: str,
                                    part_names: Sequence[str], columns: Sequence[str],
                                    snapshot: ReadSnapshot | None = None) -> tuple[list[ColumnStats], int]:
    """Hive's get_aggr_stats_for: the named columns' statistics over the named partitions, and how many of
    those have statistics of every named column (store/stats_aggregation.py), as `snapshot` sees them."""
    table = await _table_read(conn, db_name, table_name, snapshot)
    if not part_names or not columns:
        return [], 0
    # Repeats kept; a name that fits no partition counts as one asked for that has none (as Hive counts it).
    asked = [name for name, _ in _lookup_names(table, part_names)]
    asked_columns = [n.normalize_column_name(c) for c in columns]
    rows = await _rows(conn, table, list(dict.fromkeys(asked)), _columns(columns), snapshot)
    by_partition: dict[str, dict[str, ColumnStats]] = {}
    for row in rows:
        by_partition.setdefault(row["part_name"], {})[row["column_name"]] = _from_row(row)
    return stats_aggregation.aggregate(asked, asked_columns, by_partition)
