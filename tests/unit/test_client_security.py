"""The pipeline client's TLS and token settings, resolved as a driver does (no gateway needed): where
each comes from, what is refused and how it is said, that no secret reaches a repr or an error, and
that the resolved config carries the files' contents to executors that do not have the files."""

from __future__ import annotations

import pickle
from pathlib import Path

import grpc
import pytest

from pipeline.client import ADDRESS_CONF, ClientConfig, ClientConfigError
from pipeline.client.channel import channel_credentials, open_channel
from pipeline.client.security import (PLAINTEXT, TLS_CA_CONF, TLS_CA_ENV, TLS_CERT_CONF, TLS_ENABLED_CONF,
                                      TLS_KEY_CONF, TOKEN_ENV, TOKEN_FILE_CONF, TOKEN_FILE_ENV, ChannelSecurity)
from tests.pki import Pki, make_pki

SECRET = "s3cr3t-token-value"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"), {"alice": SECRET})


def _resolve(conf: dict[str, str], environ: dict[str, str] | None = None) -> ClientConfig:
    return ClientConfig.resolve({ADDRESS_CONF: "gw:50051", **conf}, environ=environ or {})


def _token_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "token"
    path.write_text(text)
    return str(path)


def test_plaintext_unless_configured() -> None:
    config = _resolve({})
    assert config.security == PLAINTEXT and channel_credentials(config.security) is None


def test_files_are_read_on_the_driver_and_shipped_in_the_config(pki: Pki, tmp_path: Path) -> None:
    token = _token_file(tmp_path, f"  {SECRET}\n")
    config = _resolve({TLS_CA_CONF: pki["ca"][0], TLS_CERT_CONF: pki["alice"][0], TLS_KEY_CONF: pki["alice"][1],
                       TOKEN_FILE_CONF: token})
    s = config.security
    assert (s.tls, s.mutual_tls, s.token) == (True, True, SECRET)
    assert s.ca_pem == Path(pki["ca"][0]).read_bytes() and s.key_pem == Path(pki["alice"][1]).read_bytes()
    shipped = pickle.loads(pickle.dumps(config))  # what an executor gets with its task
    assert shipped == config and hash(shipped) == hash(config)
    Path(token).unlink()  # the executor has no files: the channel is made from the config alone
    assert isinstance(channel_credentials(shipped.security), grpc.ChannelCredentials)
    open_channel(shipped).close()
    for text in (repr(config), str(config), repr(s)):
        assert SECRET not in text and "PRIVATE KEY" not in text and "BEGIN CERTIFICATE" not in text
    assert "token=set" in repr(s) and "client_cert=True" in repr(s)


def test_spark_conf_wins_over_the_environment(pki: Pki, tmp_path: Path) -> None:
    env = {TLS_CA_ENV: "/nonexistent/ca.pem", TOKEN_ENV: "from-env"}
    config = _resolve({TLS_CA_CONF: pki["ca"][0], TOKEN_FILE_CONF: _token_file(tmp_path, SECRET)}, env)
    assert config.security.token == SECRET
    from_env = _resolve({}, {TLS_CA_ENV: pki["ca"][0], TOKEN_ENV: "from-env"})
    assert (from_env.security.tls, from_env.security.token) == (True, "from-env")
    file_env = _resolve({}, {TLS_CA_ENV: pki["ca"][0], TOKEN_FILE_ENV: _token_file(tmp_path, SECRET),
                             TOKEN_ENV: "ignored"})
    assert file_env.security.token == SECRET
    system_roots = ClientConfig.resolve({ADDRESS_CONF: "gw:1", TLS_ENABLED_CONF: True}, environ={})  # a public CA
    assert (system_roots.security.tls, system_roots.security.ca_pem) == (True, b"")


def test_a_token_without_tls_is_refused_with_the_reason(tmp_path: Path) -> None:
    for conf, env in (({}, {TOKEN_ENV: SECRET}), ({TOKEN_FILE_CONF: _token_file(tmp_path, SECRET)}, {})):
        with pytest.raises(ClientConfigError) as info:
            _resolve(conf, env)
        message = str(info.value)
        assert "needs TLS" in message and "refuses tokens over plaintext" in message and TLS_CA_CONF in message
        assert SECRET not in message


def test_half_a_key_pair_or_a_client_certificate_without_tls(pki: Pki) -> None:
    with pytest.raises(ClientConfigError, match=f"{TLS_CERT_CONF} is set without {TLS_KEY_CONF}"):
        _resolve({TLS_CA_CONF: pki["ca"][0], TLS_CERT_CONF: pki["alice"][0]})
    with pytest.raises(ClientConfigError, match=f"{TLS_KEY_CONF} is set without {TLS_CERT_CONF}"):
        _resolve({TLS_CA_CONF: pki["ca"][0], TLS_KEY_CONF: pki["alice"][1]})
    with pytest.raises(ClientConfigError, match="client certificate .* needs TLS"):
        _resolve({TLS_CERT_CONF: pki["alice"][0], TLS_KEY_CONF: pki["alice"][1]})
    with pytest.raises(ClientConfigError, match=f"{TLS_CA_CONF} is set but {TLS_ENABLED_CONF} is false"):
        _resolve({TLS_CA_CONF: pki["ca"][0], TLS_ENABLED_CONF: "false"})
    with pytest.raises(ClientConfigError, match=f"{TLS_ENABLED_CONF}: expected true or false, got 'yes'"):
        _resolve({TLS_ENABLED_CONF: "yes"})


def test_unreadable_or_wrong_files_name_the_setting(pki: Pki, tmp_path: Path) -> None:
    with pytest.raises(ClientConfigError, match=f"{TLS_CA_CONF}: cannot read /nonexistent/ca.pem: No such file"):
        _resolve({TLS_CA_CONF: "/nonexistent/ca.pem"})
    with pytest.raises(ClientConfigError, match=f"{TLS_CA_ENV}: cannot read /nonexistent/ca.pem"):
        _resolve({}, {TLS_CA_ENV: "/nonexistent/ca.pem"})
    with pytest.raises(ClientConfigError, match=f"{TLS_CA_CONF}: the file is not a PEM certificate"):
        _resolve({TLS_CA_CONF: pki["alice"][1]})  # a key where the CA belongs
    with pytest.raises(ClientConfigError, match=f"{TLS_KEY_CONF}: the file is not a PEM private key"):
        _resolve({TLS_CA_CONF: pki["ca"][0], TLS_CERT_CONF: pki["alice"][0], TLS_KEY_CONF: pki["alice"][0]})
    empty = tmp_path / "empty.pem"
    empty.write_text("\n")
    with pytest.raises(ClientConfigError, match="is empty"):
        _resolve({TLS_CA_CONF: str(empty)})
    with pytest.raises(ClientConfigError, match=f"{TOKEN_FILE_CONF}: .* is empty"):
        _resolve({TLS_CA_CONF: pki["ca"][0], TOKEN_FILE_CONF: _token_file(tmp_path, " \n")})
    with pytest.raises(ClientConfigError, match=f"{TOKEN_FILE_CONF}: cannot read /nonexistent/token"):
        _resolve({TLS_CA_CONF: pki["ca"][0], TOKEN_FILE_CONF: "/nonexistent/token"})


def test_a_token_that_cannot_be_metadata_is_refused_without_echoing_it(pki: Pki, tmp_path: Path) -> None:
    for text, why in ((f"{SECRET},alice", None), (f"{SECRET} more", "space"), (SECRET + "x" * 5000, "at most 4096"),
                      (SECRET + "x" * 9000, "larger than 8192 bytes")):
        conf = {TLS_CA_CONF: pki["ca"][0], TOKEN_FILE_CONF: _token_file(tmp_path, text)}
        if why is None:  # a comma is a legal header character: the gateway will say the token is unknown
            assert _resolve(conf).security.token == text
            continue
        with pytest.raises(ClientConfigError, match=why) as info:
            _resolve(conf)
        assert SECRET not in str(info.value)
    with pytest.raises(ClientConfigError, match="space, control or non-ASCII"):
        ChannelSecurity(tls=True, token="caf\u00e9")
