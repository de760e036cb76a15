"""Request checks that need the gateway's settings (the store checks names and values)."""

from __future__ import annotations

from typing import Sequence, TypeVar

from google.protobuf.message import Message

from store.errors import InvalidArgument, ResourceExhausted

M = TypeVar("M", bound=Message)
REPLY_BUDGET = 3 * 1024 * 1024
"""The most a list reply carries, under a default client's 4 MB receive limit."""


def require(value: str, what: str) -> str:
    if not value:
        raise InvalidArgument(f"{what} is required")
    return value


def check_batch(count: int, what: str, limit: int, *, allow_empty: bool = False) -> None:
    """At most `limit` items in one request; none only where the API allows it (Hive's Thrift calls do)."""
    if count == 0 and not allow_empty:
        raise InvalidArgument(f"{what}: the batch is empty")
    if count > limit:
        raise ResourceExhausted(
            f"{what}: {count} items in one request, more than metastore.gateway.max.batch.size ({limit}); "
            "split the request into batches"
        )


def within_reply_budget(rows: Sequence[M], max_rows: int, budget: int = REPLY_BUDGET) -> tuple[list[M], bool]:
    """The leading rows that fit `max_rows` and `budget` bytes, and whether any were left out."""
    kept: list[M] = []
    size = 0
    for row in rows[:max_rows]:
        size += row.ByteSize() + 8  # the field's tag and length
        if size > budget:
            break
        kept.append(row)
    return kept, len(kept) < len(rows)


def check_names_fit(names: Sequence[str], what: str, call: str) -> None:
    """A list of names has no paging (Hive's get_all_tables has none either): refuse one that would not
    fit a reply rather than send what a default client cannot receive."""
    size = sum(len(n) + 3 for n in names)
    if size > REPLY_BUDGET:
        raise ResourceExhausted(f"{call}: the {len(names)} {what} take {size} bytes, more than one reply holds "
                                f"({REPLY_BUDGET}); narrow the request with a pattern")
