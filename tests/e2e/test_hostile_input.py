"""Issue 15 part 3: NULs, huge strings, impossible snapshots, loose typed values and unknown enum
numbers are refused with a precise status and a bounded message, on every service, and change
nothing; an int partition key names one partition however its value is spelled."""

from __future__ import annotations

import base64
from typing import Any, AsyncIterator

import grpc
import pytest

from gateway.app import Gateway
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc
from protos.metastore.v1 import events_pb2 as epb
from protos.metastore.v1 import events_pb2_grpc
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import partitions, table
from tests.conftest import gateway_settings, running_gateway

C = grpc.StatusCode
NUL = "a\x00b"
HUGE = "x" * 1_000_000


class Stubs:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.catalog = catalog_pb2_grpc.CatalogStub(channel)
        self.events = events_pb2_grpc.EventsStub(channel)
        self.txns = transactions_pb2_grpc.TransactionsStub(channel)
        self.locks = locks_pb2_grpc.LocksStub(channel)


@pytest.fixture
async def api(pg_dsn: str) -> AsyncIterator[Stubs]:
    gw = Gateway(gateway_settings(pg_dsn))
    await gw.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{gw.port}")
    try:
        stubs = Stubs(channel)
        await stubs.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await stubs.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t")))
        await stubs.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "acid", transactional=True)))
        await stubs.catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name="db", table_name="t", partitions=partitions([("2024-01-01", "1")])))
        yield stubs
    finally:
        await channel.close()
        await gw.stop()


async def _state(api: Stubs) -> tuple[Any, ...]:
    dbs = (await api.catalog.ListDatabases(pb.ListDatabasesRequest())).names
    t = (await api.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t"))).table
    parts = (await api.catalog.ListPartitionNames(pb.ListPartitionNamesRequest(db_name="db", table_name="t"))).names
    txns = (await api.txns.ShowTransactions(tpb.ShowTransactionsRequest())).transactions
    locks = (await api.locks.ShowLocks(lpb.ShowLocksRequest())).locks
    head = (await api.events.GetCurrentNotificationEventId(epb.GetCurrentNotificationEventIdRequest())).event_id
    return list(dbs), t.SerializeToString(deterministic=True), list(parts), len(txns), len(locks), head


def _with_table(**changes: Any) -> pb.CreateTableRequest:
    t = table("db", "x")
    for field, value in changes.items():
        if field == "comment":
            t.columns[0].comment = value
        elif field == "param":
            t.parameters[value[0]] = value[1]
        else:
            setattr(t, field, value)
    return pb.CreateTableRequest(table=t)


CASES: list[tuple[str, str, str, Any, grpc.StatusCode, str]] = [
    ("NUL in description", "catalog", "CreateDatabase",
     pb.CreateDatabaseRequest(database=pb.Database(name="x", description=NUL)), C.INVALID_ARGUMENT, "NUL"),
    ("NUL in owner", "catalog", "CreateDatabase",
     pb.CreateDatabaseRequest(database=pb.Database(name="x", owner=NUL)), C.INVALID_ARGUMENT, "NUL"),
    ("NUL in a parameter key", "catalog", "CreateDatabase",
     pb.CreateDatabaseRequest(database=pb.Database(name="x", parameters={NUL: "v"})), C.INVALID_ARGUMENT, "NUL"),
    ("NUL in a parameter value", "catalog", "AlterDatabase",
     pb.AlterDatabaseRequest(name="db", database=pb.Database(name="db", parameters={"k": NUL})),
     C.INVALID_ARGUMENT, "NUL"),
    ("NUL in a column comment", "catalog", "CreateTable", _with_table(comment=NUL), C.INVALID_ARGUMENT, "NUL"),
    ("NUL in a table parameter", "catalog", "CreateTable", _with_table(param=("k", NUL)), C.INVALID_ARGUMENT, "NUL"),
    ("huge owner", "catalog", "CreateTable", _with_table(owner=HUGE), C.INVALID_ARGUMENT, "more than the limit"),
    ("unknown table type", "catalog", "CreateTable", _with_table(table_type=99), C.INVALID_ARGUMENT, "table_type 99"),
    ("NUL in a string partition value", "catalog", "AddPartitions",
     pb.AddPartitionsRequest(db_name="db", table_name="t", partitions=partitions([(NUL, "1")])),
     C.INVALID_ARGUMENT, "NUL"),
    ("huge partition value", "catalog", "AddPartitions",
     pb.AddPartitionsRequest(db_name="db", table_name="t", partitions=partitions([(HUGE, "1")])),
     C.INVALID_ARGUMENT, "more than the limit"),
    ("huge name in a read", "catalog", "GetPartitionsByNames",
     pb.GetPartitionsByNamesRequest(db_name="db", table_name="t", names=["ds=" + HUGE + "/hr=1"]),
     C.INVALID_ARGUMENT, "more than the limit"),
    ("huge table name", "catalog", "GetTable", pb.GetTableRequest(db_name="db", table_name=HUGE),
     C.INVALID_ARGUMENT, "longer than 128"),
    ("huge page token", "catalog", "ListPartitionNames",
     pb.ListPartitionNamesRequest(db_name="db", table_name="t", page_token="A" * 1_000_000), C.INVALID_ARGUMENT,
     "page_token"),
    ("page token of a NUL", "catalog", "ListPartitionNames",
     pb.ListPartitionNamesRequest(db_name="db", table_name="t", page_token="AA=="), C.INVALID_ARGUMENT,
     "page_token"),
    ("page token of a name longer than any", "catalog", "ListPartitionNames",
     pb.ListPartitionNamesRequest(db_name="db", table_name="t", page_token=base64.urlsafe_b64encode(
         b"a" * 4001).decode()), C.INVALID_ARGUMENT, "page_token"),
    ("filter nested 400 deep", "catalog", "GetPartitionsByFilter",  # (redundant parentheses alone nest nothing)
     pb.GetPartitionsByFilterRequest(db_name="db", table_name="t",
                                     filter="(hr=1 OR (hr=2 AND " * 200 + "hr=1" + "))" * 200),
     C.INVALID_ARGUMENT, "deep"),
    ("NOT nested 5000 deep", "catalog", "GetPartitionsByFilter",
     pb.GetPartitionsByFilterRequest(db_name="db", table_name="t", filter="NOT " * 5000 + "hr=1"),
     C.INVALID_ARGUMENT, "deep"),
    ("NUL in a filter literal", "catalog", "GetPartitionsByFilter",
     pb.GetPartitionsByFilterRequest(db_name="db", table_name="t", filter=f"ds='{NUL}'"), C.INVALID_ARGUMENT, "NUL"),
    ("max_parts below -1", "catalog", "GetPartitionsByFilter",
     pb.GetPartitionsByFilterRequest(db_name="db", table_name="t", filter="hr=1", max_parts=-2),
     C.INVALID_ARGUMENT, "max_parts"),
    ("write-id list with a negative mark", "catalog", "GetTable",
     pb.GetTableRequest(db_name="db", table_name="t",
                        read=pb.ReadContext(valid_write_id_list="db.t:-5:9223372036854775807::")),
     C.INVALID_ARGUMENT, "negative"),
    ("write-id list with an exception above its mark", "catalog", "GetTable",
     pb.GetTableRequest(db_name="db", table_name="t", read=pb.ReadContext(valid_write_id_list="db.t:3:9:9:")),
     C.INVALID_ARGUMENT, "within 1..3"),
    ("write-id list unsorted", "catalog", "GetTable",
     pb.GetTableRequest(db_name="db", table_name="t", read=pb.ReadContext(valid_write_id_list="db.t:9:2:5,2:")),
     C.INVALID_ARGUMENT, "ascending"),
    ("negative table id", "catalog", "GetTable",
     pb.GetTableRequest(db_name="db", table_name="acid", read=pb.ReadContext(
         valid_write_id_list="db.acid:50:9223372036854775807::", table_id=-1)),
     C.INVALID_ARGUMENT, "negative"),
    ("txn list 5:100::", "txns", "GetValidWriteIds",
     tpb.GetValidWriteIdsRequest(full_table_names=["db.acid"], valid_txn_list="5:100::"), C.INVALID_ARGUMENT,
     "minOpen 100"),
    ("txn list beyond every txn", "txns", "GetValidWriteIds",
     tpb.GetValidWriteIdsRequest(full_table_names=["db.acid"], valid_txn_list="1000:9223372036854775807::"),
     C.INVALID_ARGUMENT, "beyond the highest txn id"),
    ("NUL in OpenTxns user", "txns", "OpenTxns", tpb.OpenTxnsRequest(num_txns=1, user=NUL), C.INVALID_ARGUMENT,
     "NUL"),
    ("NUL in OpenTxns agent_info", "txns", "OpenTxns", tpb.OpenTxnsRequest(num_txns=1, agent_info=NUL),
     C.INVALID_ARGUMENT, "NUL"),
    ("5 MB user name", "txns", "OpenTxns", tpb.OpenTxnsRequest(num_txns=1, user="u" * 5_000_000),
     C.INVALID_ARGUMENT, "more than the limit"),
    ("NUL in Lock user", "locks", "Lock",
     lpb.LockRequest(components=[lpb.LockComponent(db_name="db", type=lpb.SHARED_READ)], user=NUL),
     C.INVALID_ARGUMENT, "NUL"),
    ("NUL in a lock's partition", "locks", "Lock",
     lpb.LockRequest(components=[lpb.LockComponent(db_name="db", table_name="t", partition_name="ds=" + NUL,
                                                   type=lpb.SHARED_READ)]), C.INVALID_ARGUMENT, "NUL"),
    ("NUL in GetNextNotification db_name", "events", "GetNextNotification",
     epb.GetNextNotificationRequest(db_name=NUL), C.INVALID_ARGUMENT, "NUL"),
]


@pytest.mark.parametrize("label, service, method, request_, code, phrase", CASES, ids=[c[0] for c in CASES])
async def test_hostile_input_is_refused_precisely_and_changes_nothing(
    api: Stubs, label: str, service: str, method: str, request_: Any, code: grpc.StatusCode, phrase: str
) -> None:
    before = await _state(api)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await getattr(getattr(api, service), method)(request_)
    assert err.value.code() == code, err.value.details()
    assert phrase in (err.value.details() or "")
    assert len(err.value.details() or "") <= 1100
    assert await _state(api) == before


async def test_an_int_key_names_one_partition_however_the_value_is_spelled(api: Stubs) -> None:
    for spelling in ("+7", " 7", "07", "7"):
        await api.catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name="db", table_name="t", partitions=partitions([("2024-05-05", spelling)]), if_not_exists=True))
    names = (await api.catalog.ListPartitionNames(pb.ListPartitionNamesRequest(db_name="db", table_name="t"))).names
    assert [n for n in names if n.startswith("ds=2024-05-05")] == ["ds=2024-05-05/hr=7"]
    found = await api.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
        db_name="db", table_name="t", names=["ds=2024-05-05/hr=007"]))
    assert [p.name for p in found.partitions] == ["ds=2024-05-05/hr=7"]
    assert list(found.partitions[0].values) == ["2024-05-05", "7"]


async def test_max_parts_minus_one_means_no_limit_as_in_hive(api: Stubs) -> None:
    got = await api.catalog.GetPartitionsByFilter(pb.GetPartitionsByFilterRequest(
        db_name="db", table_name="t", filter="hr=1", max_parts=-1))
    assert [p.name for p in got.partitions] == ["ds=2024-01-01/hr=1"]


async def test_get_next_notification_answers_a_bounded_batch(api: Stubs) -> None:
    from store.events import MAX_EVENTS_PER_READ

    got = await api.events.GetNextNotification(epb.GetNextNotificationRequest(max_events=2**31 - 1))
    assert 0 < len(got.events) <= MAX_EVENTS_PER_READ


async def test_a_write_id_list_beyond_the_tables_write_ids_is_refused(api: Stubs) -> None:
    """A mark past every write id the table allocated would count later writers' ids as committed."""
    ids = await api.txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
        full_table_names=["db.acid"], valid_txn_list=(await api.txns.GetOpenTxns(tpb.GetOpenTxnsRequest()))
        .valid_txn_list))
    table_id = ids.tables[0].table_id
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await api.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="acid", read=pb.ReadContext(
            valid_write_id_list="db.acid:50:9223372036854775807::", table_id=table_id)))
    assert err.value.code() == C.INVALID_ARGUMENT and "beyond the highest write id" in (err.value.details() or "")
    # Listing the ids above as not committed is harmless, and answered.
    listed = ",".join(str(w) for w in range(1, 51))
    got = await api.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="acid", read=pb.ReadContext(
        valid_write_id_list=f"db.acid:50:1:{listed}:", table_id=table_id)))
    assert got.table.name == "acid"


async def test_show_transactions_is_bounded_and_says_when_it_was_cut(api: Stubs) -> None:
    """A default client's 4 MB limit holds however many txns are open with the longest user, host and
    agent strings the gateway takes."""
    from hive import limits

    assert not (await api.txns.ShowTransactions(tpb.ShowTransactionsRequest())).truncated
    for _ in range(3):
        await api.txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1000, user="u" * limits.NAME, hostname="h" * limits.HOST,
                                                    agent_info="a" * limits.AGENT_INFO))
    got = await api.txns.ShowTransactions(tpb.ShowTransactionsRequest())
    assert got.truncated and 0 < len(got.transactions) < 3000
    assert got.ByteSize() <= 3 * 1024 * 1024
    assert [t.txn_id for t in got.transactions] == sorted(t.txn_id for t in got.transactions)


async def test_a_partition_whose_escaped_name_is_too_long_is_refused_and_not_added(api: Stubs) -> None:
    """Each value within its limit, the escaped name over PARTITION_NAME ('/' is '%2F'): a name every
    read by name would refuse, while the cache answered it, is never made."""
    await api.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "two", keys=(("p", "string"),
                                                                                       ("q", "string")))))
    value = "/" * 700
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await api.catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name="db", table_name="two", partitions=[pb.Partition(values=[value, value])]))
    assert err.value.code() == C.INVALID_ARGUMENT
    assert "more than the limit of 4000" in (err.value.details() or "")
    assert len(err.value.details() or "") <= 1100
    names = await api.catalog.ListPartitionNames(pb.ListPartitionNamesRequest(db_name="db", table_name="two"))
    assert list(names.names) == []


async def test_the_longest_non_ascii_names_page_on(api: Stubs) -> None:
    """A page token holds the page's last name: a name of 4-byte characters near the longest one the gateway
    makes (hive.limits PARTITION_NAME, 4,000 characters; PARTITION_VALUE, 1,024 a value) is about 21,000
    characters of base64, which the decoder refused when it took at most 8,192: the next page could not be
    asked for. Every name the gateway makes now gives a token it takes back."""
    keys = tuple((k, "string") for k in "abcd")
    await api.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "wide", keys=keys)))
    stem = "😀" * 989
    values = [[stem + "x"] * 3 + [stem + last] for last in ("x", "y", "z")]
    await api.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="wide", partitions=[pb.Partition(values=v) for v in values]))
    for _ in range(2):  # the first reads may fill the cache, the later ones are answered from it
        names, token = [], ""
        while True:
            page = await api.catalog.ListPartitionNames(pb.ListPartitionNamesRequest(
                db_name="db", table_name="wide", page_size=1, page_token=token))
            names += page.names
            token = page.next_page_token
            if not token:
                break
            assert len(token) > 8192 and len(names[-1]) == 3971
        assert [n.rsplit("/", 1)[1][-1] for n in names] == ["x", "y", "z"]


async def test_bytes_that_are_not_the_request_message_are_invalid_argument_on_every_method(pg_dsn: str) -> None:
    """grpc answered a request protobuf cannot parse with UNKNOWN ("Unexpected <class 'DecodeError'>"),
    before any of the gateway's code ran; it is the caller's mistake, and named as one."""
    from protos.metastore.v1 import admin_pb2, compaction_pb2

    modules = (pb, tpb, lpb, epb, admin_pb2, compaction_pb2)
    methods = [f"/{service.full_name}/{method.name}" for module in modules
               for service in module.DESCRIPTOR.services_by_name.values() for method in service.methods
               if not method.client_streaming and not method.server_streaming]
    assert len(methods) > 30
    async with running_gateway(pg_dsn) as gw, grpc.aio.insecure_channel(f"127.0.0.1:{gw.port}") as channel:
        for method in methods:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await channel.unary_unary(method)(b"\xff\xff\xff", timeout=10)  # a field tag cut short
            assert (refused.value.code(), method) == (C.INVALID_ARGUMENT, method), refused.value.details()
            assert f"the request of {method} is not a serialized message" in (refused.value.details() or "")
        # Still serving: the empty message is a valid request of every type.
        reply = await channel.unary_unary("/metastore.v1.Catalog/ListDatabases")(b"", timeout=10)
        assert pb.ListDatabasesResponse.FromString(reply).names == ["default"]
