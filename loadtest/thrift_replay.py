"""A Thrift reader that costs its client next to nothing, so a benchmark measures the server.

Decoding a `get_partitions_by_names(100)` reply into Python objects costs a Python client more than
the gateway spends serving it (about 1.5 ms of client CPU per call even with Thrift's C codec), and
on a 2-core machine the clients and the server share the cores: a decoding client measures itself.
`ReplayCall` sends a call's bytes, encoded once, and decodes only the first reply in full (checking
it: no exception, the partitions asked for); from then on it reads a reply of that same length and
compares it byte for byte with the first one (a C memcmp). A reply that differs at all, because the
data changed or the server answered differently, is an error, never counted as served. Both peers
of a benchmark (the gateway and the Hive Metastore) are read this way, over unframed
TBinaryProtocol on one blocking socket each, as Hive's clients connect.
"""

from __future__ import annotations

import socket
from typing import Any, Callable

from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport.TTransport import TMemoryBuffer, TTransportException

READ_CHUNK = 1 << 20


class ReplayError(Exception):
    """A reply that is not the answer the first call checked."""


def encode_call(name: str, args: Any) -> bytes:
    """A strict TBinaryProtocol CALL message of `args` (a generated `<method>_args`), seqid 0."""
    buffer = TMemoryBuffer()
    proto = TBinaryProtocol(buffer)
    proto.writeMessageBegin(name, TMessageType.CALL, 0)
    args.write(proto)
    proto.writeMessageEnd()
    return buffer.getvalue()


class ReplayCall:
    """One call, replayed over one connection. `check(result)` vets the first decoded result and
    answers the number of items it holds (what the benchmark counts per call)."""

    def __init__(self, sock: socket.socket, request: bytes, result_type: type,
                 check: Callable[[Any], int]) -> None:
        self._sock = sock
        self._request = request
        self._result_type = result_type
        self._check = check
        self._expected = b""
        self._reply = bytearray()
        self.items = 0

    def __call__(self) -> int:
        self._sock.sendall(self._request)
        if not self._expected:
            self._expected, result = self._read_decoded()
            self.items = self._check(result)
            self._reply = bytearray(len(self._expected))
            return self.items
        view, got = memoryview(self._reply), 0
        while got < len(view):
            n = self._sock.recv_into(view[got:])
            if n == 0:
                raise ReplayError("the server closed the connection in the middle of a reply")
            got += n
        if self._reply != self._expected:
            raise ReplayError(f"the reply ({len(self._reply)} bytes) differs from the first answer to the same "
                              "call: the data changed, or the server answered differently")
        return self.items

    def _read_decoded(self) -> tuple[bytes, Any]:
        """The first reply, read until it decodes in full (the pure codec: it can tell where it ended)."""
        data = b""
        while True:
            chunk = self._sock.recv(READ_CHUNK)
            if not chunk:
                raise ReplayError("the server closed the connection before replying")
            data += chunk
            buffer = TMemoryBuffer(data)
            proto = TBinaryProtocol(buffer)
            try:
                _, kind, _ = proto.readMessageBegin()
                if kind == TMessageType.EXCEPTION:
                    error = TApplicationException()
                    error.read(proto)
                    raise ReplayError(f"the server answered an exception: {error.message}")
                result = self._result_type()
                result.read(proto)
                proto.readMessageEnd()
            except (EOFError, TTransportException):
                continue  # not all of it yet
            for field in ("o1", "o2", "o3"):
                if getattr(result, field, None) is not None:
                    raise ReplayError(f"the server answered {getattr(result, field)!r}")
            end = buffer._buffer.tell()
            if end != len(data):
                raise ReplayError(f"{len(data) - end} bytes after the reply: the server sent more than one answer")
            return data, result
