"""Wake-ups for waits on another txn's end (store/catalog_store.py: an add that found a partition an
open txn created waits for that txn to commit or abort).

The wait reads the txn's state from the database, again and again with growing pauses (at most a
second). A gateway's poller applies every COMMIT_TXN and ABORT_TXN of the notification log moments
after the commit (LISTEN/NOTIFY), whichever gateway or housekeeping loop ended the txn; it tells this
registry (`ended`), which cuts the pause of each wait on that txn short, so the waiter reads the state
at once instead of up to a second later. Without a poller (cache off, or before it started) the pauses
alone bound the wait, as before. No I/O; event-loop only."""

from __future__ import annotations

import contextlib
from asyncio import Future, get_running_loop
from typing import Iterable, Iterator


class TxnEnds:
    def __init__(self) -> None:
        self._waiting: dict[int, set[Future[None]]] = {}

    @property
    def waiting(self) -> bool:
        """Whether any wait is registered (the poller's only cost when none is)."""
        return bool(self._waiting)

    @contextlib.contextmanager
    def watching(self, txn_id: int) -> Iterator[Future[None]]:
        """A future done once `ended` names `txn_id`, registered for the block: register before reading
        the txn's state, so an end applied between the read and the pause is not missed."""
        ended: Future[None] = get_running_loop().create_future()
        self._waiting.setdefault(txn_id, set()).add(ended)
        try:
            yield ended
        finally:
            waiters = self._waiting.get(txn_id)
            if waiters is not None:
                waiters.discard(ended)
                if not waiters:
                    del self._waiting[txn_id]

    def ended(self, txn_ids: Iterable[int]) -> None:
        """These txns committed or aborted: wake whoever waits for one of them."""
        for txn_id in txn_ids:
            for ended in self._waiting.pop(txn_id, ()):
                if not ended.done():
                    ended.set_result(None)
