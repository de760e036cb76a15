"""The consistency run's reads of the churn tables (loadtest/consistency/reader.py churn_read, judged by
loadtest/consistency/judge.py): the names they are read by, and which disagreements a drop excuses."""

from __future__ import annotations

import time
import grpc

from loadtest.consistency.judge import Judge
from loadtest.consistency.model import Outcome
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
