"""store/txn_ends.py: a wait on a txn's end is woken by `ended` naming it, and leaves nothing behind."""

from __future__ import annotations

from store.txn_ends import TxnEnds


async def test_ended_wakes_the_waits_on_that_txn_only_and_the_registry_empties() -> None:
    ends = TxnEnds()
    assert not ends.waiting
    with ends.watching(7) as seven, ends.watching(7) as seven_again, ends.watching(8) as eight:
        assert ends.waiting
        ends.ended([5, 7])
        assert seven.done() and seven_again.done() and not eight.done()
        ends.ended([7])  # again: nothing left to wake, no error
    assert not ends.waiting  # the blocks ended: no registration outlives its wait
    with ends.watching(9) as nine:
        pass
    assert not nine.done() and not ends.waiting
