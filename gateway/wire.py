"""Protobuf wire encoding for responses assembled from cached bytes.

A repeated message field is, on the wire, each element's tag and length followed by its bytes,
so a response can be built by joining pre-encoded elements; standard clients parse it as usual.
Cached partitions are encoded without their db_name/table_name fields (a rename changes them);
those two fields are encoded once per response and put in front of each element's other fields.
"""

from __future__ import annotations

from typing import Sequence

from protos.metastore.v1 import catalog_pb2 as pb
from store.models import Partition, Table
from gateway import convert

_LEN_DELIMITED_FIELD_1 = b"\x0a"  # field 1, wire type 2: `partitions` / `table` in the responses
_LEN_DELIMITED_FIELD_2 = b"\x12"


def varint(n: int) -> bytes:
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _string_field(tag: bytes, value: str) -> bytes:
    data = value.encode()
    return tag + varint(len(data)) + data if data else b""


def partition_body(p: Partition) -> bytes:
    """A Partition message without fields 1 and 2 (db_name, table_name)."""
    m = convert.partition_to_pb(p)
    m.ClearField("db_name")
    m.ClearField("table_name")
    return m.SerializeToString()


def table_message(t: Table) -> bytes:
    return convert.table_to_pb(t).SerializeToString()


def partitions_response(db_name: str, table_name: str, bodies: Sequence[bytes]) -> bytes:
    """GetPartitionsByNamesResponse bytes from cached partition bodies."""
    prefix = _string_field(_LEN_DELIMITED_FIELD_1, db_name) + _string_field(_LEN_DELIMITED_FIELD_2, table_name)
    n = len(prefix)
    return b"".join([_LEN_DELIMITED_FIELD_1 + varint(n + len(b)) + prefix + b for b in bodies])


def table_response(table_bytes: bytes) -> bytes:
    """GetTableResponse bytes from a cached Table message."""
    return _LEN_DELIMITED_FIELD_1 + varint(len(table_bytes)) + table_bytes


def message_bytes(message: pb.GetTableResponse | pb.GetPartitionsByNamesResponse) -> bytes:
    return message.SerializeToString()
