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

import struct
from typing import Any, Sequence

from thriftpy2.protocol.cybin import TCyBinaryProtocol
from thriftpy2.thrift import TType
from thriftpy2.transport import TCyMemoryBuffer

from gateway.thrift import convert
from gateway.thrift.idl import hms
from store.cache.entry import Version
from store.models import Partition, Table

STOP = b"\x00"
_FIELD = struct.Struct("!bh")
_LIST = struct.Struct("!bi")
_STRING_FIELD = struct.Struct("!bhi")
SD_FIELD = _FIELD.pack(TType.STRUCT, 6)  # Partition.sd
COLS_FIELD = _FIELD.pack(TType.LIST, 1)  # StorageDescriptor.cols


def encode(value: Any) -> bytes:
    """A struct in Hive's binary protocol, stop byte included."""
    out = TCyMemoryBuffer()
    TCyBinaryProtocol(out).write_struct(value)
    return bytes(out.getvalue())


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


def table_parts(table: Table) -> tuple[bytes, bytes]:
    """(the names every element starts with, what an element without own columns ends with)."""
    names = _string_field(2, table.db_name) + _string_field(3, table.name)
    columns = convert.fields_to_thrift(table.columns)
    cols = COLS_FIELD + _LIST.pack(TType.STRUCT, len(columns)) + b"".join(encode(c) for c in columns)
    return names, cols + STOP + STOP


def partition_list(table: Table, versions: Sequence[Version]) -> bytes:
    """A `list<Partition>` value of these versions, as the wire carries it (header and elements)."""
    names, inherit_end = table_parts(table)
    pieces = [_LIST.pack(TType.STRUCT, len(versions))]
    for v in versions:
        pieces += (names, v.thrift, STOP if v.thrift_own_columns else inherit_end)
    return b"".join(pieces)


def partition_list_field(field_id: int, table: Table, versions: Sequence[Version]) -> bytes:
    """A struct whose one field `field_id` is that list (GetPartitionsByNamesResult), stop included."""
    return _FIELD.pack(TType.LIST, field_id) + partition_list(table, versions) + STOP


def partition_element(table: Table, version: Version) -> bytes:
    """One `Partition` struct value."""
    names, inherit_end = table_parts(table)
    return names + version.thrift + (STOP if version.thrift_own_columns else inherit_end)


def version_of(p: Partition) -> Version:
    """A partition read from the database, framed like a cached one."""
    body, own_columns = partition_body(p)
    return Version(p.write_id, None, b"", p.values, body, own_columns)
