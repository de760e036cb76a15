"""`metastore-gateway import-hms`: its arguments, and one import run from them.

    metastore-gateway import-hms --from thrift://hms:9083 [--to thrift://127.0.0.1:9083] [--databases 'sales|web*']
                                 [--batch-size 500] [--replace-differing] [--dry-run] [--verify | --verify-only]
                                 [--timeout 60] [--retries 5] [--json]

Exit status: 0 when everything was copied or already identical (and, with --verify, every object compared
the same); 1 when something differs, was refused or failed, or an endpoint could not be reached (one line
naming it); 2 a usage error.
"""

from __future__ import annotations

import argparse
import logging
import resource
import ssl
import sys
import time
from typing import TextIO

from typing import TYPE_CHECKING

from gateway.config import ConfigError, load_settings

if TYPE_CHECKING:
    from gateway.hms_import.endpoint import EndpointAddress

COMMAND = "import-hms"
MAX_BATCH = 10_000  # the gateway's default metastore.gateway.max.batch.size


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(COMMAND, help="copy a running Hive Metastore's metadata into a running gateway over Thrift "
                                     "(databases, tables, views, partitions, functions, column statistics, roles, "
                                     "role grants, privileges, constraints; "
                                     "idempotent and resumable; --verify compares both)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--from", dest="source", required=True, metavar="thrift://HOST:PORT",
                   help="the Hive Metastore to read")
    p.add_argument("--to", dest="target", default="", metavar="thrift://HOST:PORT",
                   help="the gateway to write, over its Thrift port (default: this host's gateway, "
                        "metastore.gateway.host and hive.metastore.port of the settings)")
    p.add_argument("--databases", default="*", metavar="PATTERN",
                   help="the source databases to copy, a Hive pattern (* any run, | alternatives; default all)")
    p.add_argument("--batch-size", type=int, default=500, help="partitions per read and write (default 500)")
    p.add_argument("--replace-differing", action="store_true",
                   help="write over an object the gateway has and that differs (default: report it, keep it)")
    p.add_argument("--dry-run", action="store_true", help="read both sides, print what would be copied, write nothing")
    verify = p.add_mutually_exclusive_group()
    verify.add_argument("--verify", action="store_true", help="after copying, compare both sides object by object")
    verify.add_argument("--verify-only", action="store_true", help="compare both sides; copy nothing")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds each Thrift call may take (default 60)")
    p.add_argument("--retries", type=int, default=5,
                   help="times a lost or refused connection is tried again, with back-off (default 5)")
    p.add_argument("--progress-interval", type=float, default=2.0, metavar="SECONDS",
                   help="at most one progress line per phase this often, on stderr (default 2)")
    p.add_argument("--json", action="store_true", help="the summary as JSON on stdout")
    p.add_argument("--to-tls-ca", default="", help="PEM CA of the gateway's certificate: connect with TLS")
    p.add_argument("--to-tls-cert", default="", help="this client's PEM certificate, for a gateway wanting mutual TLS")
    p.add_argument("--to-tls-key", default="", help="the key of --to-tls-cert")
    p.add_argument("--config", help="TOML file of settings (for the default --to)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a setting (for the default --to)")
    p.add_argument("--log-level", default="WARNING", help="log level of the retries' lines (INFO shows each retry)")


def _default_target(args: argparse.Namespace) -> EndpointAddress:
    from gateway.hms_import.endpoint import EndpointAddress

    overrides = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--conf expects key=value, got {item!r}")
        overrides[key.strip()] = value.strip()
    settings = load_settings(args.config, overrides=overrides)
    host = settings.host if settings.host not in ("", "0.0.0.0", "::") else "127.0.0.1"
    return EndpointAddress(host, settings.thrift_port)


def _tls(args: argparse.Namespace) -> ssl.SSLContext | None:
    from gateway.hms_import.endpoint import ImportUsageError

    if not args.to_tls_ca:
        if args.to_tls_cert or args.to_tls_key:
            raise ImportUsageError("--to-tls-cert and --to-tls-key need --to-tls-ca")
        return None
    try:
        context = ssl.create_default_context(cafile=args.to_tls_ca)
        if args.to_tls_cert:
            context.load_cert_chain(args.to_tls_cert, args.to_tls_key or None)
    except (OSError, ssl.SSLError) as exc:
        raise ImportUsageError(f"--to-tls-*: {exc}") from None
    return context


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """One import (the module's docstring); its exit status."""
    # Imported here: parsing the Thrift IDL takes most of a second, which the other subcommands need not wait.
    from thriftpy2.thrift import TException

    from gateway.hms_import.copier import Copier, CopyOptions
    from gateway.hms_import.endpoint import (ImportUsageError, HmsImportError, RetryPolicy, ThriftEndpoint,
                                             parse_thrift_url)
    from gateway.hms_import.report import Progress, Summary
    from gateway.hms_import.verify import Verifier

    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.WARNING), stream=err,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        if not 1 <= args.batch_size <= MAX_BATCH:
            raise ImportUsageError(f"--batch-size must be between 1 and {MAX_BATCH}, got {args.batch_size}")
        if args.progress_interval < 0:
            raise ImportUsageError(f"--progress-interval must not be negative, got {args.progress_interval}")
        source_address = parse_thrift_url(args.source, "--from")
        target_address = parse_thrift_url(args.target, "--to") if args.target else _default_target(args)
        policy = RetryPolicy(call_timeout_s=args.timeout, retries=args.retries)
        context = _tls(args)
    except (ImportUsageError, ConfigError) as exc:
        print(f"metastore-gateway {COMMAND}: {exc}", file=err)
        return 2
    if source_address == target_address:
        print(f"metastore-gateway {COMMAND}: --from and --to are the same endpoint ({source_address})", file=err)
        return 2
    summary = Summary(verify_only=args.verify_only)
    progress = Progress(err, interval_s=args.progress_interval)
    started = time.monotonic()
    try:
        with ThriftEndpoint("source", source_address, policy) as source, \
                ThriftEndpoint("gateway", target_address, policy, ssl_context=context) as gateway:
            # Both ends answer before anything is read or written: an unreachable one is said at once.
            source.call("getVersion")
            gateway.call("getVersion")
            if not args.verify_only:
                Copier(source, gateway, CopyOptions(args.databases, args.batch_size, args.replace_differing,
                                                    args.dry_run), summary, progress, out).run()
            if args.verify or args.verify_only:
                Verifier(source, gateway, args.databases, args.batch_size, summary, progress, out).run()
    except HmsImportError as exc:
        print(f"metastore-gateway {COMMAND}: {exc}", file=err)
        if summary.counts:
            print(summary.text(), file=err)
        return 1
    except TException as exc:  # an answer no phase expects (an internal error of either side): said, not a trace
        print(f"metastore-gateway {COMMAND}: stopped on an unexpected answer: {type(exc).__name__}: "
              f"{getattr(exc, 'message', None) or exc}; what was done so far stays done: run it again", file=err)
        if summary.counts:
            print(summary.text(), file=err)
        return 1
    except KeyboardInterrupt:
        print(f"metastore-gateway {COMMAND}: interrupted; run it again to complete the copy", file=err)
        if summary.counts:
            print(summary.text(), file=err)
        return 130
    print(summary.json() if args.json else summary.text(), file=out)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"import: {time.monotonic() - started:.1f} s; {source.calls} calls to the source ({source.seconds:.1f} s), "
          f"{gateway.calls} to the gateway ({gateway.seconds:.1f} s); peak memory {peak_mib:.0f} MiB", file=err)
    return 0 if summary.ok else 1
