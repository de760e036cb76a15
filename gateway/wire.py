"""Protobuf wire encoding for responses assembled from cached bytes.

A repeated message field is, on the wire, each element's tag and length followed by its bytes,
so a response can be built by joining pre-encoded elements; standard clients parse it as usual.
Cached partitions are kept as such elements (`partition_element`), each already carrying its
table's current db_name/table_name, so a cached GetPartitionsByNames answer is one join. The
poller re-frames them when it applies a rename (`partition_renamer`).
"""

from __future__ import annotations

from typing import Callable

from store.models import Partition, Table
from gateway import convert

_LEN_DELIMITED_FIELD_1 = b"\x0a"  # field 1, wire type 2: `partitions` / `table` in the responses
_LEN_DELIMITED_FIELD_2 = b"\x12"
_FIELD_1, _FIELD_2 = _LEN_DELIMITED_FIELD_1[0], _LEN_DELIMITED_FIELD_2[0]


def varint(n: int) -> bytes:
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_varint(data: bytes, i: int) -> tuple[int, int]:
    """(value, index after it) of the varint at data[i]."""
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


def _string_field(tag: bytes, value: str) -> bytes:
    data = value.encode()
    return tag + varint(len(data)) + data if data else b""


def next_page_token_field(token: str) -> bytes:
    """A response's `next_page_token` (field 2, after the repeated `partitions`): nothing when empty."""
    return _string_field(_LEN_DELIMITED_FIELD_2, token)


def _names_prefix(db_name: str, table_name: str) -> bytes:
    """Partition fields 1 and 2, which lead every cached element."""
    return _string_field(_LEN_DELIMITED_FIELD_1, db_name) + _string_field(_LEN_DELIMITED_FIELD_2, table_name)


def _element(prefix: bytes, body: bytes) -> bytes:
    return _LEN_DELIMITED_FIELD_1 + varint(len(prefix) + len(body)) + prefix + body


def _element_body(element: bytes) -> bytes:
    """An element's Partition bytes without its leading db_name/table_name fields."""
    _, i = _read_varint(element, 1)
    for field in (_FIELD_1, _FIELD_2):
        if i < len(element) and element[i] == field:
            length, j = _read_varint(element, i + 1)
            i = j + length
    return element[i:]


def partition_body(p: Partition) -> bytes:
    """A Partition message without fields 1 and 2 (db_name, table_name)."""
    m = convert.partition_to_pb(p)
    m.ClearField("db_name")
    m.ClearField("table_name")
    return m.SerializeToString()


def partition_element(p: Partition) -> bytes:
    """`p` as one element of a response's repeated `partitions` field (tag, length, message)."""
    return _element(_names_prefix(p.db_name, p.table_name), partition_body(p))


def rename_partition_element(element: bytes, db_name: str, table_name: str) -> bytes:
    """The same element, carrying another table name."""
    return _element(_names_prefix(db_name, table_name), _element_body(element))


def partition_renamer(old: tuple[str, str], new: tuple[str, str]) -> Callable[[bytes], bytes]:
    """`rename_partition_element` for many elements of one table: elements framed for `old` are
    re-framed by slicing off the known prefix (a rename re-frames every partition of the table)."""
    old_prefix, new_prefix = _names_prefix(*old), _names_prefix(*new)

    def rename(element: bytes) -> bytes:
        _, start = _read_varint(element, 1)
        if not element.startswith(old_prefix, start):
            return rename_partition_element(element, *new)
        return _element(new_prefix, element[start + len(old_prefix):])

    return rename


def table_message(t: Table) -> bytes:
    return convert.table_to_pb(t).SerializeToString()


def table_response(table_bytes: bytes) -> bytes:
    """GetTableResponse bytes from a cached Table message."""
    return _LEN_DELIMITED_FIELD_1 + varint(len(table_bytes)) + table_bytes
