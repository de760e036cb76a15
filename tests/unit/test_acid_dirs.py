"""The directory choice (pipeline.acid.choose_dirs, Hive's getAcidState) as readers, the compaction
worker's plan and the Cleaner make it, over directory names alone (hive-reference §8.2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hive.writeids import LONG_MAX, ValidTxnList, ValidWriteIdList
from pipeline.acid import NotEnoughHistory, choose_dirs, entry_files, local_path, record_originals, visible_files
from pipeline.compactor.worker import NothingToCompact, plan
from store.aborted_writes import TableRoot
from poller.compactor_files import cleaner_view, obsolete_dirs, partition_facts, remove, sweep_aborted


def writes(hwm: int) -> ValidWriteIdList:
    """Every write id up to `hwm` committed."""
    return ValidWriteIdList("db.t", hwm, LONG_MAX, (), frozenset())


def txns(hwm: int, *open_ids: int) -> ValidTxnList:
    """Every txn up to `hwm` committed but `open_ids`."""
    return ValidTxnList(hwm, LONG_MAX, open_ids, frozenset())


def chosen(names: list[str], write_ids: ValidWriteIdList, txn_list: ValidTxnList) -> list[str]:
    base, deltas, originals = choose_dirs(sorted(names), write_ids, txn_list)
    return ([base.name] if base is not None else []) + [d.name for d in deltas] + originals


def cleaned(location: Path, highest_write_id: int, txn_list: ValidTxnList) -> list[str]:
    """What the Cleaner removes after a compaction up to `highest_write_id` (every write id committed)."""
    view = cleaner_view(writes(highest_write_id), highest_write_id)
    assert view is not None
    return sorted(Path(p).name for p in obsolete_dirs(str(location), view, txn_list))


def test_a_minor_compaction_of_statement_deltas_replaces_them(tmp_path: Path) -> None:
    # One txn (write id 5) wrote two statements; a minor compaction in txn 9 folds them into one
    # delta with no statement id, which sorts before them (Hive's order: statement -1 first).
    names = ["base_0000004", "delta_0000005_0000005_0000", "delta_0000005_0000005_0001"]
    assert chosen(names, writes(5), txns(8)) == names  # both statements of the txn
    inputs, output = plan(names, writes(5), txns(8), major=False)
    assert (inputs, output) == (names[1:], "delta_0000005_0000005")
    names.append("delta_0000005_0000005_v0000009")
    # While txn 9 is open its delta is invisible; once it commits it alone holds write id 5 (Hive
    # takes same-range deltas only after one with a statement id), so no row is read twice.
    assert chosen(names, writes(5), txns(9, 9)) == names[:3]
    assert chosen(names, writes(5), txns(10)) == ["base_0000004", "delta_0000005_0000005_v0000009"]
    for name in names:
        (tmp_path / name).mkdir()
    assert cleaned(tmp_path, 5, txns(10)) == names[1:3]


def test_the_cleaner_of_a_compaction_leaves_what_a_later_wider_compaction_covers(tmp_path: Path) -> None:
    # Write ids 1 and 2 compacted in txn 5 (delta_1_2_v5), then 3 written and all three compacted in txn 7
    # (delta_1_3_v7). Cleaning the first compaction (up to write id 2) removes its inputs only: a snapshot
    # from before txn 7 still reads delta_1_2_v5, and once the second is cleaned all of its inputs go at once,
    # so such a snapshot learns its history is gone (NotEnoughHistory) rather than reading write ids 1 and 2
    # short. Taking delta_1_3_v7 for covering write ids 1 and 2, the Cleaner removed delta_1_2_v5 first.
    names = ["delta_0000001_0000001", "delta_0000002_0000002", "delta_0000001_0000002_v0000005",
             "delta_0000003_0000003", "delta_0000001_0000003_v0000007"]
    for name in names:
        (tmp_path / name).mkdir()
    assert cleaned(tmp_path, 2, txns(8)) == names[:2]
    before_txn_7 = (writes(3), txns(6))
    assert chosen(names[2:], *before_txn_7) == ["delta_0000001_0000002_v0000005", "delta_0000003_0000003"]
    assert cleaned(tmp_path, 3, txns(8)) == sorted(names[:4])
    with pytest.raises(NotEnoughHistory):
        chosen(names[4:], *before_txn_7)


def test_a_snapshot_older_than_a_cleaned_compaction_is_refused(tmp_path: Path) -> None:
    # Write ids 1 and 2, then a major compaction in txn 9: base_2_v9. A reader whose snapshot
    # predates txn 9's commit reads the deltas while they are there (the compaction running, or
    # committed and not yet cleaned) ...
    before = writes(2), txns(9, 9)
    compacted = ["base_0000002_v0000009", "delta_0000001_0000001", "delta_0000002_0000002"]
    assert chosen(compacted, *before) == compacted[1:]
    # ... but once the Cleaner removed them it would read nothing: Hive's "not enough history".
    for name in ("base_0000002_v0000009", "delta_0000003_0000003"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "part-0.parquet").write_bytes(b"x")
    with pytest.raises(NotEnoughHistory, match="base_0000002_v0000009.*retry with a new snapshot") as err:
        visible_files(str(tmp_path), *before)
    assert err.value.location == str(tmp_path) and str(tmp_path) in str(err.value)
    with pytest.raises(NotEnoughHistory):  # also with write id 3 committed in the snapshot
        choose_dirs(sorted(os.listdir(tmp_path)), writes(3), txns(9, 9))
    # A snapshot taken before any write sees none of what the base replaced: it reads nothing, rightly.
    assert visible_files(str(tmp_path), writes(0), txns(9, 9)) == []
    # A snapshot that sees the base reads it; one with an older usable base is served as before.
    assert [Path(p).parent.name for p, _ in visible_files(str(tmp_path), writes(3), txns(10))] == \
        ["base_0000002_v0000009", "delta_0000003_0000003"]
    assert chosen(["base_0000001", "base_0000002_v0000009", "delta_0000002_0000002"], *before) == \
        ["base_0000001", "delta_0000002_0000002"]
    # Hive's own case: the base is visible but not valid for the write ids (the snapshot's write
    # ids lag its txns), whatever is still on disk.
    with pytest.raises(NotEnoughHistory):
        choose_dirs(compacted, writes(1), txns(10))
    # Bases that never count: a failed compaction's (its txn aborted) and INSERT OVERWRITE's.
    failed = ValidTxnList(10, 9, (9,), frozenset({9}))
    assert chosen(["base_0000002_v0000009", "delta_0000003_0000003"], writes(3), failed) == ["delta_0000003_0000003"]
    assert chosen(["base_0000002", "delta_0000003_0000003"], ValidWriteIdList.parse("db.t:3:2:2:"), txns(10)) == \
        ["delta_0000003_0000003"]


def test_a_snapshot_older_than_a_cleaned_minor_compaction_is_refused_not_read_short() -> None:
    # Write ids 1 to 3 over a base of 1; a minor compaction in txn 9 folds deltas 2 and 3 into
    # delta_2_3_v9. A snapshot taken before txn 9 committed, outside any txn (the Cleaner does not wait
    # for it), reads the deltas while they are there ...
    before = writes(3), txns(9, 9)
    compacted = ["base_0000001", "delta_0000002_0000002", "delta_0000002_0000003_v0000009", "delta_0000003_0000003"]
    assert chosen(compacted, *before) == ["base_0000001", "delta_0000002_0000002", "delta_0000003_0000003"]
    # ... and once the Cleaner removed them, the rows of write ids 2 and 3 are only in a delta it cannot
    # use: refused, where it read the base alone (and a snapshot with no base, nothing at all).
    with pytest.raises(NotEnoughHistory, match="delta_0000002_0000003_v0000009.*retry with a new snapshot"):
        choose_dirs(["base_0000001", "delta_0000002_0000003_v0000009"], *before)
    with pytest.raises(NotEnoughHistory, match="delta_0000001_0000002_v0000009"):
        choose_dirs(["delta_0000001_0000002_v0000009"], writes(2), txns(9, 9))
    # Also when the deltas it replaced were themselves a compaction's, and for a compaction of delete deltas.
    with pytest.raises(NotEnoughHistory, match="delta_0000001_0000005_v0000012"):
        choose_dirs(["delta_0000001_0000005_v0000012"], writes(5), txns(12, 12))
    with pytest.raises(NotEnoughHistory, match="delete_delta_0000002_0000003_v0000009"):
        choose_dirs(["base_0000001", "delete_delta_0000002_0000003_v0000009", "delta_0000002_0000003_v0000009"],
                    *before)
    # Not refused: a snapshot that sees none of the range (taken before write id 2); one whose base covers
    # the range; one that can use the compacted delta, or a wider one that covers it; and a compaction
    # whose txn aborted (its delta never counts; its inputs stay until the Cleaner removes the delta).
    assert chosen(["base_0000001", "delta_0000002_0000003_v0000009"], writes(1), txns(9, 9)) == ["base_0000001"]
    assert chosen(["base_0000003", "delta_0000002_0000003_v0000009"], *before) == ["base_0000003"]
    assert chosen(["base_0000001", "delta_0000002_0000003_v0000009"], writes(3), txns(10)) == \
        ["base_0000001", "delta_0000002_0000003_v0000009"]
    assert chosen(["delta_0000001_0000002_v0000009", "delta_0000001_0000005_v0000008"], writes(5), txns(9, 9)) == \
        ["delta_0000001_0000005_v0000008"]
    failed = ValidTxnList(10, 9, (9,), frozenset({9}))
    assert chosen(["base_0000001", "delta_0000002_0000003_v0000009"], writes(3), failed) == ["base_0000001"]
    # Nor while the deltas it replaced are on disk, whether or not the snapshot reads them: here (the Spark
    # lifecycle test, seed 4003) write id 8 is open in the snapshot, 12 after it, and 9 wrote elsewhere.
    open_8 = ValidWriteIdList("lake.events", 9, 8, (6, 8), frozenset({6}))
    on_disk = ["base_0000007", "delta_0000008_0000008", "delta_0000008_0000012_v0000023", "delta_0000012_0000012"]
    assert chosen(on_disk, open_8, txns(22, 9)) == ["base_0000007"]


def test_a_snapshot_older_than_an_overwrite_that_a_later_compaction_cleaned_under_is_refused() -> None:
    # Write ids 1 and 2 appended; INSERT OVERWRITE (write id 3, base_3); appends 4 and 5; a minor
    # compaction in txn 9 (delta_4_5_v9). Its cleaning removes what base_3 replaced (deltas 1 and 2, below
    # the base the Cleaner's view chooses) and its inputs. A snapshot outside any txn from before write id 3
    # reads deltas 1 and 2 while they are there ...
    before = writes(2), txns(8)
    on_disk = ["base_0000003", "delta_0000001_0000001", "delta_0000002_0000002", "delta_0000004_0000004",
               "delta_0000004_0000005_v0000009", "delta_0000005_0000005"]
    assert chosen(on_disk, *before) == ["delta_0000001_0000001", "delta_0000002_0000002"]
    # ... and after the cleaning it is refused, where it read nothing.
    with pytest.raises(NotEnoughHistory, match="base_0000003"):
        choose_dirs(["base_0000003", "delta_0000004_0000005_v0000009"], *before)
    # Not refused: an overwrite with nothing below it and no compaction since (an empty partition being
    # overwritten: nothing to read), and an overwrite that aborted (its base replaced nothing).
    assert chosen(["base_0000003"], *before) == []
    aborted = ValidWriteIdList("db.t", 3, LONG_MAX, (3,), frozenset({3}))
    assert chosen(["base_0000003", "delta_0000004_0000005_v0000009"], aborted, txns(8)) == []


def test_the_compactor_sees_compacted_history_without_error(tmp_path: Path) -> None:
    # A minor compaction up to write id 3 (txn 8), then a major one up to 5 (txn 9) before the first
    # was cleaned: cleaning the minor one, the Cleaner's view (write ids up to 3) cannot use base_5.
    names = ["base_0000005_v0000009", "delta_0000001_0000001", "delta_0000001_0000003_v0000008",
             "delta_0000002_0000002", "delta_0000003_0000003", "delta_0000004_0000004", "delta_0000005_0000005"]
    for name in names:
        (tmp_path / name).mkdir()
    assert cleaned(tmp_path, 3, txns(10)) == ["delta_0000001_0000001", "delta_0000002_0000002",
                                             "delta_0000003_0000003"]
    assert cleaned(tmp_path, 5, txns(10)) == [n for n in names if n.startswith("delta_")]
    # The Initiator's facts under a view that stops below base_5 (an open write id 4 at the time).
    view = ValidWriteIdList("db.t", 3, LONG_MAX, (), frozenset())
    facts = partition_facts(str(tmp_path), view, txns(10), {})
    assert (facts.base_write_id, facts.delta_count) == (0, 1)


def test_a_major_compaction_with_no_base_folds_the_original_files_in(tmp_path: Path) -> None:
    # Files from before the table was made transactional (one at the top, one in a directory of its
    # own), then two appends: a major compaction reads them all into base_2, as Hive's does.
    originals = ["000000_0.parquet", "legacy"]
    deltas = ["delta_0000001_0000001", "delta_0000002_0000002"]
    names = originals + deltas
    assert chosen(names, writes(2), txns(8)) == deltas + originals
    assert plan(names, writes(2), txns(8), major=True) == (originals + deltas, "")
    assert plan(names, writes(2), txns(8), major=False)[0] == deltas  # a minor one leaves them
    assert plan(originals, writes(2), txns(8), major=True) == (originals, "")  # Hive: originals are enough
    with pytest.raises(NothingToCompact, match="no write id"):
        plan(originals, writes(0), txns(8), major=True)
    with pytest.raises(NothingToCompact):
        plan(["base_0000001_v0000005"] + originals, writes(2), txns(8), major=True)
    # The worker's input files: a file entry is itself, a directory its files.
    (tmp_path / "000000_0.parquet").write_bytes(b"abc")
    (tmp_path / "legacy" / "sub").mkdir(parents=True)
    (tmp_path / "legacy" / "sub" / "part-0.parquet").write_bytes(b"de")
    (tmp_path / "legacy" / "_SUCCESS").write_bytes(b"")
    for name in deltas:
        (tmp_path / name).mkdir()
    assert [(Path(p).name, size) for name in originals for p, size in entry_files(str(tmp_path), name)] == [
        ("000000_0.parquet", 3), ("part-0.parquet", 2)]
    # Once the base that holds them is committed, readers read it and the Cleaner removes the
    # originals with the deltas, but only those the base records it holds.
    base = tmp_path / "base_0000002_v0000009"
    base.mkdir()
    assert chosen(os.listdir(tmp_path), writes(2), txns(10)) == [base.name]
    assert cleaned(tmp_path, 2, txns(10)) == deltas  # a base written before originals were compacted
    record_originals(str(base), originals)
    assert cleaned(tmp_path, 2, txns(10)) == sorted(originals + deltas)
    view = cleaner_view(writes(2), 2)
    assert view is not None
    obsolete = obsolete_dirs(str(tmp_path), view, txns(10))
    assert remove(obsolete) == obsolete and sorted(os.listdir(tmp_path)) == [base.name]


def test_the_aborted_writes_sweep_deletes_what_only_aborted_writes_made_and_names_what_it_must_keep(
        tmp_path: Path) -> None:
    # Write ids 4, 6 and 9 aborted. Under the table (two partition levels), and in a partition
    # placed elsewhere: deltas and a delete delta of 4 alone (two statements), an INSERT OVERWRITE's
    # base_6, a streaming writer's delta_8_9 (8 committed), and what must never be touched.
    table, elsewhere = tmp_path / "t", tmp_path / "elsewhere"
    x, y = table / "a=1" / "b=x", table / "a=2" / "b=y"
    only_aborted = [x / "delta_0000004_0000004_0000", x / "delta_0000004_0000004_0001",
                    y / "delete_delta_0000004_0000004", y / "base_0000006",
                    elsewhere / "delta_0000006_0000006", table / "a=1" / "delta_0000006_0000006"]
    only_aborted += [x / "base_0000009_v0000077", elsewhere / "delta_0000001_0000009_v0000077"]  # compaction 77 aborted
    only_aborted += [table / "_spark_staging_txn12_w4"]  # a dead driver's staging files
    kept = [x / "delta_0000003_0000003", x / "delta_0000008_0000009",
            x / "base_0000009_v0000042",  # a compactor's output: aborted ids left out
            x / ".hive-staging" / "delta_0000004_0000004",  # hidden: nobody reads it
            table / "_spark_staging_txn13_w5"]  # write id 5 not aborted (yet): a live driver's
    for d in only_aborted + kept:
        d.mkdir(parents=True)
        (d / "part-00000.parquet").write_bytes(b"x")
    sweep = sweep_aborted([TableRoot(f"file://{table}", 2), TableRoot(str(elsewhere), 0),
                           TableRoot(str(table / "a=1" / "b=x"), 0), TableRoot(str(tmp_path / "never-made"), 0)],
                          frozenset({4, 6, 9}), frozenset({77}))
    assert sorted(sweep.removed) == sorted(str(d) for d in only_aborted)
    assert not any(d.exists() for d in only_aborted) and all(d.exists() for d in kept)
    assert sweep.held == {9}  # delta_8_9 holds 9 beside a committed write id: listed until compacted
    assert sweep.held_txns == frozenset()


def test_a_location_is_read_as_the_directory_it_names(tmp_path: Path) -> None:
    """Hive escapes `:` in a partition directory's name (`ds=10%3A00`) and stores the location as that text;
    the job read `file:` locations as URLs and decoded them, so it looked for the files in `ds=10:00`."""
    escaped = tmp_path / "ds=10%3A00"
    assert local_path(f"file:{escaped}") == local_path(f"file://{escaped}") == local_path(str(escaped)) == str(escaped)
    with pytest.raises(ValueError, match="not on the local filesystem"):
        local_path("hdfs://nn:8020/w")
