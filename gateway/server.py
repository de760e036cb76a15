"""The grpc.aio server: services, health checking and reflection, bound to one address.

Reflection is served as both grpc.reflection.v1 (what current grpcurl, Postman and grpcui ask for
first) and v1alpha (older clients). The two protocols' messages are identical on the wire, and
grpcio-reflection 1.75 ships only v1alpha, so the v1 method is v1alpha's servicer under v1's name.

The stop refuses before it stops. grpc core answers CANCELLED to every call that has reached the
server but not yet a handler when `server.stop` begins (grpc/grpc#41785): nothing of the call ran,
yet clients do not retry CANCELLED (pipeline/client/retry.py retries UNAVAILABLE only), so under
load each restart failed a few calls for good. `stop` therefore first answers UNAVAILABLE to every
call that reaches a handler (`_Refusal`), until none has come for `REFUSAL_QUIET_S` (at most
`REFUSAL_WINDOW_S`, taken from the grace: calls under way go on meanwhile), and only then stops the
server.
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any, Awaitable, Callable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2

from gateway.auth import OPEN_AUTHENTICATOR, AuthInterceptor, Authenticator, Ownership, grpc_server_credentials
from gateway.config import Settings
from gateway.interceptors import CallObserver, ObservingInterceptor
from gateway.metrics import StatsSource
from gateway.servicers import catalog as catalog_servicer
from gateway.servicers.admin import AdminServicer
from gateway.servicers.catalog import CatalogServicer
from gateway.servicers.events import EventsServicer
from gateway.servicers.locks import LocksServicer
from gateway.servicers.transactions import TransactionsServicer
from protos.metastore.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    catalog_pb2,
    compaction_pb2,
    events_pb2,
    events_pb2_grpc,
    locks_pb2,
    locks_pb2_grpc,
    transactions_pb2,
    transactions_pb2_grpc,
)
from store.cache.facade import CachedCatalog
from store.catalog_store import CatalogStore
from store.lock_store import LockStore
from store.txn_store import TxnStore

SERVICE_NAMES = (
    catalog_pb2.DESCRIPTOR.services_by_name["Catalog"].full_name,
    events_pb2.DESCRIPTOR.services_by_name["Events"].full_name,
    transactions_pb2.DESCRIPTOR.services_by_name["Transactions"].full_name,
    admin_pb2.DESCRIPTOR.services_by_name["Admin"].full_name,
    locks_pb2.DESCRIPTOR.services_by_name["Locks"].full_name,
    compaction_pb2.DESCRIPTOR.services_by_name["Compactor"].full_name,  # registered by gateway/app.py
)


REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"

# The stop's refusal (the module's note): it ends once no call has come for REFUSAL_QUIET_S, or after
# REFUSAL_WINDOW_S (or the grace, when that is shorter) however the calls come.
REFUSAL_QUIET_S = 0.05
REFUSAL_WINDOW_S = 1.0
# The settings a port-in-use error names, with the flag that sets each.
GRPC_PORT_SETTING = "metastore.gateway.port (--port)"
THRIFT_PORT_SETTING = "hive.metastore.port (--conf hive.metastore.port=N)"
METRICS_PORT_SETTING = "metastore.gateway.metrics.port"
STOPPING_MESSAGE = "the metastore gateway is stopping; retry the call (on another gateway, or once this one is back)"


class _Refusal(grpc.aio.ServerInterceptor):
    """Once `refusing`, every call that reaches a handler is answered UNAVAILABLE without running."""

    def __init__(self) -> None:
        self.refusing = False
        self.last_refused = 0.0  # time.monotonic() of the last refusal

    async def intercept_service(self, continuation: Callable[[Any], Awaitable[Any]], details: Any) -> Any:
        handler = await continuation(details)
        if not self.refusing or handler is None:
            return handler
        self.last_refused = time.monotonic()

        async def refuse(_request: Any, context: grpc.aio.ServicerContext) -> Any:
            await context.abort(grpc.StatusCode.UNAVAILABLE, STOPPING_MESSAGE)

        serializers = {"request_deserializer": handler.request_deserializer,
                       "response_serializer": handler.response_serializer}
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(refuse, **serializers)
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(refuse, **serializers)
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(refuse, **serializers)
        return grpc.stream_stream_rpc_method_handler(refuse, **serializers)


class GrpcServer:
    """Owns the grpc.aio server and its health servicer. `start()` returns the bound port."""

    def __init__(self, settings: Settings, catalog: CatalogStore, txn_store: TxnStore, cached: CachedCatalog,
                 stats: StatsSource, lock_store: LockStore | None = None,
                 observer: CallObserver | None = None, auth: Authenticator = OPEN_AUTHENTICATOR) -> None:
        self._settings = settings
        options = [
            ("grpc.max_receive_message_length", settings.max_message_bytes),
            ("grpc.max_send_message_length", settings.max_message_bytes),
            ("grpc.so_reuseport", 1 if settings.so_reuseport else 0),
        ]
        self._refusal = _Refusal()
        interceptors: list[grpc.aio.ServerInterceptor] = [self._refusal]  # first: a stopping server runs nothing
        if auth.enabled:  # first: the observer caches its handler per method, so what follows it runs once
            interceptors.append(AuthInterceptor(auth))
        if observer is not None:
            interceptors.append(ObservingInterceptor(observer, auth))
        self.server = grpc.aio.server(options=options, maximum_concurrent_rpcs=settings.max_concurrent_rpcs,
                                      interceptors=interceptors)
        self.health = health.aio.HealthServicer()
        catalog_servicer.register(CatalogServicer(catalog, settings, cached, Ownership(txn_store, lock_store), auth),
                                  self.server)
        admin_pb2_grpc.add_AdminServicer_to_server(AdminServicer(stats), self.server)
        events_pb2_grpc.add_EventsServicer_to_server(EventsServicer(catalog, settings, auth), self.server)
        transactions_pb2_grpc.add_TransactionsServicer_to_server(
            TransactionsServicer(txn_store, settings, lock_store, cached, auth), self.server)
        if lock_store is not None:
            locks_pb2_grpc.add_LocksServicer_to_server(
                LocksServicer(lock_store, settings, Ownership(txn_store, lock_store), auth), self.server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflected = (*SERVICE_NAMES, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                     REFLECTION_V1, reflection.SERVICE_NAME)
        servicer = reflection.aio.ReflectionServicer(reflected)
        for name in (REFLECTION_V1, reflection.SERVICE_NAME):
            self.server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, {
                "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
                    servicer.ServerReflectionInfo,
                    request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
                    response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString)}),))
        self.port = 0

    async def start(self) -> int:
        address = f"{self._settings.host}:{self._settings.port}"
        check_port_free(self._settings.host, self._settings.port, GRPC_PORT_SETTING,
                        reuse_port=self._settings.so_reuseport)
        credentials = grpc_server_credentials(self._settings)
        try:
            if credentials is None:
                self.port = self.server.add_insecure_port(address)
            else:
                self.port = self.server.add_secure_port(address, credentials)
        except RuntimeError as exc:  # grpcio raises RuntimeError("Failed to bind to address ...")
            raise BindError(address, GRPC_PORT_SETTING) from exc
        if self.port == 0:
            raise BindError(address, GRPC_PORT_SETTING)
        await self.server.start()
        return self.port

    async def set_serving(self, serving: bool) -> None:
        status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
        for name in ("", *SERVICE_NAMES):
            await self.health.set(name, status)

    async def stop(self, grace_s: float) -> None:
        """Refuse new calls (UNAVAILABLE), give in-flight calls `grace_s` to finish, then cancel them."""
        started = time.monotonic()
        self._refusal.refusing = True
        self._refusal.last_refused = started
        window_ends = started + min(REFUSAL_WINDOW_S, grace_s)
        while (now := time.monotonic()) < window_ends and now - self._refusal.last_refused < REFUSAL_QUIET_S:
            await asyncio.sleep(min(REFUSAL_QUIET_S, window_ends - now))
        await self.server.stop(max(0.0, grace_s - (time.monotonic() - started)))


class BindError(OSError):
    """A port this gateway should listen on is taken (or the address is not this host's); the
    message names the setting to change."""

    def __init__(self, address: str, setting: str) -> None:
        super().__init__(f"cannot listen on {address}: the port is in use (another gateway?) or the address is "
                         f"not one of this host's; stop the other process or choose another port with {setting}")


def check_port_free(host: str, port: int, setting: str, *, reuse_port: bool = False) -> None:
    """BindError before grpcio tries the port: its own failure writes a C-level error line to
    stderr besides raising, and an operator should see one line, ours."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port and hasattr(socket, "SO_REUSEPORT"):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise BindError(f"{host}:{port}", setting) from exc
