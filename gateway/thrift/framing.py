"""Where a Thrift message ends on an unframed socket, found as the bytes arrive.

Hive's clients send TBinaryProtocol over a plain socket by default (no length prefix), so the end of
a call is known only by walking its structure. `MessageScanner` walks it incrementally: it keeps a
stack of the containers it is inside and where it stopped, so each byte is looked at once however
the message is split into reads, and the complete message is then decoded in one go by the C codec.
Runs of fixed-size values and of strings (a list of partition names) are skipped in one tight loop:
the walk costs microseconds for a typical call, not a Python call per value. The walk is also where
hostile input is refused early, before anything is allocated for it: a message over the size limit, a
container whose declared length cannot fit in what is left of the limit (a list of 2^31 elements),
more container elements than MAX_ELEMENTS in all, nesting deeper than a struct can, an unknown type
code, or a malformed header.
"""

from __future__ import annotations

import struct

# TBinaryProtocol type codes and the fixed sizes of the scalar ones.
STOP, BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST = 0, 2, 3, 4, 6, 8, 10, 11, 12, 13, 14, 15
_FIXED = {BOOL: 1, BYTE: 1, DOUBLE: 8, I16: 2, I32: 4, I64: 8}
_SMALLEST = {**_FIXED, STRING: 4, STRUCT: 1, MAP: 6, SET: 5, LIST: 5}  # fewest bytes a value can take
_VERSION_MASK = 0xFFFF0000
_VERSION_1 = 0x80010000
MAX_DEPTH = 64  # Hive's deepest struct nests about 8 levels; a deeper message is hostile
# Elements of all the containers of one message. Decoding costs about 0.2 s per million (empty strings) on
# the one event loop every connection shares, so 20 million names in an 80 MB message, within the size
# limit, held every other caller for 4 s (a security audit), refused afterwards by the batch limit. No
# call the gateway takes needs more: 10,000 partitions (metastore.gateway.max.batch.size) of 20 columns and
# 10 parameters each are about 400,000.
MAX_ELEMENTS = 2_000_000

_I32 = struct.Struct("!i")
_I16 = struct.Struct("!h")

# Stack frames: what the walk is inside of. Lists so the counts can be decremented in place.
_IN_STRUCT, _VALUE, _ELEMENTS, _ENTRIES = 0, 1, 2, 3


class FramingError(ValueError):
    """The bytes are not a Thrift binary message this server accepts; the connection is closed."""


class MessageScanner:
    """Feed it the connection's buffer; `scan` answers the length of the first complete message."""

    def __init__(self, max_message_bytes: int) -> None:
        self._max = max_message_bytes
        self._reset()

    def _reset(self) -> None:
        self._pos = 0
        self._stack: list[list[int]] = []
        self._elements = 0  # declared by the containers met so far

    def _count(self, count: int, pos: int) -> None:
        self._elements += count
        if self._elements > MAX_ELEMENTS:
            raise FramingError(f"more than {MAX_ELEMENTS} list, set or map elements in one message (a container of "
                               f"{count} at byte {pos})")

    def scan(self, buffer: bytes | bytearray | memoryview) -> int | None:
        """The length of the complete message at the start of `buffer`, or None until more arrives.
        Raises FramingError for input that can never become a message this server accepts."""
        if not self._stack:
            body = self._header(buffer)
            if body is None:
                return None
            self._pos = body
            self._stack.append([_IN_STRUCT, 0])
        if self._walk(buffer):
            length = self._pos
            self._reset()
            return length
        return None

    def _budget(self, pos: int, count: int, each: int) -> None:
        if count < 0:
            raise FramingError(f"negative container or string length {count}")
        if pos + count * each > self._max:
            raise FramingError(
                f"the message would exceed {self._max} bytes (hive.metastore.server.max.message.size): "
                f"it declares {count} element(s) at byte {pos}")

    def _header(self, buf: bytes | bytearray | memoryview) -> int | None:
        """Where the argument struct starts, once the whole header has arrived."""
        if len(buf) < 4:
            return None
        first = _I32.unpack_from(buf, 0)[0]
        if first < 0:  # strict header: version | type, name, seqid
            if (first & 0xFFFFFFFF & _VERSION_MASK) != _VERSION_1:
                raise FramingError(f"bad Thrift version in message header: {first & 0xFFFFFFFF:#010x}")
            if len(buf) < 8:
                return None
            name_len = _I32.unpack_from(buf, 4)[0]
            self._budget(8, name_len, 1)
            end = 8 + name_len + 4
        else:  # old header: name, type byte, seqid
            self._budget(4, first, 1)
            end = 4 + first + 1 + 4
        return end if len(buf) >= end else None

    def _walk(self, buf: bytes | bytearray | memoryview) -> bool:
        """Advance over what has arrived; True once the outermost struct has ended."""
        n, pos, stack = len(buf), self._pos, self._stack
        try:
            while stack:
                frame = stack[-1]
                kind = frame[0]
                if kind == _IN_STRUCT:  # [kind, depth]
                    if pos >= n:
                        return False
                    ttype = buf[pos]
                    if ttype == STOP:
                        pos += 1
                        stack.pop()
                        continue
                    if pos + 3 > n:
                        return False
                    pos += 3  # type and field id
                    stack.append([_VALUE, ttype, frame[1]])
                elif kind == _VALUE:  # [kind, type, depth]: one value, taken whole or not at all
                    ttype, depth = frame[1], frame[2]
                    size = _FIXED.get(ttype)
                    if size is not None:
                        if pos + size > n:
                            return False
                        pos += size
                        stack.pop()
                    elif ttype == STRING:
                        if pos + 4 > n:
                            return False
                        length = _I32.unpack_from(buf, pos)[0]
                        self._budget(pos, length, 1)
                        if pos + 4 + length > n:
                            return False
                        pos += 4 + length
                        stack.pop()
                    elif ttype == STRUCT:
                        if depth >= MAX_DEPTH:
                            raise FramingError(f"structs nested deeper than {MAX_DEPTH} levels")
                        stack[-1] = [_IN_STRUCT, depth + 1]
                    elif ttype in (LIST, SET):
                        if pos + 5 > n:
                            return False
                        etype, count = buf[pos], _I32.unpack_from(buf, pos + 1)[0]
                        self._check_type(etype)
                        self._budget(pos, count, _SMALLEST[etype])
                        self._count(count, pos)
                        pos += 5
                        stack[-1] = [_ELEMENTS, etype, count, depth + 1]
                    elif ttype == MAP:
                        if pos + 6 > n:
                            return False
                        ktype, vtype, count = buf[pos], buf[pos + 1], _I32.unpack_from(buf, pos + 2)[0]
                        self._check_type(ktype)
                        self._check_type(vtype)
                        self._budget(pos, count, _SMALLEST[ktype] + _SMALLEST[vtype])
                        self._count(count, pos)
                        pos += 6
                        stack[-1] = [_ENTRIES, ktype, vtype, count, depth + 1]
                    else:
                        raise FramingError(f"unknown Thrift type code {ttype}")
                elif kind == _ELEMENTS:  # [kind, element type, remaining, depth]
                    etype, remaining = frame[1], frame[2]
                    size = _FIXED.get(etype)
                    if remaining == 0:
                        stack.pop()
                    elif size is not None:
                        taken = min(remaining, (n - pos) // size)
                        pos += taken * size
                        frame[2] = remaining - taken
                        if frame[2]:
                            return False
                    elif etype == STRING:  # the common run (partition names): the budget check inlined
                        while remaining:
                            if pos + 4 > n:
                                break
                            length = _I32.unpack_from(buf, pos)[0]
                            if length < 0 or pos + length > self._max:
                                self._budget(pos, length, 1)
                            if pos + 4 + length > n:
                                break
                            pos += 4 + length
                            remaining -= 1
                        frame[2] = remaining
                        if remaining:
                            return False
                    else:
                        frame[2] = remaining - 1
                        stack.append([_VALUE, etype, frame[3]])
                else:  # _ENTRIES: [kind, key type, value type, remaining, depth]
                    if frame[3] == 0:
                        stack.pop()
                        continue
                    frame[3] -= 1
                    stack.append([_VALUE, frame[2], frame[4]])
                    stack.append([_VALUE, frame[1], frame[4]])
            return True
        finally:
            self._pos = pos

    @staticmethod
    def _check_type(ttype: int) -> None:
        if ttype not in _SMALLEST:
            raise FramingError(f"unknown Thrift type code {ttype}")
