"""The Thrift side of the consistency run (loadtest/consistency/thrift_side.py): the Hive 4 requests it
builds from a gRPC ReadContext, the answers it compares, and the projections that put a Thrift answer
beside a gRPC one or beside a table's history (an external table's states, an ACID table's committed
ones)."""

from __future__ import annotations

from gateway.thrift.idl import hms
from loadtest.consistency.model import ExtState, state_matches
from loadtest.consistency.thrift_side import (
    ThriftOutcome, latest_projection, grpc_twin, grpc_view, thrift_request, thrift_view,
)
from protos.metastore.v1 import catalog_pb2 as pb

CTX = pb.ReadContext(valid_write_id_list="cons.a0:5:9223372036854775807::", table_id=7, txn_id=3)


def _thrift_partition(hr: str, location: str, **params: str) -> object:
    return hms.Partition(values=["2024-01-01", hr], dbName="cons", tableName="a0",
                         sd=hms.StorageDescriptor(location=location), parameters=dict(params))


def _grpc_partition(hr: str, location: str, **params: str) -> pb.Partition:
    return pb.Partition(db_name="cons", table_name="a0", values=["2024-01-01", hr], name=f"ds=2024-01-01/hr={hr}",
                        sd=pb.StorageDescriptor(location=location), parameters=params)


def test_a_request_carries_the_snapshot_as_hive_4_sends_it_and_no_table_id_as_minus_one() -> None:
    request = thrift_request("get_partitions_by_names_req", "a0", CTX, names=["ds=x/hr=1"])
    assert (request.db_name, request.tbl_name, request.names) == ("cons", "a0", ["ds=x/hr=1"])
    assert (request.validWriteIdList, request.id) == (CTX.valid_write_id_list, 7)
    unguarded = pb.ReadContext(valid_write_id_list=CTX.valid_write_id_list)
    assert thrift_request("get_table_req", "a0", unguarded).id == -1
    latest = thrift_request("get_partition_names_ps_req", "e0", None)
    assert latest.validWriteIdList is None and latest.partValues == [] and latest.maxParts == -1
    partial = thrift_request("get_partitions_ps_with_auth_req", "a0", CTX, part_values=["", "3"], max_parts=7)
    assert (partial.partVals, partial.maxParts, partial.id) == (["", "3"], 7, 7)
    every = thrift_request("get_partitions_req", "a0", CTX, max_parts=0)
    assert (every.maxParts, every.validWriteIdList) == (0, CTX.valid_write_id_list)


def test_the_grpc_twin_reads_the_same_objects_under_the_same_context() -> None:
    request = thrift_request("get_partitions_by_names_req", "a0", CTX, names=["a", "a", "B"])
    twin = grpc_twin("get_partitions_by_names_req", request, CTX)
    assert list(twin.names) == ["a", "a", "B"] and twin.read == CTX
    assert not grpc_twin("get_table_req", thrift_request("get_table_req", "e0", None), None).HasField("read")
    every = grpc_twin("get_partitions_req", thrift_request("get_partitions_req", "a0", CTX, max_parts=7), CTX)
    assert (every.filter, every.max_parts, every.read) == ("hr >= 0", 7, CTX)


def test_partitions_agree_across_protocols_only_when_names_values_locations_and_parameters_do() -> None:
    method = "get_partitions_by_names_req"
    thrift = hms.GetPartitionsByNamesResult(partitions=[_thrift_partition("1", "/w/p1", tag="t1")])
    assert thrift_view(method, thrift) == grpc_view(method, pb.GetPartitionsByNamesResponse(
        partitions=[_grpc_partition("1", "/w/p1", tag="t1")]))
    for other in (_grpc_partition("1", "/w/other", tag="t1"), _grpc_partition("1", "/w/p1", tag="t2"),
                  _grpc_partition("2", "/w/p1", tag="t1")):
        assert thrift_view(method, thrift) != grpc_view(method, pb.GetPartitionsByNamesResponse(partitions=[other]))


def test_answers_are_equal_as_parsed_structs_or_as_exception_type_and_message() -> None:
    a = ThriftOutcome(hms.GetPartitionNamesPsResponse(names=["x"]))
    assert a.same(ThriftOutcome(hms.GetPartitionNamesPsResponse(names=["x"])))
    assert not a.same(ThriftOutcome(hms.GetPartitionNamesPsResponse(names=["y"])))
    refused = ThriftOutcome(error="MetaException", details="snapshot too old: ...")
    assert refused.too_old and not a.same(refused)
    assert not refused.same(ThriftOutcome(error="NoSuchObjectException", details="snapshot too old: ..."))


def test_an_external_read_over_thrift_is_matched_against_the_tables_states() -> None:
    state = ExtState("init", (("ds=2024-01-01/hr=1", "t1"), ("ds=2024-01-01/hr=2", "t2")))
    request = thrift_request("get_partitions_by_names_req", "e0", None,
                             names=["ds=2024-01-01/hr=2", "ds=2030-01-01/hr=1", "ds=2024-01-01/hr=2"])
    reply = hms.GetPartitionsByNamesResult(partitions=[_thrift_partition("2", "/w", tag="t2")])
    assert state_matches(state, latest_projection("get_partitions_by_names_req", request, reply))
    every_name = thrift_request("get_partition_names_ps_req", "e0", None)
    names = hms.GetPartitionNamesPsResponse(names=["ds=2024-01-01/hr=1", "ds=2024-01-01/hr=2"])
    assert state_matches(state, latest_projection("get_partition_names_ps_req", every_name, names))
    assert not state_matches(state, latest_projection(
        "get_partition_names_ps_req", every_name, hms.GetPartitionNamesPsResponse(names=["ds=2024-01-01/hr=1"])))


def test_a_read_without_a_snapshot_is_matched_with_columns_partial_specifications_and_maxparts() -> None:
    cols = (("id", "string"),)
    state = ExtState("t9", (("ds=2024-01-01/hr=1", "t1"), ("ds=2024-01-01/hr=2", "t2"), ("ds=a%3Ab%2Fc/hr=2", "t3")),
                     cols)

    def part(ds: str, hr: str, tag: str, *columns: str) -> object:
        return hms.Partition(values=[ds, hr], parameters={"tag": tag}, sd=hms.StorageDescriptor(
            cols=[hms.FieldSchema(c, "string") for c in columns]))

    table = hms.Table(tableName="a0", parameters={"tag": "t9"}, sd=hms.StorageDescriptor(
        cols=[hms.FieldSchema("id", "string")]))
    assert state_matches(state, latest_projection("get_table", ("cons", "a0"), table))
    assert not state_matches(state, latest_projection("get_table_req", None, hms.GetTableResult(table=hms.Table(
        parameters={"tag": "t9"}, sd=hms.StorageDescriptor(cols=[hms.FieldSchema("extra", "string")])))))
    request = thrift_request("get_partitions_ps_with_auth_req", "a0", None, part_values=["", "2"], max_parts=-1)
    both = hms.GetPartitionsPsWithAuthResponse(partitions=[part("2024-01-01", "2", "t2", "id"),
                                                           part("a:b/c", "2", "t3", "id")])
    assert state_matches(state, latest_projection("get_partitions_ps_with_auth_req", request, both))
    request.maxParts = 1
    assert not state_matches(state, latest_projection("get_partitions_ps_with_auth_req", request, both))
    every = thrift_request("get_partitions_req", "a0", None, max_parts=2)
    first_two = hms.PartitionsResponse(partitions=[part("2024-01-01", "1", "t1", "id"),
                                                   part("2024-01-01", "2", "t2", "id")])
    assert state_matches(state, latest_projection("get_partitions_req", every, first_two))
    stale_columns = hms.PartitionsResponse(partitions=[part("2024-01-01", "1", "t1", "extra"),
                                                       part("2024-01-01", "2", "t2", "extra")])
    assert not state_matches(state, latest_projection("get_partitions_req", every, stale_columns))
    names = thrift_request("get_partition_names", "a0", None, max_parts=0)
    assert names == ("cons", "a0", 0)
    assert state_matches(state, latest_projection("get_partition_names", names, [n for n, _ in state.parts]))


def test_a_table_agrees_across_protocols_only_with_the_same_columns() -> None:
    def thrift_table(*cols: str) -> object:
        sd = hms.StorageDescriptor(location="/w/a0", cols=[hms.FieldSchema(c, "string") for c in cols])
        return hms.GetTableResult(table=hms.Table(dbName="cons", tableName="a0", id=7, parameters={"tag": "x"},
                                                  partitionKeys=[hms.FieldSchema("ds", "string")], sd=sd))

    grpc_table = pb.GetTableResponse(table=pb.Table(
        db_name="cons", name="a0", table_id=7, parameters={"tag": "x"},
        partition_keys=[pb.FieldSchema(name="ds", type="string")], columns=[pb.FieldSchema(name="id", type="string")],
        sd=pb.StorageDescriptor(location="/w/a0")))
    assert thrift_view("get_table_req", thrift_table("id")) == grpc_view("get_table_req", grpc_table)
    assert thrift_view("get_table_req", thrift_table("id", "extra")) != grpc_view("get_table_req", grpc_table)
