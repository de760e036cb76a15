"""The admin subcommands of `metastore-gateway`: their arguments, and turning a reply into output.

    metastore-gateway show databases [PATTERN]
    metastore-gateway show tables DB [PATTERN]
    metastore-gateway show partitions DB.TABLE [--limit N]
    metastore-gateway describe DB.TABLE
    metastore-gateway show locks [DB[.TABLE]] [--extended]
    metastore-gateway show transactions [--state open|aborted|committed]
    metastore-gateway abort transactions ID [ID ...]
    metastore-gateway show compactions [DB[.TABLE]]
    metastore-gateway compact DB.TABLE [PARTITION] major|minor [--property KEY=VALUE ...]
    metastore-gateway cache-stats

Each takes `--address HOST:PORT` (default 127.0.0.1:50051, or MSGW_ADDRESS), `--json` and `--timeout`.
`metastore-gateway import-hms --from thrift://HOST:PORT` (gateway/hms_import/command.py), which copies a Hive
Metastore into a gateway, talks to both over Thrift instead.
Exit status: 0 done, 1 the gateway refused or could not be reached (one line on stderr naming the
status and what to do), 2 a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable, TextIO

import grpc

from gateway.admin import render
from gateway.auth import ClientCredentials
from gateway.config import ConfigError
from gateway.admin.client import AdminClient, AdminUsageError, Row, split_table_name

DEFAULT_ADDRESS = "127.0.0.1:50051"

TXN_COLUMNS = [("txn_id", "TXN ID"), ("state", "STATE"), ("user", "USER"), ("host", "HOST"),
               ("started_ms", "STARTED (ms)"), ("last_heartbeat_ms", "LAST HEARTBEAT (ms)")]
COMPACTION_COLUMNS = [("id", "ID"), ("database", "DATABASE"), ("table", "TABLE"), ("partition", "PARTITION"),
                      ("type", "TYPE"), ("state", "STATE"), ("worker", "WORKER"), ("enqueued_ms", "ENQUEUE TIME (ms)"),
                      ("started_ms", "START (ms)"), ("duration_ms", "DURATION (ms)"), ("error", "ERROR")]
LOCK_COLUMNS = [("lock_id", "LOCK ID"), ("database", "DATABASE"), ("table", "TABLE"), ("partition", "PARTITION"),
                ("state", "STATE"), ("type", "TYPE"), ("txn_id", "TXN ID"), ("user", "USER"), ("host", "HOST")]
LOCK_EXTENDED_COLUMNS = [*LOCK_COLUMNS, ("blocked_by", "BLOCKED BY"), ("acquired_at_ms", "ACQUIRED AT (ms)"),
                         ("last_heartbeat_ms", "LAST HEARTBEAT (ms)"), ("operation", "OPERATION")]


def _client_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--address", default=os.environ.get("MSGW_ADDRESS", DEFAULT_ADDRESS),
                   help=f"the gateway's gRPC address (default {DEFAULT_ADDRESS}, or $MSGW_ADDRESS)")
    p.add_argument("--json", action="store_true", help="print JSON (for scripts) instead of aligned text")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds each call may take (default 10)")
    p.add_argument("--tls-ca", default=os.environ.get("MSGW_TLS_CA", ""),
                   help="PEM CA that signed the gateway's certificate: connect with TLS ($MSGW_TLS_CA)")
    p.add_argument("--tls-cert", default=os.environ.get("MSGW_TLS_CERT", ""),
                   help="this client's PEM certificate, for a gateway that wants mutual TLS ($MSGW_TLS_CERT)")
    p.add_argument("--tls-key", default=os.environ.get("MSGW_TLS_KEY", ""),
                   help="the key of --tls-cert ($MSGW_TLS_KEY)")
    p.add_argument("--token-file", default="",
                   help="a file holding this client's bearer token (or the token itself in $MSGW_TOKEN)")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    show = sub.add_parser("show", help="list databases, tables, partitions, locks or transactions of a gateway")
    what = show.add_subparsers(dest="show_what", required=True, metavar="WHAT")
    p = what.add_parser("databases", help="database names (optionally matching a Hive pattern: * and |)")
    p.add_argument("pattern", nargs="?", default="")
    _client_options(p)
    p = what.add_parser("tables", help="table names of a database")
    p.add_argument("db")
    p.add_argument("pattern", nargs="?", default="")
    _client_options(p)
    p = what.add_parser("partitions", help="partition names of DB.TABLE under a fresh snapshot")
    p.add_argument("table", metavar="DB.TABLE")
    p.add_argument("--limit", type=int, default=0, help="show at most this many (0: all)")
    _client_options(p)
    p = what.add_parser("locks", help="locks, all or on DB or DB.TABLE (Hive's SHOW LOCKS)")
    p.add_argument("target", nargs="?", default="", metavar="DB[.TABLE]")
    p.add_argument("--extended", action="store_true", help="add blocker, times, agent and operation")
    _client_options(p)
    p = what.add_parser("compactions", help="queued, running and finished compactions (Hive's SHOW COMPACTIONS)")
    p.add_argument("target", nargs="?", default="", metavar="DB[.TABLE]")
    _client_options(p)
    p = what.add_parser("transactions", help="open and aborted transactions (Hive's SHOW TRANSACTIONS)")
    p.add_argument("--state", choices=("open", "aborted", "committed"), help="only transactions in this state")
    _client_options(p)
    describe = sub.add_parser("describe", help="a table's schema, location and parameters under a fresh snapshot")
    describe.add_argument("table", metavar="DB.TABLE")
    _client_options(describe)
    abort = sub.add_parser("abort", help="abort transactions (Hive's ABORT TRANSACTIONS)")
    abort_what = abort.add_subparsers(dest="abort_what", required=True, metavar="WHAT")
    p = abort_what.add_parser("transactions", help="abort these transactions; their locks are released")
    p.add_argument("txn_ids", type=int, nargs="+", metavar="ID")
    _client_options(p)
    compact = sub.add_parser("compact", help="queue a compaction (Hive's ALTER TABLE ... COMPACT)")
    compact.add_argument("table", metavar="DB.TABLE")
    compact.add_argument("args", nargs="+", metavar="[PARTITION] major|minor",
                         help="the partition (Hive's name k1=v1/k2=v2; required when partitioned), then the type")
    compact.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                         help="a compaction property (Hive's WITH OVERWRITE TBLPROPERTIES); repeat for more")
    _client_options(compact)
    stats = sub.add_parser("cache-stats", help="a gateway's cache, poller and memory statistics")
    _client_options(stats)


def _show_databases(c: AdminClient, a: argparse.Namespace, out: TextIO) -> None:
    render.emit(out, [("database", "DATABASE")], c.databases(a.pattern), as_json=a.json, empty="(no databases)")


def _show_tables(c: AdminClient, a: argparse.Namespace, out: TextIO) -> None:
    render.emit(out, [("table", "TABLE")], c.tables(a.db, a.pattern), as_json=a.json, empty="(no tables)")


def _show_partitions(c: AdminClient, a: argparse.Namespace, out: TextIO) -> None:
    db, table = split_table_name(a.table)
    if a.limit < 0:
        raise AdminUsageError(f"--limit must not be negative, got {a.limit}")
    snap, rows = c.partitions(db, table, a.limit)
    if a.json:
        render.emit_record(out, {"snapshot": snap.valid_write_id_list, "partitions": [r["partition"] for r in rows]},
                           as_json=True)
    else:
        render.emit(out, [("partition", "PARTITION")], rows, as_json=False, empty="(no partitions)")


def _show_locks(c: AdminClient, a: argparse.Namespace, out: TextIO) -> None:
    if a.target.count(".") > 1 or a.target.startswith(".") or a.target.endswith("."):
        raise AdminUsageError(f"expected DB or DB.TABLE, got {a.target[:200]!r}")
    rows = c.locks(a.target, a.extended)
    render.emit(out, LOCK_EXTENDED_COLUMNS if a.extended else LOCK_COLUMNS, rows, as_json=a.json,
                empty="(no locks)")


def _show_transactions(c: AdminClient, a: argparse.Namespace, out: TextIO) -> None:
    render.emit(out, TXN_COLUMNS, c.transactions(a.state or ""), as_json=a.json, empty="(no transactions)")


def _show_compactions(c: AdminClient, a: argparse.Namespace, out: TextIO) -> None:
    if a.target.count(".") > 1 or a.target.startswith(".") or a.target.endswith("."):
        raise AdminUsageError(f"expected DB or DB.TABLE, got {a.target[:200]!r}")
    db, _, table = a.target.partition(".")
    render.emit(out, COMPACTION_COLUMNS, c.compactions(db, table), as_json=a.json, empty="(no compactions)")


def _compact(c: AdminClient, a: argparse.Namespace, out: TextIO) -> None:
    db, table = split_table_name(a.table)
    if len(a.args) > 2 or a.args[-1].lower() not in ("major", "minor"):
        raise AdminUsageError("expected [PARTITION] major|minor after DB.TABLE, e.g. `compact sales.orders "
                              "ds=2024-01-01 major`")
    properties: dict[str, str] = {}
    for item in a.property:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise AdminUsageError(f"--property takes KEY=VALUE, got {item[:200]!r}")
        properties[key] = value
    row = c.compact(db, table, a.args[0] if len(a.args) == 2 else "", a.args[-1], properties)
    render.emit(out, [("id", "ID"), ("accepted", "ACCEPTED"), ("state", "STATE")], [row], as_json=a.json)


def _describe(c: AdminClient, a: argparse.Namespace, out: TextIO) -> None:
    render.emit_record(out, c.describe(*split_table_name(a.table)), as_json=a.json)


def _abort(c: AdminClient, a: argparse.Namespace, out: TextIO) -> None:
    if any(t <= 0 for t in a.txn_ids):
        raise AdminUsageError("transaction ids are positive numbers (see `show transactions`)")
    c.abort(a.txn_ids)
    rows: list[Row] = [{"txn_id": t, "state": "ABORTED"} for t in a.txn_ids]
    render.emit(out, [("txn_id", "TXN ID"), ("state", "STATE")], rows, as_json=a.json)


def _cache_stats(c: AdminClient, a: argparse.Namespace, out: TextIO) -> None:
    s = c.cache_stats()
    if a.json:
        render.emit_record(out, s, as_json=True)
        return
    reads = s["reads"]
    lines = [f"cache            {'enabled' if s['enabled'] else 'disabled'}",
             f"hits             {s['hits']} ({100 * s['hit_ratio']:.1f}% of {reads} reads)" if reads
             else "hits             0"]
    lines += [f"  miss {reason:<16} {count}"
              for reason, count in sorted(s["misses_by_reason"].items(), key=lambda kv: -kv[1])]
    lines += [f"tables           {s['tables']}",
              f"partitions       {s['partitions']} ({s['encoded_bytes'] / 1e6:.1f} MB encoded), "
              f"evictions {s['evictions']}",
              # The encoded bytes are the cache's payload only; the process holds more (objects, indexes, code).
              f"memory           {s['resident_bytes'] / 1e6:.1f} MB resident (the whole gateway process)",
              f"poller           at event {s['poller_position']}, {s['poller_lag_events']} behind, apply lag "
              f"{s['poller_lag_ms']:.1f} ms (p50 {s['poller_lag_p50_ms']:.1f}, p99 {s['poller_lag_p99_ms']:.1f} over "
              f"its last {min(s['poller_batches'], 1000)} of {s['poller_batches']} batches)",
              f"fills            {s['fills']}, reloads {s['reloads']}"]
    out.write("\n".join(lines) + "\n")


Command = Callable[[AdminClient, argparse.Namespace, TextIO], None]
_SHOW: dict[str, Command] = {"databases": _show_databases, "tables": _show_tables, "partitions": _show_partitions,
                             "locks": _show_locks, "transactions": _show_transactions,
                             "compactions": _show_compactions}
COMMANDS = frozenset({"show", "describe", "abort", "compact", "cache-stats"})


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Run one admin command; the exit status as documented at the top of this module."""
    command: Command
    if args.command == "show":
        command = _SHOW[args.show_what]
    elif args.command == "describe":
        command = _describe
    elif args.command == "abort":
        command = _abort
    elif args.command == "compact":
        command = _compact
    else:
        command = _cache_stats
    label = " ".join(filter(None, (args.command, getattr(args, "show_what", None), getattr(args, "abort_what", None))))
    try:
        with AdminClient(args.address, args.timeout, _credentials(args)) as client:
            command(client, args, out)
    except (AdminUsageError, ConfigError) as exc:
        err.write(f"metastore-gateway {label}: {exc}\n")
        return 2
    except grpc.RpcError as exc:
        err.write(f"metastore-gateway {label}: {describe_rpc_error(exc, args.address)}\n")
        return 1
    return 0


def describe_rpc_error(exc: grpc.RpcError, address: str) -> str:
    """One line: the status, the gateway's message, and for an unreachable gateway what to check."""
    code = exc.code() if isinstance(exc, grpc.Call) else grpc.StatusCode.UNKNOWN
    details = (exc.details() if isinstance(exc, grpc.Call) else str(exc)) or ""
    if code == grpc.StatusCode.UNAVAILABLE and ("connect" in details.lower() or "refused" in details.lower()):
        return (f"UNAVAILABLE: cannot reach a gateway at {address} ({details[:200]}); is `metastore-gateway serve` "
                "running there? pass --address HOST:PORT")
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return (f"DEADLINE_EXCEEDED: no answer from {address} within the time-out; raise --timeout or check the "
                "gateway's log")
    return f"{code.name}: {details[:1000]}"


def _credentials(args: argparse.Namespace) -> ClientCredentials:
    token = os.environ.get("MSGW_TOKEN", "")
    if args.token_file:
        try:
            token = Path(args.token_file).read_text().strip()
        except OSError as exc:
            raise AdminUsageError(f"--token-file: cannot read {args.token_file}: {exc.strerror}") from exc
    return ClientCredentials(args.tls_ca, args.tls_cert, args.tls_key, token)
