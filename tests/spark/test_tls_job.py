"""A Spark job against a gateway that wants TLS and a bearer token: the driver resolves the settings
from the session's conf (reading the CA and token files), the files are then removed, and the
executors' Python workers still write and read through the gateway, with what the shipped config
carries and nothing else."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("pyspark", reason="pyspark is in the dev extra: pip install -e '.[dev]'")  # the jobs import it

from pipeline.client import ADDRESS_CONF, ClientConfig, GatewayClient, GatewayError, close_process_clients  # noqa: E402
from pipeline.client.security import TLS_CA_CONF, TOKEN_FILE_CONF, ChannelSecurity  # noqa: E402
from pipeline.snapshot_read import snapshot_read  # noqa: E402
from pipeline.txn_write import txn_write  # noqa: E402
from tests.pki import Pki, make_pki, start_tls_gateway  # noqa: E402
from tests.spark.conftest import create_table  # noqa: E402

pytestmark = pytest.mark.spark
TOKENS = {"etl": "t-etl-5d2e"}


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    (tmp_path / "pki").mkdir()
    return make_pki(tmp_path / "pki", TOKENS)


@pytest.fixture
def secured_gateway(pg_dsn: str, pki: Pki) -> Iterator[str]:
    proc, address = start_tls_gateway(pg_dsn, pki, f"metastore.gateway.auth.token.file={pki['tokens'][0]}",
                                      "metastore.gateway.thrift.enabled=false")
    try:
        yield address
    finally:
        close_process_clients()  # the driver's channels (an open channel slows the gateway's stop)
        proc.stop()


def test_executors_write_and_read_through_a_tls_gateway_with_the_shipped_token(
        spark: Any, secured_gateway: str, pki: Pki, tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"  # what only the driver's host has
    secrets.mkdir()
    ca, token = secrets / "ca.pem", secrets / "etl.token"
    shutil.copy(pki["ca"][0], ca)
    token.write_text(TOKENS["etl"] + "\n")
    settings = {ADDRESS_CONF: secured_gateway, TLS_CA_CONF: str(ca), TOKEN_FILE_CONF: str(token)}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        config = ClientConfig.from_spark(spark, unavailable_retries=1, backoff_initial_s=0.05)
    finally:
        for key in settings:  # the session is shared by the other Spark tests
            spark.conf.unset(key)
    shutil.rmtree(secrets)
    assert config.security.token == TOKENS["etl"] and TOKENS["etl"] not in repr(config)

    with GatewayClient(config) as client:
        create_table(client, tmp_path / "events")
    days = ["2024-01-01", "2024-01-02", "2024-01-03"]
    df = spark.createDataFrame([(i, f"p{i}", days[i % 3]) for i in range(30)], "id long, payload string, ds string")
    written = txn_write(df.repartition(2), "lake", "events", config=config, file_format="parquet")
    assert len(written.added) == 3

    result = snapshot_read(spark, "lake", "events", config=config, num_slices=2)
    assert sorted(r.name for r in result.rows) == [f"ds={d}" for d in days]
    assert all(r.files >= 1 and r.write_id == written.write_id for r in result.rows)
    assert os.getpid() not in {r.fetch_pid for r in result.rows}  # fetched by the executors' Python workers

    # The same job without the token: the gateway refuses its first call, and the job says so.
    with pytest.raises(GatewayError, match="UNAUTHENTICATED"):
        snapshot_read(spark, "lake", "events", config=config.with_(security=ChannelSecurity(
            tls=True, ca_pem=config.security.ca_pem)))
