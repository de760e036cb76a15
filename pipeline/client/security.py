"""How the pipeline proves itself to a gateway that wants TLS and authentication: one picklable value.

Design note. Executors run on other hosts, where the driver's certificate and token files do not
exist; so the driver reads them once (`resolve_security`) and the PEM bytes and the token travel
inside the `ClientConfig` shipped with every task. The value's repr names which parts are set and
never their content, so a config in a log line or a Spark UI stack trace shows no secret.

Where each setting comes from, first match wins: the Spark conf key, then the environment variable.

- spark.metastore.gateway.tls.enabled / METASTORE_GATEWAY_TLS_ENABLED: TLS (default: true when a CA
  is given); with no CA, the system's trust roots check the gateway's certificate.
- spark.metastore.gateway.tls.ca / METASTORE_GATEWAY_TLS_CA: PEM file of the CA that signed the
  gateway's certificate.
- spark.metastore.gateway.tls.cert / METASTORE_GATEWAY_TLS_CERT, spark.metastore.gateway.tls.key /
  METASTORE_GATEWAY_TLS_KEY: this client's PEM certificate and its key, for a gateway that wants
  mutual TLS (metastore.gateway.tls.client.ca.file); the certificate's common name is the user.
- spark.metastore.gateway.token.file / METASTORE_GATEWAY_TOKEN_FILE: a file holding this client's
  bearer token; or METASTORE_GATEWAY_TOKEN, the token itself (no conf key: a Spark conf is shown in
  the UI and event logs, no place for a secret).

A token needs TLS: gRPC sends call credentials over secure channels only, and the gateway accepts
tokens only with TLS (metastore.gateway.auth.token.file needs metastore.gateway.tls.cert.file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from pipeline.client.errors import ClientConfigError

TLS_ENABLED_CONF = "spark.metastore.gateway.tls.enabled"
TLS_CA_CONF = "spark.metastore.gateway.tls.ca"
TLS_CERT_CONF = "spark.metastore.gateway.tls.cert"
TLS_KEY_CONF = "spark.metastore.gateway.tls.key"
TOKEN_FILE_CONF = "spark.metastore.gateway.token.file"
TLS_ENABLED_ENV = "METASTORE_GATEWAY_TLS_ENABLED"
TLS_CA_ENV = "METASTORE_GATEWAY_TLS_CA"
TLS_CERT_ENV = "METASTORE_GATEWAY_TLS_CERT"
TLS_KEY_ENV = "METASTORE_GATEWAY_TLS_KEY"
TOKEN_FILE_ENV = "METASTORE_GATEWAY_TOKEN_FILE"
TOKEN_ENV = "METASTORE_GATEWAY_TOKEN"

# (Spark conf key, environment variable) of each setting, for documentation and `--help`.
SECURITY_SETTINGS: tuple[tuple[str, str], ...] = (
    (TLS_ENABLED_CONF, TLS_ENABLED_ENV), (TLS_CA_CONF, TLS_CA_ENV), (TLS_CERT_CONF, TLS_CERT_ENV),
    (TLS_KEY_CONF, TLS_KEY_ENV), (TOKEN_FILE_CONF, TOKEN_FILE_ENV), ("", TOKEN_ENV))

# A PEM bundle of a few certificates is a few KB; a megabyte is a wrong file, not a certificate.
MAX_PEM_BYTES = 1024 * 1024
# Tokens go into every call's metadata; gRPC's default metadata limit is 8 KB for all of it.
MAX_TOKEN_CHARS = 4096


@dataclass(frozen=True, slots=True)
class ChannelSecurity:
    """TLS and a bearer token for the gateway's channels; the default is plaintext (`make run`).

    `ca_pem` empty with `tls` true: the system's trust roots verify the gateway. `cert_pem` and
    `key_pem` (mutual TLS) go together. Validated on construction: a token or a client certificate
    without TLS, half a key pair, a file that is not PEM, or a token that cannot be a gRPC metadata
    value raise `ClientConfigError` naming the setting, never the secret."""

    tls: bool = False
    ca_pem: bytes = field(default=b"", repr=False)
    cert_pem: bytes = field(default=b"", repr=False)
    key_pem: bytes = field(default=b"", repr=False)
    token: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if self.ca_pem and not self.tls:
            raise ClientConfigError(f"{TLS_CA_CONF} is set but {TLS_ENABLED_CONF} is false: drop one of them")
        if bool(self.cert_pem) != bool(self.key_pem):
            given, missing = ((TLS_CERT_CONF, TLS_KEY_CONF) if self.cert_pem else (TLS_KEY_CONF, TLS_CERT_CONF))
            raise ClientConfigError(f"{given} is set without {missing}: a client certificate needs its private key "
                                    f"(set both for mutual TLS, or neither)")
        if self.cert_pem and not self.tls:
            raise ClientConfigError(f"a client certificate ({TLS_CERT_CONF}) needs TLS: set {TLS_CA_CONF} to the CA "
                                    f"that signed the gateway's certificate (or {TLS_ENABLED_CONF}=true)")
        if self.token and not self.tls:
            raise ClientConfigError(
                f"a bearer token ({TOKEN_FILE_CONF} / {TOKEN_ENV}) needs TLS: the gateway refuses tokens over "
                f"plaintext, where they would cross the network in clear; set {TLS_CA_CONF} (or "
                f"{TLS_CA_ENV}) to the CA that signed the gateway's certificate")
        _check_pem(self.ca_pem, b"CERTIFICATE", TLS_CA_CONF)
        _check_pem(self.cert_pem, b"CERTIFICATE", TLS_CERT_CONF)
        _check_pem(self.key_pem, b"PRIVATE KEY", TLS_KEY_CONF)
        if self.token:
            _check_token(self.token)

    def __repr__(self) -> str:
        return (f"ChannelSecurity(tls={self.tls}, ca={'set' if self.ca_pem else 'system'}, "
                f"client_cert={bool(self.cert_pem)}, token={'set' if self.token else 'none'})")

    @property
    def mutual_tls(self) -> bool:
        return bool(self.cert_pem)


def _check_pem(data: bytes, kind: bytes, key: str) -> None:
    # grpc would only fail later, at the handshake, as UNAVAILABLE: say which file is wrong now.
    if data and (b"-----BEGIN " not in data or kind + b"-----" not in data):
        raise ClientConfigError(f"{key}: the file is not a PEM {kind.decode().lower()} "
                                f"(expected a '-----BEGIN ...{kind.decode()}-----' block)")


def _check_token(token: str) -> None:
    if len(token) > MAX_TOKEN_CHARS:
        raise ClientConfigError(f"the bearer token ({TOKEN_FILE_CONF} / {TOKEN_ENV}) is {len(token)} characters; "
                                f"at most {MAX_TOKEN_CHARS} fit in a call's metadata")
    if not all("!" <= c <= "~" for c in token):  # a metadata value: printable ASCII, no spaces
        raise ClientConfigError(f"the bearer token ({TOKEN_FILE_CONF} / {TOKEN_ENV}) has a space, control or "
                                f"non-ASCII character; a token file holds the token alone, on one line")


# What `make run` serves: no TLS, no token.
PLAINTEXT = ChannelSecurity()


def _read(path: str, key: str, limit: int) -> bytes:
    """At most `limit` bytes of a file; `ClientConfigError` naming `key` when unreadable, larger or empty."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise ClientConfigError(f"{key}: cannot read {path}: {exc.strerror}") from exc
    if len(data) > limit:
        raise ClientConfigError(f"{key}: {path} is larger than {limit} bytes; is it the right file?")
    if not data.strip():
        raise ClientConfigError(f"{key}: {path} is empty")
    return data


def read_pem(path: str, key: str) -> bytes:
    """A PEM file's bytes (checked for their kind by `ChannelSecurity`)."""
    return _read(path, key, MAX_PEM_BYTES)


def read_token(path: str, key: str) -> str:
    """The token a token file holds (surrounding whitespace dropped); never echoed in errors."""
    raw = _read(path, key, MAX_TOKEN_CHARS * 2)  # room for whitespace; the token's own bound is checked later
    try:
        return raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise ClientConfigError(f"{key}: {path} is not ASCII text; it should hold the token alone") from None


def resolve_security(lookup: Callable[[str], object], environ: Mapping[str, str]) -> ChannelSecurity:
    """The settings above from `lookup` (a Spark conf key -> value or None) then `environ`, with
    every file read here, on the driver."""

    def setting(conf_key: str, env: str) -> tuple[str, str]:
        value = str(lookup(conf_key) or "").strip()  # a dict conf may hold a bool for tls.enabled
        if value:
            return value, conf_key
        return environ.get(env, "").strip(), env

    enabled_text, enabled_key = setting(TLS_ENABLED_CONF, TLS_ENABLED_ENV)
    ca_path, ca_key = setting(TLS_CA_CONF, TLS_CA_ENV)
    cert_path, cert_key = setting(TLS_CERT_CONF, TLS_CERT_ENV)
    key_path, key_key = setting(TLS_KEY_CONF, TLS_KEY_ENV)
    token_path, token_key = setting(TOKEN_FILE_CONF, TOKEN_FILE_ENV)
    if enabled_text and enabled_text.lower() not in ("true", "false"):
        raise ClientConfigError(f"{enabled_key}: expected true or false, got {enabled_text[:100]!r}")
    tls = enabled_text.lower() == "true" if enabled_text else bool(ca_path)
    token = read_token(token_path, token_key) if token_path else environ.get(TOKEN_ENV, "").strip()
    return ChannelSecurity(
        tls=tls, ca_pem=read_pem(ca_path, ca_key) if ca_path else b"",
        cert_pem=read_pem(cert_path, cert_key) if cert_path else b"",
        key_pem=read_pem(key_path, key_key) if key_path else b"", token=token)
