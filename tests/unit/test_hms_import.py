"""The import's pure parts: endpoint addresses, what counts as the same object, the retry's bound, the summary."""

from __future__ import annotations

import io
import itertools
import socket
import threading
import time
from typing import Any

import pytest
import thriftpy2.rpc

from gateway.hms_import.compare import differences, plain
from gateway.hms_import.endpoint import (ImportUsageError, EndpointAddress, EndpointUnreachable, RetryPolicy,
                                         ThriftEndpoint, parse_thrift_url)
from gateway.hms_import.report import Progress, Summary
from gateway.thrift.idl import SERVICE, hms
from hive.backoff import Backoff


@pytest.mark.parametrize("text, host, port", [("thrift://hms.example:9083", "hms.example", 9083),
                                              ("127.0.0.1:9083", "127.0.0.1", 9083),
                                              ("thrift://[::1]:9083/", "::1", 9083)])
def test_an_endpoint_is_host_and_port(text: str, host: str, port: int) -> None:
    assert parse_thrift_url(text, "--from") == EndpointAddress(host, port)


@pytest.mark.parametrize("text, says", [("http://h:1", "scheme must be thrift"), ("thrift://h", "thrift://host:port"),
                                        ("thrift://h:99999", "port must be a number"),
                                        ("thrift://h:1/db", "no path or query"), ("thrift://:1", "host:port")])
def test_a_bad_endpoint_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ImportUsageError, match=says):
        parse_thrift_url(text, "--from")


def _table(**params: str) -> Any:
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="id", type="bigint", comment=None)], location="file:/t",
                               skewedInfo=None)
    return hms.Table(tableName="t", dbName="db", owner="alice", createTime=1, sd=sd, parameters=dict(params),
                     tableType="MANAGED_TABLE", id=-1, writeId=-1)


def test_what_differs_by_nature_is_not_a_difference() -> None:
    source = _table(transient_lastDdlTime="1", numFiles="3", totalSize="10", k="v")
    gateway = _table(transient_lastDdlTime="2", k="v")
    gateway.createTime, gateway.id, gateway.writeId, gateway.catName = 99, 7, 3, "hive"
    gateway.sd.cols[0].comment = ""
    gateway.sd.skewedInfo = hms.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={})
    gateway.ownerType = 1  # the source (Hive 2.3) leaves it unset: not compared
    assert differences(plain(source), plain(gateway)) == []


def test_each_difference_is_named_by_its_path() -> None:
    source, gateway = _table(k="v", gone="x"), _table(k="w", extra="y")
    gateway.sd.location = "file:/elsewhere"
    assert differences(plain(source), plain(gateway)) == [
        "parameters.extra: source has none, gateway 'y'", "parameters.gone: source 'x', gateway has none",
        "parameters.k: source 'v', gateway 'w'", "sd.location: source 'file:/t', gateway 'file:/elsewhere'"]


def test_the_default_databases_location_is_each_metastores_own() -> None:
    source = hms.Database(name="default", locationUri="file:/a", parameters={})
    assert differences(plain(source), plain(hms.Database(name="default", locationUri="file:/b", parameters={}))) == []
    other = hms.Database(name="sales", locationUri="file:/a", parameters={})
    assert differences(plain(other), plain(hms.Database(name="sales", locationUri="file:/b", parameters={})))


def test_a_lost_connection_is_tried_a_bounded_number_of_times_with_back_off() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once it is closed
    waits: list[float] = []
    policy = RetryPolicy(call_timeout_s=1, retries=3, backoff=Backoff(initial_s=0.5, max_s=1.0))
    endpoint = ThriftEndpoint("source", EndpointAddress("127.0.0.1", port), policy, sleep=waits.append)
    with pytest.raises(EndpointUnreachable, match=rf"source metastore at thrift://127.0.0.1:{port} did not answer "
                                                  r"getVersion \(4 tries, each within 1 s\)"):
        endpoint.call("getVersion")
    assert waits == [0.5, 1.0, 1.0]


def test_a_server_that_comes_back_within_the_retries_is_answered_on_a_new_connection() -> None:
    """Nothing listens for the first two tries; a real Thrift server is started during the second wait."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    class Handler:
        def getVersion(self) -> str:  # noqa: N802 - Thrift's name
            return "2.3.10"

    server = thriftpy2.rpc.make_server(SERVICE, Handler(), "127.0.0.1", port)
    waits: list[float] = []

    def wait(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            threading.Thread(target=server.serve, daemon=True).start()  # it listens first
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    return
                except OSError:
                    time.sleep(0.01)

    policy = RetryPolicy(call_timeout_s=5, retries=5, backoff=Backoff(initial_s=0.1, max_s=1.0))
    endpoint = ThriftEndpoint("source", EndpointAddress("127.0.0.1", port), policy, sleep=wait)
    try:
        assert endpoint.call("getVersion") == "2.3.10"
        assert waits == [0.1, 0.2] and endpoint.calls == 1  # the two tries before found no one to call
    finally:
        endpoint.close()
        server.close()


def test_the_summary_is_complete_only_without_problems() -> None:
    summary = Summary()
    summary.add("tables", "copied", 3)
    summary.add("partitions", "identical", 10)
    assert summary.ok and "import: complete" in summary.text()
    summary.add("tables", "differing", name="db.t", reason="parameters.k: source 'v', gateway 'w'")
    assert not summary.ok
    assert "differing: table db.t: parameters.k: source 'v', gateway 'w'" in summary.text()


def test_progress_is_shown_at_most_once_an_interval_and_at_the_end() -> None:
    out, ticks = io.StringIO(), itertools.count()
    progress = Progress(out, interval_s=5, clock=lambda: float(next(ticks)))
    progress.start("partitions", 10)
    for _ in range(10):
        progress.advance()
    progress.finish()
    lines = out.getvalue().splitlines()
    assert lines[0] == "import: partitions: 10 to go through"
    assert lines[1].startswith("import: partitions: 5/10 (50%), 1/s")
    assert lines[-1].startswith("import: partitions: 10/10 (100%)") and lines[-1].endswith("done")
