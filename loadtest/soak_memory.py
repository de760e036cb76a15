"""Does a gateway's memory stay bounded under a long, steady churn? (`make soak-memory`)

One gateway process on its own embedded PostgreSQL. Its catalog is kept the same size while every path
that keeps state per call, per connection, per txn or per table is driven again and again:

* Thrift workers (Hive 3's client calls, thriftpy2, each on its own connection, a new connection every
  20 rounds): per round, create a partitioned table (one of four names per worker), add 20
  partitions, read them by name and all, alter the table's parameters, open a txn, allocate its write
  id on the run's ACID table, take a SHARED_READ lock on the table, commit (every third round: abort),
  and drop the table at every name's second round, so tables, partitions, their cache entries, locks and txns are
  made and forgotten all run long;
* a gRPC worker (a new channel every 50 rounds): open and commit a txn, take a snapshot of the txns and
  the ACID table's write ids, and read the table in it (a cache hit).

Every `--interval` seconds the gateway's VmRSS, open file descriptors and threads are sampled. After a
warm-up (`--warmup`, a share of the run: the cache, the pools and the allocator's arenas fill), the
growth is the median of the last three samples minus that of the first three after warm-up; the run
fails (exit 1) when it is above `--max-growth-mib` (or the descriptors grew by more than 8), or when a
worker's call failed. Writes the samples (CSV) and a plot into `--out`, and with `--section` the
"soak-memory" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import shlex
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import grpc
import psutil

from loadtest import probes, report
from loadtest.gateway_process import GatewayProcess
from loadtest.harness import workdir
from loadtest.hms_txns import connect_hive3
from protos.metastore.v1 import admin_pb2 as apb
from protos.metastore.v1 import admin_pb2_grpc, catalog_pb2_grpc, transactions_pb2_grpc
from protos.metastore.v1 import catalog_pb2 as cpb
from protos.metastore.v1 import transactions_pb2 as tpb

DB = "soak"
ACID_TABLE = "acid"
PARTITIONS_PER_ROUND = 20
FD_GROWTH_LIMIT = 8


@dataclass
class Sample:
    at_s: float
    rss_mib: float
    fds: int
    threads: int
    rounds: int
    cached_tables: int
    cached_partitions: int
    hits: int
    misses: int


@dataclass
class Workload:
    """What the workers did, shared with the sampler (ints under the GIL)."""

    thrift_address: str
    grpc_address: str
    deadline: float
    rounds: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def keep_going(self) -> bool:
        return time.monotonic() < self.deadline

    def failed(self, worker: str, exc: BaseException) -> None:
        if len(self.errors) < 20:
            self.errors.append(f"{worker}: {type(exc).__name__}: {str(exc)[:300]}")


def _table(hms: Any, name: str, *, acid: bool) -> Any:
    orc = "org.apache.hadoop.hive.ql.io.orc."
    sd = hms.StorageDescriptor(
        cols=[hms.FieldSchema(name="id", type="bigint", comment="")], location=None,
        inputFormat=orc + "OrcInputFormat", outputFormat=orc + "OrcOutputFormat", compressed=False, numBuckets=-1,
        serdeInfo=hms.SerDeInfo(serializationLib=orc + "OrcSerde", parameters={}), bucketCols=[], sortCols=[],
        parameters={})
    keys = [] if acid else [hms.FieldSchema(name="ds", type="string", comment="")]
    return hms.Table(tableName=name, dbName=DB, owner="soak", sd=sd, partitionKeys=keys, tableType="MANAGED_TABLE",
                     parameters={"transactional": "true"} if acid else {})


def _thrift_round(client: Any, hms: Any, worker: int, n: int) -> None:
    name = f"t{worker}_{n % 4}"
    try:
        client.create_table(_table(hms, name, acid=False))
    except hms.AlreadyExistsException:
        pass
    table = client.get_table(DB, name)
    values = [f"{n}-{k}" for k in range(PARTITIONS_PER_ROUND)]
    client.add_partitions([hms.Partition(values=[v], dbName=DB, tableName=name, sd=table.sd, parameters={})
                           for v in values])
    client.get_partitions_by_names(DB, name, [f"ds={v}" for v in values])
    table.parameters = {**(table.parameters or {}), "round": str(n)}
    client.alter_table(DB, name, table)
    txn = client.open_txns(hms.OpenTxnRequest(num_txns=1, user="soak", hostname="soak")).txn_ids[0]
    client.allocate_table_write_ids(hms.AllocateTableWriteIdsRequest(dbName=DB, tableName=ACID_TABLE, txnIds=[txn]))
    client.lock(hms.LockRequest(component=[hms.LockComponent(
        type=hms.LockType.SHARED_READ, level=hms.LockLevel.TABLE, dbname=DB, tablename=name)],
        txnid=txn, user="soak", hostname="soak"))
    if n % 3 == 2:
        client.abort_txn(hms.AbortTxnRequest(txnid=txn))
    else:
        client.commit_txn(hms.CommitTxnRequest(txnid=txn))
    client.get_partitions(DB, name, -1)
    if n // 4 % 2 == 1:  # each name's second round: a table lives two rounds, 40 partitions at most
        client.drop_table(DB, name, True)


def _grpc_round(channel: grpc.Channel) -> None:
    txns, catalog = transactions_pb2_grpc.TransactionsStub(channel), catalog_pb2_grpc.CatalogStub(channel)
    opened = txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="soak", hostname="soak"), timeout=30)
    txns.CommitTxn(tpb.CommitTxnRequest(txn_id=opened.txn_ids[0]), timeout=30)
    snapshot = txns.GetOpenTxns(tpb.GetOpenTxnsRequest(), timeout=30).valid_txn_list
    ids = txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
        full_table_names=[f"{DB}.{ACID_TABLE}"], valid_txn_list=snapshot), timeout=30).tables[0]
    catalog.GetTable(cpb.GetTableRequest(db_name=DB, table_name=ACID_TABLE, read=cpb.ReadContext(
        valid_write_id_list=ids.valid_write_id_list, table_id=ids.table_id)), timeout=30)


def churn(work: Workload, worker: int, what: str, connect: Callable[[], Any], one_round: Callable[[Any, int], None],
          rounds_per_connection: int) -> None:
    """Rounds until the deadline, a new connection every `rounds_per_connection` and after a failure."""
    connection, n = None, 0
    while work.keep_going():
        try:
            if connection is None or n % rounds_per_connection == 0:
                if connection is not None:
                    connection.close()
                connection = connect()
            one_round(connection, n)
            work.rounds[worker] += 1
        except Exception as exc:  # noqa: BLE001 - counted and reported; the soak goes on
            work.failed(f"{what} {worker}", exc)
            connection = None
        n += 1
    if connection is not None:
        connection.close()


def thrift_worker(work: Workload, worker: int) -> None:
    from gateway.thrift.idl import hms

    churn(work, worker, "thrift worker", lambda: connect_hive3(work.thrift_address),
          lambda client, n: _thrift_round(client, hms, worker, n), 20)


def grpc_worker(work: Workload, worker: int) -> None:
    churn(work, worker, "gRPC worker", lambda: grpc.insecure_channel(work.grpc_address),
          lambda channel, _n: _grpc_round(channel), 50)


def sample(pid: int, admin: admin_pb2_grpc.AdminStub, started: float, work: Workload) -> Sample:
    proc = psutil.Process(pid)
    cache = admin.CacheStats(apb.CacheStatsRequest(), timeout=30)
    return Sample(round(time.monotonic() - started, 1), proc.memory_info().rss / 2**20, proc.num_fds(),
                  proc.num_threads(), sum(work.rounds), cache.tables, cache.partitions, cache.hits,
                  sum(cache.misses_by_reason.values()))


def growth(samples: list[Sample], warmup: float, value: Callable[[Sample], float]) -> float:
    """The median of the last three samples minus that of the first three after the warm-up."""
    after = [s for s in samples if s.at_s >= samples[-1].at_s * warmup]
    if len(after) < 2:
        raise SystemExit("soak_memory: too few samples after the warm-up; run longer or sample more often")
    head, tail = after[:3], after[-3:]
    return statistics.median(map(value, tail)) - statistics.median(map(value, head))


def run(opts: argparse.Namespace) -> tuple[list[Sample], Workload]:
    with workdir("msgw-soak-memory-", keep=opts.keep) as root:
        gateway = GatewayProcess(["--data-dir", str(root / "data")], root / "gateway.log")
        try:
            gateway.wait_serving()
            client = connect_hive3(gateway.thrift_address)
            try:
                from gateway.thrift.idl import hms

                client.create_database(hms.Database(name=DB, parameters={}))
                client.create_table(_table(hms, ACID_TABLE, acid=True))
            finally:
                client.close()
            work = Workload(gateway.thrift_address, gateway.address, time.monotonic() + opts.duration,
                            [0] * (opts.thrift_workers + 1))
            threads = [threading.Thread(target=thrift_worker, args=(work, w), daemon=True)
                       for w in range(opts.thrift_workers)]
            threads.append(threading.Thread(target=grpc_worker, args=(work, opts.thrift_workers), daemon=True))
            started = time.monotonic()
            for t in threads:
                t.start()
            with grpc.insecure_channel(gateway.address) as channel:
                admin = admin_pb2_grpc.AdminStub(channel)
                samples = [sample(gateway.pid, admin, started, work)]
                while work.keep_going():
                    time.sleep(min(opts.interval, max(0.0, work.deadline - time.monotonic())))
                    samples.append(s := sample(gateway.pid, admin, started, work))
                    print(f"soak_memory: {s.at_s:7.0f} s  VmRSS {s.rss_mib:6.1f} MiB  fds {s.fds:3d}  threads "
                          f"{s.threads:3d}  cached {s.cached_tables} tables, {s.cached_partitions} partitions  "
                          f"rounds {s.rounds:,}  errors {len(work.errors)}", flush=True)
            for t in threads:
                t.join(60)
            return samples, work
        finally:
            if gateway.stop() not in (0, None):
                print(f"soak_memory: the gateway failed:\n{gateway.output()[-4000:]}", file=sys.stderr)


def section(opts: argparse.Namespace, samples: list[Sample], work: Workload, rss_growth: float, fd_growth: float,
            png: str, started: str, commit: str) -> str:
    start, end = report.markers("soak-memory")
    command = "python -m loadtest.soak_memory " + shlex.join(sys.argv[1:])
    after = [s for s in samples if s.at_s >= samples[-1].at_s * opts.warmup]
    rows = [[f"{s.at_s:.0f}", f"{s.rss_mib:.1f}", str(s.fds), str(s.threads), f"{s.cached_tables:,}",
             f"{s.cached_partitions:,}", f"{s.rounds:,}", f"{s.hits:,}", f"{s.misses:,}"]
            for s in (samples[1], after[0], samples[len(samples) // 2], samples[-1])]
    return "\n".join([
        start, "## Memory under a long churn", "", *report.produced_by("soak_memory", command),
        f"Run {started} UTC at commit `{commit}`; machine: {report.machine_line()}. "
        f"{opts.thrift_workers} Thrift workers and one gRPC worker for "
        f"{opts.duration:.0f} s, {sum(work.rounds):,} rounds, {len(work.errors)} failed calls; the gateway sampled "
        f"every {opts.interval:.0f} s.", "",
        *report.table(["at s", "VmRSS MiB", "open fds", "threads", "cached tables", "cached partitions",
                       "rounds so far", "cache hits", "cache misses"], rows),
        "", f"Growth after the warm-up (the first {opts.warmup:.0%}): VmRSS **{rss_growth:+.1f} MiB** "
        f"(limit {opts.max_growth_mib:.0f}), open descriptors **{fd_growth:+.0f}** (limit {FD_GROWTH_LIMIT}). "
        f"Plot: `{png}` (git-ignored; regenerate with the command above).", end, ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=1200.0, help="seconds of churn (default 1200)")
    parser.add_argument("--interval", type=float, default=15.0, help="seconds between samples (default 15)")
    parser.add_argument("--warmup", type=float, default=1 / 3, help="share of the run before growth counts")
    parser.add_argument("--thrift-workers", type=int, default=4)
    parser.add_argument("--max-growth-mib", type=float, default=16.0)
    parser.add_argument("--out", type=Path, default=Path("loadtest/results/soak_memory"))
    parser.add_argument("--section", type=Path, help="write the soak-memory section of this markdown file")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (the gateway's log)")
    opts = parser.parse_args(argv)
    if not 0 < opts.warmup < 1 or opts.duration <= 0 or opts.interval <= 0 or opts.thrift_workers < 1:
        parser.error("--warmup is a share in (0, 1); --duration, --interval and --thrift-workers are positive")
    started, commit = f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M}", probes.code_version()["commit"]
    samples, work = run(opts)
    rss_growth = growth(samples, opts.warmup, lambda s: s.rss_mib)
    fd_growth = growth(samples, opts.warmup, lambda s: s.fds)
    opts.out.mkdir(parents=True, exist_ok=True)
    with open(opts.out / "soak_memory.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["at_s", "rss_mib", "fds", "threads", "rounds", "cached_tables", "cached_partitions", "hits",
                         "misses"])
        writer.writerows((s.at_s, f"{s.rss_mib:.2f}", s.fds, s.threads, s.rounds, s.cached_tables,
                          s.cached_partitions, s.hits, s.misses) for s in samples)
    png = report.line_chart(opts.out / "soak_memory.png", "The gateway's memory and descriptors under churn",
                            "seconds", "VmRSS (MiB) / open descriptors", [
                                ("VmRSS MiB", [s.at_s for s in samples], [s.rss_mib for s in samples]),
                                ("open descriptors", [s.at_s for s in samples], [float(s.fds) for s in samples])])
    if opts.section:
        report.write_section(opts.section, "soak-memory", section(opts, samples, work, rss_growth, fd_growth, png,
                                                                      started, commit))
    print(f"soak_memory: {sum(work.rounds):,} rounds; after the warm-up VmRSS {rss_growth:+.1f} MiB, "
          f"descriptors {fd_growth:+.0f}; {len(work.errors)} failed calls")
    for error in work.errors:
        print(f"  {error}", file=sys.stderr)
    return 1 if work.errors or rss_growth > opts.max_growth_mib or fd_growth > FD_GROWTH_LIMIT else 0


if __name__ == "__main__":
    sys.exit(main())
