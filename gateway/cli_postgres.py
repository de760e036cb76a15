"""`metastore-gateway postgres start|stop|status`: the operator's hold on the embedded PostgreSQL.

Gateways share the embedded server of a data directory and the last one out stops it
(gateway/embedded_pg.py). `start` runs it without a gateway and pins it, so that it outlives every
gateway (a database kept up while gateways are restarted one by one); `stop` unpins and stops it,
refusing while gateways still use it unless `--force`, and waiting (bounded) for a gateway's start-up
steps on the data directory to finish first; `status` says what runs where.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from gateway.config import ConfigError, data_dir_of, load_settings
from gateway.embedded_pg import ATTACH_TIMEOUT_S, EmbeddedPostgres, EmbeddedPostgresError

# How long `stop` waits for a gateway's start-up steps on the data directory (the start-up lock) before
# it gives up, stopping nothing: as long as a starting gateway waits for a stopping one (gateways.lock).
STARTUP_LOCK_WAIT_S = ATTACH_TIMEOUT_S


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pg = sub.add_parser("postgres", help="start, stop or inspect the embedded PostgreSQL that gateways share")
    action = pg.add_subparsers(dest="pg_action", required=True, metavar="ACTION")
    for name, text in (("start", "start it and keep it running after every gateway stops (pinned)"),
                       ("stop", "unpin and stop it (refused while gateways use it, unless --force)"),
                       ("status", "whether it runs, where its socket and password file are, who uses it")):
        p = action.add_parser(name, help=text)
        p.add_argument("--data-dir", help="its data directory (default: metastore.gateway.data.dir, or "
                                          "~/.local/share/metastore-gateway; as root /var/lib/metastore-gateway/data)")
        p.add_argument("--config", help="TOML file of settings (for metastore.gateway.data.dir)")
        if name == "stop":
            p.add_argument("--force", action="store_true", help="stop it even while gateways use it")
        if name == "status":
            p.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    try:
        overrides = {"metastore.gateway.data.dir": args.data_dir} if args.data_dir else {}
        pg = EmbeddedPostgres(data_dir_of(load_settings(args.config, overrides=overrides)))
        if args.pg_action == "start":
            pg.pin()
            out.write(f"PostgreSQL running on {pg.data_dir} (socket {pg.socket_dir}, password in {pg.password_file}); "
                      "pinned: it keeps running until `metastore-gateway postgres stop`\n")
            return 0
        if args.pg_action == "stop":
            if not pg.unpin_and_stop(force=args.force, startup_lock_timeout_s=STARTUP_LOCK_WAIT_S):
                err.write(f"metastore-gateway postgres stop: gateways still use {pg.data_dir}; it is unpinned, so the "
                          "last of them to stop stops it; or pass --force (they then answer UNAVAILABLE until it is "
                          "started again)\n")
                return 1
            out.write(f"PostgreSQL on {pg.data_dir} stopped\n")
            return 0
        status = pg.status()
    except (ConfigError, EmbeddedPostgresError, OSError) as exc:
        err.write(f"metastore-gateway postgres {args.pg_action}: {exc}\n")
        return 1
    if args.json:
        out.write(json.dumps(status, indent=2) + "\n")
    else:
        width = max(len(k) for k in status)
        out.write("".join(f"{k.ljust(width)}  {v}\n" for k, v in status.items()))
    return 0
