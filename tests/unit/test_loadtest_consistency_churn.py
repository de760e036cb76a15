"""The consistency run's reads of the churn tables (loadtest/consistency/reader.py churn_read, judged by
loadtest/consistency/judge.py): the names they are read by, and which disagreements a drop excuses."""

from __future__ import annotations

import time
import grpc

from loadtest.consistency.judge import Judge
from loadtest.consistency.model import Outcome
from loadtest.consistency.thrift_side import ThriftOutcome
from loadtest.ddl_race import DdlRace

C = grpc.StatusCode
NOT_FOUND = Outcome(code=C.NOT_FOUND, details="table cons.c0 does not exist in this snapshot")
GONE = Outcome(code=C.FAILED_PRECONDITION, details="cons.c0: no table has the table id 17 the request expected")
TOO_OLD = Outcome(code=C.FAILED_PRECONDITION, details="snapshot too old: ...")


def _judge() -> Judge:
    return Judge([], None, {}, log=lambda _: None)  # type: ignore[arg-type]  # (_judge asks no endpoint)


def test_a_churn_table_is_read_by_its_name_and_the_name_it_is_renamed_to() -> None:
    ddl = DdlRace(driver=None, tables=2)  # type: ignore[arg-type]  # (names need no driver)
    assert ddl.read_names() == ["c0", "c0_renamed", "c1", "c1_renamed"]
    assert (ddl.other_name("c1"), ddl.other_name("c1_renamed")) == ("c1_renamed", "c1")


def test_a_drop_is_recent_only_for_the_table_id_it_deleted() -> None:
    ddl = DdlRace(driver=None, tables=1)  # type: ignore[arg-type]
    since = time.monotonic()
    ddl.drops[17] = since + 0.5
    assert ddl.dropped_lately(17, since) and not ddl.dropped_lately(18, since)
    assert not ddl.dropped_lately(17, since + 1)  # dropped before the read's window: judged strictly


def test_only_a_racing_drop_excuses_a_disagreement_and_never_a_too_old_in_a_txn() -> None:
    judge = _judge()

    def racy() -> bool:
        return True

    judge._judge("churn_snapshot", "GetTable", "r", ["gw1"], [NOT_FOUND], GONE, in_txn=True, racy=racy)
    assert judge.counts["ddl_race"] == 1 and not judge.violations
    judge._judge("churn_snapshot", "GetTable", "r", ["gw1"], [NOT_FOUND], GONE, in_txn=True, racy=lambda: False)
    judge._judge("snapshot", "GetTable", "r", ["gw1"], [NOT_FOUND], GONE, in_txn=False)
    assert [v.kind for v in judge.violations] == ["mismatch", "mismatch"]
    judge._judge("churn_reader_txn", "GetTable", "r", ["gw1"], [TOO_OLD], TOO_OLD, in_txn=True, racy=racy)
    assert [v.kind for v in judge.violations][-1] == "too_old_in_txn"


def test_a_version_gc_between_the_reads_excuses_an_answer_of_the_snapshot_outside_txns_only() -> None:
    """The gateways are asked first: a GC then can turn what the snapshot had, objects or no table of that name
    (read under the name it was renamed to later), into the oracle's "snapshot too old" (consistency seed 113
    with the abort clean-up settings: all three gateways NOT_FOUND, the oracle too old, for a
    ListPartitionNames of cons.c0_renamed). Any other refusal, or one in a txn, is still a violation."""
    judge = _judge()
    judge._judge("churn_snapshot", "ListPartitionNames", "r", ["gw1", "gw2"], [NOT_FOUND, Outcome(reply=1)], TOO_OLD,
                 in_txn=False)
    assert judge.counts["gc_race"] == 2 and not judge.violations
    judge._judge("churn_snapshot", "GetTable", "r", ["gw1"], [GONE], TOO_OLD, in_txn=False)
    judge._judge("churn_reader_txn", "GetTable", "r", ["gw1"], [NOT_FOUND], TOO_OLD, in_txn=True)
    assert [v.kind for v in judge.violations] == ["mismatch", "mismatch"]


def test_over_thrift_the_snapshots_own_refusal_is_its_no_such_object() -> None:
    """The same allowance over Hive's Thrift API, where the store's NotFound is a NoSuchObjectException (every
    read the run makes declares one)."""
    gone = "table cons.c0_renamed does not exist in this snapshot"
    assert ThriftOutcome(error="NoSuchObjectException", details=gone).of_the_snapshot
    assert ThriftOutcome(reply=[]).of_the_snapshot
    assert not ThriftOutcome(error="MetaException", details="snapshot too old: ...").of_the_snapshot


def test_a_version_gc_between_the_reads_moves_the_watermark_a_too_old_refusal_names() -> None:
    """Consistency seed 115 with the abort clean-up settings: the three gateways refused a snapshot of
    cons.a1 as too old with "versions up to write id 43", the oracle, asked after them, with 45. The same
    refusal; a gateway naming a later watermark than the oracle's would have seen GC go backwards."""
    def too_old(mark: int) -> Outcome:
        return Outcome(code=C.FAILED_PRECONDITION, details=f"snapshot too old for cons.a1: versions up to write id "
                                                            f"{mark} were garbage-collected after this snapshot")

    judge = _judge()
    judge._judge("old_snapshot", "GetPartitionsByFilter", "r", ["gw1", "gw2"], [too_old(43), too_old(45)],
                 too_old(45), in_txn=False)
    assert judge.counts["too_old_both"] == 2 and not judge.violations
    thrift_too_old = ThriftOutcome(error="MetaException", details=too_old(43).details)
    judge._judge("thrift_old_snapshot", "get_partitions_req", "r", ["gw1"], [thrift_too_old],
                 ThriftOutcome(error="MetaException", details=too_old(45).details), in_txn=False)
    assert judge.counts["too_old_both"] == 3 and not judge.violations
    judge._judge("old_snapshot", "GetPartitionsByFilter", "r", ["gw1"], [too_old(46)], too_old(45), in_txn=False)
    assert [v.kind for v in judge.violations] == ["mismatch"]
