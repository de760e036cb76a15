"""The cache's sorted partition names follow every add and remove, a few or many at a time."""

from __future__ import annotations

import random

from store.cache.entry import NameIndex


def test_the_sorted_names_equal_a_fresh_sort_after_random_changes() -> None:
    rng = random.Random(7)
    have = {f"p={i:04d}" for i in range(0, 2000, 2)}
    index = NameIndex(have)
    for step in range(200):
        # Mostly a few changes between reads (insertion), sometimes many (one merge).
        for _ in range(rng.choice((1, 3, 20, 600))):
            name = f"p={rng.randrange(3000):04d}"
            if name in have:
                have.discard(name)
                index.remove(name)
            else:
                have.add(name)
                index.add(name)
        if step % 3:  # reads do not follow every batch
            assert list(index.sorted()) == sorted(have), f"step {step}"
    assert list(index.sorted()) == sorted(have)


def test_a_name_added_and_removed_between_reads_leaves_no_trace() -> None:
    index = NameIndex(["a", "c"])
    index.add("b")
    index.remove("b")
    index.remove("c")
    index.add("c")
    assert list(index.sorted()) == ["a", "c"]
