"""The judge of the consistency run: compares each read through the caching gateways with the
oracle's answer, records violations and driver errors, and checks the reads without a snapshot (of
the external tables, and of the ACID tables over Thrift) against the tables' complete histories at the
end (see loadtest/consistency/__init__.py for the rules)."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections import Counter
from typing import Any, Callable, Mapping, Sequence

from loadtest.consistency.model import ExtObservation, ExtTable, Outcome, Violation, one_line, read, state_matches
from loadtest.consistency.thrift_side import (
    GRPC_TWIN, ThriftEndpoint, ThriftOutcome, grpc_view, render_request, thrift_view,
)
from loadtest.harness import Endpoint

Answer = Outcome | ThriftOutcome
Racy = Callable[[], bool]


# store/snapshot.py check_not_too_old's refusal names the table's GC watermark at the time.
_GC_WATERMARK = re.compile(r"versions up to write id (\d+) were garbage-collected")


def _gc_watermark(details: str) -> int:
    found = _GC_WATERMARK.search(details)
    return int(found.group(1)) if found else 0


def _too_old_then_older(got: Answer, expected: Answer) -> bool:
    """Both refused the snapshot as too old, the oracle, asked after the gateway, naming a GC watermark
    at least as far on: version GC ran again between the two reads (its refusal says how far it had got)."""
    return got.too_old and expected.too_old and _gc_watermark(got.details) <= _gc_watermark(expected.details)


class Judge:
    def __init__(self, gateways: Sequence[Endpoint], oracle: Endpoint, ext: Mapping[str, ExtTable],
                 log: Callable[[str], None] = print, *, thrift: Sequence[ThriftEndpoint] = (),
                 thrift_oracle: ThriftEndpoint | None = None, committed: Mapping[str, ExtTable] | None = None
                 ) -> None:
        self.gateways = list(gateways)
        self.oracle = oracle
        self.thrift = list(thrift)  # each caching gateway's Thrift endpoint, in `gateways`' order (or none)
        self.thrift_oracle = thrift_oracle
        self.ext = ext
        self.committed = dict(committed or {})  # the ACID tables' histories of committed states
        self.log = log
        self.counts: Counter[str] = Counter()
        self.violations: list[Violation] = []
        self.errors: list[str] = []
        self.observations: list[ExtObservation] = []
        self.seq = itertools.count()

    def violate(self, v: Violation) -> None:
        self.violations.append(v)
        if len(self.violations) <= 5:
            self.log("VIOLATION " + v.render())
        elif len(self.violations) == 6:
            self.log("(more violations: see the summary)")

    def _excuse(self, v: Violation) -> None:
        """A disagreement `racy` excused: counted (`ddl_race`), the first few logged to be looked at."""
        self.counts["ddl_race"] += 1
        if self.counts["ddl_race"] <= 3:
            self.log("excused (ddl_race) " + v.render())

    def error(self, text: str) -> None:
        self.errors.append(text)
        self.log("driver error: " + text)

    async def compare(self, kind: str, method: str, request: Any, *, in_txn: bool,
                      gateways: Sequence[Endpoint] | None = None, racy: Racy | None = None) -> Outcome:
        """Ask the gateways (concurrently), then the oracle; every answer must equal the oracle's. With
        `racy`, asked after the oracle answered: True excuses a disagreement (`ddl_race`, see `_judge`)."""
        targets = list(gateways or self.gateways)
        answers = await asyncio.gather(*(read(g, method, request) for g in targets))
        expected = await read(self.oracle, method, request)
        self._judge(kind, method, one_line(request), [g.name for g in targets], answers, expected, in_txn=in_txn,
                    racy=racy)
        return expected

    async def compare_thrift(self, kind: str, method: str, request: Any, *, in_txn: bool, twin: Any = None,
                             gateways: Sequence[Endpoint] | None = None, racy: Racy | None = None) -> ThriftOutcome:
        """The Thrift `request` through each caching gateway's Thrift endpoint (concurrently; only those
        of `gateways` when given), then the oracle's: every answer must equal the oracle's Thrift answer,
        by the rules of `compare` (scope `thrift_<kind>`). With `twin`, the gRPC read of the same objects
        goes to the same gateways at the same time and then to the oracle too: judged as any gRPC read,
        and on every gateway (the oracle too) the two answers must describe the same objects
        (thrift_side.thrift_view / grpc_view)."""
        assert self.thrift_oracle is not None, "Thrift reads need every gateway's Thrift endpoint"
        grpc_method = GRPC_TWIN.get(method, "")
        assert twin is None or grpc_method, f"{method} has no gRPC twin"
        targets = list(gateways or self.gateways)
        by_name = {t.name: t for t in self.thrift}
        thrift = [by_name[g.name] for g in targets]
        n = len(thrift)
        self.counts["thrift_reads"] += n + 1
        answers: list[Any] = await asyncio.gather(
            *(t.call(method, request) for t in thrift),
            *((read(g, grpc_method, twin) for g in targets) if twin is not None else ()))
        expected = await self.thrift_oracle.call(method, request)
        if not expected.ok:
            self.counts["thrift_refused_by_oracle"] += 1
        grpc_expected = await read(self.oracle, grpc_method, twin) if twin is not None else None
        names = [t.name for t in thrift]
        self._judge(f"thrift_{kind}", method, render_request(method, request), names, answers[:n], expected,
                    in_txn=in_txn, racy=racy)
        if twin is not None and grpc_expected is not None:
            self._judge(kind, grpc_method, one_line(twin), names, answers[n:], grpc_expected, in_txn=in_txn,
                        racy=racy)
            text = f"{render_request(method, request)} / {grpc_method}({one_line(twin)})"
            for name, via_thrift, via_grpc in zip([*names, self.thrift_oracle.name], [*answers[:n], expected],
                                                  [*answers[n:], grpc_expected]):
                self._cross(kind, method, name, text, via_thrift, via_grpc, in_txn=in_txn, racy=racy)
        return expected

    def _judge(self, kind: str, method: str, request: str, names: Sequence[str], answers: Sequence[Answer],
               expected: Answer, *, in_txn: bool, racy: Racy | None = None) -> None:
        """Each answer against the oracle's. `racy()` True (a read pinned to a table that a drop deleted
        while it ran or shortly before, loadtest/ddl_race.py): a drop is not versioned, so the answer for a
        snapshot from before it changes when the drop commits and again when each cache applies it; a
        disagreement then is counted (`ddl_race`), not a violation."""
        for name, got in zip(names, answers):
            self.counts[f"compared.{kind}"] += 1
            if got.same(expected) or _too_old_then_older(got, expected):  # type: ignore[arg-type]  # (one protocol)
                if got.too_old:
                    self.counts["too_old_both"] += 1
                    if in_txn:
                        self.violate(Violation("too_old_in_txn", name, method, request, got.render(),
                                               expected.render(), "a snapshot inside an open txn must stay valid",
                                               scope=kind))
                continue
            if got.of_the_snapshot and expected.too_old and not in_txn:
                self.counts["gc_race"] += 1  # version GC ran between the gateway's read and the oracle's
                continue
            if racy is not None and racy():
                self._excuse(Violation("mismatch", name, method, request, got.render(), expected.render(),
                                       f"({kind}: a drop of the table raced the read)", scope=kind))
                continue
            self.violate(Violation("mismatch", name, method, request, got.render(), expected.render(),
                                   f"({kind}{', in txn' if in_txn else ''})", scope=kind))

    def _cross(self, kind: str, method: str, name: str, request: str, via_thrift: ThriftOutcome,
               via_grpc: Outcome, *, in_txn: bool, racy: Racy | None = None) -> None:
        """One gateway's Thrift and gRPC answers to the same snapshot read, made at the same time."""
        if via_thrift.ok and via_grpc.ok:
            self.counts["compared.cross_protocol"] += 1
            got, want = thrift_view(method, via_thrift.reply), grpc_view(method, via_grpc.reply)
            if got != want and racy is not None and racy():
                self._excuse(Violation("protocol_mismatch", name, method, request, f"thrift: {got!r}",
                                       f"grpc: {want!r}", f"({kind}: a drop of the table raced the read)",
                                       scope="cross_protocol"))
            elif got != want:
                self.violate(Violation("protocol_mismatch", name, method, request, f"thrift: {got!r}",
                                       f"grpc: {want!r}", f"({kind}: the two encodings disagree)",
                                       scope="cross_protocol"))
            return
        if not via_thrift.ok and not via_grpc.ok:
            return  # both refused (each checked against the oracle's refusal in its own protocol)
        failed = via_grpc if via_thrift.ok else via_thrift
        if failed.too_old and not in_txn:
            self.counts["gc_race"] += 1  # version GC between the two reads
            return
        if racy is not None and racy():
            self._excuse(Violation("protocol_mismatch", name, method, request, f"thrift: {via_thrift.render()}",
                                   f"grpc: {via_grpc.render()}", f"({kind}: a drop of the table raced the read)",
                                   scope="cross_protocol"))
            return
        self.violate(Violation("protocol_mismatch", name, method, request, f"thrift: {via_thrift.render()}",
                               f"grpc: {via_grpc.render()}", f"({kind}: one protocol answered, the other refused)",
                               scope="cross_protocol"))

    def check_observations(self) -> None:
        """Against the complete histories: every read without a snapshot shows a state that existed (of
        an ACID table: a committed one); with a token (min_event_id, or the reader's own commit), one at
        or after the token's state; without, never older than the same endpoint's previous tokenless
        read of that table."""
        lower: dict[tuple[str, str], tuple[int, ExtObservation]] = {}
        for ob in sorted(self.observations, key=lambda o: o.seq):
            acid = ob.table in self.committed
            history = (self.committed if acid else self.ext)[ob.table].history
            token_scope, no_token_scope = ("own_commit", "latest") if acid else ("ext_token", "ext_no_token")
            scope = token_scope if ob.token_index is not None else no_token_scope
            matching = [i for i, (_, s) in enumerate(history) if state_matches(s, ob.projection)]
            if not matching:
                self.violate(Violation("phantom_state", ob.gateway, ob.method, ob.request, repr(ob.projection),
                                       "a committed state the table had" if acid else "a state the table had",
                                       f"({ob.table}: matches none of {len(history)} states; the last: "
                                       f"{history[-1][1]!r})", scope=scope))
                continue
            if ob.token_index is not None:
                if max(matching) < ob.token_index:
                    self.violate(Violation(
                        "token_not_honoured", ob.gateway, ob.method, ob.request, repr(ob.projection),
                        f"state #{ob.token_index} (event {history[ob.token_index][0]}) or later",
                        f"({ob.table}: answer matches only states {matching})", scope=scope))
                continue
            key = (ob.gateway, ob.table)
            floor, previous = lower.get(key, (0, ob))
            feasible = [i for i in matching if i >= floor]
            if not feasible:
                self.violate(Violation(
                    "not_monotonic", ob.gateway, ob.method, ob.request, repr(ob.projection),
                    f"state #{floor} or later (event {history[floor][0]})",
                    f"({ob.table}: answer matches only states {matching} (events "
                    f"{[history[i][0] for i in matching]}); earlier read on this gateway: {previous.request} -> "
                    f"{previous.projection!r})", scope=scope))
                continue
            if acid:
                self.counts["latest_monotonic_checked"] += 1
            else:
                self.counts["ext_monotonic_checked"] += 1
                if ob.gateway.endswith("/thrift"):
                    self.counts["thrift_ext_monotonic_checked"] += 1
            lower[key] = (min(feasible), ob)
