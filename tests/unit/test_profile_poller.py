"""The poller-cost profile runs its batches through the real TableBatch and checks their result."""

from __future__ import annotations

from loadtest.profile_poller import profile


def test_the_batches_apply_and_are_timed() -> None:
    steps = profile(2000)  # asserts inside: the rename reached the live view, the alter and the add are visible
    assert [label for label, _ in steps] == ["alter one partition (txn write)", "commit that txn", "add one partition",
                                             "first name-order read after it", "rename the table (re-framed)"]
    assert all(ms > 0 for _, ms in steps)
