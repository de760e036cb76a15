"""Fill requests: the tables reads missed because the cache does not hold them.

A read that finds no entry for a name (never loaded, or evicted) asks for it here; the one filler
(the poller, which alone may install entries at a known log position) waits for requests, drains
them and loads each table in the background. The cache does not call up into the poller: the
request is data the filler reads, so the dependency stays `poller -> store`.

Asking costs a reader one dictionary lookup, and nothing when the name is already pending. Pending
names are bounded: past `max_pending` a request is dropped (the next miss asks again), so a storm
of reads for tables that do not exist cannot grow the set while no filler drains it.
"""

from __future__ import annotations

import asyncio

TableKey = tuple[str, str]  # (database, table), normalised (hive.names.normalize_identifier)


class FillRequests:
    """The names the filler should load, in the order first asked, each once until drained."""

    def __init__(self, *, max_pending: int = 10_000) -> None:
        if max_pending < 1:
            raise ValueError(f"max_pending must be at least 1, got {max_pending}")
        self._max_pending = max_pending
        self._wanted: dict[TableKey, None] = {}
        self._ready = asyncio.Event()  # set while something is wanted

    def want(self, key: TableKey) -> None:
        """Ask for a table (a reader's miss; no await)."""
        if key not in self._wanted and len(self._wanted) < self._max_pending:
            self._wanted[key] = None
            self._ready.set()

    def drain(self) -> list[TableKey]:
        """Everything asked for since the last drain; the filler takes them over."""
        wanted = list(self._wanted)
        self._wanted.clear()
        self._ready.clear()
        return wanted

    async def wait(self) -> None:
        """Until something is wanted (returns at once when something already is)."""
        await self._ready.wait()

    def __len__(self) -> int:
        return len(self._wanted)
