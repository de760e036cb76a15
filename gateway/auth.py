"""Who is calling, and whose txns and locks they may touch (TLS, tokens, owners).

Three modes, chosen by settings:

* open (the default, what `make run` serves on loopback): nobody is authenticated and every caller
  may act on every txn and lock, as before; a txn's or lock's user is what the request says.
* tokens (`metastore.gateway.auth.token.file`): every gRPC call carries `authorization: Bearer
  <token>`, or a client certificate when mutual TLS is on; the token file maps each token to a user.
* mutual TLS (`metastore.gateway.tls.client.ca.file`): the TLS handshake refuses clients without a
  certificate the CA signed, and the certificate's common name is the user. This is the only way a
  Thrift client is authenticated (Hive's SASL/Kerberos is not supported).

Once callers are authenticated, the authenticated user owns the txns and locks it opens (the
request's user field is ignored), and committing, aborting or heartbeating another user's txn,
writing under it (by its id, or over Thrift by a write id it allocated), or checking, heartbeating
or releasing another user's lock, is PERMISSION_DENIED unless the caller is in
`hive.users.in.admin.role` (`Ownership`, called by both protocols before they act; a call naming
several txns, or a range, is refused whole). The store takes the caller as `Identity.limited_to`
(None: anyone's) where the check must be made on rows it locks: claimed compactions, a drop under an
EXCLUSIVE lock (only the caller's own counts), an alter that changes an owner. Non-admins see their
own user and host in SHOW TRANSACTIONS and SHOW LOCKS and a blank in other users' rows. The health
service stays open, so probes need no token.
"""

from __future__ import annotations

import contextvars
import hmac
import ipaddress
import os
import ssl
import stat
from dataclasses import dataclass, replace
from typing import Any, Awaitable, Callable, Iterable, Mapping

import grpc

from gateway.config import ConfigError, Settings
from hive import limits
from store.errors import PermissionDenied, Unauthenticated
from store.lock_store import LockStore
from store.txn_store import TxnStore

HEALTH_SERVICE = "/grpc.health.v1.Health/"


@dataclass(frozen=True, slots=True)
class Identity:
    user: str            # "" when nobody is authenticated
    authenticated: bool
    admin: bool
    # Who an unauthenticated Thrift connection says it is (set_ugi): trusted for nothing, only recorded as
    # the user of the txns the gateway opens on the caller's behalf (gateway/thrift/own_txn.py).
    claimed: str = ""

    @property
    def limited_to(self) -> str | None:
        """The user whose own things alone this caller may act on (an authenticated non-admin's); None
        when it may act on anyone's (the open mode, an admin)."""
        return self.user if self.authenticated and not self.admin else None

    def owns(self, owner: str) -> bool:
        """Whether this caller may act on something `owner` opened."""
        return self.limited_to in (None, owner)

    def user_or(self, requested: str) -> str:
        """The user a new txn or lock is recorded under: the authenticated one, else the request's."""
        return self.user if self.authenticated else requested

    def claiming(self, user: str) -> "Identity":
        """This identity with `user` as what an unauthenticated connection claims (an authenticated one's
        user is its certificate's, whatever it claims)."""
        return self if self.authenticated else replace(self, claimed=user[:limits.NAME])

    def run_as(self, requested: str) -> str:
        """The user a compaction is queued to run as: an admin's (or, open, anyone's) choice, else the
        authenticated caller, whatever the request says."""
        return requested if self.limited_to is None else self.limited_to


OPEN = Identity("", authenticated=False, admin=True)


def check_notification_reader(identity: Identity, restricted: bool, what: str) -> None:
    """Hive 3's and 4's hive.metastore.event.db.notification.api.auth (`restricted`, on by default): the
    notification log, which holds every database's and table's objects whole, is read only by the users
    Hive trusts as proxies, here the admins; PermissionDenied for an authenticated non-admin."""
    if restricted and identity.limited_to is not None:
        raise PermissionDenied(f"User {identity.user} is not allowed to perform this API call ({what}): only an "
                               f"admin (hive.users.in.admin.role) reads the notification log while "
                               f"hive.metastore.event.db.notification.api.auth is on")

# The Thrift endpoint's caller, set per connection (each connection is one task).
thrift_identity: contextvars.ContextVar[Identity] = contextvars.ContextVar("thrift_identity", default=OPEN)


def read_token_file(path: str) -> dict[str, str]:
    """`token,user` lines ('#' comments); the file must not be readable by group or others."""
    try:
        mode = os.stat(path).st_mode
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise ConfigError(f"metastore.gateway.auth.token.file: cannot read {path}: {exc.strerror}") from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(f"metastore.gateway.auth.token.file: {path} is readable by others (mode "
                          f"{stat.S_IMODE(mode):o}); chmod 600 it")
    tokens: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        token, sep, user = (part.strip() for part in line.partition(","))
        if not sep or not token or not user:
            raise ConfigError(f"metastore.gateway.auth.token.file: {path} line {number} is not 'token,user'")
        tokens[token] = user
    if not tokens:
        raise ConfigError(f"metastore.gateway.auth.token.file: {path} holds no tokens")
    return tokens


class Authenticator:
    def __init__(self, tokens: Mapping[str, str], client_certificates: bool, admins: Iterable[str]) -> None:
        self._tokens = dict(tokens)
        self._client_certificates = client_certificates
        self._admins = frozenset(a for a in admins if a)

    @classmethod
    def from_settings(cls, s: Settings) -> "Authenticator":
        tokens = read_token_file(s.auth_token_file) if s.auth_token_file else {}
        return cls(tokens, bool(s.tls_client_ca_file), s.admin_user_names)

    @property
    def enabled(self) -> bool:
        return bool(self._tokens) or self._client_certificates

    @property
    def client_certificates(self) -> bool:
        return self._client_certificates

    def _known(self, user: str) -> Identity:
        return Identity(user, authenticated=True, admin=user in self._admins)

    def _token_user(self, header: str) -> str:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise Unauthenticated("the authorization header must be 'Bearer <token>'")
        for known, user in self._tokens.items():
            if hmac.compare_digest(known.encode(), token.strip().encode()):
                return user
        raise Unauthenticated("unknown token: ask the gateway's operator for one "
                              "(metastore.gateway.auth.token.file)")

    def grpc_identity(self, metadata: Iterable[tuple[str, Any]] | None, auth_context: Mapping[str, Any]) -> Identity:
        """The caller of a gRPC call from its metadata and TLS peer; Unauthenticated when unknown."""
        if not self.enabled:
            return OPEN
        header = next((str(v) for k, v in metadata or () if k == "authorization"), "")
        if header and self._tokens:
            return self._known(self._token_user(header))
        common_names = auth_context.get("x509_common_name") or []
        if self._client_certificates and common_names:
            return self._known(common_names[0].decode())
        raise Unauthenticated("this gateway needs authentication: send 'authorization: Bearer <token>'"
                              + (" or a client certificate" if self._client_certificates else ""))

    def context_identity(self, context: grpc.aio.ServicerContext) -> Identity:
        if not self.enabled:
            return OPEN
        return self.grpc_identity(context.invocation_metadata(), context.auth_context())

    def peer_identity(self, peer_certificate: Mapping[str, Any] | None) -> Identity:
        """A Thrift connection's caller from its TLS peer certificate (Python's getpeercert())."""
        if not self.enabled:
            return OPEN
        for rdn in (peer_certificate or {}).get("subject", ()):
            for key, value in rdn:
                if key == "commonName":
                    return self._known(str(value))
        raise Unauthenticated("the client certificate has no common name")



class Ownership:
    """The owner checks of both protocols: an authenticated caller who is not an admin may act only
    on the txns and locks it opened. Open mode and admins skip the lookup."""

    def __init__(self, txns: TxnStore, locks: LockStore | None) -> None:
        self._txns = txns
        self._locks = locks

    async def check_txns(self, identity: Identity, txn_ids: Iterable[int], what: str) -> None:
        ids = sorted(set(txn_ids))
        if identity.limited_to is not None and ids:
            _check(identity, await self._txns.owners(ids), f"{what}: txn(s)")

    async def check_locks(self, identity: Identity, lock_ids: Iterable[int], what: str) -> None:
        ids = sorted(set(lock_ids))
        if identity.limited_to is not None and ids and self._locks is not None:
            _check(identity, await self._locks.owners(ids), f"{what}: lock(s)")


def _check(identity: Identity, owners: Mapping[int, str], what: str) -> None:
    others = sorted(i for i, owner in owners.items() if not identity.owns(owner))
    if others:
        raise PermissionDenied(f"{what} {', '.join(map(str, others[:10]))} belong to another user; only the owner "
                               "or an admin (hive.users.in.admin.role) may do that")


def shown(identity: Identity, owner: str, host: str) -> tuple[str, str]:
    """The user and host a SHOW row displays to `identity`: blank for another user's, unless admin."""
    return (owner, host) if identity.owns(owner) else ("", "")


OPEN_AUTHENTICATOR = Authenticator({}, False, ())


class AuthInterceptor(grpc.aio.ServerInterceptor):
    """Refuses a gRPC call whose caller is not authenticated, before its servicer runs (the health
    service excepted). Installed only when authentication is on: the open mode pays nothing."""

    def __init__(self, authenticator: Authenticator) -> None:
        self._auth = authenticator

    async def intercept_service(self, continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Any]],
                                details: grpc.HandlerCallDetails) -> Any:
        handler = await continuation(details)
        if handler is None or details.method.startswith(HEALTH_SERVICE):
            return handler
        header = next((str(v) for k, v in details.invocation_metadata or () if k == "authorization"), "")
        if not header and self._auth.client_certificates:
            return handler  # the TLS handshake has checked its certificate; the servicer reads the name
        try:
            self._auth.grpc_identity(details.invocation_metadata, {})
        except Unauthenticated as exc:
            return _refusing(handler, str(exc))
        return handler


def _refusing(handler: Any, message: str) -> Any:
    async def refuse(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    async def refuse_stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)
        yield  # pragma: no cover - an async generator that never yields

    kinds = {(False, False): grpc.unary_unary_rpc_method_handler, (True, False): grpc.stream_unary_rpc_method_handler,
             (False, True): grpc.unary_stream_rpc_method_handler, (True, True): grpc.stream_stream_rpc_method_handler}
    make = kinds[(handler.request_streaming, handler.response_streaming)]
    return make(refuse_stream if handler.response_streaming else refuse,
                request_deserializer=handler.request_deserializer, response_serializer=handler.response_serializer)


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def grpc_server_credentials(s: Settings) -> grpc.ServerCredentials | None:
    """gRPC's TLS credentials from the settings' files, checked first by `server_ssl_context`: grpcio
    does not look at them until it binds, and then answers an unusable certificate or key only with
    port 0, which would read as a port in use."""
    if server_ssl_context(s) is None:
        return None
    key, cert = _read(s.tls_key_file, "metastore.gateway.tls.key.file"), _read(s.tls_cert_file,
                                                                                "metastore.gateway.tls.cert.file")
    ca = _read(s.tls_client_ca_file, "metastore.gateway.tls.client.ca.file") if s.tls_client_ca_file else None
    return grpc.ssl_server_credentials([(key, cert)], root_certificates=ca, require_client_auth=ca is not None)


def _no_passphrase() -> str:
    """An encrypted key is refused (gRPC cannot use one either) rather than OpenSSL prompting for its
    passphrase on the terminal."""
    raise ConfigError("metastore.gateway.tls.key.file: the key is encrypted; give an unencrypted PEM key (kept 0600)")


def server_ssl_context(s: Settings) -> ssl.SSLContext | None:
    """The server's TLS context (None without TLS); ConfigError naming the setting whose file will not
    load: not PEM, not readable, a key that is not the certificate's, a CA bundle without certificates."""
    if not s.tls_cert_file:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(s.tls_cert_file, s.tls_key_file, password=_no_passphrase)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(
            f"metastore.gateway.tls.cert.file ({s.tls_cert_file}) and metastore.gateway.tls.key.file "
            f"({s.tls_key_file}): cannot load the certificate and its key ({_tls_reason(exc)}); both must be PEM "
            "files this process can read, the key unencrypted and the certificate's own") from exc
    if s.tls_client_ca_file:
        try:
            context.load_verify_locations(s.tls_client_ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"metastore.gateway.tls.client.ca.file ({s.tls_client_ca_file}): cannot load the CA "
                              f"certificates ({_tls_reason(exc)}); it must be a readable PEM bundle") from exc
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def thrift_ssl_context(s: Settings) -> ssl.SSLContext | None:
    """The Thrift port's TLS: the server's context, as gRPC's."""
    return server_ssl_context(s)


def _tls_reason(exc: OSError | ssl.SSLError) -> str:
    if isinstance(exc, ssl.SSLError):
        return exc.reason or str(exc)
    return exc.strerror or str(exc)


def _read(path: str, key: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise ConfigError(f"{key}: cannot read {path}: {exc.strerror}") from exc


@dataclass(frozen=True, slots=True)
class ClientCredentials:
    """How a client of the gateway's gRPC API proves itself: a CA to trust the server by (TLS), a
    certificate and key of its own (mutual TLS), and a bearer token. All empty: plain, as `make run`."""

    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    token: str = ""


PLAIN = ClientCredentials()


def client_channel(address: str, credentials: ClientCredentials, options: Any = None) -> grpc.Channel:
    """A blocking channel to `address` with `credentials` (tokens need TLS: grpc sends them on secure
    channels only, and so does this gateway accept them)."""
    c = credentials
    if not c.ca_file:
        if c.token or c.cert_file:
            raise ConfigError("a token or a client certificate needs TLS: give the CA that signed the gateway's "
                              "certificate (--tls-ca or MSGW_TLS_CA)")
        return grpc.insecure_channel(address, options=options)
    own = (_read(c.key_file, "--tls-key"), _read(c.cert_file, "--tls-cert")) if c.cert_file else (None, None)
    secure = grpc.ssl_channel_credentials(_read(c.ca_file, "--tls-ca"), *own)
    if c.token:
        secure = grpc.composite_channel_credentials(secure, grpc.access_token_call_credentials(c.token))
    return grpc.secure_channel(address, secure, options=options)
