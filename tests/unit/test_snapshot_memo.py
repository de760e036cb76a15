"""The parsed-snapshot memo of the read path (store.snapshot.parse_snapshot) is bounded by size, not only by
entries: a reader's ValidWriteIdList names every aborted write id of its table, and a memo of 1024 long
lists held some 250 MiB of a gateway under `make soak-memory`."""

from __future__ import annotations

import gc
import tracemalloc

from store.snapshot import LONG_LIST_CHARS, SHORT_LIST_CHARS, ReadSnapshot, parse_snapshot


def write_id_list(first: int, aborted: int) -> str:
    """db.t's list with `aborted` aborted write ids from `first` on (every other id)."""
    ids = range(first, first + 2 * aborted, 2)
    return f"db.t:{first + 2 * aborted}:9223372036854775807::" + ",".join(map(str, ids))


def test_a_repeated_list_is_parsed_once_in_each_memo() -> None:
    short, long = write_id_list(10, 3), write_id_list(10_000_000, 1_000)
    assert len(short) <= SHORT_LIST_CHARS < len(long) <= LONG_LIST_CHARS
    for text in (short, long):
        assert parse_snapshot(text, 5, 7) is parse_snapshot(text, 5, 7)
        assert parse_snapshot(text, 5, 7) == ReadSnapshot.parse(text, 5, 7)
    assert parse_snapshot(short, 5, 7) is not parse_snapshot(short, 6, 7)  # txn id and table id are part of the key


def test_a_list_past_the_long_memo_is_parsed_at_each_read() -> None:
    huge = write_id_list(50_000_000, 10_000)
    assert len(huge) > LONG_LIST_CHARS
    first, second = parse_snapshot(huge), parse_snapshot(huge)
    assert first == second and first is not second


def test_many_long_lists_keep_little_memory() -> None:
    """200 queries' lists of 1,000 aborted ids each (8 KB of text, about 70 KB parsed): a memo of 1024 entries
    would keep all of them, about 15 MiB; this one keeps 8."""
    texts = [write_id_list(1_000_000 + 10_000 * q, 1_000) for q in range(200)]
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for text in texts:
            parse_snapshot(text, 1, 1)
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept - before < 2 * 2**20, f"the memo kept {(kept - before) / 2**20:.1f} MiB"
