"""The judge of the consistency run: compares each read through the caching gateways with the
oracle's answer, records violations and driver errors, and checks the external tables' reads against
their complete history at the end (see loadtest/consistency/__init__.py for the rules)."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from typing import Any, Callable, Mapping, Sequence

from loadtest.consistency.model import ExtObservation, ExtTable, Outcome, Violation, one_line, read, state_matches
from loadtest.harness import Endpoint


class Judge:
    def __init__(self, gateways: Sequence[Endpoint], oracle: Endpoint, ext: Mapping[str, ExtTable],
                 log: Callable[[str], None] = print) -> None:
        self.gateways = list(gateways)
        self.oracle = oracle
        self.ext = ext
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

    def error(self, text: str) -> None:
        self.errors.append(text)
        self.log("driver error: " + text)

    async def compare(self, kind: str, method: str, request: Any, *, in_txn: bool,
                      gateways: Sequence[Endpoint] | None = None) -> Outcome:
        """Ask the gateways (concurrently), then the oracle; every answer must equal the oracle's."""
        targets = list(gateways or self.gateways)
        answers = await asyncio.gather(*(read(g, method, request) for g in targets))
        expected = await read(self.oracle, method, request)
        for g, got in zip(targets, answers):
            self.counts[f"compared.{kind}"] += 1
            if got.same(expected):
                if got.too_old:
                    self.counts["too_old_both"] += 1
                    if in_txn:
                        self.violate(Violation("too_old_in_txn", g.name, method, one_line(request), got.render(),
                                               expected.render(), "a snapshot inside an open txn must stay valid",
                                               scope=kind))
                continue
            if got.ok and expected.too_old and not in_txn:
                self.counts["gc_race"] += 1  # version GC ran between the gateway's read and the oracle's
                continue
            self.violate(Violation("mismatch", g.name, method, one_line(request), got.render(), expected.render(),
                                   f"({kind}{', in txn' if in_txn else ''})", scope=kind))
        return expected

    def check_observations(self) -> None:
        """Against the complete histories: every external read shows a state that existed; with a
        token, one at or after the token's write; without, never older than the same gateway's
        previous no-token read of that table."""
        lower: dict[tuple[str, str], tuple[int, ExtObservation]] = {}
        for ob in sorted(self.observations, key=lambda o: o.seq):
            history = self.ext[ob.table].history
            matching = [i for i, (_, s) in enumerate(history) if state_matches(s, ob.projection)]
            if not matching:
                self.violate(Violation("phantom_state", ob.gateway, ob.method, ob.request, repr(ob.projection),
                                       "a state the table had", f"({ob.table}: matches none of {len(history)} states)",
                                       scope="ext_token" if ob.token_index is not None else "ext_no_token"))
                continue
            if ob.token_index is not None:
                if max(matching) < ob.token_index:
                    self.violate(Violation(
                        "token_not_honoured", ob.gateway, ob.method, ob.request, repr(ob.projection),
                        f"state #{ob.token_index} (event {history[ob.token_index][0]}) or later",
                        f"({ob.table}: answer matches only states {matching})", scope="ext_token"))
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
                    f"{previous.projection!r})", scope="ext_no_token"))
                continue
            self.counts["ext_monotonic_checked"] += 1
            lower[key] = (min(feasible), ob)
