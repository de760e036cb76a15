"""The txn heartbeat keeper (pipeline/client/txn.py) on a fake clock and a fake stub: one beat per
interval, a failed beat retried soon (1 s, doubling), an abort seen once and handed to `on_abort`, and a
stop that ends the thread. Nothing waits for real intervals (tests/spark/test_client.py runs it
against a real gateway and its reaper)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import grpc
import pytest

from pipeline.client import ClientConfig, GatewayClient, HeartbeatKeeper, TxnAborted
from protos.metastore.v1 import transactions_pb2 as tpb
from tests.clock import FakeClock, eventually
from tests.rpc_errors import unavailable


class FakeTxns:
    """Answers Heartbeat from a script: a HeartbeatResponse, or an exception to raise."""

    def __init__(self, *answers: tpb.HeartbeatResponse | Exception) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[list[int], float]] = []

    def Heartbeat(self, request: tpb.HeartbeatRequest, timeout: float) -> tpb.HeartbeatResponse:
        self.calls.append((list(request.txn_ids), timeout))
        answer = self.answers.pop(0) if self.answers else tpb.HeartbeatResponse()
        if isinstance(answer, Exception):
            raise answer
        return answer


def _keeper(txns: FakeTxns, clock: FakeClock, **kwargs: Any) -> HeartbeatKeeper:
    client = SimpleNamespace(txns=txns, config=ClientConfig("gw:1", call_timeout_s=60.0))
    return HeartbeatKeeper(cast(GatewayClient, client), 5, 150.0, clock=clock, **kwargs)


def _tick(keeper: HeartbeatKeeper, clock: FakeClock) -> None:
    """One interval of fake time; returns when the keeper has beaten and waits again (or has ended)."""
    waits = len(clock.sleeps)
    clock.advance_threads(keeper.interval_s)
    eventually(lambda: (len(clock.sleeps) > waits and clock.waiting_threads == 1) or not keeper._thread.is_alive())


def _wait_and_beat(keeper: HeartbeatKeeper, clock: FakeClock, seconds: float) -> None:
    """`seconds` of fake time; returns when the keeper has beaten and waits again."""
    waits = len(clock.sleeps)
    clock.advance_threads(seconds)
    eventually(lambda: len(clock.sleeps) > waits and clock.waiting_threads == 1)


def test_beats_once_per_interval_until_stopped() -> None:
    txns, clock = FakeTxns(), FakeClock()
    keeper = _keeper(txns, clock).start()
    eventually(lambda: clock.waiting_threads == 1)
    clock.advance_threads(149.0)
    assert txns.calls == []
    clock.advance_threads(1.0)
    eventually(lambda: len(clock.sleeps) == 2 and clock.waiting_threads == 1)
    _tick(keeper, clock)
    assert txns.calls == [([5], 60.0), ([5], 60.0)] and keeper.beats == 2 and keeper.failures == 0
    keeper.stop()
    assert not keeper._thread.is_alive() and clock.sleeps == [150.0] * 3
    keeper.check()  # nothing seen: no exception


def test_a_failed_beat_is_retried_soon_not_a_whole_interval_later() -> None:
    """The txn lives hive.txn.timeout (two intervals) after its last beat: after a failed beat, the
    next comes after 1 s, 2 s, 4 s ... (an interval later, the reaper could win the race)."""
    txns, clock = FakeTxns(unavailable(), unavailable(), tpb.HeartbeatResponse()), FakeClock()
    keeper = _keeper(txns, clock).start()
    eventually(lambda: clock.waiting_threads == 1)
    _tick(keeper, clock)
    assert (keeper.beats, keeper.failures) == (0, 1) and clock.sleeps[-1] == 1.0
    for waited, beats_failures in ((1.0, (0, 2)), (2.0, (1, 2))):
        _wait_and_beat(keeper, clock, waited)
        assert (keeper.beats, keeper.failures) == beats_failures
    assert clock.sleeps == [150.0, 1.0, 2.0, 150.0] and len(txns.calls) == 3
    keeper.stop()


@pytest.mark.parametrize("field", ["aborted_txn_ids", "nosuch_txn_ids"])
def test_an_aborted_txn_is_reported_once_and_the_keeper_stops(field: str) -> None:
    seen: list[TxnAborted] = []
    txns, clock = FakeTxns(tpb.HeartbeatResponse(**{field: [5]})), FakeClock()
    keeper = _keeper(txns, clock, on_abort=seen.append).start()
    eventually(lambda: clock.waiting_threads == 1)
    _tick(keeper, clock)
    keeper._thread.join(10)
    assert not keeper._thread.is_alive()
    assert len(seen) == 1 and seen[0].txn_id == 5 and seen[0].code == grpc.StatusCode.ABORTED
    with pytest.raises(TxnAborted):
        keeper.check()
    clock.advance_threads(10 * 150.0)
    assert len(txns.calls) == 1  # no beat after the abort
