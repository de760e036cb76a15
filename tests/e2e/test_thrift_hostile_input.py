"""The Thrift side of issue 15 part 3: the same validation (reached through the shared store), each
refusal the exception the method declares, with the same bounded message; the connection keeps
serving and nothing changed."""

from __future__ import annotations

from hmsclient.genthrift.hive_metastore import ttypes as ht
from thrift.Thrift import TApplicationException

from tests.e2e.test_thrift_api import Thrift, _partition, _table, gw, hms  # noqa: F401 - fixtures

NUL = "a\x00b"


async def test_nul_and_huge_values_answer_the_declared_exception(hms: Thrift) -> None:  # noqa: F811
    err = await hms.raises(ht.InvalidObjectException, "create_database", ht.Database("d", NUL, None, {}))
    assert "NUL" in err.message
    await hms.call("create_database", ht.Database("d", "", None, {}))
    huge = _table("d", "t")
    huge.owner = "o" * 1_000_000
    err = await hms.raises(ht.InvalidObjectException, "create_table", huge)
    assert "more than the limit" in err.message and len(err.message) <= 1100
    with_nul = _table("d", "t", params={"k": NUL})
    err = await hms.raises(ht.InvalidObjectException, "create_table", with_nul)
    assert "NUL" in err.message
    await hms.call("create_table", _table("d", "t"))
    err = await hms.raises(ht.InvalidObjectException, "add_partition", _partition("d", "t", NUL))
    assert "NUL" in err.message
    deep = "(ds='x' OR (ds='y' AND " * 200 + "ds='x'" + "))" * 200
    err = await hms.raises(ht.MetaException, "get_partitions_by_filter", "d", "t", deep, -1)
    assert "deep" in err.message
    # Parentheses that nest nothing are no depth: Hudi's Hive sync nests one level per partition it names.
    assert await hms.call("get_partitions_by_filter", "d", "t", "(" * 400 + "ds='x'" + ")" * 400, -1) == []
    assert await hms.call("get_partition_names", "d", "t", -1) == []
    assert await hms.call("get_all_tables", "d") == ["t"]


async def test_a_txn_with_a_nul_user_is_refused(hms: Thrift) -> None:  # noqa: F811
    # open_txns declares no exception: Thrift's TApplicationException carries the same message.
    err = await hms.raises(TApplicationException, "open_txns", ht.OpenTxnRequest(num_txns=1, user=NUL, hostname="h"))
    assert "NUL" in str(err)
    assert (await hms.call("get_open_txns")).txn_high_water_mark == 0  # no txn was opened


NUL_CALLS = [
    ("get_database", (NUL,)), ("get_databases", (NUL,)), ("get_table", ("d", NUL)), ("get_tables", ("d", NUL)),
    ("get_table_objects_by_name", ("d", [NUL, "t"])), ("get_partition", ("d", "t", [NUL])),
    ("get_partition_by_name", ("d", "t", "ds=" + NUL)), ("get_partitions_ps", ("d", "t", [NUL], -1)),
    ("get_partition_names_ps", ("d", "t", [NUL], -1)), ("get_partitions_by_names", ("d", "t", ["ds=" + NUL])),
    ("get_partitions_by_filter", ("d", "t", f"ds = '{NUL}'", -1)), ("drop_partition", ("d", "t", [NUL], False)),
    ("drop_partition_by_name", ("d", "t", "ds=" + NUL, False)), ("drop_table", ("d", NUL, False)),
    ("get_partitions", ("d", "t", -7)), ("get_partition_names", ("d", "t", 32767)),
    ("get_config_value", (NUL, "x")), ("get_functions", ("d", NUL)),
]


async def test_hostile_arguments_of_read_and_drop_methods_never_answer_an_internal_error(
        hms: Thrift) -> None:  # noqa: F811
    """Whatever the method, a bad argument is a declared exception with a bounded message (for a method
    that declares none, TApplicationException with that message), or an answer; never the gateway's
    "internal error" (a bug), and the connection keeps serving."""
    await hms.call("create_database", ht.Database("d", "", None, {}))
    await hms.call("create_table", _table("d", "t"))
    for method, args in NUL_CALLS:
        try:
            await hms.call(method, *args)
        except TApplicationException as exc:  # a method that declares no exception: the message is the store's
            assert "internal error" not in str(exc) and len(str(exc)) <= 1100, f"{method}: {exc}"
        except (ht.MetaException, ht.NoSuchObjectException, ht.InvalidObjectException, ht.InvalidOperationException,
                ht.UnknownDBException, ht.InvalidInputException, ht.ConfigValSecurityException) as exc:
            assert len(exc.message or "") <= 1100 and "internal error" not in (exc.message or ""), f"{method}: {exc}"
    assert await hms.call("get_all_tables", "d") == ["t"]


async def test_get_config_value_without_a_name_is_its_declared_exception(hms: Thrift) -> None:  # noqa: F811
    """get_config_value declares only ConfigValSecurityException: an unset name is that exception with
    the reason, not TApplicationException INTERNAL_ERROR."""
    err = await hms.raises(ht.ConfigValSecurityException, "get_config_value", None, "x")
    assert "name is required" in err.message
    assert await hms.call("get_config_value", "hive.metastore.client.socket.timeout", "7")
