"""What an import tells its operator: progress on stderr while it runs, one outcome per object, and the
summary at the end (counts per kind and outcome, then every object that was not copied or identical, with
its reason).

Outcomes: `copied` (written to the gateway), `identical` (already there, the same), `differing` (already
there, not the same, left as it is), `replaced` (was differing, written over with --replace-differing),
`skipped` (not attempted, for a reason: its table differs, a dry run), `failed` (attempted, refused or
not answered). An import succeeded when nothing is differing, skipped for a refusal, or failed. Notes say
what was left out on purpose (a Hive 2.3 source has no unique, not-null, default or check constraints to
read) or what to do (connect as an admin): they do not make an import incomplete.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, TextIO

KINDS = ("databases", "tables", "partitions", "functions", "table statistics", "partition statistics",
         "write ids", "roles", "role grants", "privileges", "constraints")
OUTCOMES = ("copied", "identical", "replaced", "differing", "skipped", "failed")
# Outcomes that do not make the exit status non-zero (a dry run's "would copy" is `skipped` with dry=True).
GOOD = frozenset({"copied", "identical", "replaced"})
_ONE = {"databases": "database", "tables": "table", "partitions": "partition", "functions": "function",
        "table statistics": "statistics of table", "partition statistics": "statistics of partition",
        "write ids": "write ids of", "roles": "role", "role grants": "grant of role", "privileges": "privilege",
        "constraints": "constraint"}  # how one object of a kind is named in a problem's line
_LISTED = 50  # problems listed per outcome in the text summary; all of them in --json


def one(kind: str) -> str:
    """How one object of `kind` is named in a line."""
    return _ONE.get(kind, kind)


@dataclass(frozen=True)
class Problem:
    kind: str
    name: str
    outcome: str
    reason: str


@dataclass
class Summary:
    """Counts per (kind, outcome) and the problems, in the order they were found."""

    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    problems: list[Problem] = field(default_factory=list)
    would_copy: Counter[str] = field(default_factory=Counter)  # a dry run's
    verify_only: bool = False
    notes: list[str] = field(default_factory=list)  # what was left out on purpose, and why (not a problem)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def add(self, kind: str, outcome: str, count: int = 1, *, name: str = "", reason: str = "") -> None:
        self.counts[kind, outcome] += count
        if outcome not in GOOD:
            self.problems.append(Problem(kind, name, outcome, reason))

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        lines = [f"{'':22}" + "".join(f"{o:>11}" for o in OUTCOMES)]
        for kind in KINDS:
            row = [self.counts[kind, o] for o in OUTCOMES]
            if any(row):
                lines.append(f"{kind:22}" + "".join(f"{n:>11}" for n in row))
        if self.would_copy:
            lines.append("dry run, would copy: " + ", ".join(f"{n} {k}" for k, n in self.would_copy.items()))
        lines.extend(f"note: {text}" for text in self.notes)
        for outcome in ("differing", "skipped", "failed"):
            listed = [p for p in self.problems if p.outcome == outcome]
            for p in listed[:_LISTED]:
                lines.append(f"{outcome}: {_ONE.get(p.kind, p.kind)} {p.name}: {p.reason}")
            if len(listed) > _LISTED:
                lines.append(f"{outcome}: ... and {len(listed) - _LISTED} more (--json lists all)")
        if self.verify_only:
            lines.append("verify: " + ("every object the same on both sides" if self.ok
                                       else f"{len(self.problems)} objects differ"))
        else:
            lines.append("import: " + ("complete: everything copied or already identical" if self.ok
                                       else f"NOT complete: {len(self.problems)} objects differing, skipped or "
                                            "failed"))
        return "\n".join(lines)

    def json(self) -> str:
        return json.dumps({
            "complete": self.ok,
            "counts": {kind: {o: self.counts[kind, o] for o in OUTCOMES} for kind in KINDS},
            "would_copy": dict(self.would_copy),
            "problems": [vars(p) for p in self.problems],
            "notes": self.notes,
        }, indent=2)


class Progress:
    """Per phase: objects done of the total, and the rate, on `out` at most every `interval_s` (and when a
    phase ends). Lines, not carriage returns: stderr is usually a log."""

    def __init__(self, out: TextIO, interval_s: float = 2.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._out = out
        self._interval_s = interval_s
        self._clock = clock
        self._phase = ""
        self._total = 0
        self._done = 0
        self._started = 0.0
        self._shown = 0.0

    def start(self, phase: str, total: int) -> None:
        self._phase, self._total, self._done = phase, total, 0
        self._started = self._shown = self._clock()
        self._out.write(f"import: {phase}: {total} to go through\n")
        self._out.flush()

    def advance(self, count: int = 1, note: str = "") -> None:
        self._done += count
        now = self._clock()
        if now - self._shown >= self._interval_s:
            self._shown = now
            self._line(now, note)

    def finish(self) -> None:
        self._line(self._clock(), "done")

    def _line(self, now: float, note: str) -> None:
        elapsed = now - self._started
        rate = self._done / elapsed if elapsed > 0 else 0.0
        share = f" ({100 * self._done // self._total}%)" if self._total else ""
        self._out.write(f"import: {self._phase}: {self._done}/{self._total}{share}, {rate:.0f}/s, "
                        f"{elapsed:.1f} s{', ' + note if note else ''}\n")
        self._out.flush()
