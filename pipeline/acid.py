"""Hive's ACID directory names and which files under a partition a snapshot may read.

Names (hive-reference §8.1): `delta_%07d_%07d[_%04d]`, `delete_delta_...`, `base_%07d[_v%07d]`;
numbers wider than the pad are written in full and parsed as integers.

`visible_files(location, write_ids, txns)` is a small version of Hive's `AcidUtils.getAcidState`
(§8.2) for insert-only layouts, which is what the write job produces (plain Parquet/ORC files in
`delta_w_w/` for an append, `base_w/` for an overwrite):

1. hidden entries (`_` or `.` first, e.g. `_SUCCESS`, `.part-0.crc`, a writer's `_spark_staging...`)
   are skipped at every level, as Hadoop's hidden-file filter does;
2. the usable base is the highest `base_N` whose write id the snapshot allows (`isValidBase` for a
   compactor base `base_N_vT`, whose visibility txn T must also be valid; `isWriteIdValid` for an
   INSERT OVERWRITE base);
3. deltas above that base are walked in Hive's order (min ascending, max descending, statement id)
   and a delta is taken when it extends the covered range with a write id valid in the snapshot
   (`isWriteIdRangeValid != NONE`), or repeats the range just taken with another statement id
   while the one taken has a statement id (a minor compaction's `delta_5_5_v9` has none, sorts
   before `delta_5_5_0000` and `delta_5_5_0001` and replaces them);
   everything else (not yet committed, aborted, or covered by a wider delta) is skipped;
4. files that are not in an ACID directory ("originals", written before the table was
   transactional) count only when no base was chosen (a major compaction reads them into its base);
5. with no usable base, a compactor base the snapshot cannot use may have replaced what it reads:
   `NotEnoughHistory` (Hive's ACID_NOT_ENOUGH_HISTORY) rather than a read with rows missing; so may a
   minor compaction's delta the snapshot cannot use, once the Cleaner removed the deltas it replaced,
   and an INSERT OVERWRITE's base it cannot use, once a later compaction's cleaning removed what that
   base replaced (a snapshot no txn holds: Hive's readers are all in txns, so Hive does not check
   these cases).

So a reader never counts a file a txn wrote until that txn commits, and never counts an aborted
txn's files, whether or not its writer removed them. A missing location has no files. Locations
are local: a bare path, `file:/p` or `file:///p`; other schemes raise `ValueError`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Iterator

from hive.names import split_location
from hive.writeids import RangeResponse, ValidTxnList, ValidWriteIdList

_DELTA = re.compile(r"(delete_delta|delta)_(\d+)_(\d+)(?:_(\d+))?(?:_v(\d+))?")
_BASE = re.compile(r"base_(\d+)(?:_v(\d+))?")


class NotEnoughHistory(Exception):
    """Hive's ACID_NOT_ENOUGH_HISTORY: the snapshot is older than the partition's compacted history.

    A compactor-made base (`base_N_vT`) replaces everything at or below write id N, and once the
    Cleaner has removed what it replaced, a snapshot that cannot use that base has nothing left to
    read. `base` is that directory's name, `location` the partition's (set by `visible_files`)."""

    def __init__(self, base: str, write_ids: ValidWriteIdList, location: str = "") -> None:
        super().__init__(base, write_ids, location)
        self.base = base
        self.high_watermark = write_ids.high_watermark
        self.min_open_write_id = write_ids.min_open_write_id if write_ids.exceptions else None
        self.location = location

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        lowest_open = "none" if self.min_open_write_id is None else self.min_open_write_id
        return (f"{where}not enough history for a snapshot of write ids up to {self.high_watermark} (lowest open "
                f"{lowest_open}): {self.base} replaced the files this snapshot reads and the snapshot cannot use it; "
                f"those files are gone or may go at any time (Hive's ACID_NOT_ENOUGH_HISTORY). "
                f"The snapshot is too old for this partition's compacted history: retry with a new snapshot (a read "
                f"inside an open txn keeps its files: the Cleaner waits for it)")


def delta_dir_name(min_write_id: int, max_write_id: int | None = None, statement_id: int | None = None) -> str:
    """`delta_0000005_0000005` (Hive's %07d), with `_%04d` when a statement id is given."""
    name = f"delta_{min_write_id:07d}_{(min_write_id if max_write_id is None else max_write_id):07d}"
    return name if statement_id is None else f"{name}_{statement_id:04d}"


def base_dir_name(write_id: int, visibility_txn: int | None = None) -> str:
    return f"base_{write_id:07d}" + ("" if visibility_txn is None else f"_v{visibility_txn:07d}")


@dataclass(frozen=True, slots=True)
class AcidDir:
    name: str
    kind: str                  # "base", "delta" or "delete_delta"
    min_write_id: int
    max_write_id: int
    statement_id: int = -1
    visibility_txn: int = 0    # 0: none (always visible)


def parse_acid_dir(name: str) -> AcidDir | None:
    """The ACID meaning of a directory name, or None for anything else."""
    m = _DELTA.fullmatch(name)
    if m:
        return AcidDir(name, m.group(1), int(m.group(2)), int(m.group(3)),
                       int(m.group(4)) if m.group(4) else -1, int(m.group(5) or 0))
    m = _BASE.fullmatch(name)
    if m:
        return AcidDir(name, "base", int(m.group(1)), int(m.group(1)), -1, int(m.group(2) or 0))
    return None


_STAGING = re.compile(r"_spark_staging_txn(\d+)_w(\d+)")


def staging_dir_name(txn_id: int, write_id: int) -> str:
    """The hidden directory under the table's location a Spark write stages its files in
    (pipeline/txn_write.py) before moving them into deltas: readers skip it."""
    return f"_spark_staging_txn{txn_id}_w{write_id}"


def staging_write_id(name: str) -> int | None:
    """The write id of a staging directory's name, or None for any other name."""
    m = _STAGING.fullmatch(name)
    return int(m.group(2)) if m else None


def local_path(location: str) -> str:
    """A local filesystem path for a partition or table location, read as Hadoop's Path and the gateway
    read it (hive/names.split_location): the path as it is, not a URL to decode, so a partition
    directory Hive escaped (`ds=10%3A00`) is that directory."""
    scheme, path = split_location(location)
    if scheme not in ("", "file"):
        raise ValueError(f"location {location!r} is not on the local filesystem (only file: and bare paths are read "
                         f"by this job)")
    return path


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def _files_under(path: str) -> Iterator[tuple[str, int]]:
    """(path, size) of every non-hidden file under `path`, recursively."""
    try:
        entries = list(os.scandir(path))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in sorted(entries, key=lambda e: e.name):
        if _hidden(entry.name):
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _files_under(entry.path)
        elif entry.is_file(follow_symlinks=False):
            yield entry.path, entry.stat(follow_symlinks=False).st_size


def dir_files(path: str) -> list[tuple[str, int]]:
    """(path, size) of every non-hidden file under `path`, as a reader lists them (the compactor's
    size facts and its input)."""
    return list(_files_under(path))


def entry_files(root: str, name: str) -> list[tuple[str, int]]:
    """(path, size) of the files one entry of a partition directory holds: a directory's (as
    `dir_files`), or the entry itself when it is a file (an original file at the top)."""
    path = os.path.join(root, name)
    if os.path.isfile(path):
        return [(path, os.path.getsize(path))]
    return dir_files(path)


ORIGINALS_FILE = "_originals.json"
"""In a compactor's base: the original entries the compaction read into it (hidden from readers).
The Cleaner removes exactly those once the base is in use; a base without it holds none."""


def record_originals(base_path: str, names: list[str]) -> None:
    """Write the ORIGINALS_FILE of the base at `base_path` (nothing when `names` is empty)."""
    if names:
        with open(os.path.join(base_path, ORIGINALS_FILE), "w") as f:
            json.dump({"originals": sorted(names)}, f)


def recorded_originals(base_path: str) -> list[str]:
    """The original entries the base at `base_path` holds, as its ORIGINALS_FILE records them."""
    path = os.path.join(base_path, ORIGINALS_FILE)
    try:
        with open(path) as f:
            names = json.load(f)["originals"]
    except FileNotFoundError:
        return []
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a list of original entries: {exc!r}") from exc
    if not isinstance(names, list):
        raise ValueError(f"{path} is not a list of original entries")
    return [str(name) for name in names]


def _valid_visibility(d: AcidDir, txns: ValidTxnList | None) -> bool:
    return d.visibility_txn == 0 or txns is None or txns.is_txn_valid(d.visibility_txn)


def _aborted_visibility(d: AcidDir, txns: ValidTxnList | None) -> bool:
    return d.visibility_txn != 0 and txns is not None and txns.is_txn_aborted(d.visibility_txn)


def _history_gone(acid: list[AcidDir], originals: list[str], write_ids: ValidWriteIdList,
                  txns: ValidTxnList | None) -> AcidDir | None:
    """For a snapshot with no usable base: the base (a compactor's; an INSERT OVERWRITE's, see the end)
    whose history the snapshot needs and may no longer have (hive-reference §8.2 step 5), or None.

    Hive's rule: the oldest base the snapshot sees is a compactor's (`_vT`, T valid in the
    snapshot). Such a base erases the history below it, so the files the snapshot reads may be gone;
    an INSERT OVERWRITE base keeps its history (until a later compaction's cleaning, below) and an
    aborted one is ignored. A compactor base whose
    txn the snapshot does not see yet (open, or begun after it) is also what every compaction leaves
    while it runs and until it is cleaned, with the history still there: for such a base the
    snapshot fails only once nothing the base replaced is left (no other directory at or below its
    write id, no original file), i.e. after the Cleaner ran, which waits only for snapshots that a
    txn holds, and only when the snapshot sees a write id the base holds (one that sees none of them
    reads nothing of that history anyway). The same for an INSERT OVERWRITE base the snapshot cannot
    use (its write id open in it, or later) once a compaction it does not see either ran: that
    compaction's cleaning removes what the base it chose replaced, an overwrite's too (Hive's readers
    are all in txns, which the Cleaner waits for, so Hive has no need of this case)."""
    seen = [d for d in acid if d.kind == "base" and _valid_visibility(d, txns)
            and (d.visibility_txn or not write_ids.is_write_id_aborted(d.max_write_id))]
    oldest = min(seen, key=lambda d: d.max_write_id, default=None)
    if oldest is not None and oldest.visibility_txn:
        return oldest
    if originals:
        return None
    kept = [d for d in acid if not _aborted_visibility(d, txns)]
    compacted_since = any(d.visibility_txn and not _valid_visibility(d, txns) for d in kept)
    for d in kept:
        cannot_use = (not _valid_visibility(d, txns) if d.visibility_txn else
                      compacted_since and not write_ids.is_write_id_valid(d.max_write_id)
                      and not write_ids.is_write_id_aborted(d.max_write_id))
        if d.kind == "base" and cannot_use and not any(
                e is not d and e.max_write_id <= d.max_write_id for e in kept) and write_ids.is_write_id_range_valid(
                1, d.max_write_id) != RangeResponse.NONE:
            return d
    return None


def _compacted_delta_gone(acid: list[AcidDir], base: AcidDir | None, chosen: list[AcidDir],
                          write_ids: ValidWriteIdList, txns: ValidTxnList | None) -> AcidDir | None:
    """A minor compaction's delta (`delta_x_y_vT`, `delete_delta_x_y_vT`) the snapshot cannot use (T not
    committed in it) and now the only holder of write ids in its range the snapshot sees, or None.

    The rule of `_history_gone` for a minor compaction, which Hive has no need of (every Hive reader is in
    a txn, which the Cleaner waits for): the deltas it replaced stay readable while it runs and until it
    is cleaned, so the snapshot is refused only once none of them is left (no other directory of its kind
    in its range, whether the snapshot reads it or not) and only when it sees a write id of the range
    above its base; a delta the snapshot reads that covers the whole range serves it instead. As for a
    base, a write id it sees in the range may have written to other partitions only: such a snapshot
    is refused although it needed nothing here, never served short."""
    floor = base.max_write_id if base is not None else 0
    for d in acid:
        if (d.kind == "base" or not d.visibility_txn or _valid_visibility(d, txns) or _aborted_visibility(d, txns)
                or d.max_write_id <= floor
                or write_ids.is_write_id_range_valid(max(d.min_write_id, floor + 1), d.max_write_id)
                == RangeResponse.NONE):
            continue
        if any(e.kind == d.kind and e.min_write_id <= d.min_write_id and e.max_write_id >= d.max_write_id
               for e in chosen):
            continue
        if not any(e is not d and e.kind == d.kind and d.min_write_id <= e.min_write_id
                   and e.max_write_id <= d.max_write_id and not _aborted_visibility(e, txns) for e in acid):
            return d
    return None


def choose_dirs(names: list[str], write_ids: ValidWriteIdList, txns: ValidTxnList | None = None, *,
                check_history: bool = True) -> tuple[AcidDir | None, list[AcidDir], list[str]]:
    """(base, deltas to read, original entries) among a partition directory's entry names.

    Raises `NotEnoughHistory` when the partition's compacted history no longer holds what the
    snapshot reads (a compactor's base, with no base usable; a minor compaction's delta).
    `check_history` False: the compactor's bookkeeping in the gateway (the Initiator's facts, the
    Cleaner's view), which describes the directory rather than serves a snapshot; the Cleaner's view
    stops at one compaction's write id and so may not use a later compaction's base, which is no
    error for it."""
    acid: list[AcidDir] = []
    originals: list[str] = []
    for name in names:
        if _hidden(name):
            continue
        d = parse_acid_dir(name)
        if d is None:
            originals.append(name)
        else:
            acid.append(d)
    base: AcidDir | None = None
    for d in acid:
        if d.kind != "base" or not _valid_visibility(d, txns):
            continue
        usable = write_ids.is_valid_base(d.max_write_id) if d.visibility_txn else write_ids.is_write_id_valid(
            d.max_write_id)
        if usable and (base is None or d.max_write_id > base.max_write_id):
            base = d
    chosen: list[AcidDir] = []
    for kind in ("delta", "delete_delta"):
        current = base.max_write_id if base is not None else 0
        last: AcidDir | None = None
        deltas = sorted((d for d in acid if d.kind == kind and _valid_visibility(d, txns)),
                        key=lambda d: (d.min_write_id, -d.max_write_id, d.statement_id, d.name))
        for d in deltas:
            if (last is not None and last.statement_id >= 0
                    and (d.min_write_id, d.max_write_id) == (last.min_write_id, last.max_write_id)):
                # Another statement of the txn just taken. A delta with no statement id (a minor
                # compaction's, which sorts first) holds every statement: those it replaced are skipped.
                chosen.append(d)
            elif d.max_write_id > current and write_ids.is_write_id_range_valid(
                    max(current + 1, d.min_write_id), d.max_write_id) != RangeResponse.NONE:
                chosen.append(d)
                current = d.max_write_id
                last = d
    if check_history:
        gone = _history_gone(acid, originals, write_ids, txns) if base is None else None
        gone = gone or _compacted_delta_gone(acid, base, chosen, write_ids, txns)
        if gone is not None:
            raise NotEnoughHistory(gone.name, write_ids)
    return base, chosen, ([] if base is not None else originals)


def visible_files(location: str, write_ids: ValidWriteIdList | None,
                  txns: ValidTxnList | None = None) -> list[tuple[str, int]]:
    """(path, size) of the files a reader with this snapshot reads under `location`;
    `write_ids` None (a non-transactional table): every non-hidden file."""
    root = local_path(location)
    if write_ids is None:
        return list(_files_under(root))
    try:
        names = sorted(os.listdir(root))
    except (FileNotFoundError, NotADirectoryError):
        return []
    try:
        base, deltas, originals = choose_dirs(names, write_ids, txns)
    except NotEnoughHistory as exc:
        exc.location = root
        raise
    out: list[tuple[str, int]] = []
    for d in ([base] if base is not None else []) + deltas:
        out.extend(_files_under(os.path.join(root, d.name)))
    for name in originals:
        out.extend(entry_files(root, name))
    return out
