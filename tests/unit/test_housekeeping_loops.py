"""The housekeeping loops' schedule on a fake clock (nothing really waits): each loop's first round
after its start delay, then one every interval; a failing round is counted, logged and retried after
a back-off (interval x 2^failures, at most 30 s); cancellation goes through. The rounds themselves
(reaper, cleaner, trim) run against PostgreSQL in tests/e2e/test_transactions.py."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import cast

import pytest

from poller.housekeeping import Housekeeper, HousekeepingSettings
from store.db import Database
from store.txn_store import TxnStore
from tests.clock import FakeClock


class FakeTxnStore:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.counted: list[float] = []

    async def refresh_open_count(self) -> None:
        self.counted.append(self.clock.now)


@dataclass
class RecordingHousekeeper(Housekeeper):
    """The real loops, with rounds that record when they ran instead of touching a database."""

    rounds: dict[str, list[float]] = field(default_factory=lambda: {"reap": [], "clean": [], "trim": []})

    async def reap_once(self) -> int | None:
        self.rounds["reap"].append(self.clock.monotonic())
        return 0

    async def clean_once(self) -> int | None:
        self.rounds["clean"].append(self.clock.monotonic())
        return 0

    async def trim_once(self) -> int | None:
        self.rounds["trim"].append(self.clock.monotonic())
        return 0


def _housekeeper(clock: FakeClock, settings: HousekeepingSettings) -> tuple[RecordingHousekeeper, FakeTxnStore]:
    txn_store = FakeTxnStore(clock)
    return RecordingHousekeeper(cast(Database, None), cast(TxnStore, txn_store), settings, clock=clock), txn_store


async def test_every_loop_runs_after_its_start_delay_then_every_interval() -> None:
    clock = FakeClock()
    settings = HousekeepingSettings(reaper_start_s=100.0, reaper_interval_s=180.0, housekeeper_interval_s=60.0,
                                    event_clean_interval_s=7200.0, count_open_txns_interval_s=10.0)
    hk, txn_store = _housekeeper(clock, settings)
    task = asyncio.create_task(hk.run())
    await clock.advance(0)
    assert txn_store.counted == [0.0] and hk.rounds == {"reap": [], "clean": [], "trim": []}
    await clock.advance(99.0)
    assert hk.rounds["reap"] == [] and hk.rounds["clean"] == [60.0]
    await clock.advance(7200.0 - 99.0)
    assert hk.rounds["reap"] == [100.0 + 180.0 * k for k in range(40)]  # 100, 280, ... 7120
    assert hk.rounds["clean"] == [60.0 * k for k in range(1, 121)]
    assert hk.rounds["trim"] == [7200.0]
    assert txn_store.counted == [10.0 * k for k in range(721)]
    assert hk.stats["errors"] == 0
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_failing_round_is_counted_and_retried_after_a_growing_back_off() -> None:
    clock = FakeClock()
    hk, _ = _housekeeper(clock, HousekeepingSettings())
    failures = [RuntimeError("database down")] * 7
    ran: list[float] = []

    async def once() -> None:
        ran.append(clock.now)
        if failures:
            raise failures.pop()

    task = asyncio.create_task(hk._loop("test loop", 5.0, 3.0, once))
    await clock.advance(1000.0)
    # Start 5 s; after failure n wait min(30, 3 x 2^min(n, 5)): 6, 12, 24, 30, 30, 30, 30; then every 3 s.
    assert clock.sleeps[:10] == [5.0, 6.0, 12.0, 24.0, 30.0, 30.0, 30.0, 30.0, 3.0, 3.0]
    assert ran[:9] == [5.0, 11.0, 23.0, 47.0, 77.0, 107.0, 137.0, 167.0, 170.0]
    assert hk.stats["errors"] == 7
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_cancellation_during_a_round_goes_through() -> None:
    clock = FakeClock()
    hk, _ = _housekeeper(clock, HousekeepingSettings())
    started = asyncio.Event()

    async def stuck() -> None:
        started.set()
        await asyncio.Event().wait()

    task = asyncio.create_task(hk._loop("test loop", 0.0, 1.0, stuck))
    await clock.advance(0)
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert hk.stats["errors"] == 0
