"""The PySpark pipeline's client against a gateway that wants TLS and authentication (no Spark): a
real gateway with real certificates and a token file, the pipeline's `GatewayClient` configured the
way a job is (Spark conf keys, files read into the config), every channel it opens (the task
channel, the lock's grpc.aio channel, the compactor's, the CLI's health probe) secured.

The gateways are processes of their own, as a job's gateway is (tests/pki.py says why it matters)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import grpc
import pytest

from hive.lock_rules import Statement
from pipeline.__main__ import build_parser, check_gateway
from pipeline.client import ADDRESS_CONF, ClientConfig, GatewayClient, GatewayError, GatewayUnavailable
from pipeline.client.security import TLS_CA_CONF, TLS_CERT_CONF, TLS_KEY_CONF, TOKEN_ENV, TOKEN_FILE_CONF
from pipeline.compactor.client import CompactorClient
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import compaction_pb2 as cpb
from protos.metastore.v1 import transactions_pb2 as tpb
from tests.builders import partitions, table
from tests.pki import Pki, make_pki, start_tls_gateway

TOKENS = {"alice": "t-alice-7f3a", "root": "t-root-91c2"}
C = grpc.StatusCode


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    out = make_pki(tmp_path_factory.mktemp("pki"), TOKENS)
    for user, token in TOKENS.items():  # each client's own token file, as a job would hold it
        path = Path(out["tokens"][0]).parent / f"{user}.token"
        path.write_text(token + "\n")
        out[f"{user}.token"] = (str(path), "")
    # A CA nobody trusts: the gateway's certificate does not chain to it.
    out["rogue-ca"] = make_pki(tmp_path_factory.mktemp("rogue"), {}, ca_name="rogue CA")["ca"]
    return out


@pytest.fixture
def token_gateway(pg_dsn: str, pki: Pki) -> Iterator[str]:
    """A gateway with TLS and the token file (Thrift off: it could authenticate only by certificate)."""
    proc, address = start_tls_gateway(pg_dsn, pki, f"metastore.gateway.auth.token.file={pki['tokens'][0]}",
                                      "metastore.gateway.thrift.enabled=false", "hive.users.in.admin.role=root")
    try:
        yield address
    finally:
        proc.stop()


def _config(address: str, conf: dict[str, str], environ: dict[str, str] | None = None) -> ClientConfig:
    """A job's config: the settings as Spark conf keys, the files read now (the driver's part)."""
    return ClientConfig.resolve({ADDRESS_CONF: address, **conf}, environ=environ or {},
                                unavailable_retries=1, backoff_initial_s=0.05, call_timeout_s=20)


def _round_trip(config: ClientConfig) -> dict[str, object]:
    """What a write job does, then a read: DDL, a txn with its lock, write id and partitions, commit,
    a snapshot and the partitions read back under it; the txn's recorded user."""
    with GatewayClient(config) as client:
        client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="lake")),
                                      timeout=config.call_timeout_s)
        client.catalog.CreateTable(pb.CreateTableRequest(table=table("lake", "events", keys=(("ds", "string"),),
                                                                     transactional=True)),
                                   timeout=config.call_timeout_s)
        with client.transaction(heartbeat=False) as txn:
            txn.lock(Statement.INSERT_DYNAMIC, "lake", "events")  # the grpc.aio channel
            write_id = txn.allocate_write_id("lake", "events")
            client.add_partitions("lake", "events", partitions([("2024-01-01",), ("2024-01-02",)]), txn_id=txn.id)
            users = {t.txn_id: t.user for t in client.call(client.txns.ShowTransactions,
                                                           tpb.ShowTransactionsRequest(), method="ShowTransactions"
                                                           ).transactions}
        snap = client.table_snapshot("lake", "events")
        names = client.list_partition_names("lake", "events", snap.read_context())
        read = [p.values[0] for p in client.get_partitions_by_names("lake", "events", names, snap.read_context())]
        return {"write_id": write_id, "read": read, "user": users[txn.id], "state": txn.state}


def test_a_job_round_trip_over_tls_with_its_token(token_gateway: str, pki: Pki) -> None:
    config = _config(token_gateway, {TLS_CA_CONF: pki["ca"][0], TOKEN_FILE_CONF: pki["alice.token"][0]})
    assert "t-alice" not in repr(config) and "PRIVATE" not in repr(config)  # secrets stay out of logs
    assert _round_trip(config) == {
        "write_id": 1, "read": ["2024-01-01", "2024-01-02"], "user": "alice", "state": "committed"}

    # The token may come from the environment instead of a file.
    from_env = _config(token_gateway, {TLS_CA_CONF: pki["ca"][0]}, {TOKEN_ENV: TOKENS["root"]})
    with GatewayClient(from_env) as root:
        snap = root.table_snapshot("lake", "events")
        assert root.get_table("lake", "events", snap.read_context()).name == "events"


@pytest.mark.parametrize("token, why", [("t-wrong", "unknown token"), (None, "needs authentication")])
def test_a_wrong_or_missing_token_is_unauthenticated(token_gateway: str, pki: Pki, token: str | None,
                                                     why: str) -> None:
    config = _config(token_gateway, {TLS_CA_CONF: pki["ca"][0]}, {TOKEN_ENV: token} if token else {})
    with GatewayClient(config) as client:
        for call in (client.open_txn, lambda: client.lock_table_for(Statement.SELECT, "lake", "events", 0)):
            with pytest.raises(GatewayError) as info:
                call()
            assert info.value.code == C.UNAUTHENTICATED and not isinstance(info.value, GatewayUnavailable)
            assert why in str(info.value) and TOKEN_FILE_CONF in str(info.value), str(info.value)
            assert info.value.address == token_gateway
        assert client.stats["OpenTxns"] == 1  # not retried: only UNAVAILABLE is


def test_plaintext_or_an_untrusted_ca_does_not_reach_a_tls_gateway(token_gateway: str, pki: Pki) -> None:
    for conf in ({}, {TLS_CA_CONF: pki["rogue-ca"][0], TOKEN_FILE_CONF: pki["alice.token"][0]}):
        with GatewayClient(_config(token_gateway, conf)) as client:
            with pytest.raises(GatewayUnavailable, match="unavailable: 2 attempts") as info:
                client.open_txn()
            assert f"whose {TLS_CA_CONF} did not sign its certificate" in str(info.value)


def test_mutual_tls_needs_no_token(pg_dsn: str, pki: Pki) -> None:
    proc, gw = start_tls_gateway(pg_dsn, pki, f"metastore.gateway.tls.client.ca.file={pki['ca'][0]}", client="alice")
    try:
        config = _config(gw, {TLS_CA_CONF: pki["ca"][0], TLS_CERT_CONF: pki["alice"][0],
                              TLS_KEY_CONF: pki["alice"][1]})
        result = _round_trip(config)
        assert (result["user"], result["read"]) == ("alice", ["2024-01-01", "2024-01-02"])  # the certificate's CN

        # The compactor's channel carries the certificate too.
        with CompactorClient(config) as compactor:
            reply = compactor.call("ShowCompactions", cpb.ShowCompactionsRequest())
            assert list(reply.compactions) == []

        # Without a client certificate the handshake is refused (UNAVAILABLE, retried, then reported).
        with GatewayClient(_config(gw, {TLS_CA_CONF: pki["ca"][0]})) as client:
            with pytest.raises(GatewayUnavailable):
                client.open_txn()
    finally:
        proc.stop()


def test_the_cli_checks_a_tls_gateway_over_tls(token_gateway: str, pki: Pki) -> None:
    address = token_gateway

    def probe(*flags: str) -> str | None:
        return check_gateway(build_parser().parse_args(["--address", address, *flags, "read", "lake", "events"]),
                             timeout_s=5)

    assert probe("--tls-ca", pki["ca"][0], "--token-file", pki["alice.token"][0]) is None
    problem = probe()  # plaintext: the TLS port does not answer it
    assert problem is not None and f"no metastore gateway answers at {address}" in problem and "--tls-ca" in problem
    problem = probe("--token-file", pki["alice.token"][0])
    assert problem is not None and "needs TLS" in problem and "refuses tokens over plaintext" in problem
