"""`metastore-gateway`: arguments to Settings, then hand over. No logic lives here."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from dataclasses import fields
from typing import Any, Sequence

from gateway import cli_postgres
from gateway.admin import commands as admin_commands
from gateway.cli_startup import explain
from gateway.config import ConfigError, Settings, data_dir_of, effective_settings, load_settings, redact_dsn
from gateway.hms_import import command as import_hms


def _parse_conf(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--conf expects key=value, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="TOML file of settings (Hive key names)")
    p.add_argument("--conf", "--hiveconf", action="append", default=[], metavar="KEY=VALUE",
                   help="set any setting, e.g. --conf hive.txn.timeout=300s (repeatable)")
    p.add_argument("--dsn", help="PostgreSQL URL; omitted: start the embedded PostgreSQL")
    p.add_argument("--data-dir", help="data directory of the embedded PostgreSQL (default "
                                      "~/.local/share/metastore-gateway; as root /var/lib/metastore-gateway/data)")
    p.add_argument("--log-level", default=os.environ.get("MSGW_LOG_LEVEL", "INFO"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="metastore-gateway", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the gRPC gateway")
    _common(serve)
    serve.add_argument("--host", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="gRPC port (default 50051; 0 picks a free port)")
    serve.add_argument("--loop", choices=("asyncio", "uvloop"), default="uvloop",
                       help="event loop (uvloop measured faster for the cached read path: docs/benchmarks.md)")
    migrate = sub.add_parser("migrate", help="apply pending schema migrations and exit")
    _common(migrate)
    settings = sub.add_parser("settings", help="every setting: its key, effective value, where the value comes from "
                                               "(default, config file, MSGW_ variable, --conf) and meaning")
    _common(settings)
    settings.add_argument("--json", action="store_true", help="print JSON")
    cli_postgres.register(sub)
    admin_commands.register(sub)
    import_hms.register(sub)
    return parser


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = _parse_conf(args.conf)
    named = {"dsn": "metastore.gateway.dsn", "data_dir": "metastore.gateway.data.dir",
             "host": "metastore.gateway.host", "port": "metastore.gateway.port"}
    for attr, key in named.items():
        value = getattr(args, attr, None)
        if value is not None:
            overrides[key] = value
    return overrides


def _log_level(name: str) -> int:
    """The logging level `--log-level` (or MSGW_LOG_LEVEL) names; ConfigError, a bad setting, otherwise."""
    level = logging.getLevelNamesMapping().get(name.strip().upper())
    if level is None:
        raise ConfigError(f"--log-level (MSGW_LOG_LEVEL): {name!r} is not a log level (DEBUG, INFO, WARNING, ERROR, "
                          "CRITICAL)")
    return level


def _warn(message: str) -> None:
    print(f"metastore-gateway: warning: {message}", file=sys.stderr)


def settings_from_args(args: argparse.Namespace) -> Settings:
    return load_settings(args.config, overrides=_overrides(args), warn=_warn)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in admin_commands.COMMANDS:
        return admin_commands.run(args)
    if args.command == import_hms.COMMAND:
        return import_hms.run(args)
    if args.command == "postgres":
        return cli_postgres.run(args)
    if args.command == "settings":
        return _settings(args)
    settings: Settings | None = None
    try:
        logging.basicConfig(level=_log_level(args.log_level), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        settings = settings_from_args(args)
        if args.command == "migrate":
            return _migrate(settings)
        from gateway.app import serve

        if args.loop == "uvloop":
            import uvloop

            uvloop.run(serve(settings))
        else:
            asyncio.run(serve(settings))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - an operator's mistake in one line; a bug keeps its traceback
        reason = explain(exc, settings)
        if reason is None:
            raise
        print(f"metastore-gateway: cannot {args.command}: {reason}", file=sys.stderr)
        return 2 if isinstance(exc, ConfigError) else 1
    return 0


def _settings(args: argparse.Namespace) -> int:
    try:
        rows = effective_settings(args.config, overrides=_overrides(args), warn=_warn)
    except ConfigError as exc:
        print(f"metastore-gateway: {exc}", file=sys.stderr)
        return 2
    docs = {f.metadata["key"]: f.metadata["doc"] for f in fields(Settings)}
    # Never print a password, in either form (--json printed the DSN as it was given).
    rows = [(k, redact_dsn(str(v)) if k == "metastore.gateway.dsn" and v else v, src) for k, v, src in rows]
    if args.json:
        print(json.dumps([{"key": k, "value": v, "source": src, "doc": docs[k]} for k, v, src in rows], indent=2))
        return 0
    for key, value, source in rows:
        shown = value if value != "" else '""'
        print(f"{key:48} {str(shown):26} {source:28} {docs[key]}")
    return 0


def _migrate(settings: Settings) -> int:
    from gateway.app import migrate_database
    from gateway.embedded_pg import EmbeddedPostgres

    pg = None if settings.dsn else EmbeddedPostgres(data_dir_of(settings))
    if pg is not None:
        print(f"embedded PostgreSQL in {pg.data_dir.resolve()}", flush=True)
    dsn = settings.dsn if pg is None else pg.start()
    try:
        applied = asyncio.run(migrate_database(dsn))
        print(f"applied migrations: {applied}" if applied else "schema is up to date")
    finally:
        if pg is not None:
            pg.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
