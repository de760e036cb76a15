"""The wait graph between txns: a write that has to wait for another txn to end (an add that found a
partition an open txn added, store/catalog_store.py) registers its wait here, and one that would close
a cycle (the txn it waits for waits, directly or through others, for it) is refused at once, as a
write conflict, rather than lasting until both waits time out. Two of Hive's INSERTs that add the same
partitions in opposite orders (its dynamic-partition loads add them one at a time, from several
threads) would otherwise each wait for the other until hive.txn.timeout.

The graph lives in the database (store/schema/0020), so waits through different gateways are seen.
Registrations are serialized by an advisory lock, so of two waits closing one cycle, the second sees
the first. A row lasts as long as its wait; one whose gateway died waiting stops counting at the end
of that wait's bound."""

from __future__ import annotations

import asyncpg

from store.sql import txn_waits as sql


async def register(conn: asyncpg.Connection, waiter: int, holder: int, bound_s: float) -> bool:
    """Record that txn `waiter` waits for txn `holder` for at most `bound_s`; False (nothing recorded)
    when `holder` already waits for `waiter` (the wait would be a deadlock). In a transaction."""
    await conn.execute(sql.LOCK_WAIT_GRAPH)
    await conn.execute(sql.DELETE_EXPIRED_WAITS)
    if await conn.fetchval(sql.WAITS_FOR, holder, waiter):
        return False
    await conn.execute(sql.INSERT_WAIT, waiter, holder, bound_s)
    return True


async def unregister(conn: asyncpg.Connection, waiter: int, holder: int) -> None:
    """The wait is over (also when it was cancelled, perhaps before its registration committed: so
    by the pair, not by a row id it may never have learnt). Another call of the same txn waiting
    for the same holder loses its row too: then a cycle through it is found only at its bound."""
    await conn.execute(sql.DELETE_WAIT, waiter, holder)
