"""Calls on many txns at once cost in proportion to them, over Hive's Thrift API on a real gateway.

abort_txns of 20,000 txns (hive.txn.max.open.batch raised) took 12.7 s where 2,000 took 0.38 s: the
handler told the cache of each aborted txn with the largest of all the call's event ids, computed again for
each txn (quadratic); now the cache is told once, of all of them (store/cache/facade.py ended_txns)."""

from __future__ import annotations

import time

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient


async def _abort_seconds(client: ThriftClient, count: int) -> float:
    txn_ids: list[int] = []
    while len(txn_ids) < count:
        txn_ids += (await client("open_txns", hms.OpenTxnRequest(num_txns=min(1000, count - len(txn_ids)), user="u",
                                                                 hostname="h"))).txn_ids
    started = time.perf_counter()
    await client("abort_txns", hms.AbortTxnsRequest(txn_ids=txn_ids))
    elapsed = time.perf_counter() - started
    info = await client("get_open_txns")
    assert set(txn_ids) <= set(info.open_txns) and info.abortedBits  # aborted, listed as such
    return elapsed


async def test_an_abort_of_many_txns_costs_in_proportion_to_them(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn, **{"hive.txn.max.open.batch": "20000"}) as gw:
        client = ThriftClient(gw.thrift_port)
        try:
            await _abort_seconds(client, 200)  # the session's plans
            small = await _abort_seconds(client, 2_000) / 2_000
            large = await _abort_seconds(client, 20_000) / 20_000
        finally:
            client.close()
    # Linear: the same per txn within noise (before: 3x to 6x, and growing with the count).
    assert large < 2.5 * small + 20e-6, f"{large * 1e6:.0f} µs per txn against {small * 1e6:.0f}"
