"""`python -m pipeline compact` through a real spark-submit (a new JVM each run; SLOW=1)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import grpc
import pytest

from pipeline.client import ClientConfig, GatewayClient
from protos.metastore.v1 import compaction_pb2 as cpb
from protos.metastore.v1 import compaction_pb2_grpc
from tests.spark.conftest import create_table
from tests.spark.test_spark_submit import _spark_submit

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_spark_submit_compacts_one_entry(gateway_address: str, tmp_path: Path) -> None:
    with GatewayClient(ClientConfig(gateway_address)) as client:
        create_table(client, tmp_path / "events")
    for n in range(2):
        data = tmp_path / f"input{n}.json"
        data.write_text("".join(json.dumps({"id": i, "payload": f"p{i}", "ds": "2024-02-01"}) + "\n"
                                for i in range(n * 10, n * 10 + 10)))
        _spark_submit(gateway_address, "write", "lake", "events", str(data), "--input-format", "json")
    channel = grpc.insecure_channel(gateway_address)
    try:
        stub = compaction_pb2_grpc.CompactorStub(channel)
        stub.Compact(cpb.CompactRequest(db_name="lake", table_name="events", partition_name="ds=2024-02-01",
                                        type=cpb.MAJOR))
        run = _spark_submit(gateway_address, "compact", "--worker-id", "cli-1")
        assert (run["outcome"], run["type"], run["rows"], run["files_in"] >= 2) == ("compacted", "MAJOR", 20, True)
        assert Path(run["output_dir"]).name.startswith("base_0000002_v")
        assert _spark_submit(gateway_address, "compact") == {"outcome": "queue empty"}
        # The gateway's own Cleaner loop (on by default, every hive.compactor.cleaner.run.interval = 5s)
        # removes the two deltas once no txn is open.
        deadline = time.monotonic() + 60
        while (row := stub.ShowCompactions(cpb.ShowCompactionsRequest()).compactions[0]).state != "succeeded":
            assert row.state == "ready for cleaning" and time.monotonic() < deadline, row
            time.sleep(0.5)
        assert row.worker_id == "cli-1"
        partition = Path(run["output_dir"]).parent
        assert sorted(n for n in os.listdir(partition) if not n.startswith((".", "_"))) == [
            Path(run["output_dir"]).name]
    finally:
        channel.close()
