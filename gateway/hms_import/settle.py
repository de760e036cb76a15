"""One set of things the gateway and the source both hold, keyed alike (the roles, a role's grants, the
privileges on one object, a table's constraints of one kind), settled as copier.py settles one object:
missing: written; the same: identical; otherwise differing, or written over with --replace-differing; a
dry run writes nothing and says what it would; a verification only compares, and also reports what only
the gateway has. Each write refused is reported failed with the gateway's reason; the rest go on.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, TextIO

from gateway.hms_import import compare
from gateway.hms_import.endpoint import ThriftEndpoint
from gateway.hms_import.report import Progress, Summary, one
from gateway.thrift.idl import hms

# The gateway's words when it refuses a role or grant write to a caller that is not an admin.
ADMIN_SETTING = "hive.users.in.admin.role"
WRITE_ERRORS = (hms.MetaException, hms.InvalidObjectException, hms.NoSuchObjectException,
                hms.InvalidOperationException, hms.AlreadyExistsException)


def reason_of(exc: BaseException) -> str:
    message = getattr(exc, "message", None) or str(exc) or ""
    return f"{type(exc).__name__}: {message}"[:500]


class Settler:
    def __init__(self, source: ThriftEndpoint, gateway: ThriftEndpoint, summary: Summary, progress: Progress,
                 out: TextIO, *, dry_run: bool = False, replace_differing: bool = False, verify: bool = False) -> None:
        self._source = source
        self._gateway = gateway
        self._summary = summary
        self._progress = progress
        self._out = out
        self._dry_run = dry_run
        self._replace = replace_differing
        self._verify = verify
        self._refusal = ""  # once the gateway refused a write to a non-admin: why the rest are not attempted

    # -- one set of things: each written, compared or reported ---------------------------------------

    def _settle(self, kind: str, theirs: dict[Any, Any], ours: dict[Any, Any], name_of: Callable[[Any], str],
                write: Callable[[Any], Any], replace: Callable[[Any, Any], Any] | None,
                compared: Callable[[Any], Any] = compare.plain, kept: str = "") -> None:
        """`theirs` the source's, `ours` the gateway's, by the same keys. `replace(theirs, ours)` writes one over
        (None: it cannot be, `kept` says why)."""
        for key in sorted(theirs.keys() & ours.keys(), key=repr):
            name = name_of(theirs[key])
            diff = compare.differences(compared(theirs[key]), compared(ours[key]))
            if not diff:
                self._summary.add(kind, "identical")
            elif self._verify or not self._replace or replace is None:
                why = "" if self._verify else (kept if replace is None else " (--replace-differing writes it over)")
                self._summary.add(kind, "differing", name=name, reason="; ".join(diff[:5]) + why)
            elif self._dry_run:
                self._summary.would_copy[f"{kind} to replace"] += 1
                self._out.write(f"would replace {one(kind)} {name}\n")
            else:
                self._write(kind, name, partial(replace, theirs[key], ours[key]), "replaced")
        missing = [theirs[key] for key in sorted(theirs.keys() - ours.keys(), key=repr)]
        if self._verify:
            for obj in missing:
                self._summary.add(kind, "differing", name=name_of(obj), reason="missing on the gateway")
            for key in sorted(ours.keys() - theirs.keys(), key=repr):
                self._summary.add(kind, "differing", name=name_of(ours[key]),
                                  reason="only on the gateway, not on the source")
            return
        for obj in missing:
            if self._dry_run:
                self._summary.would_copy[kind] += 1
                self._out.write(f"would copy {one(kind)} {name_of(obj)}\n")
            else:
                self._write(kind, name_of(obj), partial(write, obj), "copied")

    def _write(self, kind: str, name: str, action: Callable[[], Any], outcome: str) -> None:
        if self._refusal:
            self._summary.add(kind, "skipped", name=name, reason=self._refusal)
            return
        try:
            action()
            self._summary.add(kind, outcome)
        except WRITE_ERRORS as exc:
            reason = reason_of(exc)
            if ADMIN_SETTING in reason:
                self._refusal = ("not attempted: the gateway refuses this connection's role and grant writes; run "
                                 f"the import as an admin ({ADMIN_SETTING}): --to-tls-cert and --to-tls-key of an "
                                 "admin's certificate")
                self._summary.note("roles, role grants and privileges need an admin of the gateway "
                                   f"({ADMIN_SETTING}): the gateway refused them to this connection ({reason})")
            self._summary.add(kind, "failed", name=name, reason=reason)
