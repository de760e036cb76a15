"""The pipeline's jobs from a shell: `python -m pipeline ...` or `spark-submit pipeline/__main__.py ...`.

    spark-submit --master 'local[2]' --conf spark.metastore.gateway.address=127.0.0.1:50051 \\
        pipeline/__main__.py snapshot-read sales orders --output /tmp/orders_usage
    spark-submit --conf spark.metastore.gateway.address=127.0.0.1:50051 \\
        pipeline/__main__.py write sales orders /data/orders.parquet --format parquet
    python -m pipeline snapshot-read sales orders --address 127.0.0.1:50051 --master 'local[2]'
    python -m pipeline write sales orders /data/fix.parquet --mode overwrite --partition ds=2024-01-01
    python -m pipeline read sales orders --filter "ds >= '2024-01-01'" --where "amount > 10" --limit 50
    python -m pipeline read sales orders --filter "ds = '2024-01-01'" --output /tmp/orders_0101 --output-format csv

`write` checks the input's columns against the table before any txn opens (names; types equal or
safely up-cast, e.g. int -> bigint) and refuses a mismatch naming the columns; `--mode overwrite`
replaces the partitions written for later snapshots (Hive's base_<w>), earlier snapshots keep
theirs; `--partition k=v` gives static partition values (the input then has no such column).
`read` prints the rows (JSON lines: the table's columns, then its partition keys) of one snapshot
taken in a read txn, or writes them to --output; the summary (snapshot, partitions, files) goes to
stderr. `snapshot-read` reports files and bytes per partition instead of rows. `compact` is the
compaction worker: `python -m pipeline compact --address 127.0.0.1:50051 [--loop]`.

Under spark-submit the master and conf come from spark-submit; run with plain Python, `--master`
(default local[2]) and `--address` (else METASTORE_GATEWAY_ADDRESS) set them. A gateway with TLS and
tokens: `--tls-ca`, `--tls-cert`/`--tls-key` (mutual TLS) and `--token-file`, or their conf keys
`spark.metastore.gateway.tls.*` and `spark.metastore.gateway.token.file` (README, Security).
Exit status: 0 done, 1 the job failed (its txn aborted, nothing visible), 2 bad arguments or
configuration.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Any, Sequence

if __package__ in (None, ""):  # spark-submit pipeline/__main__.py: make the repository importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pipeline.acid import NotEnoughHistory  # noqa: E402
from pipeline.client import (ADDRESS_CONF, ClientConfig, ClientConfigError, GatewayError,  # noqa: E402
                             LockAcquireTimeout)
from pipeline.client import security  # noqa: E402

# Flags for plain-Python runs (spark-submit passes the same settings as --conf): flag, conf key, variable, help.
_SECURITY_FLAGS = (
    ("--tls-ca", security.TLS_CA_CONF, security.TLS_CA_ENV, "PEM CA that signed the gateway's certificate: TLS"),
    ("--tls-cert", security.TLS_CERT_CONF, security.TLS_CERT_ENV, "this client's PEM certificate (mutual TLS)"),
    ("--tls-key", security.TLS_KEY_CONF, security.TLS_KEY_ENV, "the PEM private key of --tls-cert"),
    ("--token-file", security.TOKEN_FILE_CONF, security.TOKEN_FILE_ENV,
     f"a file holding this client's bearer token (or the token in {security.TOKEN_ENV})"),
)


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")  # Python's, each with a Spark equivalent


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", help=f"gateway host:port (else {ADDRESS_CONF}, else METASTORE_GATEWAY_ADDRESS)")
    parser.add_argument("--master", help="Spark master when not under spark-submit (default local[2])")
    parser.add_argument("--log-level", default="WARNING", type=str.upper, choices=LOG_LEVELS,
                        help="Python logging level (and Spark's, once started)")
    for flag, key, env, what in _SECURITY_FLAGS:
        parser.add_argument(flag, help=f"{what} (else {key}, else {env})")
    sub = parser.add_subparsers(dest="command", required=True)
    read = sub.add_parser("snapshot-read", help="files and bytes per partition under one pinned snapshot")
    read.add_argument("db")
    read.add_argument("table")
    read.add_argument("--output", help="also write the per-partition rows as Parquet here")
    read.add_argument("--filter",
                      help="only partitions matching this Hive partition filter, e.g. \"ds >= '2024-01-01'\"")
    read.add_argument("--batch-size", type=int)
    read.add_argument("--in-flight", type=int)
    read.add_argument("--slices", type=int, help="Spark partitions (default: from the core count)")
    read.add_argument("--no-lock", action="store_true", help="skip the SHARED_READ table lock")
    rows = sub.add_parser("read", help="the rows of a table under one snapshot, printed or written out")
    rows.add_argument("db")
    rows.add_argument("table")
    rows.add_argument("--filter", help="Hive partition filter, applied by the gateway, e.g. \"ds >= '2024-01-01'\"")
    rows.add_argument("--where", help="Spark SQL condition on the rows, e.g. \"amount > 10\"")
    rows.add_argument("--columns", help="comma-separated columns to keep (default: all, partition keys last)")
    rows.add_argument("--limit", type=_non_negative, default=20, help="rows printed (0: all; default 20)")
    rows.add_argument("--output", help="write the rows to this new directory instead of printing them")
    rows.add_argument("--output-format", default="parquet", choices=("parquet", "orc", "json", "csv"))
    rows.add_argument("--no-lock", action="store_true", help="skip the SHARED_READ table lock")
    write = sub.add_parser("write", help="write a partitioned dataset into a transactional table, in one txn")
    write.add_argument("db")
    write.add_argument("table")
    write.add_argument("input", help="input dataset (read with --input-format)")
    write.add_argument("--input-format", default="parquet", choices=("parquet", "orc", "json", "csv"))
    write.add_argument("--format", choices=("parquet", "orc"),
                       help="file format written (default: the table's, else parquet)")
    write.add_argument("--mode", default="append", choices=("append", "overwrite"),
                       help="overwrite: replace the contents of the partitions written")
    write.add_argument("--partition", action="append", default=[], metavar="KEY=VALUE", type=_key_value,
                       help="a static partition value (repeat for a prefix of the keys)")
    compact = sub.add_parser("compact", help="compaction worker: claim queued compactions and run them on Spark")
    compact.add_argument("--loop", action="store_true", help="keep claiming until interrupted (default: one entry)")
    compact.add_argument("--worker-id", help="this worker's name in SHOW COMPACTIONS (default host-pid-thread)")
    compact.add_argument("--poll-interval", type=float, default=10.8,
                         help="seconds to wait on an empty queue (hive.compactor.worker.sleep.time)")
    compact.add_argument("--heartbeat-interval", type=float, default=30.0,
                         help="seconds between heartbeats (well below hive.compactor.worker.timeout)")
    compact.add_argument("--max-compactions", type=int, help="with --loop: stop after this many entries")
    return parser


def _key_value(item: str) -> tuple[str, str]:
    """--partition's KEY=VALUE, checked while the arguments are parsed (a bad one exits 2 before Spark starts)."""
    key, eq, value = item.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"takes KEY=VALUE, got {item!r}")
    return key, value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (all) or positive, got {value}")
    return value


def _compact(spark: Any, config: ClientConfig, args: argparse.Namespace) -> None:
    from dataclasses import asdict

    from pipeline.compactor import run_loop, run_one

    if not args.loop:
        run = run_one(spark, config, worker_id=args.worker_id, heartbeat_interval_s=args.heartbeat_interval)
        print(json.dumps(asdict(run) if run else {"outcome": "queue empty"}))
        return
    run_loop(spark, config, worker_id=args.worker_id, poll_interval_s=args.poll_interval,
             heartbeat_interval_s=args.heartbeat_interval, max_compactions=args.max_compactions,
             on_run=lambda run: print(json.dumps(asdict(run)), flush=True))


def _session(args: argparse.Namespace) -> Any:
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(f"pipeline {args.command}")
    if args.master and not os.environ.get("SPARK_ENV_LOADED"):
        builder = builder.master(args.master)
    elif not os.environ.get("SPARK_ENV_LOADED"):  # plain python: no spark-submit gave a master
        builder = builder.master("local[2]")
    for key, value in _flag_conf(args).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    level = args.log_level.upper()
    spark.sparkContext.setLogLevel({"WARNING": "WARN", "CRITICAL": "FATAL"}.get(level, level))
    return spark


def _flag_conf(args: argparse.Namespace) -> dict[str, str]:
    """The Spark conf keys this run's flags set (they win over spark-submit's --conf)."""
    flags = [("--address", ADDRESS_CONF)] + [(flag, key) for flag, key, _, _ in _SECURITY_FLAGS]
    values = ((key, getattr(args, flag[2:].replace("-", "_"))) for flag, key in flags)
    return {key: value for key, value in values if value}


def _submitted_conf() -> Any:
    """spark-submit's conf, read from the JVM spark-submit already started (no SparkContext yet: a
    second's work, not the minute a session takes); None under plain Python."""
    if not os.environ.get("PYSPARK_GATEWAY_PORT"):
        return None
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    return SparkConf()


def check_gateway(args: argparse.Namespace, timeout_s: float = 10.0) -> str | None:
    """Why the job cannot reach its gateway, checked before Spark starts; None when it answers."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from pipeline.client.channel import open_channel

    submitted = _submitted_conf()
    try:
        config = ClientConfig.resolve({**(dict(submitted.getAll()) if submitted else {}), **_flag_conf(args)})
    except ClientConfigError as exc:
        return str(exc)
    address = config.address
    with open_channel(config) as channel:  # TLS when configured: a TLS gateway drops a plaintext probe
        try:
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=timeout_s)
        except grpc.RpcError as exc:
            code = exc.code().name if isinstance(exc, grpc.Call) else "UNAVAILABLE"
            return (f"no metastore gateway answers at {address} ({code}); start one (`metastore-gateway serve`) or "
                    f"fix --address / --conf {ADDRESS_CONF} / METASTORE_GATEWAY_ADDRESS; a gateway with TLS answers "
                    f"only a client with --tls-ca (and --tls-cert/--tls-key when it wants mutual TLS)")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    problem = check_gateway(args)
    if problem:
        print(f"pipeline {args.command}: {problem}", file=sys.stderr)
        return 2
    try:
        spark = _session(args)
        config = ClientConfig.from_spark(spark)
    except ClientConfigError as exc:
        print(f"pipeline: {exc}", file=sys.stderr)
        return 2
    try:
        if args.command == "snapshot-read":
            from pipeline.snapshot_read import snapshot_read

            overrides = {k: v for k, v in (("batch_size", args.batch_size), ("in_flight", args.in_flight)) if v}
            result = snapshot_read(spark, args.db, args.table, config=config.with_(**overrides),
                                   num_slices=args.slices, lock=not args.no_lock, output=args.output,
                                   filter=args.filter)
            print(json.dumps({"table": result.snapshot.full_name, "txn_id": result.txn_id,
                              "valid_write_id_list": result.snapshot.valid_write_id_list,
                              "partitions": len(result.rows), "files": result.files, "bytes": result.bytes,
                              "timings_s": {k: round(v, 3) for k, v in result.timings_s.items()}}))
        elif args.command == "read":
            from pipeline.snapshot_read import read_rows

            columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else []
            summary = read_rows(spark, args.db, args.table, config=config, filter=args.filter, where=args.where,
                                columns=columns, limit=args.limit, output=args.output,
                                output_format=args.output_format, lock=not args.no_lock)
            print(json.dumps(summary), file=sys.stderr)
        elif args.command == "compact":
            _compact(spark, config, args)
        else:
            from pipeline.txn_write import txn_write

            df = spark.read.format(args.input_format).option("header", "true").load(args.input)
            if args.input_format == "csv":  # every column reads as text: parse it as the table's types first
                from pipeline.client import process_client
                from pipeline.schema import parse_text_columns

                client = process_client(config)
                table = client.get_table(args.db, args.table,
                                         client.table_snapshot(args.db, args.table).read_context())
                df = parse_text_columns(df, table)
            written = txn_write(df, args.db, args.table, config=config, file_format=args.format, mode=args.mode,
                                partition=dict(args.partition))
            print(json.dumps({"txn_id": written.txn_id, "write_id": written.write_id, "mode": written.mode,
                              "format": written.file_format, "added": len(written.added),
                              "appended": len(written.appended),
                              "timings_s": {k: round(v, 3) for k, v in written.timings_s.items()}}))
        return 0
    except (GatewayError, NotEnoughHistory, LockAcquireTimeout, ValueError) as exc:
        print(f"pipeline {args.command}: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        from pyspark.errors import PySparkException

        if not isinstance(exc, PySparkException):  # e.g. a --where naming no column: Spark's own message
            raise
        print(f"pipeline {args.command}: {exc}", file=sys.stderr)
        return 1
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
