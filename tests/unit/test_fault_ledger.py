"""The fault suite's judge of writes and errors (loadtest/faults/ledger.py): what must be in the
database after a fault, how a txn whose commit answer was lost is decided from the data, and which
errors a client may see during a fault."""

from __future__ import annotations

import grpc
import pytest

from loadtest.faults.cluster import Calls
from loadtest.faults.ledger import ABORTED, COMMITTED, UNKNOWN, Ledger, TxnRecord, Windows, classify
from loadtest.faults.suite import Suite

C = grpc.StatusCode


def _ledger() -> Ledger:
    return Ledger([
        TxnRecord(1, "a0", added=["p1", "p2"], outcome=COMMITTED),
        TxnRecord(2, "a0", added=["p3"], altered=["p1"], outcome=ABORTED),
        TxnRecord(3, "a0", added=["p4"], altered=["p2"], outcome=COMMITTED),
        TxnRecord(4, "a0", added=["p5"], maybe=["p6"], outcome=ABORTED),
        TxnRecord(5, "a1", added=["q1"], outcome=COMMITTED),
    ])


def test_expected_state_is_the_last_committed_write_of_each_partition_and_nothing_aborted() -> None:
    assert _ledger().expected("a0") == {"p1": "t1", "p2": "t3", "p4": "t3"}
    assert _ledger().expected("a1") == {"q1": "t5"}


def test_readers_ask_for_every_name_ever_written_including_aborted_and_maybe_writes() -> None:
    assert _ledger().names("a0") == ["p1", "p2", "p3", "p4", "p5", "p6"]


def test_an_unknown_outcome_is_decided_by_its_additions_all_or_none() -> None:
    ledger = Ledger([TxnRecord(7, "a0", added=["x1", "x2"]), TxnRecord(8, "a0", added=["y1"], altered=["x1"])])
    assert ledger.resolve("a0", {"x1", "x2"}) == []
    assert [t.outcome for t in ledger.txns] == [COMMITTED, ABORTED]
    assert ledger.expected("a0") == {"x1": "t7", "x2": "t7"}


def test_a_partly_visible_txn_is_reported() -> None:
    ledger = Ledger([TxnRecord(9, "a0", added=["x1", "x2"])])
    problems = ledger.resolve("a0", {"x1"})
    assert len(problems) == 1 and "txn 9" in problems[0] and "partly visible" in problems[0]
    assert ledger.txns[0].outcome != UNKNOWN


def test_only_unavailable_aborted_txns_old_snapshots_and_deadlines_on_a_stopped_gateway_are_allowed() -> None:
    assert classify(C.UNAVAILABLE, "cannot connect to PostgreSQL", frozen=False) == "unavailable"
    assert classify(C.UNAVAILABLE, "lost the connection to PostgreSQL after the write was sent (...): it may have "
                    "been committed; retry the call if it was not", frozen=False) == "maybe_committed"
    assert classify(C.ABORTED, "txn 5 was aborted (by AbortTxns, a write conflict, or the time-out reaper ...)",
                    frozen=False) == "txn_aborted"
    assert classify(C.ABORTED, "write conflict: ...; txn 4 was aborted", frozen=False) == "write_conflict"
    assert classify(C.ABORTED, "x changed 5 times while this write waited for it; retry the write",
                    frozen=False) == "write_retry"
    assert classify(C.ABORTED, "something else", frozen=False) is None
    assert classify(C.DEADLINE_EXCEEDED, "Deadline Exceeded", frozen=True) == "deadline_on_stopped_gateway"
    assert classify(C.DEADLINE_EXCEEDED, "Deadline Exceeded", frozen=False) is None
    assert classify(C.FAILED_PRECONDITION, "snapshot too old for cons.a0: ...", frozen=False) == "snapshot_too_old"
    assert classify(C.FAILED_PRECONDITION, "txn 5 is already committed", frozen=False) is None
    assert classify(C.NOT_FOUND, "txn 5 ended long ago and is forgotten: it committed, or it was aborted ...",
                    frozen=False) == "txn_forgotten"
    assert classify(C.NOT_FOUND, "txn 5 does not exist", frozen=True) is None
    for code in (C.INTERNAL, C.UNKNOWN, C.FAILED_PRECONDITION, C.NOT_FOUND, C.INVALID_ARGUMENT):
        assert classify(code, "x", frozen=True) is None


def test_a_call_overlapping_a_stop_window_counts_as_frozen() -> None:
    w = Windows({"gw2": [(10.0, 20.0)]})
    assert w.was_frozen("gw2", 5.0, 11.0) and w.was_frozen("gw2", 19.0, 25.0) and w.was_frozen("gw2", 12.0, 13.0)
    assert not w.was_frozen("gw2", 0.0, 9.0) and not w.was_frozen("gw2", 21.0, 22.0)
    assert not w.was_frozen("gw1", 12.0, 13.0)


async def _fail(code: grpc.StatusCode, details: str) -> None:
    raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)


async def test_only_the_faulted_gateway_may_fail_to_serve_but_any_may_say_a_snapshot_is_too_old() -> None:
    calls = Calls()
    for gateway, code, details in (("gw1", C.UNAVAILABLE, "connection refused"),
                                   ("gw3", C.FAILED_PRECONDITION, "snapshot too old for cons.a0: ...")):
        with pytest.raises(grpc.aio.AioRpcError):
            await calls(gateway, "GetPartitionsByNames", _fail(code, details))
    assert calls.phase.by_gateway == {"gw1/UNAVAILABLE": 1, "gw3/FAILED_PRECONDITION": 1}
    Suite._only_from(calls.phase, "gw1")
    assert calls.phase.violations == []
    Suite._only_from(calls.phase, "gw2")
    assert calls.phase.violations == ["errors from gateways that were not faulted, with the database up: "
                                      "{'gw1/UNAVAILABLE': 1}"]
