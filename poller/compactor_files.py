"""The compactor's filesystem side in the gateway: a partition's file facts for the Initiator, and
what the Cleaner deletes (after a compaction, and what aborted writes left). Blocking calls; the
loops run them in a worker thread.

Both read the directory through `pipeline.acid.choose_dirs`, the same directory choice readers
and the worker make, so "what a reader reads" has one definition. Neither serves a snapshot, so
neither checks for a reader's "not enough history": the Cleaner's view stops at one compaction's
write id and may meet a later compaction's base that it cannot use.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Mapping, Sequence

from hive.writeids import LONG_MAX, ValidTxnList, ValidWriteIdList
from pipeline.acid import choose_dirs, dir_files, local_path, parse_acid_dir, recorded_originals, staging_write_id
from store.aborted_writes import TableRoot
from store.compaction_policy import PartitionFacts


def _entries(location: str) -> tuple[str, list[str]]:
    root = local_path(location)
    try:
        return root, sorted(os.listdir(root))
    except (FileNotFoundError, NotADirectoryError):
        return root, []


def _size(path: str) -> int:
    return sum(size for _, size in dir_files(path))


def partition_facts(location: str, view: ValidWriteIdList, txns: ValidTxnList,
                    aborted_ended_s: Mapping[int, float]) -> PartitionFacts:
    """Base and delta sizes the compactor would read under `view` (its write-id view), and the end
    times of aborted write ids that still have a delta directory here."""
    root, names = _entries(location)
    base, deltas, _ = choose_dirs(names, view, txns, check_history=False)
    aborted_here: dict[int, float] = {}
    for name in names:
        d = parse_acid_dir(name)
        if d is None or d.kind == "base":
            continue
        for w in range(d.min_write_id, min(d.max_write_id, d.min_write_id + 10000) + 1):
            if w in aborted_ended_s:
                aborted_here[w] = aborted_ended_s[w]
    return PartitionFacts(
        base_write_id=base.max_write_id if base is not None else 0,
        base_bytes=_size(os.path.join(root, base.name)) if base is not None else 0,
        delta_count=len(deltas), delta_bytes=sum(_size(os.path.join(root, d.name)) for d in deltas),
        aborted_ended_s=tuple(sorted(aborted_here.values())))


def cleaner_view(current: ValidWriteIdList, highest_write_id: int) -> ValidWriteIdList | None:
    """The write ids a compaction up to `highest_write_id` covered, as the Cleaner judges them (Hive
    cleans with hwm = CQ_HIGHEST_WRITE_ID); None while one of them is still open (not to happen:
    the compaction's view stopped below the lowest open write id, so wait rather than guess)."""
    if current.min_open_write_id <= highest_write_id:
        return None
    aborted = frozenset(w for w in current.aborted if w <= highest_write_id)
    return ValidWriteIdList(current.table_name, highest_write_id, LONG_MAX, tuple(sorted(aborted)), aborted)


def obsolete_dirs(location: str, view: ValidWriteIdList, txns: ValidTxnList) -> list[str]:
    """Directories (and files) no reader at or after the compaction reads: ACID dirs up to the
    view's high-water mark that the directory choice passes over (covered by the new base or delta,
    or aborted), any dir whose visibility txn aborted (a failed worker's output), and the original
    entries the chosen base records it holds (Hive removes originals under any base; a base written
    before bases recorded them may lack their rows, so those stay). A dir whose visibility txn is
    still open is a live worker's, and stays."""
    root, names = _entries(location)
    # Only what the compaction covered: a later compaction's output reaching past the view's high-water
    # mark is judged when its own entry is cleaned. Taken as covering now, it would remove this one's
    # output, which a snapshot from before the later one still reads, and only part of the later one's
    # inputs would be left: too few for such a snapshot to learn that its history is gone.
    within = [name for name in names if (d := parse_acid_dir(name)) is None or d.max_write_id <= view.high_watermark]
    base, deltas, _ = choose_dirs(within, view, txns, check_history=False)
    keep = {d.name for d in deltas} | ({base.name} if base is not None else set())
    held = set(recorded_originals(os.path.join(root, base.name))) if base is not None else set()
    out: list[str] = [os.path.join(root, name) for name in names if name in held and parse_acid_dir(name) is None]
    for name in names:
        d = parse_acid_dir(name)
        if d is None or name in keep:
            continue
        if d.visibility_txn and txns.is_txn_aborted(d.visibility_txn):
            out.append(os.path.join(root, name))
        elif d.visibility_txn and not txns.is_txn_valid(d.visibility_txn):
            continue
        elif d.max_write_id <= view.high_watermark:
            out.append(os.path.join(root, name))
    return out


def remove(paths: list[str]) -> list[str]:
    """Delete each directory or file (a missing one counts as removed: cleaning is idempotent)."""
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError, PermissionError):
                os.remove(path)
    return [p for p in paths if not os.path.lexists(p)]


@dataclass(frozen=True, slots=True)
class AbortedSweep:
    removed: tuple[str, ...]           # directories of aborted writes only, now deleted
    held: frozenset[int]               # of the write ids looked for, those a directory still holds
    held_txns: frozenset[int] = frozenset()  # of the compaction txns, those whose output is still there


def sweep_aborted(roots: Sequence[TableRoot], aborted: frozenset[int],
                  compaction_txns: frozenset[int] = frozenset()) -> AbortedSweep:
    """Delete the ACID directories under `roots` (each a location and the levels of partition
    directories below it) that hold only write ids of `aborted`, or are the output of one of the aborted
    `compaction_txns`, and say which of those ids and txns a directory still holds.

    A delta's or a writer's base_N's write ids are its name's range. Another directory with a
    visibility txn (`_vT`) is a compactor's output and holds no aborted write id (the compactor
    reads with them listed as aborted). Hidden directories (`.`, `_`: staging) are not read by
    anyone and are left, but for an aborted write's Spark staging directory (a driver that died
    before its clean-up), deleted for the space. A directory that cannot be deleted keeps what it
    holds held; one that cannot be listed raises OSError."""
    ids = sorted(aborted)
    removable: list[tuple[str, list[int], int]] = []  # path, aborted write ids, compaction txn
    staging: list[str] = []  # hidden: no reader reads them, so they hold nothing; deleted for the space
    held: set[int] = set()
    seen: set[str] = set()

    def look(path: str, depth: int) -> None:
        real = os.path.realpath(path)
        if real in seen:
            return
        seen.add(real)
        try:
            entries = list(os.scandir(path))
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            d = parse_acid_dir(entry.name)
            if d is None:
                if staging_write_id(entry.name) in aborted:
                    staging.append(entry.path)  # a Spark write's files that died with its driver
                elif depth > 0 and not entry.name.startswith((".", "_")) and entry.is_dir(follow_symlinks=False):
                    look(entry.path, depth - 1)
                continue
            if d.visibility_txn:
                if d.visibility_txn in compaction_txns:
                    removable.append((entry.path, [], d.visibility_txn))
                continue
            hit = ids[bisect_left(ids, d.min_write_id):bisect_right(ids, d.max_write_id)]
            if not hit:
                continue
            if len(hit) == d.max_write_id - d.min_write_id + 1:
                removable.append((entry.path, hit, 0))
            else:
                held.update(hit)

    for root in roots:
        look(local_path(root.location), root.depth)
    removed = set(remove([path for path, _, _ in removable] + staging))
    kept = [(hit, txn) for path, hit, txn in removable if path not in removed]
    return AbortedSweep(tuple(sorted(removed)), frozenset(held.union(*(hit for hit, _ in kept))),
                        frozenset(txn for _, txn in kept if txn))
