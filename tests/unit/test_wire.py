"""Cached partitions are response elements: joined, they parse as the response a client expects."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gateway import convert, wire
from protos.metastore.v1 import catalog_pb2 as pb
from store.models import Partition, StorageDescriptor

identifiers = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=140)


def _partition(db: str, table: str, i: int) -> Partition:
    return Partition(db, table, (f"2024-01-{i:02d}", str(i)), f"ds=2024-01-{i:02d}/hr={i}",
                     StorageDescriptor(location=f"/warehouse/t/{i}"), {"numRows": str(i * 1000)}, 1700000000 + i, i)


@given(db=identifiers, table=identifiers, count=st.integers(0, 40))
def test_joined_elements_parse_as_the_response_protobuf_would_encode(db: str, table: str, count: int) -> None:
    parts = [_partition(db, table, i) for i in range(1, count + 1)]
    joined = b"".join(wire.partition_element(p) for p in parts)
    assert pb.GetPartitionsByNamesResponse.FromString(joined) == pb.GetPartitionsByNamesResponse(
        partitions=[convert.partition_to_pb(p) for p in parts])


@given(old_db=identifiers, old_table=identifiers, new_db=identifiers, new_table=identifiers)
def test_a_renamed_element_carries_the_new_name_and_everything_else_unchanged(
        old_db: str, old_table: str, new_db: str, new_table: str) -> None:
    element = wire.partition_element(_partition(old_db, old_table, 7))
    renamed = wire.rename_partition_element(element, new_db, new_table)
    (got,) = pb.GetPartitionsByNamesResponse.FromString(renamed).partitions
    assert got == convert.partition_to_pb(_partition(new_db, new_table, 7))
    assert renamed == wire.partition_element(_partition(new_db, new_table, 7))


def test_the_table_response_wraps_the_cached_table_message() -> None:
    table = pb.Table(db_name="db", name="t", table_id=3)
    assert pb.GetTableResponse.FromString(wire.table_response(table.SerializeToString())).table == table


@given(old_db=identifiers, old_table=identifiers, new_db=identifiers, new_table=identifiers)
def test_the_table_renamer_agrees_with_renaming_one_element(old_db: str, old_table: str, new_db: str,
                                                            new_table: str) -> None:
    rename = wire.partition_renamer((old_db, old_table), (new_db, new_table))
    element = wire.partition_element(_partition(old_db, old_table, 3))
    assert rename(element) == wire.rename_partition_element(element, new_db, new_table)
    other = wire.partition_element(_partition("elsewhere", "other", 3))  # not framed for `old`: still right
    assert rename(other) == wire.rename_partition_element(other, new_db, new_table)
