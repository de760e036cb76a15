"""The server's TLS files are checked before gRPC binds (gateway/auth.py server_ssl_context): each
file that will not load is a bad setting naming its key, never gRPC's port 0 read as a port in use."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from gateway.auth import grpc_server_credentials
from gateway.config import ConfigError, Settings, load_settings
from tests.pki import make_pki


def _tls(cert: str, key: str, ca: str = "") -> Settings:
    return load_settings(environ={}, overrides={"metastore.gateway.tls.cert.file": cert,
                                                "metastore.gateway.tls.key.file": key,
                                                "metastore.gateway.tls.client.ca.file": ca})


def test_files_that_will_not_load_are_named(tmp_path: Path) -> None:
    pki = make_pki(tmp_path, {})
    cert, key = pki["server"]
    junk = tmp_path / "junk"
    junk.write_text("not a certificate\n")
    encrypted = tmp_path / "encrypted.key"
    encrypted.write_bytes(serialization.load_pem_private_key(Path(key).read_bytes(), None).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(b"pw")))
    assert grpc_server_credentials(_tls(cert, key, pki["ca"][0])) is not None
    for settings, named in (
            (_tls(str(junk), str(junk)), "metastore.gateway.tls.cert.file"),
            (_tls(cert, pki["ca"][1]), "KEY_VALUES_MISMATCH"),
            (_tls(cert, str(encrypted)), "metastore.gateway.tls.key.file: the key is encrypted"),
            (_tls(cert, key, str(junk)), "metastore.gateway.tls.client.ca.file"),
            (_tls(cert, key, str(tmp_path / "missing.pem")), "metastore.gateway.tls.client.ca.file")):
        with pytest.raises(ConfigError, match=named):
            grpc_server_credentials(settings)
