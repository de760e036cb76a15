"""`metastore-gateway`: arguments to Settings, then hand over. No logic lives here."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import Any, Sequence

from gateway.admin import commands as admin_commands
from gateway.config import ConfigError, Settings, load_settings


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
    p.add_argument("--data-dir", help="data directory of the embedded PostgreSQL (default ./.data)")
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
    sub.add_parser("settings", help="list every setting with its key, default and meaning")
    admin_commands.register(sub)
    return parser


def settings_from_args(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = _parse_conf(args.conf)
    named = {"dsn": "metastore.gateway.dsn", "data_dir": "metastore.gateway.data.dir",
             "host": "metastore.gateway.host", "port": "metastore.gateway.port"}
    for attr, key in named.items():
        value = getattr(args, attr, None)
        if value is not None:
            overrides[key] = value
    return load_settings(args.config, overrides=overrides)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "settings":
        from dataclasses import fields

        for f in fields(Settings):
            print(f"{f.metadata['key']:45} {str(f.default):25} {f.metadata['doc']}")
        return 0
    if args.command in admin_commands.COMMANDS:
        return admin_commands.run(args)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = settings_from_args(args)
    except ConfigError as exc:
        print(f"metastore-gateway: {exc}", file=sys.stderr)
        return 2
    if args.command == "migrate":
        return _migrate(settings)
    from gateway.app import serve

    if args.loop == "uvloop":
        import uvloop

        uvloop.run(serve(settings))
    else:
        asyncio.run(serve(settings))
    return 0


def _migrate(settings: Settings) -> int:
    from pathlib import Path

    from gateway.app import migrate_database
    from gateway.embedded_pg import EmbeddedPostgres

    pg = None if settings.dsn else EmbeddedPostgres(Path(settings.data_dir))
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
