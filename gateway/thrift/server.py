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
`hive.metastore.server.max.message.size`, a message not whole `metastore.gateway.thrift.read.timeout`
after the gateway began waiting for its rest, a reply the client leaves unread for as long (its socket
full: a client that sends calls and never reads the answers would otherwise hold its connection, and
the reply, for good). Connections over `hive.metastore.server.max.threads` are
closed at once, so memory stays bounded (each holds at most one message).

With TLS, the server accepts each connection's socket itself and hands it to the loop's TLS layer
(`connect_accepted_socket`) only after counting it against that limit, the handshake bounded by
`metastore.gateway.thrift.tls.handshake.timeout`: asyncio's own TLS listener handshakes before the
connection reaches this code, so connections that never finish a handshake would each hold a
descriptor for asyncio's 60 s, uncounted and unauthenticated. No byte is read from a connection before
the TLS layer owns it: a plain TCP listener whose stream reads first and upgrades later
(`start_tls`) loses a ClientHello read before the upgrade (uvloop reads at once, even when the
protocol pauses reading in connection_made), and that handshake hangs until its time-out.
"""

from __future__ import annotations

import asyncio
import logging
import socket
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
LISTEN_BACKLOG = 100  # asyncio's own listener's
ACCEPT_RETRY_S = 1.0  # after accept failed for want of descriptors or memory, as asyncio's listener waits


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
        self._listeners: list[socket.socket] = []
        self._acceptors: list[asyncio.Task[None]] = []  # one accept loop per listening socket
        self._connections: set[asyncio.Task[None]] = set()
        self._busy: set[asyncio.Task[None]] = set()  # connections with a call under way
        self._stopping = False  # stop() began: no new connection, no new call
        self.port = 0

    @property
    def served_methods(self) -> frozenset[str]:
        return frozenset(self._methods)

    async def start(self) -> None:
        # Sockets accepted here, not by a loop's listener: _accept counts a connection before the loop's
        # transport (and TLS layer) takes its socket (the module's note).
        self._listeners = await _listen(self._settings.host, self._settings.port)
        self.port = self._listeners[0].getsockname()[1]
        self._acceptors = [asyncio.create_task(self._accept_on(listener), name=f"thrift accept {i}")
                           for i, listener in enumerate(self._listeners)]

    async def stop(self, grace_s: float = 2.0) -> None:
        """Refuse new connections and new calls, close idle connections at once, and return as soon
        as the calls under way are answered (each connection closes after its reply), or after
        `grace_s`, when the rest are cancelled."""
        if not self._listeners:
            return
        self._stopping = True
        try:
            for acceptor in self._acceptors:
                acceptor.cancel()
            # Closed once the accept loops have ended, so that no reader is left on a closed descriptor.
            await asyncio.gather(*self._acceptors, return_exceptions=True)
        finally:
            for listener in self._listeners:
                listener.close()
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
        self._listeners, self._acceptors = [], []

    def stats(self) -> dict[str, int]:
        return {"connections": len(self._connections)}

    # -- connections ------------------------------------------------------------------------------

    async def _accept_on(self, listener: socket.socket) -> None:
        """Accept connections on `listener` until cancelled, each served by its own task (_accept)."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, peer = await loop.sock_accept(listener)
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                continue  # gone before it was accepted
            except OSError as exc:  # out of descriptors (EMFILE) or memory: the backlog waits meanwhile
                _log.error("thrift: cannot accept connections: %s; trying again in %.0fs", exc, ACCEPT_RETRY_S)
                await asyncio.sleep(ACCEPT_RETRY_S)
                continue
            conn.setblocking(False)  # (TCP_NODELAY: the loop's transport sets it, as on its own listener)
            # Referenced by the loop until it runs, then by _connections (or done at once: refused).
            asyncio.create_task(self._accept(conn, peer))
            await asyncio.sleep(0)  # other callbacks run between accepts, also when the backlog is long

    async def _accept(self, conn: socket.socket, peer: Any) -> None:
        task = asyncio.current_task()
        assert task is not None
        if self._stopping:  # accepted just before stop() closed the listener
            conn.close()
            return
        if len(self._connections) >= self._settings.max_connections:
            _log.warning("thrift: refused a connection from %s: %d connections open "
                         "(hive.metastore.server.max.threads)", peer, len(self._connections))
            conn.close()
            return
        self._connections.add(task)
        writer: asyncio.StreamWriter | None = None
        try:
            # From here the loop's transport owns the socket (and closes it), also when this fails.
            streams = await self._open(conn, peer)
            if streams is None:
                return
            reader, writer = streams
            # This task serves only this connection, so the caller holds for every call made on it.
            thrift_identity.set(self._settings.authenticator.peer_identity(writer.get_extra_info("peercert")))
            meta_conf.begin_connection()
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client went away, or the server is stopping
        except (FramingError, Unauthenticated, ReplyNotRead) as exc:
            _log.info("thrift: closed a connection from %s: %s", peer, exc)
        except TimeoutError:
            _log.info("thrift: closed a connection from %s: a message not whole %.0fs after its first byte "
                      "(metastore.gateway.thrift.read.timeout)", peer, self._settings.read_timeout_s)
        finally:
            self._connections.discard(task)
            if writer is not None:
                writer.close()

    async def _open(self, conn: socket.socket, peer: Any) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """The accepted socket as streams: with TLS, once the handshake is done within its time-out (None,
        logged, when it failed: the socket is closed). The TLS layer is the transport's protocol from the
        start, so it reads the client's first byte (the ClientHello sent with the connect)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=READ_CHUNK)
        protocol = asyncio.StreamReaderProtocol(reader)
        context = self._settings.ssl_context
        if context is None:
            transport, _ = await loop.connect_accepted_socket(lambda: protocol, conn)
            return reader, asyncio.StreamWriter(transport, protocol, reader, loop)
        timeout_s = self._settings.tls_handshake_timeout_s
        try:
            async with asyncio.timeout(timeout_s):  # the loop closes the transport when this ends the wait
                transport, _ = await loop.connect_accepted_socket(lambda: protocol, conn, ssl=context,
                                                                  ssl_handshake_timeout=timeout_s)
        except TimeoutError:
            _log.info("thrift: closed a connection from %s: no TLS handshake within %.0fs "
                      "(metastore.gateway.thrift.tls.handshake.timeout)", peer, timeout_s)
            return None
        except (ssl.SSLError, OSError) as exc:
            _log.info("thrift: closed a connection from %s: TLS handshake failed: %s", peer, exc)
            return None
        return reader, asyncio.StreamWriter(transport, protocol, reader, loop)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        buffer = bytearray()
        scanner = MessageScanner(self._settings.max_message_bytes)
        loop = asyncio.get_running_loop()
        deadline: float | None = None  # by when the message begun in `buffer` must have arrived whole
        while True:
            length = self._complete(buffer, scanner)
            if length is None:
                if not buffer:
                    chunk = await reader.read(READ_CHUNK)  # idle between calls: as long as the client likes
                else:  # a message arrives whole within the read time-out of its first byte, however it trickles
                    if deadline is None:
                        deadline = loop.time() + self._settings.read_timeout_s
                    async with asyncio.timeout_at(deadline):
                        chunk = await reader.read(READ_CHUNK)
                if not chunk:
                    return  # the client closed the connection
                buffer += chunk
                continue
            deadline = None
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


async def _listen(host: str, port: int) -> list[socket.socket]:
    """Listening sockets on each address of `host` (every interface when empty), as asyncio's
    create_server binds them; with port 0, all on the port the first one got."""
    infos = await asyncio.get_running_loop().getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)
    listeners: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            listener = socket.socket(family, kind, proto)
            listeners.append(listener)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)  # the IPv4 one is its own
            if port == 0 and len(listeners) > 1:
                address = (address[0], listeners[0].getsockname()[1], *address[2:])
            listener.bind(address)  # OSError: the caller names the setting (gateway/app.py)
            listener.listen(LISTEN_BACKLOG)
            listener.setblocking(False)
    except BaseException:
        for listener in listeners:
            listener.close()
        raise
    return listeners


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
