"""A transactional table's write that comes outside a txn runs in a txn of its own.

Hive's metastore takes such a write as it comes: Hive 2.3's DDLTask sends ALTER TABLE and ADD, ALTER and
DROP PARTITION of a transactional table with no txn, and Hive 4's MSCK REPAIR adds the partitions it finds
with none (standalone-metastore's Msck.createPartitionsInBatches). Here every write to a transactional table
takes a write id, so that a snapshot taken before the write does not see it and a cache serves no version a
snapshot cannot see (store/catalog.py). So such a write is wrapped the way a client would wrap it: a txn
opened for it, the write under it, and the commit once it is written, each step the one the Thrift and gRPC
txn calls take; a write that fails aborts it. A snapshot sees the whole write or none of it, and the pollers
apply it as any committed txn's.

The txn is opened as the caller (the authenticated user, else the one its connection's set_ugi named;
shown by SHOW TRANSACTIONS with the write in its agent info). If the gateway stops between the write and
the commit, the txn is left open and times out (hive.txn.timeout), its versions discarded by the abort, as
a client's would be.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager
from typing import AsyncIterator

from gateway.auth import thrift_identity
from hive import limits
from store.cache.facade import CachedCatalog
from store.models import Table
from store.txn_store import TxnStore

log = logging.getLogger(__name__)

AGENT = "metastore gateway, for a write outside a txn: "


class OwnTxns:
    """Wraps a transactional table's write that names no txn in one of its own (the module's docstring)."""

    def __init__(self, txns: TxnStore, cached: CachedCatalog) -> None:
        self._txns = txns
        self._cached = cached

    @asynccontextmanager
    async def around(self, table: Table | None, txn_id: int, what: str) -> AsyncIterator[int]:
        """The txn a write to `table` runs in: `txn_id` when it names one or the table is not transactional
        (or not known: the store then says what is wrong), else a new one, committed when the block ends
        and aborted when it raises."""
        if txn_id or table is None or not table.is_acid:
            yield txn_id
            return
        identity = thrift_identity.get()
        user = identity.user_or(identity.claimed)
        (own,), _ = await self._txns.open_txns(1, user=user, host="", agent_info=(AGENT + what)[:limits.AGENT_INFO])
        try:
            yield own
        except BaseException:
            # Shielded: a caller that hangs up mid-write must not leave the txn open until it times out.
            await asyncio.shield(self._abort(own, what))
            raise
        self._cached.ended_txn(own, *await self._txns.commit(own))

    async def _abort(self, txn_id: int, what: str) -> None:
        try:
            event_ids = await self._txns.abort([txn_id], reason=f"{what} failed", skip_ended=True)
        except Exception:  # the write's own error is the one to answer; the txn times out instead
            log.warning("could not abort txn %d of a failed %s; it times out (hive.txn.timeout)", txn_id, what,
                        exc_info=True)
            return
        self._cached.ended_txn(txn_id, max(event_ids, default=0))
