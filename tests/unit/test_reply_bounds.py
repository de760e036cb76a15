"""The bounds the servicers put on list replies (gateway/servicers/validation.py)."""

from __future__ import annotations

import pytest

from gateway.servicers.validation import REPLY_BUDGET, PartitionsAnswer, check_names_fit, within_reply_budget
from protos.metastore.v1 import transactions_pb2 as tpb
from store.errors import ResourceExhausted
from store.models import Partition


def test_rows_are_kept_up_to_the_row_limit_and_the_byte_budget() -> None:
    rows = [tpb.TxnInfo(txn_id=i, user="u" * 1000) for i in range(1, 101)]
    kept, cut = within_reply_budget(rows, max_rows=1000)
    assert kept == rows and not cut
    kept, cut = within_reply_budget(rows, max_rows=10)
    assert kept == rows[:10] and cut
    kept, cut = within_reply_budget(rows, max_rows=1000, budget=10_000)
    assert cut and 0 < len(kept) < 10 and sum(r.ByteSize() for r in kept) <= 10_000
    assert within_reply_budget([], 10) == ([], False)


def test_a_name_list_that_would_not_fit_one_reply_is_refused() -> None:
    check_names_fit(["t"] * 1000, "tables in db", "ListTables")
    with pytest.raises(ResourceExhausted, match="narrow the request with a pattern"):
        check_names_fit(["x" * 128] * (REPLY_BUDGET // 128 + 1), "tables in db", "ListTables")


def test_a_write_answer_over_the_message_size_is_refused_saying_what_the_caller_can_do() -> None:
    """PartitionsAnswer: many partitions may be written fewer per call; one alone only without its answer."""
    small = [Partition(db_name="db", table_name="t", values=(f"{i}",), name=f"ds={i}") for i in range(1000)]
    answer = PartitionsAnswer("AlterPartitions", 1 << 20, "alter")
    answer(small)
    assert [p.name for p in answer.partitions] == [p.name for p in small]
    with pytest.raises(ResourceExhausted, match=r"for the 1000 partitions altered, .*nothing was altered\. Set "
                                                r"need_result false .* or alter fewer partitions per call$"):
        PartitionsAnswer("AlterPartitions", 4096, "alter")(small)
    big = Partition(db_name="db", table_name="t", values=("x",), name="ds=x", parameters={"pad": "x" * 5000})
    with pytest.raises(ResourceExhausted, match=r"for the partition ds=x added, .*nothing was added\. Set "
                                                r"need_result false \(.*\)$"):
        PartitionsAnswer("AddPartitions", 4096)([big])
