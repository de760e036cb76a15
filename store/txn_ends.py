"""Wake-ups for waits on another txn's end (store/catalog_store.py: an add that found a partition an
open txn created waits for that txn to commit or abort).

The wait reads the txn's state from the database, again and again with growing pauses (at most a
second). A gateway's poller applies every COMMIT_TXN and ABORT_TXN of the notification log moments
after the commit (LISTEN/NOTIFY), whichever gateway or housekeeping loop ended the txn; it tells this
registry (`ended`), which cuts the pause of each wait on that txn short, so the waiter reads the state
at once instead of up to a second later. Without a poller (cache off, or before it started) the pauses
alone bound the wait, as before. A stopping gateway wakes them all (`stop`), and the waits then end
UNAVAILABLE rather than hold the stop for its whole grace. No I/O; event-loop only."""

from __future__ import annotations

import contextlib
from asyncio import Future, get_running_loop
from typing import Iterable, Iterator


class TxnEnds:
    def __init__(self) -> None:
        self._waiting: dict[int, set[Future[None]]] = {}
        self.stopping = False  # the gateway is stopping: every wait ends now (UNAVAILABLE, retry elsewhere)

    def stop(self) -> None:
        """Wake every wait, now and later: a stop should not wait out its grace for another txn's end."""
        self.stopping = True
        self.ended(list(self._waiting))

    @property
    def waiting(self) -> bool:
        """Whether any wait is registered (the poller's only cost when none is)."""
        return bool(self._waiting)

    @contextlib.contextmanager
    def watching(self, txn_id: int) -> Iterator[Future[None]]:
        """A future done once `ended` names `txn_id`, registered for the block: register before reading
        the txn's state, so an end applied between the read and the pause is not missed."""
        ended: Future[None] = get_running_loop().create_future()
        if self.stopping:
            ended.set_result(None)
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
