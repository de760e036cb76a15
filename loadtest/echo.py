"""The gRPC floor target: a bare grpc.aio server that answers fixed methods with pre-built bytes.

It registers a generic handler without a request deserializer or response serializer, so it neither
parses the request nor encodes the response: what it costs is the cost of grpc.aio itself (HTTP/2,
the event loop, the Python handler call). Measuring it under the same load as the gateway gives the
floor the gateway's own work is added to. The client side (`EchoUser`) likewise sends raw bytes and
does not parse the reply.

Run it as its own process (so it does not share a core and a GIL with the load generator):

    python -m loadtest.echo --port 50199 --size 20000 --method /metastore.v1.Catalog/GetPartitionsByNames

It prints "listening on HOST:PORT" on stdout once serving and stops gracefully on SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from typing import AsyncIterator, Awaitable, Callable, Mapping, Sequence

import grpc

from loadtest.clock import loop_factory
from loadtest.errors import ConfigError
from loadtest.users import GrpcUser, task

# A length-delimited field with the largest legal field number: the filler is a valid protobuf
# encoding that any message type parses as one unknown field, in case a client does parse it.
_FILLER_KEY = bytes([0xFA, 0xFF, 0xFF, 0xFF, 0x0F])  # varint((2**29 - 1) << 3 | 2)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def filler_payload(size: int) -> bytes:
    """Exactly `size` bytes forming a valid protobuf message (one unknown field); size 0 or >= 6."""
    if size == 0:
        return b""
    if size < 6:
        raise ConfigError(f"payload size must be 0 or >= 6 bytes, got {size}")
    for length_bytes in range(1, 6):
        data = size - len(_FILLER_KEY) - length_bytes
        if data >= 0 and len(_varint(data)) == length_bytes:
            return _FILLER_KEY + _varint(data) + b"\x00" * data
    raise ConfigError(f"cannot build a {size}-byte payload")  # unreachable for sizes below 2**35


def _check_method(path: str) -> None:
    parts = path.split("/")
    if len(parts) != 3 or parts[0] != "" or not parts[1] or not parts[2]:
        raise ConfigError(f"method must be a full path like '/pkg.Service/Method', got {path!r}")


def _payload_behavior(payload: bytes) -> Callable[[bytes, grpc.aio.ServicerContext], Awaitable[bytes]]:
    async def respond(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return payload

    return respond


class _FixedReplies(grpc.GenericRpcHandler):
    """Looks a call's full method path up in a dict; unknown methods get UNIMPLEMENTED from grpc."""

    def __init__(self, method_payloads: Mapping[str, bytes]) -> None:
        self._handlers = {
            path: grpc.unary_unary_rpc_method_handler(
                _payload_behavior(payload), request_deserializer=None, response_serializer=None
            )
            for path, payload in method_payloads.items()
        }

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        return self._handlers.get(handler_call_details.method)


async def start_echo_server(
    method_payloads: Mapping[str, bytes], host: str = "127.0.0.1", port: int = 0, *,
    options: Sequence[tuple[str, object]] = (),
) -> tuple[grpc.aio.Server, int]:
    """Start serving `method_payloads` (full method path -> reply bytes) on host:port (0 picks a
    free port). Returns the started server and the bound port; stop it with `await server.stop(grace)`."""
    if not method_payloads:
        raise ConfigError("the echo server needs at least one method")
    for path, payload in method_payloads.items():
        _check_method(path)
        if not isinstance(payload, (bytes, bytearray)):
            raise ConfigError(f"payload for {path} must be bytes, got {type(payload).__name__}")
    server = grpc.aio.server(options=list(options))
    server.add_generic_rpc_handlers((_FixedReplies({p: bytes(b) for p, b in method_payloads.items()}),))
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    bound = server.add_insecure_port(address)
    if bound == 0:
        raise ConfigError(f"could not bind the echo server to {address}")
    await server.start()
    return server, bound


@contextlib.asynccontextmanager
async def echo_server(
    method_payloads: Mapping[str, bytes], host: str = "127.0.0.1", port: int = 0, grace_s: float = 1.0
) -> AsyncIterator[str]:
    """An in-process echo server for the duration of the block; yields its "host:port" address.
    Usable as a driver `Target.start` factory via `functools.partial(echo_server, payloads)`."""
    server, bound = await start_echo_server(method_payloads, host, port)
    try:
        yield f"[{host}]:{bound}" if ":" in host else f"{host}:{bound}"
    finally:
        await server.stop(grace_s)


class EchoUser(GrpcUser):
    """Calls `options["method"]` with raw `options["request"]` bytes (default empty) and does not
    parse the reply. `options["items"]` (default 0) is counted per successful call, to mirror the
    items/s of the gateway scenario the floor stands in for; `options["name"]` names the request."""

    @task
    async def call_method(self) -> None:
        assert self.channel is not None
        method = self.options["method"]
        call = self.channel.unary_unary(method, request_serializer=None, response_deserializer=None)
        request = self.options.get("request", b"")
        async with self.measure(self.options.get("name", method)) as m:
            await call(request, timeout=self.call_timeout_s)
            m.items = int(self.options.get("items", 0))


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m loadtest.echo", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on stdout)")
    parser.add_argument("--size", type=int, default=0, help="reply size in bytes (0 or >= 6)")
    parser.add_argument(
        "--method", action="append", required=True, help="full method path, e.g. /pkg.Svc/M (repeatable)"
    )
    parser.add_argument("--no-uvloop", action="store_true", help="use the default asyncio loop")
    return parser.parse_args(argv)


async def _serve_until_signalled(args: argparse.Namespace) -> None:
    payload = filler_payload(args.size)
    server, port = await start_echo_server({m: payload for m in args.method}, args.host, args.port)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    print(f"listening on {args.host}:{port}", flush=True)
    try:
        await stopping.wait()
    finally:
        await server.stop(1.0)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        filler_payload(args.size)
        for path in args.method:
            _check_method(path)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with asyncio.Runner(loop_factory=loop_factory(not args.no_uvloop)) as runner:
        runner.run(_serve_until_signalled(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
