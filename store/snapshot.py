"""What a read must be consistent with, and the visibility rule for versioned metadata.

This module owns the rule. A version (created_wid, dropped_wid) is visible to a snapshot when its
creating write id is committed in the snapshot and its dropping write id (if any) is not. The
reader's own write id counts as committed for it (read-your-own-writes). Write id 0 marks
non-transactional writes, committed for everyone.

Its other form: `VISIBLE` in store/sql/catalog.py, the same rule as a SQL predicate (parameters
from `sql_params`), since partition reads filter in PostgreSQL. tests/e2e/test_visibility_rule.py
evaluates both over a grid of versions, snapshots and own write ids, so they cannot drift. (The
cache's entries apply the rule once more in store/cache/; that copy is not yet tied to this one.)

Column statistics (store/column_stats.py) follow the same rule, `statistics_seen`, with their own
versions: a committed row is created by write id 0; a row a txn wrote and that waits for its commit
(column_stats_by_txn) by that txn's write id of the table; a row a txn's drop marked (deleted_by_txn)
ends at that txn's write id. A reader with a ValidWriteIdList sees the newest visible version of a
column, so the writing txn itself, whose own write id its list counts as committed (Hive's
getValidWriteIds), sees what it wrote and not what it dropped, and every other snapshot the committed
rows. This is Hive's rule for statistics (ObjectStore.isCurrentStatsValidForTheQuery: they are valid
for a query when the write id that wrote them is valid in its list), except that where Hive reports
them as not compliant the gateway answers the version the snapshot may see. The statistics are not
kept per snapshot beyond that: a commit moves its rows in for every reader, older snapshots included.
Its SQL form is SELECT_IN_SNAPSHOT in store/sql/column_stats.py (built on `VISIBLE`); a reader without
a ValidWriteIdList reads the committed rows (Hive 2.3 and Trino).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

from store.errors import FailedPrecondition, InvalidArgument
from hive.writeids import ValidWriteIdList


@dataclass(frozen=True, slots=True)
class ReadSnapshot:
    """A read's context: the caller's ValidWriteIdList for the table (None: latest), its txn id
    (its own uncommitted writes are visible to it), and the table id it expects (0: any).

    `latest_committed` is for callers that carry no snapshot at all (Hive 2.3 clients and Trino over
    Thrift): the read takes one itself, so a transactional table answers what is committed now,
    never uncommitted versions, where a read without a ValidWriteIdList would be refused."""

    write_ids: ValidWriteIdList | None = None
    txn_id: int = 0
    expected_table_id: int = 0
    latest_committed: bool = False

    @classmethod
    def parse(cls, valid_write_id_list: str, txn_id: int = 0, expected_table_id: int = 0) -> "ReadSnapshot":
        if txn_id < 0 or expected_table_id < 0:
            raise InvalidArgument("txn_id and table_id must not be negative")
        write_ids = ValidWriteIdList.parse(valid_write_id_list) if valid_write_id_list else None
        return cls(write_ids, txn_id, expected_table_id)

    def check_table_name(self, full_name: str) -> None:
        if self.write_ids is not None and self.write_ids.table_name not in (None, full_name):
            raise InvalidArgument(
                f"the ValidWriteIdList is for table {self.write_ids.table_name} but the request reads {full_name}"
            )


# A query's snapshot arrives with each of its many reads, so each form is parsed once: a memo bounded by
# entries and by size. A ValidWriteIdList names every open and aborted write id of its table (thousands
# where aborted writes wait for the cleaner), and parsed it takes about ten times its length: a memo of
# 1024 such lists held some 250 MiB (`make soak-memory`, 2026-11-30). Short lists, the common case, share a
# memo of 1024 (at most ~5 MiB); long ones one of 8 (~7 MiB); longer ones are parsed at each read, a cost
# in proportion to what the caller sent.
SHORT_LIST_CHARS = 512
LONG_LIST_CHARS = 64 * 1024
_parse_short = functools.lru_cache(maxsize=1024)(ReadSnapshot.parse)
_parse_long = functools.lru_cache(maxsize=8)(ReadSnapshot.parse)


def parse_snapshot(valid_write_id_list: str, txn_id: int = 0, expected_table_id: int = 0) -> ReadSnapshot:
    """ReadSnapshot.parse, memoized within the bounds above."""
    size = len(valid_write_id_list)
    if size <= SHORT_LIST_CHARS:
        return _parse_short(valid_write_id_list, txn_id, expected_table_id)
    if size <= LONG_LIST_CHARS:
        return _parse_long(valid_write_id_list, txn_id, expected_table_id)
    return ReadSnapshot.parse(valid_write_id_list, txn_id, expected_table_id)


def is_visible(write_ids: ValidWriteIdList, own_write_id: int, created_wid: int, dropped_wid: int | None) -> bool:
    def committed(w: int) -> bool:
        return w == own_write_id or w == 0 or write_ids.is_write_id_valid(w)

    return committed(created_wid) and (dropped_wid is None or not committed(dropped_wid))


def statistics_seen(write_ids: ValidWriteIdList, own_write_id: int,
                    versions: Sequence[tuple[int, int | None]]) -> int | None:
    """Of one column's statistics versions (created_wid, dropped_wid), the index of the one the snapshot
    sees (the module's docstring): the visible one created by the newest write id; None: none visible."""
    seen = [(created, i) for i, (created, dropped) in enumerate(versions)
            if is_visible(write_ids, own_write_id, created, dropped)]
    return max(seen)[1] if seen else None


def sql_params(write_ids: ValidWriteIdList, own_write_id: int) -> tuple[int, list[int], int]:
    """(hwm, exceptions, own write id) for `VISIBLE` in store/sql/catalog.py; -1 stands for no own write id."""
    exceptions = [w for w in write_ids.exceptions if w != own_write_id]
    return write_ids.high_watermark, exceptions, own_write_id or -1


def check_not_too_old(full_name: str, write_ids: ValidWriteIdList, gc_watermark: int) -> None:
    """Versions ended by write ids <= gc_watermark were garbage-collected. A snapshot to which one of
    those write ids is not committed would need a deleted version: refuse rather than answer wrong.
    Aborted write ids do not count: their versions were discarded at abort."""
    if gc_watermark <= 0:
        return
    open_below = [w for w in write_ids.exceptions if w <= gc_watermark and not write_ids.is_write_id_aborted(w)]
    if write_ids.high_watermark < gc_watermark or open_below:
        raise FailedPrecondition(
            f"snapshot too old for {full_name}: versions up to write id {gc_watermark} were garbage-collected after "
            f"this snapshot ({write_ids.to_string()}) was taken; "
            "take a new snapshot (inside a txn, snapshots stay valid)"
        )
