"""`python -m loadtest.profile_statements` measures every statement, durable and without the flush."""

from __future__ import annotations

from loadtest.profile_statements import BATCH, run


async def test_every_statement_is_measured_both_ways() -> None:
    costs = await run(50)
    assert list(costs) == ["SELECT 1", "UPDATE of one row", "pg_notify", "OpenTxns", "AllocateTableWriteIds",
                           "CommitTxn", *(f"{rpc}, {BATCH} calls in a batch" for rpc in
                                          ("OpenTxns", "AllocateTableWriteIds", "CommitTxn"))]
    assert all(durable >= 0 and unflushed >= 0 for durable, unflushed in costs.values())
