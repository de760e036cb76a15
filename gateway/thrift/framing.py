"""Where a Thrift message ends on an unframed socket, found as the bytes arrive.

Hive's clients send TBinaryProtocol over a plain socket by default (no length prefix), so the end of
a call is known only by walking its structure. `MessageScanner` walks it incrementally: it remembers
where it stopped, so each byte is looked at once however the message is split into reads, and the
complete message is then decoded in one go by the C codec. The walk is also where hostile input is
refused early, before anything is allocated for it: a message over the size limit, a container whose
declared length cannot fit in what is left of the limit (a list of 2^31 elements), nesting deeper than
a struct can, an unknown type code, or a malformed header.
"""

from __future__ import annotations

import struct
from typing import Generator

# TBinaryProtocol type codes and the fixed sizes of the scalar ones.
STOP, BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST = 0, 2, 3, 4, 6, 8, 10, 11, 12, 13, 14, 15
_FIXED = {BOOL: 1, BYTE: 1, DOUBLE: 8, I16: 2, I32: 4, I64: 8}
_SMALLEST = {**_FIXED, STRING: 4, STRUCT: 1, MAP: 6, SET: 5, LIST: 5}  # fewest bytes a value can take
_VERSION_MASK = 0xFFFF0000
_VERSION_1 = 0x80010000
MAX_DEPTH = 64  # Hive's deepest struct nests about 8 levels; a deeper message is hostile

_I32 = struct.Struct("!i")
_I16 = struct.Struct("!h")

Need = Generator[int, bytes, None]  # yields how many bytes it needs next, is sent them


class FramingError(ValueError):
    """The bytes are not a Thrift binary message this server accepts; the connection is closed."""


class MessageScanner:
    """Feed it the connection's buffer; `scan` answers the length of the first complete message."""

    def __init__(self, max_message_bytes: int) -> None:
        self._max = max_message_bytes
        self._reset()

    def _reset(self) -> None:
        self._walk: Need = self._message()
        self._need = next(self._walk)
        self._pos = 0

    @property
    def in_message(self) -> bool:
        """Part of a message has arrived (a read time-out applies from now on)."""
        return self._pos > 0

    def scan(self, buffer: bytes | bytearray | memoryview) -> int | None:
        """The length of the complete message at the start of `buffer`, or None until more arrives.
        Raises FramingError for input that can never become a message this server accepts."""
        view = memoryview(buffer)
        while len(view) - self._pos >= self._need:
            chunk = bytes(view[self._pos:self._pos + self._need])
            self._pos += self._need
            try:
                self._need = self._walk.send(chunk)
            except StopIteration:
                length = self._pos
                self._reset()
                return length
        return None

    def _budget(self, count: int, each: int) -> None:
        if count < 0:
            raise FramingError(f"negative container or string length {count}")
        if self._pos + count * each > self._max:
            raise FramingError(
                f"the message would exceed {self._max} bytes (hive.metastore.server.max.message.size): "
                f"it declares {count} element(s) at byte {self._pos}")

    def _message(self) -> Need:
        first = _I32.unpack((yield 4))[0]
        if first < 0:  # strict header: version | type, name, seqid
            if (first & 0xFFFFFFFF & _VERSION_MASK) != _VERSION_1:
                raise FramingError(f"bad Thrift version in message header: {first & 0xFFFFFFFF:#010x}")
            name_len = _I32.unpack((yield 4))[0]
            self._budget(name_len, 1)
            if name_len:
                yield name_len
            yield 4  # seqid
        else:  # old header: name, type byte, seqid
            self._budget(first, 1)
            if first:
                yield first
            yield 1 + 4
        yield from self._struct(0)

    def _struct(self, depth: int) -> Need:
        if depth > MAX_DEPTH:
            raise FramingError(f"structs nested deeper than {MAX_DEPTH} levels")
        while True:
            ttype = (yield 1)[0]
            if ttype == STOP:
                return
            yield 2  # field id
            yield from self._value(ttype, depth)

    def _value(self, ttype: int, depth: int) -> Need:
        size = _FIXED.get(ttype)
        if size is not None:
            yield size
        elif ttype == STRING:
            length = _I32.unpack((yield 4))[0]
            self._budget(length, 1)
            if length:
                yield length
        elif ttype == STRUCT:
            yield from self._struct(depth + 1)
        elif ttype in (LIST, SET):
            head = yield 5
            etype, count = head[0], _I32.unpack(head[1:])[0]
            self._check_type(etype)
            self._budget(count, _SMALLEST[etype])
            for _ in range(count):
                yield from self._value(etype, depth + 1)
        elif ttype == MAP:
            head = yield 6
            ktype, vtype, count = head[0], head[1], _I32.unpack(head[2:])[0]
            self._check_type(ktype)
            self._check_type(vtype)
            self._budget(count, _SMALLEST[ktype] + _SMALLEST[vtype])
            for _ in range(count):
                yield from self._value(ktype, depth + 1)
                yield from self._value(vtype, depth + 1)
        else:
            raise FramingError(f"unknown Thrift type code {ttype}")

    @staticmethod
    def _check_type(ttype: int) -> None:
        if ttype not in _SMALLEST:
            raise FramingError(f"unknown Thrift type code {ttype}")
