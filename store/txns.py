"""Transactions and per-table write ids, after Hive's TxnHandler (hive-reference §3, §5).

Design note. Txn ids come from one locked counter row, so they are handed out in order and the
snapshot high-water mark is `next - 1`. Committed txns keep their row (state 'c') until
housekeeping removes those below the low-water mark; open and aborted rows are what a snapshot
lists. Write ids are per table (keyed by the stable table_id) and allocated by one upsert on the
table's counter row. Aborting a txn discards the metadata versions it wrote, in the same database
transaction, so no reader can ever see them. Every function takes a connection inside the
caller's transaction; a write returns an `Outcome` with its events, which `Database.transact`
appends last. Open, allocate and commit run as server-side functions (store/schema/0007); their
`*_logged` forms are the whole RPC in one statement, its event appended in it, for `Database.run`,
and their batch forms the same for several concurrent calls (store/group_commit.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Collection, Mapping, Sequence

import asyncpg

from store.errors import (Aborted, FailedPrecondition, InvalidArgument, NotFound, StoreError, TableNotFound,
                          WriteConflict)
from store.events import EventType, NewEvent, Outcome, Written
from store.models import Table, TableType
from store.sql import locks as lock_sql
from hive import limits, names
from store.snapshot import is_visible
from store.sql import catalog as catalog_sql
from store.sql import column_stats as stats_sql
from store.sql import privileges as privileges_sql
from store.sql import txns as sql
from store.sql import write_set as write_set_sql
from hive.writeids import ValidTxnList, ValidWriteIdList, build_valid_txn_list, build_valid_write_id_list

OPEN, COMMITTED, ABORTED = "o", "c", "a"
READ_ONLY = "r"  # a server-side function's refused_state for an open txn opened READ_ONLY (store/schema/0024)
# Hive 4's TxnType values (hive_metastore.thrift): the kinds of txn a client may open.
DEFAULT_TXN_TYPE, READ_ONLY_TXN_TYPE = 0, 2
TXN_TYPES = {0: "DEFAULT", 1: "REPL_CREATED", 2: "READ_ONLY", 3: "COMPACTION", 4: "MATER_VIEW_REBUILD",
             5: "SOFT_DELETE", 6: "REBALANCE_COMPACTION"}
_STATE_NAMES = {OPEN: "OPEN", COMMITTED: "COMMITTED", ABORTED: "ABORTED"}


@dataclass(frozen=True, slots=True)
class TxnInfo:
    """One row of SHOW TRANSACTIONS."""

    txn_id: int
    state: str
    txn_type: int
    started_ms: int
    last_heartbeat_ms: int
    user: str
    host: str
    agent_info: str


@dataclass(frozen=True, slots=True)
class TableWriteIds:
    full_table_name: str
    table_id: int
    valid_write_ids: ValidWriteIdList


@dataclass(frozen=True, slots=True)
class OpenRequest:
    """One OpenTxns call: `count` txns for a checked identity (check_client_identity)."""

    count: int
    user: str
    host: str
    agent_info: str
    txn_type: int = DEFAULT_TXN_TYPE


@dataclass(frozen=True, slots=True)
class AllocateRequest:
    """One AllocateTableWriteIds call, names normalized (allocate_request), txn ids sorted and distinct."""

    db_key: str
    tbl_key: str
    txn_ids: tuple[int, ...]

    @property
    def full_name(self) -> str:
        return f"{self.db_key}.{self.tbl_key}"


def _batch_event_ids(rows: Sequence[asyncpg.Record]) -> list[tuple[int, ...]]:
    """Each row's event ids in a batch statement's answer: the logged rows took consecutive ids
    from the batch's first one, in row order (store/sql/events.py append_row_events)."""
    next_id: int = rows[0]["first_event_id"] if rows else 0
    out: list[tuple[int, ...]] = []
    for row in rows:
        if row["logged"]:
            out.append((next_id,))
            next_id += 1
        else:
            out.append(())
    return out


# -- open / commit / abort ------------------------------------------------------------------------


async def open_txns(
    conn: asyncpg.Connection, count: int, *, user: str, host: str, agent_info: str, txn_type: int = 0
) -> Outcome[list[int]]:
    check_client_identity(user, host, agent_info)
    row = await conn.fetchrow(sql.OPEN_TXNS, count, txn_type, user, host, agent_info)
    return Outcome(_txn_range(row), (NewEvent(EventType.OPEN_TXN, message=row["message"]),))


async def open_txns_logged(conn: asyncpg.Connection, request: OpenRequest) -> Written[list[int]]:
    """open_txns with its event, in one statement that commits by itself (Database.run)."""
    row = await conn.fetchrow(sql.OPEN_TXNS_LOGGED, request.count, request.txn_type, request.user, request.host,
                              request.agent_info, EventType.OPEN_TXN.value)
    return Written(_txn_range(row), (row["first_event_id"],))


async def open_txns_batch_logged(conn: asyncpg.Connection,
                                 requests: Sequence[OpenRequest]) -> list[Written[list[int]] | Exception]:
    """open_txns_logged for several calls in one statement (store/group_commit.py)."""
    rows = await conn.fetch(sql.OPEN_TXNS_BATCH_LOGGED, [r.count for r in requests], [r.user for r in requests],
                            [r.host for r in requests], [r.agent_info for r in requests], EventType.OPEN_TXN.value,
                            [r.txn_type for r in requests])
    return [Written(_txn_range(row), ids) for row, ids in zip(rows, _batch_event_ids(rows), strict=True)]


def _txn_range(row: asyncpg.Record) -> list[int]:
    return list(range(row["first_txn_id"], row["last_txn_id"] + 1))


def check_client_identity(user: str, host: str, agent_info: str) -> None:
    """Who opened a txn or asked for a lock: shown by ShowTransactions / ShowLocks for every row, so
    bounded (Hive's TXN_USER / TXN_HOST / TXN_AGENT_INFO columns, hive/limits.py)."""
    limits.check_text(user, "user", limits.NAME)
    limits.check_text(host, "hostname", limits.HOST)
    limits.check_text(agent_info, "agent_info", limits.AGENT_INFO)


async def count_open_txns(conn: asyncpg.Connection) -> int:
    return int(await conn.fetchval(sql.COUNT_OPEN_TXNS))


async def _forgotten_state(conn: asyncpg.Connection, txn_id: int) -> str:
    """The state of a txn whose row was not found, read in a statement after the one that did not
    find it (so a deletion that statement waited for is seen with its marks)."""
    marks = await conn.fetchrow(sql.FORGOTTEN_MARKS)
    return _forgotten(txn_id, marks["t2w_cleaned_below"], marks["aborted_forgotten_upto"])


def _forgotten(txn_id: int, cleaned_below: int, aborted_forgotten_upto: int) -> str:
    """The state of a txn whose row is gone. Housekeeping deletes committed txns below the
    low-water mark it recorded, and aborted txns that wrote nothing (store/housekeeping.py), the
    highest of which it records too. Above that one, a txn below the mark was committed; at or
    below it, it was committed or aborted, and a guess either way would mislead the client (a
    commit answered as done that never was, or work redone that was committed): NotFound, as
    Hive's NoSuchTxnException for a txn its cleaners removed. Raises NotFound otherwise."""
    if 0 < txn_id <= aborted_forgotten_upto:
        raise NotFound(f"txn {txn_id} ended long ago and is forgotten: it committed, or it was aborted having written "
                       "nothing; its outcome is no longer kept (hive.txn.timeout after an abort)")
    if 0 < txn_id < cleaned_below:
        return COMMITTED
    raise NotFound(f"txn {txn_id} does not exist")


def _aborted_message(txn_id: int) -> str:
    return (f"txn {txn_id} was aborted (by AbortTxns, a write conflict, or the time-out reaper after "
            "hive.txn.timeout without a heartbeat); start a new transaction")


async def is_open(conn: asyncpg.Connection, txn_id: int) -> bool:
    row = await conn.fetchrow(sql.SELECT_TXN_STATES, [txn_id])
    return row is not None and row["state"] == OPEN


async def commit_txn(conn: asyncpg.Connection, txn_id: int) -> Outcome[None]:
    """Commit; no event when it was already committed (commit is idempotent, as in Hive 4). The
    rules (commit id, locks released) are the commit_txn function's (store/schema/0007)."""
    row = await conn.fetchrow(sql.COMMIT_TXN, txn_id)
    if not await _committed_now(conn, txn_id, row):
        return Outcome(None)
    return Outcome(None, (NewEvent(EventType.COMMIT_TXN, txn_id=txn_id, message=row["message"]),))


# (database, table) of each table whose writes a commit made visible (the committing gateway holds its
# reads of them until it has applied the commit: store/cache/facade.py ended_txn).
WrittenTables = tuple[tuple[str, str], ...]


def _written_tables(row: asyncpg.Record) -> WrittenTables:
    written = row["written"]
    if not written or written == "[]":
        return ()
    return _written_of(json.loads(written))


def _written_of(write_ids: Sequence[dict[str, Any]]) -> WrittenTables:
    """The tables of a COMMIT_TXN message's write ids ('' for a table dropped since: left out)."""
    return tuple((w["db_name"], w["table_name"]) for w in write_ids if w.get("db_name") and w.get("table_name"))


async def commit_txn_written(conn: asyncpg.Connection, txn_id: int) -> Outcome[WrittenTables]:
    """commit_txn with the tables whose writes it made visible (commit_txn_logged's, for a commit inside
    a transaction of more: store/catalog.py commit_with_table_parameter)."""
    committed = await commit_txn(conn, txn_id)
    return Outcome(_written_of([w for e in committed.events for w in e.message.get("write_ids", [])]),
                   committed.events)


async def commit_txn_logged(conn: asyncpg.Connection, txn_id: int) -> Written[WrittenTables]:
    """commit_txn with its event, in one statement that commits by itself (Database.run)."""
    row = await conn.fetchrow(sql.COMMIT_TXN_LOGGED, txn_id, EventType.COMMIT_TXN.value)
    return Written(_written_tables(row), (row["first_event_id"],) if await _committed_now(conn, txn_id, row) else ())


async def commit_txns_logged(conn: asyncpg.Connection,
                             txn_ids: Sequence[int]) -> list[Written[WrittenTables] | Exception]:
    """commit_txn_logged for several calls in one statement (store/group_commit.py); a txn that could
    not be committed is its call's error. Committed in txn-id order, the order every writer of
    several txn rows locks them in, so two batches cannot deadlock on them."""
    order = sorted(range(len(txn_ids)), key=txn_ids.__getitem__)
    rows = await conn.fetch(sql.COMMIT_TXNS_LOGGED, [txn_ids[i] for i in order], EventType.COMMIT_TXN.value)
    answers: dict[int, Written[WrittenTables] | Exception] = {}
    for i, row, ids in zip(order, rows, _batch_event_ids(rows), strict=True):
        try:
            await _committed_now(conn, txn_ids[i], row)
            answers[i] = Written(_written_tables(row), ids)
        except StoreError as exc:
            answers[i] = exc
    return [answers[i] for i in range(len(txn_ids))]


async def _committed_now(conn: asyncpg.Connection, txn_id: int, row: asyncpg.Record) -> bool:
    """Whether the commit function committed the txn (False: it was committed before); raises
    when it could not (aborted, no such txn, or a write-set conflict: then the txn is still open,
    and the caller aborts it)."""
    state = row["prior_state"] or await _forgotten_state(conn, txn_id)
    if state == ABORTED:
        raise Aborted(_aborted_message(txn_id))
    if state == OPEN and row["write_conflict"] is not None:
        raise _write_set_conflict(txn_id, row["write_conflict"])
    return state == OPEN


_DID = {"u": "updated", "d": "deleted"}


def _write_set_conflict(txn_id: int, found: dict[str, Any]) -> WriteConflict:
    """Hive's "Aborting [txn] due to a write conflict on db/table/partition committed by [txn]"."""
    table = f"{found['db_name']}.{found['table_name']}"
    what = f"partition {found['part_name']} of {table}" if found["part_name"] is not None else f"table {table}"
    return WriteConflict(
        f"write conflict: txn {txn_id} {_DID[found['operation']]} {what}, which txn {found['txn_id']} "
        f"{_DID[found['committed_operation']]} and committed after txn {txn_id} started (first committer wins, "
        "as Hive's write-set check)", txn_id)


async def abort_txns(conn: asyncpg.Connection, txn_ids: Sequence[int], *, reason: str = "",
                     skip_ended: bool = False) -> Outcome[list[int]]:
    """Abort open txns and discard every metadata version they wrote. Already aborted txns are a
    no-op; a committed or unknown txn fails the whole call, unless `skip_ended` (Hive's abort_txns:
    the open ones are aborted, the others only skipped). The txns aborted, one ABORT_TXN each."""
    rows = {r["txn_id"]: r["state"] for r in await conn.fetch(sql.SELECT_TXNS_FOR_UPDATE, sorted(set(txn_ids)))}
    missing: dict[int, NotFound] = {}
    for t in sorted(set(txn_ids) - rows.keys()):
        try:
            rows[t] = await _forgotten_state(conn, t)
        except NotFound as exc:
            missing[t] = exc  # never opened, or ended and forgotten: the message says which
    if missing and not skip_ended:
        shown = [str(exc) for exc in list(missing.values())[:3]]
        more = f"; and {len(missing) - 3} more txn(s) not found" if len(missing) > 3 else ""
        raise NotFound(f"{'; '.join(shown)}{more}; nothing was aborted")
    committed = sorted(t for t, s in rows.items() if s == COMMITTED)
    if committed and not skip_ended:
        raise FailedPrecondition(f"txn(s) {', '.join(map(str, committed))} already committed; nothing was aborted")
    to_abort = sorted(t for t, s in rows.items() if s == OPEN)
    if not to_abort:
        return Outcome([])
    write_ids = {r["txn_id"]: r["write_ids"] for r in await conn.fetch(sql.TXNS_WRITE_IDS, to_abort)}
    await discard_versions(conn, [(w["table_id"], w["write_id"]) for t in to_abort for w in write_ids[t]])
    await conn.execute(sql.MARK_ABORTED, to_abort)
    if wrote := [t for t in to_abort if write_ids[t]]:  # what their writes would have deleted stays,
        await conn.execute(stats_sql.UNMARK_ABORTED, wrote)  # and the statistics they wrote go
        await conn.execute(stats_sql.UNMARK_WAITING_ABORTED, wrote)
        await conn.execute(privileges_sql.UNMARK_ABORTED, wrote)
        await conn.execute(stats_sql.DELETE_ABORTED_BY_TXN, wrote)
    await conn.execute(sql.DELETE_MIN_HISTORY, to_abort)
    await conn.execute(write_set_sql.DELETE_TXN_COMPONENTS, to_abort)
    await release_txn_locks(conn, to_abort)
    return Outcome(to_abort, tuple(
        NewEvent(EventType.ABORT_TXN, txn_id=t, message={"txn_id": t, "write_ids": write_ids[t], "reason": reason})
        for t in to_abort))


async def discard_versions(conn: asyncpg.Connection, table_write_ids: Sequence[tuple[int, int]]) -> None:
    if not table_write_ids:
        return
    table_ids = [t for t, _ in table_write_ids]
    write_ids = [w for _, w in table_write_ids]
    # Created versions go first: restoring a dropped one must not collide with its replacement
    # on the one-latest-version-per-name index.
    discarded = await conn.fetch(sql.DISCARD_CREATED_PARTITIONS, table_ids, write_ids)
    await conn.execute(sql.RESTORE_DROPPED_PARTITIONS, table_ids, write_ids)
    if discarded:  # statistics and grants written for a partition only this txn added go with it
        vanished = ([r["table_id"] for r in discarded], [r["part_name"] for r in discarded])
        await conn.execute(stats_sql.DELETE_FOR_VANISHED_PARTITIONS, *vanished)
        await conn.execute(stats_sql.DELETE_WAITING_FOR_VANISHED_PARTITIONS, *vanished)
        # Other txns' statistics of a partition this txn added again over one it dropped describe the one it
        # added (store/column_stats.py), even though the abort brings the old one back.
        if added := [r for r in discarded if r["added"]]:
            await conn.execute(stats_sql.DELETE_WAITING_FOR_ADDS_GONE, [r["table_id"] for r in added],
                               [r["part_name"] for r in added], [r["created_wid"] for r in added])
        await conn.execute(privileges_sql.DELETE_FOR_VANISHED_PARTITIONS, *vanished)
    await conn.execute(sql.DISCARD_CREATED_TABLE_VERSIONS, table_ids, write_ids)
    await conn.execute(sql.RESTORE_DROPPED_TABLE_VERSIONS, table_ids, write_ids)


async def release_txn_locks(conn: asyncpg.Connection, txn_ids: Sequence[int]) -> None:
    """Locks taken under a txn end with it (store/locks.py)."""
    await conn.execute(lock_sql.RELEASE_TXN_LOCKS, list(txn_ids))


async def heartbeat(conn: asyncpg.Connection, txn_ids: Sequence[int]) -> tuple[list[int], list[int]]:
    """Refresh open txns; return (aborted, no such) among those that could not be refreshed."""
    if not txn_ids:
        return [], []
    alive = {r["txn_id"] for r in await conn.fetch(sql.HEARTBEAT_TXNS, list(txn_ids))}
    rest = sorted(set(txn_ids) - alive)
    if not rest:
        return [], []
    states = {r["txn_id"]: r["state"] for r in await conn.fetch(sql.SELECT_TXN_STATES, rest)}
    aborted = [t for t in rest if states.get(t) == ABORTED]
    return aborted, [t for t in rest if states.get(t) != ABORTED]


async def require_open(conn: asyncpg.Connection, txn_ids: Sequence[int]) -> None:
    """Lock the txns FOR SHARE (no commit or abort until our transaction ends) and check each is open."""
    states = {r["txn_id"]: r["state"] for r in await conn.fetch(sql.SELECT_TXNS_FOR_SHARE, sorted(set(txn_ids)))}
    for t in txn_ids:
        state = states.get(t) or await _forgotten_state(conn, t)
        if state == ABORTED:
            raise Aborted(_aborted_message(t))
        if state == COMMITTED:
            raise FailedPrecondition(f"txn {t} is already committed; start a new transaction to write")


# -- snapshots --------------------------------------------------------------------------------


async def get_open_txns(conn: asyncpg.Connection, current_txn: int = 0,
                        exclude_types: Collection[int] = ()) -> ValidTxnList:
    """The txn snapshot now (as `current_txn` reads, 0: outside any txn): Hive's getOpenTxns, which
    lists every open and aborted txn up to the high-water mark. Hive 4's excludeTxnTypes leaves out
    the txns of those types (TxnType values; Hive 4 clients name READ_ONLY); minOpenTxn is then the
    smallest open txn left in, where Hive 4's would still name an excluded one (its clients compute
    their own from the list)."""
    hwm = int(await conn.fetchval(sql.TXN_HIGH_WATERMARK))
    if current_txn > hwm:
        raise NotFound(f"txn {current_txn} does not exist (the highest txn id is {hwm})")
    rows = await conn.fetch(sql.NOT_COMMITTED_TXNS, hwm)
    return build_valid_txn_list(hwm, [(r["txn_id"], r["state"] == ABORTED) for r in rows
                                      if r["txn_type"] not in exclude_types], current_txn)


async def txn_list_of_write_id(conn: asyncpg.Connection, full_name: str, write_id: int) -> ValidTxnList:
    """Hive 4's snapshot for a GetValidWriteIdsRequest that names a write id instead of a txn list
    (GetValidWriteIdsFunction): the snapshot of the txn that holds `write_id` of the table, as that
    txn reads (getOpenTxns with it as the current txn). A write id no txn holds (never allocated, or
    its row cleaned away) is InvalidArgument, Hive's MetaException "invalid write id"."""
    db_key, tbl_key = split_full_name(full_name)
    txn_id = await conn.fetchval(sql.TXN_OF_WRITE_ID_BY_NAME, db_key, tbl_key, write_id)
    if txn_id is None:
        raise InvalidArgument(f"invalid write id {write_id} for table {db_key}.{tbl_key}: no txn holds it (never "
                              "allocated, or allocated so long ago that its record was cleaned)")
    return await get_open_txns(conn, int(txn_id))


def split_full_name(full_name: str) -> tuple[str, str]:
    """(database, table) of a `db.table` name, each normalized; InvalidArgument for another shape."""
    db_name, sep, table_name = full_name.partition(".")
    if not sep:
        raise InvalidArgument(f"{full_name!r} is not a full table name (db.table)")
    return names.normalize_identifier(db_name, "database"), names.normalize_identifier(table_name, "table")


async def check_txn_list_not_too_old(conn: asyncpg.Connection, txn_list: ValidTxnList) -> None:
    """Txn-to-write-id rows below the cleaner's low-water mark are gone; a snapshot that did not
    see every txn below it as decided can no longer be mapped to write ids (HIVE-18747).

    First, a snapshot must not reach past the txns that exist: its mark says every txn up to it is
    decided, so txns opened later would count as committed in it while still open (a client's
    made-up or corrupted string, never one GetOpenTxns gave)."""
    hwm = int(await conn.fetchval(sql.TXN_HIGH_WATERMARK))
    if txn_list.high_watermark > hwm:
        raise InvalidArgument(
            f"the ValidTxnList's high-water mark {txn_list.high_watermark} is beyond the highest txn id allocated "
            f"({hwm}): it is not a snapshot GetOpenTxns gave; take one from GetOpenTxns"
        )
    cleaned_below = int(await conn.fetchval(sql.T2W_CLEANED_BELOW))
    if cleaned_below == 0:
        return
    open_below = [t for t in txn_list.exceptions if t < cleaned_below and not txn_list.is_txn_aborted(t)]
    if txn_list.high_watermark < cleaned_below - 1 or open_below:
        raise FailedPrecondition(
            f"snapshot too old: txn history below {cleaned_below} was cleaned after this ValidTxnList was taken "
            "(take snapshots inside an open txn to keep them valid); take a new snapshot"
        )


async def get_valid_write_ids(
    conn: asyncpg.Connection, tables: Sequence[Table], txn_list: ValidTxnList
) -> list[TableWriteIds]:
    """Hive's getValidWriteIds for already resolved tables (hive-reference §3)."""
    await check_txn_list_not_too_old(conn, txn_list)
    return [TableWriteIds(t.full_name, t.table_id, await table_write_ids(conn, t.full_name, t.table_id, txn_list))
            for t in tables]


async def write_ids_by_name(conn: asyncpg.Connection, db_name: str, table_name: str,
                            txn_list: ValidTxnList, *, missing_ok: bool = False) -> TableWriteIds:
    """The table that has this name in the snapshot, and its write ids. The name is resolved in
    the snapshot too: while a rename is uncommitted, other readers still find the old name.

    No table has the name in the snapshot (nor its database): NotFound, or with `missing_ok` what
    Hive's getValidWriteIdsForTable answers, which finds no TXN_TO_WRITE_ID or NEXT_WRITE_ID row
    for the name: write id high-water mark 0, nothing invalid (table id 0)."""
    db_key = names.normalize_identifier(db_name, "database")
    tbl_key = names.normalize_identifier(table_name, "table")
    full_name = f"{db_key}.{tbl_key}"
    versions = await conn.fetch(catalog_sql.SELECT_TABLE_VERSIONS_BY_NAME, db_key, tbl_key)
    lists: dict[int, ValidWriteIdList] = {}
    for row in versions:
        table_id = row["table_id"]
        if table_id not in lists:
            lists[table_id] = await table_write_ids(conn, full_name, table_id, txn_list)
        if is_visible(lists[table_id], 0, row["created_wid"], row["dropped_wid"]):
            return TableWriteIds(full_name, table_id, lists[table_id])
    if missing_ok:
        return TableWriteIds(full_name, 0, ValidWriteIdList(full_name, 0))
    if await conn.fetchrow(catalog_sql.SELECT_DATABASE, db_key) is None:
        raise NotFound(f"database {db_key} does not exist")
    raise NotFound(f"table {full_name} does not exist" + (" in this snapshot" if versions else ""))


async def table_write_ids(conn: asyncpg.Connection, full_name: str, table_id: int,
                          txn_list: ValidTxnList) -> ValidWriteIdList:
    rows = [(r["txn_id"], r["write_id"]) for r in await conn.fetch(
        sql.TABLE_WRITE_ID_ROWS, table_id, txn_list.high_watermark, list(txn_list.exceptions))]
    state = await conn.fetchrow(sql.TABLE_WRITE_ID_STATE, table_id)
    return build_valid_write_id_list(full_name, txn_list, rows, state["next"] if state else None,
                                     state["cleaned_hwm"] if state else 0)


MAX_SHOW_ROWS = 10_000
"""SHOW TRANSACTIONS / SHOW LOCKS answer at most this many rows (plus one, so a caller can tell that
more exist): every list an RPC returns is bounded, and open txns alone may number hive.max.open.txns."""


async def show_transactions(conn: asyncpg.Connection, state: str = "", limit: int = MAX_SHOW_ROWS) -> list[TxnInfo]:
    """Open and aborted txns by id (Hive's SHOW TRANSACTIONS), or those in `state` (OPEN, ABORTED,
    COMMITTED); at most `limit` + 1."""
    bound = min(limit, MAX_SHOW_ROWS) + 1
    if state:
        codes = {name: code for code, name in _STATE_NAMES.items()}
        if state not in codes:
            raise InvalidArgument(f"state must be one of {', '.join(_STATE_NAMES.values())}, got {state[:40]!r}")
        rows = await conn.fetch(sql.SHOW_TRANSACTIONS_IN_STATE, codes[state], bound)
    else:
        rows = await conn.fetch(sql.SHOW_TRANSACTIONS, bound)
    return [TxnInfo(r["txn_id"], _STATE_NAMES[r["state"]], r["txn_type"], r["started_ms"], r["heartbeat_ms"],
                    r["user_name"], r["host"], r["agent_info"]) for r in rows]


# -- write ids --------------------------------------------------------------------------------


async def allocate_write_ids(
    conn: asyncpg.Connection, table: Table, txn_ids: Sequence[int]
) -> Outcome[dict[int, int]]:
    """Write ids of `table` for each txn: reused when the txn has one (idempotent), else allocated
    contiguously in txn-id order. Returns {txn: write id} and the ALLOC_WRITE_ID event, if any."""
    if not table.is_acid:
        raise _not_transactional(table.full_name)
    row = await conn.fetchrow(sql.ALLOCATE_WRITE_IDS, table.table_id, sorted(set(txn_ids)))
    allocated = await _allocated(conn, row)
    if row["message"] is None:
        return Outcome(allocated)
    return Outcome(allocated, (NewEvent(EventType.ALLOC_WRITE_ID, db_name=table.db_name, table_name=table.name,
                                        table_id=table.table_id, message=row["message"]),))


def allocate_request(db_name: str, table_name: str, txn_ids: Sequence[int]) -> AllocateRequest:
    """An AllocateTableWriteIds call with its names normalized; raises InvalidArgument for a bad name."""
    return AllocateRequest(names.normalize_identifier(db_name, "database"),
                           names.normalize_identifier(table_name, "table"), tuple(sorted(set(txn_ids))))


async def allocate_table_write_ids_logged(conn: asyncpg.Connection,
                                          request: AllocateRequest) -> Written[dict[int, int]]:
    """allocate_write_ids on the table that has this name now (its latest version, locked FOR SHARE),
    with its event, in one statement that commits by itself (Database.run)."""
    row = await conn.fetchrow(sql.ALLOCATE_TABLE_WRITE_IDS_LOGGED, request.db_key, request.tbl_key,
                              list(request.txn_ids), EventType.ALLOC_WRITE_ID.value)
    allocated = await _table_allocated(conn, request, row)
    return Written(allocated, (row["first_event_id"],) if row["first_event_id"] else ())


async def allocate_table_write_ids_batch_logged(
    conn: asyncpg.Connection, requests: Sequence[AllocateRequest]
) -> list[Written[dict[int, int]] | Exception]:
    """allocate_table_write_ids_logged for several calls in one statement (store/group_commit.py); a call
    refused (no such table, a txn not open) wrote nothing and gets its error. Run in table-name
    order, the order in which two batches then lock the tables' counter rows, so they cannot deadlock."""
    order = sorted(range(len(requests)), key=lambda i: (requests[i].db_key, requests[i].tbl_key))
    rows = await conn.fetch(
        sql.ALLOCATE_TABLE_WRITE_IDS_BATCH_LOGGED, [requests[i].db_key for i in order],
        [requests[i].tbl_key for i in order], [t for i in order for t in requests[i].txn_ids],
        [call for call, i in enumerate(order, start=1) for _ in requests[i].txn_ids], EventType.ALLOC_WRITE_ID.value)
    answers: dict[int, Written[dict[int, int]] | Exception] = {}
    for i, row, ids in zip(order, rows, _batch_event_ids(rows), strict=True):
        try:
            answers[i] = Written(await _table_allocated(conn, requests[i], row), ids)
        except StoreError as exc:
            answers[i] = exc
    return [answers[i] for i in range(len(requests))]


async def _table_allocated(conn: asyncpg.Connection, request: AllocateRequest, row: asyncpg.Record) -> dict[int, int]:
    """{txn: write id} from allocate_table_write_ids' answer; raises for a table that changed too
    often to lock, does not exist (a read says whether its database does), is not transactional,
    or a txn it refused."""
    if row["relocks_exhausted"]:
        raise Aborted(f"table {request.full_name} changed many times while this write waited for it; retry the write")
    if row["found_table_id"] is None:
        if await conn.fetchrow(catalog_sql.SELECT_DATABASE, request.db_key) is None:
            raise _no_database(request.db_key)
        raise NoTableYet(f"table {request.full_name} does not exist")
    _check_takes_write_ids(row, request.full_name)
    return await _allocated(conn, row)


def _no_database(db_key: str) -> TableNotFound:
    """What an allocation for a table of a database that does not exist answers (Hive: MetaException)."""
    return TableNotFound(f"database {db_key} does not exist")


class NoTableYet(TableNotFound):
    """An allocation for a name no table has, in a database that exists: the name's write ids are reserved
    instead (reserve_write_ids)."""


async def reserve_write_ids(conn: asyncpg.Connection, request: AllocateRequest) -> dict[int, int] | None:
    """Write ids for a table name no table has (write_id_reservations, store/schema/0029), as Hive allocates
    them by name: its CTAS into a transactional table allocates before it creates the table. Numbered from
    1 per name in txn-id order after those reserved before, each txn's own kept (idempotent); the txns
    must be open, as for any allocation. None when a table has the name by now (allocate as usual). The
    table's creation takes them over (catalog.create_table); no event until then: no cache knows the name."""
    await lock_table_name(conn, request.db_key, request.tbl_key)
    # The database's row in KEY SHARE, as a table's creation takes it: a drop of the database, which takes
    # the reservations under it (drop_reservations_of_database), goes before or after, never between.
    if await conn.fetchrow(catalog_sql.SELECT_DATABASE_FOR_KEY_SHARE, request.db_key) is None:
        raise _no_database(request.db_key)
    if await conn.fetchrow(catalog_sql.SELECT_LATEST_TABLE, request.db_key, request.tbl_key) is not None:
        return None
    states = {r["txn_id"]: r["state"] for r in await conn.fetch(sql.TXN_STATES_FOR_SHARE, list(request.txn_ids))}
    for txn_id in request.txn_ids:
        if states.get(txn_id) != OPEN:
            await check_not_refused(conn, {"refused_txn": txn_id, "refused_state": states.get(txn_id)})
    held = {r["txn_id"]: r["write_id"] for r in await conn.fetch(sql.RESERVED_WRITE_IDS, request.db_key,
                                                                    request.tbl_key)}
    fresh = [t for t in request.txn_ids if t not in held]
    first = max(held.values(), default=0) + 1
    if fresh:
        await conn.execute(sql.INSERT_RESERVATIONS, request.db_key, request.tbl_key, fresh, first)
    return {t: held[t] if t in held else first + fresh.index(t) for t in request.txn_ids}


async def lock_table_name(conn: asyncpg.Connection, db_name: str, table_name: str) -> None:
    """The name's lock until the transaction ends: a reservation under a name and the creation of a table of
    that name (which takes the reservations over) happen one after the other."""
    await conn.execute(sql.LOCK_TABLE_NAME, db_name, table_name)


async def take_reserved_write_ids(conn: asyncpg.Connection, table: Table) -> Outcome[None]:
    """At a table's creation, the write ids reserved under its name (reserve_write_ids) become its own,
    with the numbers given, and its next write id the one after; for a table that takes no write ids they
    are dropped. The caller holds the name's lock (lock_table_name, taken by catalog.create_table before it
    inserts the table), so no reservation lands between. The ALLOC_WRITE_ID event."""
    taken = sorted((r["write_id"], r["txn_id"]) for r in await conn.fetch(sql.TAKE_RESERVATIONS, table.db_name,
                                                                          table.name))
    if not taken or not table.is_acid:
        return Outcome(None)
    write_ids, txn_ids = [w for w, _ in taken], [t for _, t in taken]
    # The txns' rows locked as an allocation locks them: a commit or abort of one waits for this creation,
    # and its event then lists the id as this table's. One that ended before had an event that could not:
    # this event says how it ended, or every cache would count the id open for good (and stale every
    # snapshot the database counts it committed in). A row gone is a commit: housekeeping keeps an
    # aborted txn that holds a reservation.
    states = {r["txn_id"]: r["state"] for r in await conn.fetch(sql.TXN_STATES_FOR_SHARE, sorted(set(txn_ids)))}
    await conn.execute(sql.BIND_RESERVATIONS, table.table_id, txn_ids, write_ids)
    message: dict[str, list[int]] = {"txn_ids": txn_ids, "write_ids": write_ids}
    for outcome, state in (("committed", COMMITTED), ("aborted", ABORTED)):
        ended = [w for w, t in taken if states.get(t, COMMITTED) == state]
        if ended:
            message[outcome] = ended
    return Outcome(None, (NewEvent(EventType.ALLOC_WRITE_ID, db_name=table.db_name, table_name=table.name,
                                   table_id=table.table_id, message=message),))


async def drop_reservations_of_database(conn: asyncpg.Connection, db_name: str) -> None:
    """At a database's drop, the write ids reserved under its table names go, as Hive's drop deletes the
    database's TXN_TO_WRITE_ID and NEXT_WRITE_ID rows (TxnHandler.cleanupRecords): no table can take them
    over, and an aborted txn that held one can then be forgotten by housekeeping (it stays listed in every
    snapshot while it holds one). A txn still open that held one writes, if it creates the table in a
    database made again, with write ids that name nothing, as in Hive; the caller holds the database's row,
    and a reservation takes it in KEY SHARE (reserve_write_ids), so none lands after this."""
    await conn.execute(sql.DELETE_RESERVATIONS_OF_DATABASE, db_name)


def _not_transactional(full_name: str) -> InvalidArgument:
    return InvalidArgument(f"table {full_name} is not transactional: write ids exist only for managed tables with "
                           "'transactional'='true'")


def _check_takes_write_ids(row: asyncpg.Record, full_name: str) -> None:
    """A table row's `transactional` and `table_type` say it has write ids (Table.is_acid's rule), or the refusal."""
    if not (row["transactional"] and row["table_type"] == TableType.MANAGED.value):
        raise _not_transactional(full_name)


async def check_not_refused(conn: asyncpg.Connection, row: asyncpg.Record | Mapping[str, Any]) -> None:
    """Raise for the txn a server-side function found not open (its refused_txn and refused_state
    columns: store/schema/0007, 0009), as require_open would; nothing if none."""
    refused = row["refused_txn"]
    if refused is not None:
        state = row["refused_state"] or await _forgotten_state(conn, refused)
        if state == ABORTED:
            raise Aborted(_aborted_message(refused))
        if state == READ_ONLY:
            raise FailedPrecondition(f"txn {refused} was opened READ_ONLY: it takes no write ids (Hive 4: write id "
                                     "allocation is only for open txns that are not read-only); write in a txn "
                                     "opened DEFAULT")
        raise FailedPrecondition(f"txn {refused} is already committed; start a new transaction to write")


async def _allocated(conn: asyncpg.Connection, row: asyncpg.Record) -> dict[int, int]:
    """{txn: write id} from the allocate function's answer; raises for the txn it refused."""
    await check_not_refused(conn, row)
    return dict(zip(row["txn_ids"], row["write_ids"]))


async def write_id_of(conn: asyncpg.Connection, txn_id: int, table_id: int) -> int:
    """The write id `txn_id` holds on the table, 0 when it has none."""
    if not txn_id:
        return 0
    return int(await conn.fetchval(sql.WRITE_ID_OF_TXN, txn_id, table_id) or 0)


async def txn_of_write_id(conn: asyncpg.Connection, table_id: int, write_id: int) -> tuple[int, str | None] | None:
    """The txn that was allocated `write_id` of the table and its state ('o', 'c', 'a'; None: cleaned
    away), or None when no txn holds that write id (never allocated, or its row cleaned away)."""
    row = await conn.fetchrow(sql.TXN_OF_WRITE_ID, table_id, write_id)
    return None if row is None else (row["txn_id"], row["state"])


async def txn_owners(conn: asyncpg.Connection, txn_ids: Sequence[int]) -> dict[int, str]:
    return {r["txn_id"]: r["user_name"] for r in await conn.fetch(sql.TXN_OWNERS, list(txn_ids))}


# -- seeding ------------------------------------------------------------------------------------
# Hive 4's MSCK REPAIR of a transactional table whose files were written elsewhere (a restored backup, a
# table re-created over its directory) reads the largest write id its delta directories name, seeds the table
# with it when the metastore has allocated none, and seeds the txn sequence past the visibility txn ids of
# compacted directories (standalone-metastore's Msck.validateAndAddMaxTxnIdAndWriteId); replication's
# bootstrap load seeds the same way.


async def _latest_acid_table(conn: asyncpg.Connection, db_key: str, tbl_key: str, *,
                             lock: bool) -> asyncpg.Record | None:
    """The latest version of the table of this name (locked FOR SHARE if `lock`), None when there is none;
    raises for a table that is not transactional."""
    row = await conn.fetchrow(catalog_sql.SELECT_LATEST_TABLE_FOR_SHARE if lock else catalog_sql.SELECT_LATEST_TABLE,
                              db_key, tbl_key)
    if row is not None:
        _check_takes_write_ids(row, f"{db_key}.{tbl_key}")
    return row


async def max_allocated_write_id(conn: asyncpg.Connection, db_name: str, table_name: str) -> int:
    """Hive's getMaxAllocatedTableWriteId: the largest write id allocated for the table of this name, 0 when
    none was (Hive reads NEXT_WRITE_ID by name: a name no table has answers the ids reserved under it,
    store/schema/0029, else 0, as a name Hive has no row for)."""
    db_key, tbl_key = names.normalize_identifier(db_name, "database"), names.normalize_identifier(table_name, "table")
    row = await _latest_acid_table(conn, db_key, tbl_key, lock=False)
    if row is None:
        return int(await conn.fetchval(sql.MAX_RESERVED_WRITE_ID, db_key, tbl_key) or 0)
    return int(await conn.fetchval(sql.MAX_ALLOCATED_WRITE_ID, row["table_id"]) or 0)


async def seed_write_id(conn: asyncpg.Connection, db_name: str, table_name: str, seed: int) -> Outcome[None]:
    """Hive's seedWriteId: the table's write ids 1..`seed` count as committed in every snapshot from now
    on (no txn ever held them: a ValidWriteIdList's high-water mark is the table's largest allocated id
    when no txn's row says otherwise, hive/writeids.py build_valid_write_id_list) and its next one is
    `seed` + 1. Only a transactional table that has had no write ids, as Hive's INSERT of its NEXT_WRITE_ID
    row fails on one that has; its WRITE_IDS_SEEDED event tells every cache so."""
    if seed < 1:
        raise InvalidArgument(f"seed_write_id: seedWriteId must be at least 1, got {seed}")
    db_key, tbl_key = names.normalize_identifier(db_name, "database"), names.normalize_identifier(table_name, "table")
    row = await _latest_acid_table(conn, db_key, tbl_key, lock=True)
    if row is None:
        raise TableNotFound(f"seed_write_id: table {db_key}.{tbl_key} does not exist")
    if await conn.fetchval(sql.SEED_WRITE_ID, row["table_id"], seed) is None:
        allocated = int(await conn.fetchval(sql.MAX_ALLOCATED_WRITE_ID, row["table_id"]) or 0)
        raise FailedPrecondition(
            f"seed_write_id: table {db_key}.{tbl_key} has had write ids already (up to {allocated}); only a table "
            "that has had none can be seeded")
    return Outcome(None, (NewEvent(EventType.WRITE_IDS_SEEDED, db_name=db_key, table_name=tbl_key,
                                   table_id=row["table_id"],
                                   message={"table_id": row["table_id"], "seed_write_id": seed}),))


async def seed_txn_id(conn: asyncpg.Connection, seed: int) -> None:
    """Hive's seedTxnId: the next txn opened gets id `seed` at least. Refused, as Hive refuses it ("Invalid
    txnId seed"), when txns up to `seed` were opened already: ids never go back. The ids skipped belong to no
    txn, so every snapshot counts them committed, as Hive's do."""
    if seed < 1:
        raise InvalidArgument(f"seed_txn_id: seedTxnId must be at least 1, got {seed}")
    before = int(await conn.fetchval(sql.SEED_TXN_ID, seed))
    if before - 1 >= seed:
        raise InvalidArgument(f"Invalid txnId seed {seed}, the highWaterMark is {before - 1}")
