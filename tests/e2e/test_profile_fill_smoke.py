"""`python -m loadtest.profile_fill` runs its two phases end to end on a small table."""

from __future__ import annotations

from loadtest.profile_fill import run


async def test_the_fill_and_the_rename_are_timed() -> None:
    rows = await run(2500)
    assert [label for label, *_ in rows] == ["fill (first read)", "rename, then read"]
    assert all(seconds > 0 and worst >= p99 > 0 for _, seconds, worst, p99 in rows)
