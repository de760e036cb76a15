"""What the fault suite's clients did and saw: every txn with what it wrote and how it ended (the
ledger the final check compares the database with), and every call with its outcome, its errors
classified (allowed or a violation) per fault phase."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import grpc

C = grpc.StatusCode

COMMITTED, ABORTED, UNKNOWN = "committed", "aborted", "unknown"


@dataclass
class TxnRecord:
    """One writer txn: the partitions it added and altered (table-relative names), in call order, and
    its outcome. `maybe` writes are calls whose answer was lost (UNAVAILABLE): they may or may not have
    happened, which only matters if the txn commits, and a writer never commits after one."""

    txn_id: int
    table: str
    added: list[str] = field(default_factory=list)
    altered: list[str] = field(default_factory=list)
    maybe: list[str] = field(default_factory=list)
    outcome: str = UNKNOWN

    @property
    def tag(self) -> str:
        return f"t{self.txn_id}"


@dataclass
class Ledger:
    """Every txn of every writer, in the order each writer ran them (a partition is only ever written by
    the writer that added it, one txn after another, so list order is write order per partition)."""

    txns: list[TxnRecord] = field(default_factory=list)

    def expected(self, table: str) -> dict[str, str]:
        """name -> tag of the partitions that must exist in `table`: added by a committed txn, tagged by
        the last committed txn that wrote them. Call once no txn is UNKNOWN (resolve() first)."""
        state: dict[str, str] = {}
        for t in self.txns:
            if t.table == table and t.outcome == COMMITTED:
                for name in (*t.added, *t.altered):
                    state[name] = t.tag
        return state

    def resolve(self, table: str, present: set[str]) -> list[str]:
        """Decide UNKNOWN txns of `table` from what the database shows: all of their additions present
        (committed) or none (aborted); anything in between is a partial commit, returned as a problem."""
        problems = []
        for t in self.txns:
            if t.table != table or t.outcome != UNKNOWN:
                continue
            seen = [n for n in t.added if n in present]
            if seen and len(seen) != len(t.added):
                problems.append(f"txn {t.txn_id} (outcome unknown to its client) is partly visible: {seen} of "
                                f"{t.added}")
            t.outcome = COMMITTED if seen else ABORTED
        return problems

    def names(self, table: str) -> list[str]:
        return sorted({n for t in self.txns if t.table == table for n in (*t.added, *t.maybe)})


@dataclass
class PhaseStats:
    """One fault's calls and errors. Allowed errors (see classify) are counted by kind; any other is a
    violation, kept with its text."""

    name: str
    calls: int = 0
    errors: Counter[str] = field(default_factory=Counter)  # status code name -> count
    kinds: Counter[str] = field(default_factory=Counter)  # allowed kind -> count
    by_gateway: Counter[str] = field(default_factory=Counter)  # gateway/status -> count
    # The same, less ANSWERS_OF_ANY_GATEWAY: the errors that say a gateway did not serve.
    not_served: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    samples: dict[str, list[str]] = field(default_factory=dict)  # allowed kind -> the first few, in full
    notes: list[str] = field(default_factory=list)  # what a reader of the report should know; not violations
    counts: Counter[str] = field(default_factory=Counter)  # txns committed/aborted, reads compared, ...
    figures: dict[str, float] = field(default_factory=dict)  # recovery_s, reap_s, ...

    def violate(self, text: str) -> None:
        if len(self.violations) < 200:
            self.violations.append(text[:2000])

    def render(self) -> str:
        errors = ", ".join(f"{k}={v}" for k, v in sorted(self.errors.items())) or "none"
        kinds = ", ".join(f"{k}={v}" for k, v in sorted(self.kinds.items()))
        counts = ", ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))
        figures = ", ".join(f"{k}={v:.2f}s" for k, v in sorted(self.figures.items()))
        lines = [f"{self.name}: {self.calls} calls; errors by status: {errors}" + (f" ({kinds})" if kinds else ""),
                 f"    {counts}", f"    {figures}"]
        by_gateway = ", ".join(f"{k}={v}" for k, v in sorted(self.by_gateway.items()))
        if by_gateway:
            lines.append(f"    errors by gateway: {by_gateway}")
        lines += [f"    e.g. {kind}: {text}" for kind, texts in sorted(self.samples.items()) for text in texts[:1]]
        lines += [f"    NOTE {n}" for n in self.notes]
        lines += [f"    VIOLATION {v}" for v in self.violations[:20]]
        return "\n".join(lines)


@dataclass
class Windows:
    """When each gateway was stopped (SIGSTOP): a call to it then may run out of its deadline for that
    reason alone."""

    frozen: dict[str, list[tuple[float, float]]] = field(default_factory=dict)

    def freeze(self, gateway: str) -> None:
        self.frozen.setdefault(gateway, []).append((time.monotonic(), float("inf")))

    def thaw(self, gateway: str) -> None:
        start, _ = self.frozen[gateway][-1]
        self.frozen[gateway][-1] = (start, time.monotonic())

    def was_frozen(self, gateway: str, started: float, ended: float) -> bool:
        return any(s < ended and started < e for s, e in self.frozen.get(gateway, ()))

    # When PostgreSQL was stopped (from its pg_ctl stop to its start's return): a call that began then and was
    # answered after it waited the outage out (store/db.py tries it again while the database is away).
    database_down: list[tuple[float, float]] = field(default_factory=list)

    def database_stopping(self) -> None:
        self.database_down.append((time.monotonic(), float("inf")))

    def database_back(self) -> None:
        start, _ = self.database_down[-1]
        self.database_down[-1] = (start, time.monotonic())

    def waited_out_the_database(self, started: float, ended: float) -> bool:
        return any(s <= started < e <= ended for s, e in self.database_down)


# Allowed errors that are a gateway's answer about the request, not a failure to serve it: any gateway may
# give them at any time, the faulted one or not. A snapshot outside a txn is too old once a version GC
# passed it, which can happen between a reader's snapshot and its read (or to a reader that kept its
# snapshot because taking a new one failed on the faulted gateway: seed 4242's kill9_gateway#2).
ANSWERS_OF_ANY_GATEWAY = frozenset({"snapshot_too_old"})


def classify(code: grpc.StatusCode, details: str, *, frozen: bool) -> str | None:
    """The kind of an allowed error, or None for a violation.

    * UNAVAILABLE: the gateway is away, or the database went away while a write's commit was in flight (it
      may have been committed: "maybe_committed"; a call that met it away otherwise waits for it), or stayed
      away longer than the gateway waits; the client may retry.
    * ABORTED: the txn was aborted (by the time-out reaper once its client stopped heartbeating, as a
      SIGSTOPped gateway makes it) or lost a write conflict (the client starts a new txn), or a write
      met an object that kept changing while it waited (the client retries the write).
    * NOT_FOUND "ended long ago and is forgotten": the txn was reaped as above and then forgotten (it had
      written nothing) once hive.txn.timeout passed again, as it does while a stop outlasts both (seed
      4701's sigstop_gateway#1: a 20 s stop, the suite's time-out 4 s): the calls its client made to the
      stopped gateway and its abort afterwards are answered so. Any other NOT_FOUND is a violation.
    * FAILED_PRECONDITION "snapshot too old": a read outside a txn whose snapshot version GC (every
      hive.metastore.acid.housekeeper.interval) passed, as it does to a reader that kept its snapshot
      through an outage (readers do, to show the caches answering without the database); the client
      takes a new snapshot. Writes carry no snapshot, so this is only ever a read.
    * DEADLINE_EXCEEDED, only for a call to a gateway that was stopped (SIGSTOP) while the call was
      out: the client's own deadline ran out because the process did not run; its TCP connection stays
      up, so nothing faster than the deadline can tell the client.
    Everything else (INTERNAL, UNKNOWN, any other FAILED_PRECONDITION, NOT_FOUND ...) is a violation: no
    client mistake is made by this workload."""
    if code == C.UNAVAILABLE:
        return "maybe_committed" if "may have been committed" in details else "unavailable"
    if code == C.ABORTED:
        if details.startswith("write conflict"):  # before "was aborted": it says its txn was aborted too
            return "write_conflict"
        if "was aborted" in details:
            return "txn_aborted"
        if "retry the write" in details:  # the object kept changing while the write waited for its row lock
            return "write_retry"
        return None
    if code == C.NOT_FOUND and "ended long ago and is forgotten" in details:
        return "txn_forgotten"
    if code == C.FAILED_PRECONDITION and "snapshot too old" in details:
        return "snapshot_too_old"
    if code == C.DEADLINE_EXCEEDED and frozen:
        return "deadline_on_stopped_gateway"
    return None
