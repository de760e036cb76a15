"""Real certificates for TLS tests: a CA, a server certificate for 127.0.0.1 and localhost, client
certificates whose common name is the user, and a 0600 token file (`token,user` lines), as the
gateway's settings expect them; and a gateway process serving with them (shared by tests/e2e and
tests/spark)."""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc

from loadtest.gateway_process import GatewayProcess
from tests.conftest import TEST_WAREHOUSE

# (certificate path, key path) per name; "tokens" maps to (token file path, "").
Pki = dict[str, tuple[str, str]]


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _issue(subject: str, issuer_key: Any, issuer: x509.Name, *, ca: bool = False,
           san: list[x509.GeneralName] | None = None) -> tuple[Any, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(issuer)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
    return key, builder.sign(issuer_key or key, hashes.SHA256())


def _write(directory: Path, name: str, key: Any, cert: x509.Certificate) -> tuple[str, str]:
    key_path, cert_path = directory / f"{name}.key", directory / f"{name}.pem"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return str(cert_path), str(key_path)


def make_pki(directory: Path, tokens: Mapping[str, str], *, ca_name: str = "test CA") -> Pki:
    """In `directory`: "ca", "server" (127.0.0.1 and localhost) and one client certificate per user of
    `tokens` (user -> token), plus "tokens", the gateway's 0600 token file for them."""
    ca_key, ca_cert = _issue(ca_name, None, _name(ca_name), ca=True)
    out = {"ca": _write(directory, "ca", ca_key, ca_cert)}
    out["server"] = _write(directory, "server", *_issue("localhost", ca_key, ca_cert.subject, san=[
        x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]))
    for user in tokens:
        out[user] = _write(directory, user, *_issue(user, ca_key, ca_cert.subject))
    token_file = directory / "tokens"
    token_file.write_text("# token,user\n" + "".join(f"{t},{u}\n" for u, t in tokens.items()))
    os.chmod(token_file, 0o600)
    out["tokens"] = (str(token_file), "")
    return out


def start_tls_gateway(dsn: str, pki: Pki, *conf: str, client: str | None = None, timeout_s: float = 120.0,
                      serve_args: Sequence[str] = ()) -> tuple[GatewayProcess, str]:
    """`metastore-gateway serve` with TLS (the pki's server certificate), `conf` and `serve_args` (more
    options of serve: `--loop asyncio`) as its own process, once its health service answers SERVING
    over TLS (as `client`'s certificate when the gateway wants mutual TLS): (the process, its address).
    Its own process, not this one: a grpc.aio client (the pipeline's lock channel runs one in a private
    loop) beside a grpc.aio server on another loop of the same process trips over gRPC's shared
    completion queue."""
    args = ["--dsn", dsn, "--conf", "metastore.gateway.shutdown.grace=2s",
            "--conf", f"metastore.gateway.tls.cert.file={pki['server'][0]}",
            "--conf", f"metastore.gateway.tls.key.file={pki['server'][1]}",
            "--conf", f"hive.metastore.warehouse.dir={TEST_WAREHOUSE}", *serve_args]
    for item in conf:
        args += ["--conf", item]
    proc = GatewayProcess(args)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.proc.poll() is None:
        found = re.search(r"serving on ([\d.]+:\d+) \(database", proc.output())
        if found and _tls_serving(found.group(1), pki, client, deadline):
            return proc, found.group(1)
        time.sleep(0.05)
    proc.stop()
    raise RuntimeError(f"the TLS gateway did not start; its output:\n{proc.output()[-4000:]}")


def _tls_serving(address: str, pki: Pki, client: str | None, deadline: float) -> bool:
    own = (Path(pki[client][1]).read_bytes(), Path(pki[client][0]).read_bytes()) if client else (None, None)
    credentials = grpc.ssl_channel_credentials(Path(pki["ca"][0]).read_bytes(), *own)
    with grpc.secure_channel(address, credentials) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                if health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == \
                        health_pb2.HealthCheckResponse.SERVING:
                    return True
            except grpc.RpcError:
                time.sleep(0.05)
    return False
