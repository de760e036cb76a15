"""What a poller batch costs the event loop on a large cached table, in-process:
`python -m loadtest.profile_poller [--partitions 1000000]`.

Times batches the way the poller applies them (`poller.apply.TableBatch`): one partition altered by
a transaction, that transaction's commit, a partition added (and the first read in name order after
it, which sorts the new name in), and a rename of the table (re-framed up to
poller.apply.RENAME_REFRAME_MAX partitions, dropped from the cache above). Reads on the
gateway wait while a batch runs, so these are the stalls a large table can cause.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

from gateway import wire
from hive.writeids import ValidWriteIdList
from poller.apply import RENAME_REFRAME_MAX, Codec, TableBatch
from store import codec
from store.cache.entry import CommittedWriteIds, TableEntry, Version, build_entry
from store.events import EventType
from store.models import FieldSchema, NotificationEvent, Partition, Table

CODEC = Codec(partition=wire.partition_element, rename_partition=wire.partition_renamer, table=wire.table_message)


def _entry(partitions: int) -> TableEntry:
    table = Table(db_name="db", name="t", transactional=True, partition_keys=(FieldSchema("p", "string"),),
                  table_id=1)
    parts = {}
    for i in range(partitions):
        p = Partition("db", "t", (f"{i:07d}",), f"p={i:07d}")
        parts[p.name] = (Version(1, None, CODEC.partition(p), p.values),)
    committed = CommittedWriteIds.from_list(ValidWriteIdList.parse("db.t:1:9223372036854775807::"))
    return build_entry([(Version(0, None, CODEC.table(table)), table)], parts, committed=committed, writers={},
                       gc_watermark=0, applied_event_id=1)


def _applied(entry: TableEntry, event_id: int, kind: str, message: dict[str, object], write_id: int = 0,
             txn_id: int = 0) -> tuple[TableEntry | None, float]:
    """`entry` after a batch of one event (None: dropped from the cache), and the batch's milliseconds."""
    event = NotificationEvent(event_id, 0, kind, "db", entry.name, entry.table_id, txn_id, write_id,
                              json.dumps(message))
    started = time.perf_counter()
    batch = TableBatch(entry, CODEC)
    batch.apply(event, message)
    new = batch.finish()
    return new, (time.perf_counter() - started) * 1000


def _kept(applied: tuple[TableEntry | None, float]) -> tuple[TableEntry, float]:
    entry, ms = applied
    assert entry is not None
    return entry, ms


def profile(partitions: int) -> list[tuple[str, float]]:
    """(batch, milliseconds) for each batch, and the first read in name order after the add."""
    entry = _entry(partitions)
    altered = Partition("db", "t", ("0000001",), "p=0000001", parameters={"altered": "yes"})
    entry, write_ms = _kept(_applied(entry, 2, EventType.ALTER_PARTITION,
                                     {"partitions": [codec.partition_to_json(altered)]}, write_id=2, txn_id=5))
    entry, commit_ms = _kept(_applied(entry, 3, EventType.COMMIT_TXN,
                                      {"write_ids": [{"table_id": 1, "write_id": 2}]}, txn_id=5))
    added = Partition("db", "t", ("0000001a",), "p=0000001a")  # near the front: the most names move
    entry, add_ms = _kept(_applied(entry, 4, EventType.ADD_PARTITION, {"partitions": [codec.partition_to_json(added)]}))
    started = time.perf_counter()
    assert entry.sorted_names[2] == "p=0000001a"  # the first read in name order sorts the new name in
    merge_ms = (time.perf_counter() - started) * 1000
    renamed = Table(db_name="db", name="t_renamed", transactional=True, partition_keys=(FieldSchema("p", "string"),),
                    table_id=1)
    after, rename_ms = _applied(entry, 5, EventType.ALTER_TABLE, {"table": codec.table_to_json(renamed)})
    if partitions + 1 > RENAME_REFRAME_MAX:  # dropped: the next read loads it in steps (loadtest/profile_fill.py)
        assert after is None
        rename = "rename the table (dropped from the cache)"
    else:
        assert after is not None and after.name == "t_renamed" and len(after.live.frames) == partitions + 1
        assert after.live.frames["p=0000001"] == wire.partition_element(replace(altered, table_name="t_renamed"))
        rename = "rename the table (re-framed)"
    return [("alter one partition (txn write)", write_ms), ("commit that txn", commit_ms),
            ("add one partition", add_ms), ("first name-order read after it", merge_ms), (rename, rename_ms)]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m loadtest.profile_poller", description=__doc__.split("\n")[0])
    parser.add_argument("--partitions", type=int, default=1_000_000)
    args = parser.parse_args()
    print(f"building a cached table of {args.partitions:,} partitions ...", flush=True)
    for label, ms in profile(args.partitions):
        print(f"{label:42} {ms:10.1f} ms")


if __name__ == "__main__":
    main()
