"""Cached Thrift partition bytes decode to the partition Hive's API describes, whatever the table is
called now and whatever its columns are: the table's part is added when a reply is framed."""

from __future__ import annotations

import gc
import weakref
from typing import Any

from thriftpy2.protocol.cybin import TCyBinaryProtocol
from thriftpy2.thrift import TType
from thriftpy2.transport import TCyMemoryBuffer

from gateway.thrift import convert, wire
from gateway.thrift.idl import hms
from store.models import FieldSchema, Order, Partition, SerDeInfo, StorageDescriptor, Table

TABLE = Table("db", "t", columns=(FieldSchema("id", "bigint", "the id"), FieldSchema("v", "string")),
              partition_keys=(FieldSchema("ds", "string"),), table_id=7)
SD = StorageDescriptor(location="/w/db/t/ds=a", input_format="in", output_format="out",
                       serde=SerDeInfo("", "lib", {"k": "v"}), num_buckets=2, bucket_cols=("id",),
                       sort_cols=(Order("id", 0),), parameters={"p": "q"})


def _decode_list(data: bytes | list[bytes]) -> list[Any]:
    """The list as a reply carries it: in the result struct's field 0."""
    result = hms.ThriftHiveMetastore.get_partitions_result()
    framed = bytes([TType.LIST, 0, 0]) + (data if isinstance(data, bytes) else b"".join(data)) + b"\x00"
    TCyBinaryProtocol(TCyMemoryBuffer(framed)).read_struct(result)
    return list(result.success)


def test_partitions_decode_as_hive_describes_them_own_columns_or_the_tables() -> None:
    inherit = Partition("db", "t", ("a",), "ds=a", SD, {"x": "1"}, create_time=5, write_id=3)
    own = Partition("db", "t", ("b",), "ds=b", SD, {}, create_time=6, columns=(FieldSchema("id", "bigint"),))
    got = _decode_list(wire.partition_list(TABLE, [wire.version_of(inherit), wire.version_of(own)]))
    assert got == [convert.partition_to_thrift(TABLE, inherit), convert.partition_to_thrift(TABLE, own)]
    assert [c.name for c in got[0].sd.cols] == ["id", "v"] and [c.name for c in got[1].sd.cols] == ["id"]


def test_a_list_of_partitions_that_all_take_the_tables_columns_is_framed_alike() -> None:
    """Such a list is one join (the table's bytes between the bodies): same partitions, same order."""
    parts = [Partition("db", "t", (v,), f"ds={v}", SD, {"n": v}, create_time=i) for i, v in enumerate("abc")]
    versions = [wire.version_of(p) for p in parts]
    assert _decode_list(wire.partition_list(TABLE, versions)) == [convert.partition_to_thrift(TABLE, p) for p in parts]
    assert b"".join(wire.partition_list(TABLE, versions)) == (
        wire.partition_list(TABLE, [])[0][:1] + (3).to_bytes(4, "big")
        + b"".join(wire.partition_element(TABLE, v) for v in versions))
    assert _decode_list(wire.partition_list(TABLE, [])) == []


def test_a_rename_or_new_columns_need_no_re_encoding() -> None:
    p = Partition("db", "t", ("a",), "ds=a", SD, {})
    version = wire.version_of(p)
    renamed = Table("db2", "t2", columns=TABLE.columns + (FieldSchema("w", "int"),),
                    partition_keys=TABLE.partition_keys)
    (got,) = _decode_list(wire.partition_list(renamed, [version]))
    assert (got.dbName, got.tableName, [c.name for c in got.sd.cols]) == ("db2", "t2", ["id", "v", "w"])


def test_one_element_and_the_request_struct_form() -> None:
    p = Partition("db", "t", ("a",), "ds=a", SD, {})
    element = wire.partition_element(TABLE, wire.version_of(p))
    one = hms.Partition()
    TCyBinaryProtocol(TCyMemoryBuffer(element)).read_struct(one)
    assert one == convert.partition_to_thrift(TABLE, p)
    result = hms.GetPartitionsByNamesResult()
    TCyBinaryProtocol(TCyMemoryBuffer(b"".join(wire.partition_list_field(1, TABLE, [wire.version_of(p)])))
                     ).read_struct(result)
    assert result.partitions == [one]


def test_a_tables_bytes_are_encoded_once_per_table_object() -> None:
    result = hms.ThriftHiveMetastore.get_table_result()
    data = wire.table_struct(TABLE)
    TCyBinaryProtocol(TCyMemoryBuffer(bytes([TType.STRUCT, 0, 0]) + data + b"\x00")).read_struct(result)
    assert result.success == convert.table_to_thrift(TABLE)
    assert wire.table_struct(TABLE) is data, "the same cached object: the same bytes, not a new encoding"
    changed = Table("db", "t", columns=TABLE.columns, partition_keys=TABLE.partition_keys, parameters={"k": "v"})
    assert wire.table_struct(changed) is not data and wire.table_struct(changed) != data

    tables = hms.ThriftHiveMetastore.get_table_objects_by_name_result()
    listed = bytes([TType.LIST, 0, 0]) + wire.table_list([TABLE, changed]) + b"\x00"
    TCyBinaryProtocol(TCyMemoryBuffer(listed)).read_struct(tables)
    assert tables.success == [convert.table_to_thrift(TABLE), convert.table_to_thrift(changed)]


def test_the_identity_memo_is_bounded() -> None:
    memo = wire.ByIdentity(lambda t: t.name, size=2)
    tables = [Table("db", f"t{i}") for i in range(5)]
    assert [memo(t) for t in tables] == ["t0", "t1", "t2", "t3", "t4"]
    assert len(memo) == 2


def test_the_identity_memo_keeps_no_table_alive() -> None:
    """A superseded version of a table (an alter's old Table, dropped by the cache) is freed with its
    encoding: the memo held up to 4096 of them before, each with its columns."""
    memo = wire.ByIdentity(lambda t: t.name)
    tables = [Table("db", f"t{i}", parameters={"v": str(i)}) for i in range(100)]
    assert [memo(t) for t in tables] == [f"t{i}" for i in range(100)]
    kept = weakref.ref(tables[7])
    del tables[:50]
    gc.collect()
    assert kept() is None and len(memo) == 50
    assert [memo(t) for t in tables] == [f"t{i}" for i in range(50, 100)] and len(memo) == 50
