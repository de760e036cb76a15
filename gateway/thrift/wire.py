"""Cached partitions as Hive Thrift bytes, so a cached read is lookups and one join (as on gRPC).

A Thrift struct is its fields, in any order, then a stop byte; Hive's clients read fields by id.
So the cache keeps each partition as the fields of its `Partition` struct except the ones that
belong to its table (dbName, tableName, and the storage descriptor's columns when the partition
has none of its own), with its storage descriptor written last and left open. A reply adds the
table's fields around each one:

    element = names + body + (table columns + stop of the descriptor, unless its own) + stop

so a rename, or a change of the table's columns, needs no re-encoding of its partitions.
"""

from __future__ import annotations

import functools
import operator
import struct
import weakref
from typing import Any, Callable, Generic, Sequence, TypeVar

from thriftpy2.protocol.cybin import TCyBinaryProtocol
from thriftpy2.thrift import TType
from thriftpy2.transport import TCyMemoryBuffer

from gateway.thrift import convert
from gateway.thrift.idl import hms
from hive.names import DEFAULT_CATALOG_NAME
from store.cache.entry import Version
from store.models import Partition, Table

T = TypeVar("T")

STOP = b"\x00"
_FIELD = struct.Struct("!bh")
_LIST = struct.Struct("!bi")
_STRING_FIELD = struct.Struct("!bhi")
SD_FIELD = _FIELD.pack(TType.STRUCT, 6)  # Partition.sd
COLS_FIELD = _FIELD.pack(TType.LIST, 1)  # StorageDescriptor.cols
_THRIFT = operator.attrgetter("thrift")
_OWN_COLUMNS = operator.attrgetter("thrift_own_columns")


def encode(value: Any) -> bytes:
    """A struct in Hive's binary protocol, stop byte included."""
    out = TCyMemoryBuffer()
    TCyBinaryProtocol(out).write_struct(value)
    return bytes(out.getvalue())


def decode(data: bytes, into: T) -> T:
    """The struct `data` holds (stop byte included), read into `into`."""
    TCyBinaryProtocol(TCyMemoryBuffer(data)).read_struct(into)
    return into


def partition_body(p: Partition) -> tuple[bytes, bool]:
    """`p`'s cached Thrift bytes and whether they hold columns of its own (see the module note)."""
    own = p.columns is not None
    head = encode(hms.Partition(values=list(p.values), createTime=p.create_time, lastAccessTime=p.last_access_time,
                                parameters=dict(p.parameters), writeId=p.write_id))[:-1]
    sd = convert.sd_to_thrift(p.sd, p.columns or ())
    if not own:
        sd.cols = None
    body = head + SD_FIELD + encode(sd)[:-1]
    return (body + STOP, True) if own else (body, False)


def _string_field(field_id: int, text: str) -> bytes:
    data = text.encode()
    return _STRING_FIELD.pack(TType.STRING, field_id, len(data)) + data


class ByIdentity(Generic[T]):
    """Encodings of a cached model object, computed once per object: the cache hands out the same
    Table object for as long as that version of the table is current, so a client asking for it
    many times per statement costs one encoding. An item lives as long as its object does (a weak
    reference, whose end removes it: an id is not reused while its item is kept) and at most `size`
    are kept. Holding the objects instead kept `size` superseded versions of tables alive, each alter's
    old Table with its columns, long after the cache had dropped them (`make soak-memory`)."""

    def __init__(self, compute: Callable[[Table], T], size: int = 4096) -> None:
        self._compute = compute
        self._size = size
        self._items: dict[int, tuple[weakref.ref[Table], T]] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __call__(self, table: Table) -> T:
        key = id(table)
        hit = self._items.get(key)
        if hit is not None and hit[0]() is table:
            return hit[1]
        value = self._compute(table)
        if len(self._items) >= self._size:
            del self._items[next(iter(self._items))]
        self._items[key] = (weakref.ref(table, functools.partial(self._forget, key)), value)
        return value

    def _forget(self, key: int, ref: weakref.ref[Table]) -> None:
        """The object of `ref` is gone: its item too, unless another object's took the id since."""
        item = self._items.get(key)
        if item is not None and item[0] is ref:
            del self._items[key]


def _table_parts(table: Table) -> tuple[bytes, bytes]:
    names = _string_field(2, table.db_name) + _string_field(3, table.name)
    columns = convert.fields_to_thrift(table.columns)
    cols = COLS_FIELD + _LIST.pack(TType.STRUCT, len(columns)) + b"".join(encode(c) for c in columns)
    return names, cols + STOP + STOP


# (the names every partition element starts with, what an element without own columns ends with)
table_parts = ByIdentity(_table_parts)
# A `Table` struct value, stop included.
table_struct = ByIdentity(lambda table: encode(convert.table_to_thrift(table)))


def struct_list(structs: Sequence[bytes]) -> bytes:
    """A `list<...>` value of these struct values."""
    return _LIST.pack(TType.STRUCT, len(structs)) + b"".join(structs)


def table_list(tables: Sequence[Table]) -> bytes:
    """A `list<Table>` value."""
    return struct_list([table_struct(t) for t in tables])


def list_field(field_id: int, value: bytes) -> bytes:
    """A struct whose one field `field_id` is the list value `value` (GetTablesResult), stop included."""
    return _FIELD.pack(TType.LIST, field_id) + value + STOP


def i64_set_field(field_id: int, values: Sequence[int]) -> bytes:
    """Field `field_id` holding the `set<i64>` `values` (no stop: a field to put before others)."""
    return (_FIELD.pack(TType.SET, field_id) + _LIST.pack(TType.I64, len(values))
            + struct.pack(f"!{len(values)}q", *values))


def struct_field(field_id: int, value: bytes) -> bytes:
    """A struct whose one field `field_id` is the struct value `value` (GetTableResult), stop included."""
    return _FIELD.pack(TType.STRUCT, field_id) + value + STOP


def partition_list(table: Table, versions: Sequence[Version]) -> list[bytes]:
    """A `list<Partition>` value of these versions, as the wire carries it (header and elements), in
    pieces to write one after the other: a reply of a thousand partitions is not copied again."""
    names, inherit_end = table_parts(table)
    header = _LIST.pack(TType.STRUCT, len(versions))
    if not versions:
        return [header]
    if not any(map(_OWN_COLUMNS, versions)):  # the common case: one join, the table's bytes between bodies
        return [header, names, (inherit_end + names).join(map(_THRIFT, versions)), inherit_end]
    pieces = [header]
    for v in versions:
        pieces += (names, v.thrift, STOP if v.thrift_own_columns else inherit_end)
    return [b"".join(pieces)]


def partition_list_field(field_id: int, table: Table, versions: Sequence[Version]) -> list[bytes]:
    """A struct whose one field `field_id` is that list (GetPartitionsByNamesResult), stop included."""
    return [_FIELD.pack(TType.LIST, field_id), *partition_list(table, versions), STOP]


def partitions_by_expr_result(table: Table, versions: Sequence[Version], has_unknown: bool) -> list[bytes]:
    """A PartitionsByExprResult value: its partitions (field 1) and hasUnknownPartitions (field 2), stop included."""
    return [_FIELD.pack(TType.LIST, 1), *partition_list(table, versions), _FIELD.pack(TType.BOOL, 2),
            b"\x01" if has_unknown else b"\x00", STOP]


def partition_spec_list(table: Table, versions: Sequence[Version]) -> list[bytes]:
    """A list<PartitionSpec> value (get_part_specs_by_filter, get_partitions_pspec): one PartitionSpec of the
    table (dbName 1, tableName 2, rootPath 3: its location, catName 6) holding the partitions whole in a
    PartitionListComposingSpec (5), empty when there are none, as Hive's HMSHandler builds it (without
    hive.hcatalog.partition.spec.grouping.enabled, which groups by storage descriptor)."""
    head = (_string_field(1, table.db_name) + _string_field(2, table.name) + _string_field(3, table.sd.location or "")
            + _FIELD.pack(TType.STRUCT, 5) + _FIELD.pack(TType.LIST, 1))
    tail = STOP + _string_field(6, DEFAULT_CATALOG_NAME) + STOP  # the composing spec's end, catName, the spec's end
    return [_LIST.pack(TType.STRUCT, 1), head, *partition_list(table, versions), tail]


def partition_specs_response(table: Table, versions: Sequence[Version]) -> list[bytes]:
    """A GetPartitionsResponse value (Hive 4's get_partitions_with_specs), stop included: its list as
    `partition_spec_list`'s, or no PartitionSpec when there are no partitions."""
    if not versions:
        return [_FIELD.pack(TType.LIST, 1), _LIST.pack(TType.STRUCT, 0), STOP]
    return [_FIELD.pack(TType.LIST, 1), *partition_spec_list(table, versions), STOP]


def partition_element(table: Table, version: Version) -> bytes:
    """One `Partition` struct value."""
    names, inherit_end = table_parts(table)
    return names + version.thrift + (STOP if version.thrift_own_columns else inherit_end)


def version_of(p: Partition) -> Version:
    """A partition read from the database, framed like a cached one."""
    body, own_columns = partition_body(p)
    return Version(p.write_id, None, b"", p.values, body, own_columns)
