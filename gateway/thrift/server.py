"""Hive's metastore Thrift API on the gateway's event loop: one coroutine per connection, no threads.

TBinaryProtocol over a plain socket (what Spark's Hive client and Trino send by default), or framed
(`hive.metastore.thrift.framed.transport.enabled`, a 4-byte length before each message). A connection
carries one call at a time, as Thrift has no multiplexing: read a whole message (its end found by
`MessageScanner` as the bytes arrive), decode it with the C codec, await the handler, write the reply.

What a client can get wrong is answered, never a dropped connection or a traceback:
* a method this server does not serve: TApplicationException UNKNOWN_METHOD (clients fall back on it),
  and so is a call a served method answers with `NotServedHere` (an argument it cannot read, where the
  client's fallback still gives the right answer: a partition expression of another client);
* arguments that do not decode: TApplicationException PROTOCOL_ERROR;
* a store error, or a bug: an exception the method declares (gateway/thrift/errors.py), with a request
  id in the log for a bug.
What cannot be answered closes the connection: bytes that are not a Thrift message, a message over
`hive.metastore.server.max.message.size`, half a message and then silence for
`metastore.gateway.thrift.read.timeout`, a reply the client leaves unread for as long (its socket
full: a client that sends calls and never reads the answers would otherwise hold its connection, and
the reply, for good). Connections over `hive.metastore.server.max.threads` are
closed at once, so memory stays bounded (each holds at most one message).

With TLS, the server accepts plain TCP and upgrades each connection itself (`start_tls`) only after
counting it against that limit, within `metastore.gateway.thrift.tls.handshake.timeout`: asyncio's own
TLS listener handshakes before the connection reaches this code, so connections that never finish a
handshake would each hold a descriptor for asyncio's 60 s, uncounted and unauthenticated.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import struct
import time
import uuid
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import thriftpy2.protocol.binary as pure_binary
from thriftpy2.protocol.cybin import TCyBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType, TType
from thriftpy2.transport import TCyMemoryBuffer, TMemoryBuffer

from gateway.auth import OPEN_AUTHENTICATOR, Authenticator, thrift_identity
from gateway.thrift import layouts, meta_conf
from gateway.thrift.errors import NotServedHere, bounded, declared_exception
from gateway.thrift.framing import FramingError, MessageScanner
from store.errors import ON_PURPOSE, Unauthenticated

_log = logging.getLogger(__name__)
_FRAME = struct.Struct("!i")
_STOP = bytes([TType.STOP])
READ_CHUNK = 256 * 1024


class ReplyNotRead(Exception):
    """The client left a reply unread past the read time-out: its connection is closed."""


@dataclass(frozen=True, slots=True)
class ThriftSettings:
    host: str = "127.0.0.1"
    port: int = 9083
    framed: bool = False
    max_message_bytes: int = 100 * 1024 * 1024
    max_connections: int = 1000
    read_timeout_s: float = 60.0
    tls_handshake_timeout_s: float = 10.0
    ssl_context: ssl.SSLContext | None = None  # TLS (mutual when it requires client certificates)
    authenticator: Authenticator = OPEN_AUTHENTICATOR  # names a connection's caller from its certificate


@dataclass(frozen=True, slots=True)
class RawValue:
    """A handler's success value already encoded (a cached list of structs): the server writes it
    as the result's field 0 of `ttype` without re-encoding."""

    ttype: int
    payload: bytes | list[bytes]  # a list: pieces written one after the other, never joined


Method = Callable[..., Awaitable[Any]]
# (protocol, method, status, seconds, peer, user) after each call: metrics and the access log (gateway/interceptors.py).
CallHook = Callable[[str, str, str, float, str, str], None]
# (method, decoded arguments) before each call: may rewrite the arguments in place, or raise as the method would.
ArgumentsHook = Callable[[str, Any], None]


class ThriftServer:
    """Serve `handler`'s coroutine methods named as `service`'s Thrift methods."""

    def __init__(self, service: Any, handler: Any, settings: ThriftSettings, on_call: CallHook | None = None,
                 prepare_arguments: ArgumentsHook | None = None) -> None:
        self._service = service
        self._settings = settings
        self._on_call = on_call
        self._prepare_arguments = prepare_arguments
        self._methods: dict[str, Method] = {
            name: getattr(handler, name) for name in service.thrift_services if hasattr(handler, name)}
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._busy: set[asyncio.Task[None]] = set()  # connections with a call under way
        self._stopping = False  # stop() began: no new connection, no new call
        self.port = 0

    @property
    def served_methods(self) -> frozenset[str]:
        return frozenset(self._methods)

    async def start(self) -> None:
        # Plain TCP even with TLS: _accept counts the connection, then upgrades it (the module's note).
        self._server = await asyncio.start_server(self._accept, self._settings.host, self._settings.port,
                                                  limit=READ_CHUNK)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self, grace_s: float = 2.0) -> None:
        """Refuse new connections and new calls, close idle connections at once, and return as soon
        as the calls under way are answered (each connection closes after its reply), or after
        `grace_s`, when the rest are cancelled."""
        if self._server is None:
            return
        self._stopping = True
        self._server.close()
        for task in self._connections - self._busy:
            task.cancel()
        tasks = list(self._connections)
        try:
            if tasks:
                _, pending = await asyncio.wait(tasks, timeout=grace_s)
                for task in pending:
                    task.cancel()
        finally:
            # Also when stop() itself is cancelled: no connection outlives it. Each cancelled one
            # ends at its next await, so this wait is short.
            for task in tasks:
                if not task.done():
                    task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    def stats(self) -> dict[str, int]:
        return {"connections": len(self._connections)}

    # -- connections ------------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        if self._stopping:  # accepted by the kernel before stop() closed the listener
            writer.close()
            return
        if len(self._connections) >= self._settings.max_connections:
            _log.warning("thrift: refused a connection from %s: %d connections open "
                         "(hive.metastore.server.max.threads)",
                         writer.get_extra_info("peername"), len(self._connections))
            writer.close()
            return
        self._connections.add(task)
        try:
            if self._settings.ssl_context is not None and not await self._handshake(writer):
                return
            # This task serves only this connection, so the caller holds for every call made on it.
            thrift_identity.set(self._settings.authenticator.peer_identity(writer.get_extra_info("peercert")))
            meta_conf.begin_connection()
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client went away, or the server is stopping
        except (FramingError, Unauthenticated, ReplyNotRead) as exc:
            _log.info("thrift: closed a connection from %s: %s", writer.get_extra_info("peername"), exc)
        except TimeoutError:
            _log.info("thrift: closed a connection from %s: half a message and no more bytes for %.0fs "
                      "(metastore.gateway.thrift.read.timeout)", writer.get_extra_info("peername"),
                      self._settings.read_timeout_s)
        finally:
            self._connections.discard(task)
            writer.close()

    async def _handshake(self, writer: asyncio.StreamWriter) -> bool:
        """Upgrade the connection to TLS within the handshake time-out; False (logged) when it failed."""
        assert self._settings.ssl_context is not None
        peer = writer.get_extra_info("peername")
        try:
            async with asyncio.timeout(self._settings.tls_handshake_timeout_s):
                await writer.start_tls(self._settings.ssl_context,
                                       ssl_handshake_timeout=self._settings.tls_handshake_timeout_s)
        except TimeoutError:
            _log.info("thrift: closed a connection from %s: no TLS handshake within %.0fs "
                      "(metastore.gateway.thrift.tls.handshake.timeout)", peer, self._settings.tls_handshake_timeout_s)
            writer.transport.abort()
            return False
        except (ssl.SSLError, OSError) as exc:
            _log.info("thrift: closed a connection from %s: TLS handshake failed: %s", peer, exc)
            writer.transport.abort()
            return False
        return True

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        buffer = bytearray()
        scanner = MessageScanner(self._settings.max_message_bytes)
        while True:
            length = self._complete(buffer, scanner)
            if length is None:
                chunk = await self._read(reader, partial=bool(buffer))
                if not chunk:
                    return  # the client closed the connection
                buffer += chunk
                continue
            if self._stopping:
                return  # a whole message but stop() began: refused, as on a new connection
            start = 4 if self._settings.framed else 0
            message = bytes(buffer[start:length])
            del buffer[:length]
            task = asyncio.current_task()
            assert task is not None
            self._busy.add(task)
            try:
                started = time.perf_counter()
                name, status = "(unknown)", "CLOSED"  # no answer: the connection ended or failed mid-call
                try:
                    reply, name, status = await self._call(message)
                finally:
                    if self._on_call is not None:
                        self._on_call("thrift", name, status, time.perf_counter() - started,
                                      str(writer.get_extra_info("peername")), thrift_identity.get().user)
                if reply is not None:
                    if self._settings.framed:
                        writer.write(_FRAME.pack(sum(map(len, reply))))
                    writer.writelines(reply)  # the transport sends the pieces together, without joining them
                    await self._drain(writer)
            finally:
                self._busy.discard(task)
            if self._stopping:
                return  # the call under way is answered; stop() waits for no other on this connection

    def _complete(self, buffer: bytearray, scanner: MessageScanner) -> int | None:
        """The length of the first whole message in `buffer` (with its frame header), or None."""
        if not self._settings.framed:
            return scanner.scan(buffer)
        if len(buffer) < 4:
            return None
        size = _FRAME.unpack_from(buffer)[0]
        if not 0 < size <= self._settings.max_message_bytes:
            raise FramingError(f"frame of {size} bytes: not in 1..{self._settings.max_message_bytes} "
                               "(hive.metastore.server.max.message.size)")
        return 4 + size if len(buffer) >= 4 + size else None

    async def _drain(self, writer: asyncio.StreamWriter) -> None:
        """Wait for the reply to leave (for room in the transport's buffer), at most the read time-out: a
        reply the kernel took whole (nearly all) arms no timer."""
        if not writer.transport.get_write_buffer_size():
            return
        try:
            async with asyncio.timeout(self._settings.read_timeout_s):
                await writer.drain()
        except TimeoutError:
            writer.transport.abort()  # close() would wait for the unread bytes to be sent
            raise ReplyNotRead(f"a reply left unread for {self._settings.read_timeout_s:.0f}s "
                               "(metastore.gateway.thrift.read.timeout)") from None

    async def _read(self, reader: asyncio.StreamReader, *, partial: bool) -> bytes:
        if not partial:  # an idle connection between calls may stay open as long as the client likes
            return await reader.read(READ_CHUNK)
        async with asyncio.timeout(self._settings.read_timeout_s):
            return await reader.read(READ_CHUNK)

    # -- calls ------------------------------------------------------------------------------------

    async def _call(self, message: bytes) -> tuple[list[bytes] | None, str, str]:
        """Decode, dispatch and encode one call: the reply (None for a oneway call), the method's name
        and the outcome (OK, the declared exception's name, or the TApplicationException's kind)."""
        proto = TCyBinaryProtocol(TCyMemoryBuffer(message))
        name, mtype, seqid = proto.read_message_begin()
        if mtype not in (TMessageType.CALL, TMessageType.ONEWAY):
            raise FramingError(f"message type {mtype} where a call was expected")
        method = self._methods.get(name)
        if method is None:
            return _application_error(name, seqid, TApplicationException.UNKNOWN_METHOD,
                                      f"Invalid method name: '{bounded(name)}' (not served by this gateway)"
                                      ), "(unknown)", "UNKNOWN_METHOD"  # the label set stays bounded
        args = getattr(self._service, f"{name}_args")()
        try:
            try:
                proto.read_struct(args)
            except TypeError as exc:
                if "unhashable" not in str(exc):
                    raise
                args = getattr(self._service, f"{name}_args")()
                _read_with_list_keys(message, args)
            reread = layouts.REREAD.get(name)
            if reread is not None:
                args = reread(message, args)
        except Exception as exc:  # noqa: BLE001 - the codec's errors are of several kinds
            return _application_error(name, seqid, TApplicationException.PROTOCOL_ERROR,
                                      f"the arguments of {name} do not decode: {bounded(str(exc))}"
                                      ), name, "PROTOCOL_ERROR"
        result_cls = getattr(self._service, f"{name}_result")
        result = result_cls()
        started = time.perf_counter()
        status = "OK"
        try:
            if self._prepare_arguments is not None:
                self._prepare_arguments(name, args)
            value = await method(*(getattr(args, spec[1]) for _, spec in sorted(args.thrift_spec.items())))
        except asyncio.CancelledError:
            raise
        except NotServedHere as exc:
            return _application_error(name, seqid, TApplicationException.UNKNOWN_METHOD,
                                      bounded(str(exc))), name, "UNKNOWN_METHOD"
        except Exception as exc:  # noqa: BLE001 - every failure becomes a declared exception
            declared = _as_declared(result_cls.thrift_spec, exc)
            if declared is None:
                text = bounded(str(exc)) if isinstance(exc, ON_PURPOSE) else self._internal(name, exc)
                declared = declared_exception(name, result_cls.thrift_spec, exc, text)
            if declared is None:
                reply = _application_error(name, seqid, TApplicationException.INTERNAL_ERROR, text)
                return reply, name, "INTERNAL_ERROR"
            setattr(result, *declared)
            status = type(declared[1]).__name__
            value = None
        finally:
            _log.debug("thrift: %s took %.1f ms", name, (time.perf_counter() - started) * 1000)
        if result_cls.oneway:
            return None, name, status
        return _reply(name, seqid, result, value), name, status

    @staticmethod
    def _internal(name: str, exc: BaseException) -> str:
        request_id = uuid.uuid4().hex[:12]
        _log.error("internal error in thrift %s (request id %s)", name, request_id, exc_info=exc)
        return f"internal error (request id {request_id}); see the gateway log"


def _as_declared(result_spec: dict[int, Any], exc: BaseException) -> tuple[str, Any] | None:
    """A Thrift exception the method declares, raised by the handler itself: sent as it is."""
    for fid, spec in result_spec.items():
        if fid != 0 and type(exc) is spec[2]:
            return spec[1], exc
    return None


def _read_with_list_keys(message: bytes, args: Any) -> None:
    """Decode a call whose arguments hold a map keyed by lists (Hive's SkewedInfo keys skewed value
    tuples to locations: map<list<string>, string>). thriftpy2's decoders build dicts and cannot key
    them by lists; its pure-Python decoder, with map keys made tuples, can. Synchronous, so the
    module function is swapped for this one call without another coroutine seeing it."""
    original = pure_binary.read_val

    def read_val(inbuf: Any, ttype: int, spec: Any = None, decode_response: bool = True,
                 strict_decode: bool = False, budget: int = pure_binary.DEFAULT_MAX_DEPTH) -> Any:
        if ttype != TType.MAP:
            return original(inbuf, ttype, spec, decode_response, strict_decode, budget)
        (k_type, k_spec), (v_type, v_spec) = ((x, None) if isinstance(x, int) else x for x in spec)
        _, _, size = pure_binary.read_map_begin(inbuf)
        out = {}
        for _ in range(size):
            key = read_val(inbuf, k_type, k_spec, decode_response, strict_decode, budget - 1)
            out[tuple(key) if isinstance(key, list) else key] = read_val(
                inbuf, v_type, v_spec, decode_response, strict_decode, budget - 1)
        return out

    pure_binary.read_val = read_val
    try:
        proto = pure_binary.TBinaryProtocol(TMemoryBuffer(message))
        proto.read_message_begin()
        proto.read_struct(args)
    finally:
        pure_binary.read_val = original


def _reply(name: str, seqid: int, result: Any, value: Any) -> list[bytes]:
    """The reply message, in pieces to write one after the other."""
    out = TCyMemoryBuffer()
    proto = TCyBinaryProtocol(out)
    proto.write_message_begin(name, TMessageType.REPLY, seqid)
    if isinstance(value, RawValue):
        head = struct.pack("!bh", value.ttype, 0)
        proto.write_message_end()
        payload = value.payload
        return [out.getvalue() + head, *(payload if isinstance(payload, list) else (payload,)), _STOP]
    if value is not None:
        result.success = value
    proto.write_struct(result)
    proto.write_message_end()
    return [out.getvalue()]


def _application_error(name: str, seqid: int, kind: int, message: str) -> list[bytes]:
    out = TCyMemoryBuffer()
    proto = TCyBinaryProtocol(out)
    proto.write_message_begin(name, TMessageType.EXCEPTION, seqid)
    proto.write_struct(TApplicationException(kind, message))
    proto.write_message_end()
    return [out.getvalue()]
