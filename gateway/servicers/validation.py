"""Request checks that need the gateway's settings (the store checks names and values)."""

from __future__ import annotations

from store.errors import InvalidArgument, ResourceExhausted


def require(value: str, what: str) -> str:
    if not value:
        raise InvalidArgument(f"{what} is required")
    return value


def check_batch(count: int, what: str, limit: int) -> None:
    if count == 0:
        raise InvalidArgument(f"{what}: the batch is empty")
    if count > limit:
        raise ResourceExhausted(
            f"{what}: {count} items in one request, more than metastore.gateway.max.batch.size ({limit}); "
            "split the request into batches"
        )
