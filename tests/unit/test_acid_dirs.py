"""The directory choice (pipeline.acid.choose_dirs, Hive's getAcidState) as readers, the compaction
worker's plan and the Cleaner make it, over directory names alone (hive-reference §8.2)."""

from __future__ import annotations

from pathlib import Path

from hive.writeids import LONG_MAX, ValidTxnList, ValidWriteIdList
from pipeline.acid import choose_dirs
from pipeline.compactor.worker import plan
from poller.compactor_files import cleaner_view, obsolete_dirs


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
