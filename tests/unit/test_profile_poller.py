"""The poller-cost profile runs its three batches through the real TableBatch and checks their result."""

from __future__ import annotations

from loadtest.profile_poller import profile


def test_the_three_batches_apply_and_are_timed() -> None:
    steps = profile(2000)  # asserts inside: the rename reached the live view, the alter is visible
    assert [label for label, _ in steps] == ["alter one partition (txn write)", "commit that txn", "rename the table"]
    assert all(ms > 0 for _, ms in steps)
