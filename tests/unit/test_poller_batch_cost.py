"""A poller batch that decides many write ids of one table (an abort_txns of many txns that each wrote it: one
ABORT_TXN event per txn) costs in proportion to them. Before, each decision copied the table's set of open and
aborted write ids (CommittedWriteIds is frozen), so a batch of 20,000 aborts took seconds on the event loop,
holding up every call of the gateway (a get_valid_write_ids after the abort_txns of 20,000 txns: 10.9 s). And
each abort looked at every partition the batch had touched, so a batch of txns that each added partitions
and were then aborted was quadratic too (5,000 such txns: 6.4 ms a txn, 32 s in one step)."""

from __future__ import annotations

import json
import time
from typing import Any

from hive.writeids import ValidWriteIdList
from loadtest.profile_poller import CODEC
from poller.apply import TableBatch
from store import codec
from store.cache.entry import CommittedWriteIds, TableEntry, Version, build_entry
from store.events import EventType
from store.models import FieldSchema, NotificationEvent, Partition, Table


def _entry(partitions: int = 0) -> TableEntry:
    """Table db.t (transactional), with partitions q=0.. committed by write id 1."""
    table = Table(db_name="db", name="t", transactional=True, partition_keys=(FieldSchema("p", "string"),),
                  table_id=1)
    committed = CommittedWriteIds.from_list(ValidWriteIdList.parse("db.t:1:9223372036854775807::"))
    parts = {f"q={i}": (Version(1, None, CODEC.partition(Partition("db", "t", (str(i),), f"q={i}")), (str(i),)),)
             for i in range(partitions)}
    return build_entry([(Version(0, None, CODEC.table(table)), table)], parts, committed=committed, writers={},
                       gc_watermark=0, applied_event_id=1)


def _outcomes(entry: TableEntry, first_write_id: int, count: int, *, every_commit: int = 0) -> tuple[TableEntry, float]:
    """`entry` after one batch of `count` txn outcomes, write ids `first_write_id` on (each aborted, or every
    `every_commit`-th committed), and the batch's seconds."""
    batch = TableBatch(entry, CODEC)
    started = time.perf_counter()
    for i in range(count):
        write_id = first_write_id + i
        committed = every_commit and i % every_commit == 0
        message = {"write_ids": [{"table_id": 1, "write_id": write_id}]}
        batch.apply(NotificationEvent(entry.applied_event_id + 1 + i, 0,
                                      EventType.COMMIT_TXN if committed else EventType.ABORT_TXN, "db", "t", 1,
                                      write_id + 1000, 0, json.dumps(message)), message)
    new = batch.finish()
    assert new is not None
    return new, time.perf_counter() - started


def test_a_batch_of_many_outcomes_decides_each_as_before() -> None:
    entry, _ = _outcomes(_entry(), 2, 9, every_commit=3)  # write ids 2..10: 2, 5, 8 committed
    assert (entry.committed.hwm, sorted(entry.committed.open_or_aborted), sorted(entry.committed.aborted)) == (
        10, [3, 4, 6, 7, 9, 10], [3, 4, 6, 7, 9, 10])
    # Ids the batch skips past are open or unknown until decided (CommittedWriteIds._raise_hwm).
    entry, _ = _outcomes(entry, 14, 2, every_commit=1)
    opened = entry.committed.open_or_aborted - entry.committed.aborted
    assert (entry.committed.hwm, sorted(opened)) == (15, [11, 12, 13])
    assert entry.committed_list.exceptions == (3, 4, 6, 7, 9, 10, 11, 12, 13)


def test_a_batch_of_many_aborts_costs_in_proportion_to_them() -> None:
    _outcomes(_entry(), 2, 100)  # warm up
    small = _outcomes(_entry(), 2, 2_000)[1] / 2_000
    large = _outcomes(_entry(), 2, 20_000)[1] / 20_000
    # Linear: the same per abort within noise (before: 10x and more, each abort copying every earlier one).
    assert large < 4 * small + 5e-6, f"{large * 1e6:.1f} µs per abort against {small * 1e6:.1f}"


def _writes_then_outcomes(entry: TableEntry, count: int) -> tuple[TableEntry, float]:
    """`entry` after one batch in which txn i (write id i + 2) adds p=i and drops q=i, then each txn ends:
    the even ones committed, the odd ones aborted; and the batch's seconds."""
    batch = TableBatch(entry, CODEC)
    events: list[tuple[str, int, dict[str, Any]]] = []
    for i in range(count):
        added = {"partitions": [codec.partition_to_json(Partition("db", "t", (str(i),), f"p={i}"))]}
        events += [(EventType.ADD_PARTITION, i, added), (EventType.DROP_PARTITION, i, {"partition_names": [f"q={i}"]})]
    for i in range(count):
        ended = EventType.COMMIT_TXN if i % 2 == 0 else EventType.ABORT_TXN
        events.append((ended, i, {"write_ids": [{"table_id": 1, "write_id": i + 2}]}))
    started = time.perf_counter()
    for event_id, (kind, i, message) in enumerate(events, start=entry.applied_event_id + 1):
        write_id = 0 if kind in (EventType.COMMIT_TXN, EventType.ABORT_TXN) else i + 2
        batch.apply(NotificationEvent(event_id, 0, kind, "db", "t", 1, i + 1000, write_id, json.dumps(message)),
                    message)
    new = batch.finish()
    assert new is not None
    return new, time.perf_counter() - started


def test_an_aborted_txns_writes_in_the_same_batch_are_discarded_and_no_others() -> None:
    entry, _ = _writes_then_outcomes(_entry(6), 6)
    assert sorted(name for name, v in entry.live.versions.items()) == ["p=0", "p=2", "p=4", "q=1", "q=3", "q=5"]
    assert [v.created_wid for v in entry.partitions["q=1"]] == [1] and entry.partitions["q=1"][0].dropped_wid is None
    assert [(v.created_wid, v.dropped_wid) for v in entry.partitions["q=2"]] == [(1, 4)]  # committed drop
    assert "p=1" not in entry.partitions


def test_a_batch_of_many_writes_and_aborts_costs_in_proportion_to_them() -> None:
    _writes_then_outcomes(_entry(100), 100)  # warm up
    small = _writes_then_outcomes(_entry(500), 500)[1] / 500
    large = _writes_then_outcomes(_entry(5_000), 5_000)[1] / 5_000
    # Linear: the same per txn within noise (before: each abort looked at every partition written so far).
    assert large < 4 * small + 20e-6, f"{large * 1e6:.1f} µs per txn against {small * 1e6:.1f}"
