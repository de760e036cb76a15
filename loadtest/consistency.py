"""Multi-gateway consistency check: every read through a caching gateway must equal what PostgreSQL
answers for the same request and snapshot.

    python -m loadtest.consistency                     # 3 gateway processes + oracle, 30 s
    python -m loadtest.consistency --duration 300      # the long version
    python -m loadtest.consistency --seed 42 --dsn postgresql://...   # in an existing PostgreSQL server

The same driver (`run_consistency`) runs for ~20 s in tests/e2e/test_multi_gateway_consistency.py.

Setup. Several gateways (3 by default) with their caches on one database, and an ORACLE: one more
gateway started with `metastore.gateway.cache.enabled=false`, so every read it answers comes from
PostgreSQL. One database `cons` with ACID partitioned tables (`a0`, `a1`, ...; keys ds string, hr int;
names drawn from a small universe so writers collide) and external tables (`e0`, ...).

Writers (through all gateways, every call to a randomly chosen one, so one txn's writes go through
several gateways, as the seed's "one txn, several HMS" case):
* ACID txns: OpenTxns, take the txn's snapshot, then 1-3 of add partitions / alter partitions / drop
  partitions / alter table on one table, each preceded (and the last one followed) by reads of the
  table inside the txn, compared with the oracle like any other read; commit, or abort ~20%.
  Write-write conflicts (ABORTED) abort the txn. Once the txn has written, it reads its own writes two
  ways: `own_writes_early_snapshot`, with the snapshot it took when it opened (before its write id
  existed) plus its txn id, which the API promises shows its own writes; and `own_writes`, Hive's way,
  with a snapshot taken after the write (GetOpenTxns(current_txn_id) -> GetValidWriteIds: its own write
  id is valid in it).
* External (non-transactional) writes: add / alter / drop partitions or alter the table, serialized per
  table by the driver, which records after each write the table's state (read from the oracle) with
  the write's event id: the table's history, in event order.

Readers take snapshots Hive's way (GetOpenTxns, with or without a reader txn, then GetValidWriteIds
for all ACID tables), through any gateway, then read GetTable / GetPartitionsByNames (random name sets
with missing names, duplicates and non-canonical spellings) / ListPartitionNames (random page sizes,
following one page token) several times over a second or so (10% of reader txns hold their snapshot
for several seconds; 15% of reads outside txns reuse a snapshot up to ~30 sessions old, which the
caches answer from older versions, or, after version GC, refuse as "snapshot too old" like PostgreSQL).
Each read goes to every caching gateway (concurrently) and then to the oracle; the parsed responses (or
the gRPC status code and message) must be equal. Gateways are asked first: a version GC between the
two can only turn a right gateway answer into an oracle "snapshot too old" (counted as `gc_race`, not a
violation, and only outside txns); the reverse order would be a violation. Inside reader txns
"snapshot too old" is always a violation.

External tables have no snapshot. Reads with `min_event_id` = the event id of the table's last
completed write are compared with the oracle when no write to that table started or was in flight
during the comparison (else counted as `ext_token_skipped`), and must show a state of the history at
or after that write. Reads without the token (per gateway and table, one at a time) must show states of
the history that never go backwards: monotonic reads per gateway. Both are checked at the end, against
the complete history (a gateway may show a write before the writer's call returned).

Writes are judged too (loadtest/ddl_race.py): churn tables are altered under txns, renamed away and
back, dropped and re-created while partition-write txns run on them; a partition write or write-id
allocation must never answer NOT_FOUND while its table kept its name throughout the call.

At the end the writers stop, every gateway catches up (poller position >= the log head), and a final
sweep with a fresh snapshot reads every table through every gateway: all equal to the oracle, and all
answered by the caches (hit counter deltas). The share of reads each gateway's cache served during the
run (Admin.CacheStats hits / (hits + misses), as deltas) is reported, with misses by reason, and
checked against the number of reads the driver sent to that gateway.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import grpc
from google.protobuf import text_format

from loadtest.harness import CALL_TIMEOUT_S, Endpoint, GatewayProcess, conf_args, fresh_database, workdir
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import events_pb2 as epb
from protos.metastore.v1 import transactions_pb2 as tpb
from store import names as hive_names
from store.models import FieldSchema

C = grpc.StatusCode
DB = "cons"
KEYS = (FieldSchema("ds", "string"), FieldSchema("hr", "int"))
DS_VALUES = ("2024-01-01", "2024-01-02", "a:b/c")  # the last one needs Hive's escaping: a%3Ab%2Fc
HOURS = 12
SERVER_PAGE_LIMIT = 10000  # metastore.gateway.max.batch.size default: page_size 0 means this
CACHED_GATEWAY_CONF = ("metastore.cached.rawstore.cache.update.frequency=200ms",)
ORACLE_CONF = ("metastore.gateway.cache.enabled=false",)
READ_METHODS = ("GetTable", "GetPartitionsByNames", "ListPartitionNames")


# -- configuration and results -------------------------------------------------------------------------


@dataclass(frozen=True)
class ConsistencyConfig:
    duration_s: float = 30.0
    seed: int = 0
    acid_tables: int = 3
    external_tables: int = 2
    writers: int = 3
    readers: int = 4
    abort_share: float = 0.2
    external_write_share: float = 0.15
    reader_txn_share: float = 0.5
    initial_partitions: int = 18
    churn_tables: int = 1  # ACID tables renamed, dropped and re-created, altered (loadtest/ddl_race.py)
    churn_write_share: float = 0.35  # of writer iterations: a partition-write txn on a churn table


@dataclass
class Violation:
    kind: str  # mismatch, too_old_in_txn, phantom_state, not_monotonic, token_not_honoured, ...
    gateway: str
    method: str
    request: str
    got: str
    expected: str
    note: str = ""
    scope: str = ""  # which reads: snapshot, reader_txn, own_writes, own_writes_early_snapshot, ext_token, ...

    def render(self) -> str:
        return (f"[{self.kind}] {self.gateway} {self.method} {self.note}\n  request:  {self.request}\n"
                f"  gateway:  {self.got}\n  expected: {self.expected}")


@dataclass
class GatewayShare:
    name: str
    hits: int
    misses: dict[str, int]
    reads_sent: int

    @property
    def lookups(self) -> int:
        return self.hits + sum(self.misses.values())

    @property
    def share(self) -> float:
        return self.hits / self.lookups if self.lookups else 0.0


@dataclass
class ConsistencyReport:
    seed: int
    duration_s: float
    counts: Counter[str]
    violations: list[Violation]
    shares: list[GatewayShare]
    final_sweep: list[GatewayShare]
    errors: list[str]

    @property
    def ok(self) -> bool:
        return not self.violations and not self.errors

    def summary(self) -> str:
        lines = [f"consistency run: seed={self.seed} (CONSISTENCY_SEED={self.seed} reproduces the choices), "
                 f"{self.duration_s:.1f}s"]
        compared = sum(v for k, v in self.counts.items() if k.startswith("compared."))
        lines.append(f"  reads compared with the oracle: {compared} "
                     + ", ".join(f"{k[9:]}={v}" for k, v in sorted(self.counts.items()) if k.startswith("compared.")))
        lines.append("  other: " + ", ".join(f"{k}={v}" for k, v in sorted(self.counts.items())
                                             if not k.startswith("compared.")))
        lines.append("  cache-served share of reads during the run (Admin.CacheStats deltas):")
        for s in self.shares:
            misses = ", ".join(f"{k}={v}" for k, v in sorted(s.misses.items()) if v)
            lines.append(f"    {s.name}: {s.share:6.1%}  hits={s.hits} misses={sum(s.misses.values())} "
                         f"({misses or 'none'}); reads sent={s.reads_sent}")
        for s in self.final_sweep:
            lines.append(f"  final sweep {s.name}: {s.hits}/{s.reads_sent} reads from the cache")
        lines.append(f"  violations: {len(self.violations)}; driver errors: {len(self.errors)}")
        by_kind = Counter(f"{v.kind}/{v.scope}" for v in self.violations)
        if by_kind:
            lines.append("  violations by kind/scope: " + ", ".join(f"{k}={n}" for k, n in sorted(by_kind.items())))
        for v in self.violations[:20]:
            lines.append("  " + v.render().replace("\n", "\n  "))
        for e in self.errors[:20]:
            lines.append("  error: " + e)
        return "\n".join(lines)


# -- answers ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """A read's answer: the parsed response, or the gRPC status code and message."""

    reply: Any = None
    code: grpc.StatusCode | None = None
    details: str = ""

    @property
    def ok(self) -> bool:
        return self.code is None

    @property
    def too_old(self) -> bool:
        return self.code == C.FAILED_PRECONDITION and "snapshot too old" in self.details

    def same(self, other: "Outcome") -> bool:
        if self.ok != other.ok:
            return False
        return self.reply == other.reply if self.ok else (self.code, self.details) == (other.code, other.details)

    def render(self, limit: int = 1500) -> str:
        if not self.ok:
            return f"{self.code.name if self.code else '?'}: {self.details}"
        text = text_format.MessageToString(self.reply, as_one_line=True)
        return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


async def read(ep: Endpoint, method: str, request: Any) -> Outcome:
    ep.reads_sent += 1
    try:
        return Outcome(await getattr(ep.catalog, method)(request, timeout=CALL_TIMEOUT_S))
    except grpc.aio.AioRpcError as exc:
        return Outcome(code=exc.code(), details=exc.details() or "")


def one_line(message: Any) -> str:
    return text_format.MessageToString(message, as_one_line=True)


# -- the catalog the run works on ------------------------------------------------------------------------


def table_message(name: str, *, acid: bool, tag: str = "") -> pb.Table:
    return pb.Table(
        db_name=DB, name=name, table_type=pb.MANAGED if acid else pb.EXTERNAL, transactional=acid,
        columns=[pb.FieldSchema(name="id", type="bigint"), pb.FieldSchema(name="payload", type="string")],
        partition_keys=[pb.FieldSchema(name=k.name, type=k.type) for k in KEYS],
        parameters={"tag": tag} if tag else {},
        sd=pb.StorageDescriptor(
            input_format="org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
            output_format="org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
            serde=pb.SerDeInfo(serialization_lib="org.apache.hadoop.hive.ql.io.orc.OrcSerde")),
    )


UNIVERSE: tuple[tuple[str, str], ...] = tuple((ds, str(hr)) for ds in DS_VALUES for hr in range(HOURS))


def part_name(values: Sequence[str]) -> str:
    return hive_names.make_partition_name(KEYS, values)


def part_values(name: str) -> tuple[str, ...]:
    return hive_names.parse_partition_name(KEYS, name)


ALL_NAMES = tuple(part_name(v) for v in UNIVERSE)
NEVER_NAMES = ("ds=2030-01-01/hr=1", "ds=2024-01-01/hr=99", f"ds={DS_VALUES[0]}/hr=-1")


def spelling_variant(rng: random.Random, name: str) -> str:
    """Another spelling of the same partition name (the gateways canonicalize: upper-case keys, escapes)."""
    choice = rng.randrange(3)
    if choice == 0:
        return name.replace("ds=", "DS=").replace("hr=", "Hr=")
    if choice == 1:
        return name.replace("-", "%2D", 1)
    return name


@dataclass(frozen=True)
class ExtState:
    table_tag: str
    parts: tuple[tuple[str, str], ...]  # (name, tag) sorted by name

    @property
    def part_map(self) -> dict[str, str]:
        return dict(self.parts)


@dataclass
class ExtTable:
    name: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    history: list[tuple[int, ExtState]] = field(default_factory=list)  # (event id, state after it)
    started: int = 0  # writes started (a generation counter)
    in_flight: int = 0

    @property
    def last_event(self) -> int:
        return self.history[-1][0]


@dataclass
class ExtObservation:
    """One external read, checked at the end against the complete history."""

    gateway: str
    table: str
    method: str
    request: str
    projection: tuple[Any, ...]
    token_index: int | None  # the history index of the min_event_id passed, or None (no token)
    seq: int


def ext_projection(method: str, request: Any, reply: Any) -> tuple[Any, ...]:
    if method == "GetTable":
        return ("table", reply.table.parameters.get("tag", ""))
    if method == "GetPartitionsByNames":
        wanted = tuple(dict.fromkeys(request.names))
        return ("parts", wanted, tuple((p.name, p.parameters.get("tag", "")) for p in reply.partitions))
    page = request.page_size or SERVER_PAGE_LIMIT
    return ("list", page, tuple(reply.names), bool(reply.next_page_token))


def state_matches(state: ExtState, projection: tuple[Any, ...]) -> bool:
    kind = projection[0]
    if kind == "table":
        return state.table_tag == projection[1]
    parts = state.part_map
    if kind == "parts":
        _, wanted, got = projection
        return tuple((n, parts[n]) for n in wanted if n in parts) == got
    _, page, got_names, more = projection
    names = sorted(parts)
    return tuple(names[:page]) == got_names and (len(names) > page) == more


# -- the driver ----------------------------------------------------------------------------------------


class Driver:
    def __init__(self, gateways: Sequence[Endpoint], oracle: Endpoint, cfg: ConsistencyConfig,
                 log: Callable[[str], None] = print) -> None:
        self.gateways = list(gateways)
        self.oracle = oracle
        self.cfg = cfg
        self.log = log
        self.acid = [f"a{i}" for i in range(cfg.acid_tables)]
        self.ext = {f"e{i}": ExtTable(f"e{i}") for i in range(cfg.external_tables)}
        self.counts: Counter[str] = Counter()
        self.violations: list[Violation] = []
        self.errors: list[str] = []
        self.observations: list[ExtObservation] = []
        self._seq = itertools.count()
        self._tags = itertools.count(1)
        self._monotonic_locks = {(g.name, t): asyncio.Lock() for g in self.gateways for t in self.ext}
        self._open_txns: set[int] = set()
        self._old_snapshots: list[dict[str, pb.ReadContext]] = []
        self._deadline = 0.0
        self._stop = asyncio.Event()
        from loadtest.ddl_race import DdlRace  # it builds on this module's helpers

        self.ddl = DdlRace(self, cfg.churn_tables)

    # -- helpers ------------------------------------------------------------------------------

    def any_gateway(self, rng: random.Random) -> Endpoint:
        return rng.choice(self.gateways)

    def violate(self, v: Violation) -> None:
        self.violations.append(v)
        if len(self.violations) <= 5:
            self.log("VIOLATION " + v.render())
        elif len(self.violations) == 6:
            self.log("(more violations: see the summary)")

    def error(self, text: str) -> None:
        self.errors.append(text)
        self.log("driver error: " + text)

    async def snapshot(self, rng: random.Random, txn_id: int, tables: Sequence[str]) -> dict[str, pb.ReadContext]:
        """Hive's way: the ValidTxnList (as `txn_id` sees it), then each table's ValidWriteIdList."""
        state = await self.any_gateway(rng).txns.GetOpenTxns(tpb.GetOpenTxnsRequest(current_txn_id=txn_id),
                                                             timeout=CALL_TIMEOUT_S)
        got = await self.any_gateway(rng).txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
            full_table_names=[f"{DB}.{t}" for t in tables], valid_txn_list=state.valid_txn_list),
            timeout=CALL_TIMEOUT_S)
        return {t.full_table_name.split(".", 1)[1]: pb.ReadContext(
            valid_write_id_list=t.valid_write_id_list, table_id=t.table_id, txn_id=txn_id) for t in got.tables}

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

    # -- ACID reads -----------------------------------------------------------------------------

    def random_names(self, rng: random.Random, *, variants: bool) -> list[str]:
        names = rng.sample(ALL_NAMES, rng.randint(1, min(24, len(ALL_NAMES))))
        if rng.random() < 0.5:
            names.append(rng.choice(NEVER_NAMES))
        if rng.random() < 0.3:
            names.append(rng.choice(names))  # a duplicate
        if variants:
            names = [spelling_variant(rng, n) if rng.random() < 0.2 else n for n in names]
        rng.shuffle(names)
        return names

    async def acid_read(self, rng: random.Random, table: str, ctx: pb.ReadContext, *, in_txn: bool, kind: str) -> None:
        if rng.random() < 0.3:
            ctx = pb.ReadContext(valid_write_id_list=ctx.valid_write_id_list, txn_id=ctx.txn_id)  # no table-id guard
        which = rng.choices(READ_METHODS, weights=(2, 5, 3))[0]
        if which == "GetTable":
            await self.compare(kind, which, pb.GetTableRequest(db_name=DB, table_name=table, read=ctx), in_txn=in_txn)
        elif which == "GetPartitionsByNames":
            await self.compare(kind, which, pb.GetPartitionsByNamesRequest(
                db_name=DB, table_name=table, names=self.random_names(rng, variants=True), read=ctx), in_txn=in_txn)
        else:
            request = pb.ListPartitionNamesRequest(db_name=DB, table_name=table, page_size=rng.choice((0, 3, 7, 20)),
                                                   read=ctx)
            first = await self.compare(kind, which, request, in_txn=in_txn)
            if first.ok and first.reply.next_page_token:
                request.page_token = first.reply.next_page_token
                await self.compare(kind, which, request, in_txn=in_txn)

    # -- external reads -------------------------------------------------------------------------

    async def ext_read(self, rng: random.Random, table: str) -> None:
        ext = self.ext[table]
        which = rng.choices(READ_METHODS, weights=(2, 5, 3))[0]
        if which == "GetTable":
            request: Any = pb.GetTableRequest(db_name=DB, table_name=table)
        elif which == "GetPartitionsByNames":
            request = pb.GetPartitionsByNamesRequest(db_name=DB, table_name=table,
                                                     names=self.random_names(rng, variants=False))
        else:
            request = pb.ListPartitionNamesRequest(db_name=DB, table_name=table, page_size=rng.choice((0, 4, 9)))
        if rng.random() < 0.5:
            await self._ext_token_read(ext, which, request)
        else:
            await self._ext_monotonic_read(ext, which, request)

    async def _ext_token_read(self, ext: ExtTable, method: str, request: Any) -> None:
        token_index = len(ext.history) - 1
        request.read.min_event_id = ext.history[token_index][0]
        started, quiet = ext.started, ext.in_flight == 0
        answers = await asyncio.gather(*(read(g, method, request) for g in self.gateways))
        expected = await read(self.oracle, method, request)
        strict = quiet and ext.started == started
        for g, got in zip(self.gateways, answers):
            if not got.ok:
                self.violate(Violation("error", g.name, method, one_line(request), got.render(), expected.render(),
                                       "(external read with token)", scope="ext_token"))
                continue
            self.observations.append(ExtObservation(g.name, ext.name, method, one_line(request),
                                                    ext_projection(method, request, got.reply), token_index,
                                                    next(self._seq)))
            if not strict:
                self.counts["ext_token_skipped"] += 1
                continue
            self.counts["compared.ext_token"] += 1
            if not got.same(expected):
                self.violate(Violation("mismatch", g.name, method, one_line(request), got.render(), expected.render(),
                                       "(external, min_event_id = the last write's event, no write in between)",
                                       scope="ext_token"))

    async def _ext_monotonic_read(self, ext: ExtTable, method: str, request: Any) -> None:
        async def one(g: Endpoint) -> None:
            async with self._monotonic_locks[(g.name, ext.name)]:
                got = await read(g, method, request)
                if not got.ok:
                    self.violate(Violation("error", g.name, method, one_line(request), got.render(), "an answer",
                                           "(external read without token)", scope="ext_no_token"))
                    return
                self.counts["ext_no_token_reads"] += 1
                self.observations.append(ExtObservation(g.name, ext.name, method, one_line(request),
                                                        ext_projection(method, request, got.reply), None,
                                                        next(self._seq)))

        await asyncio.gather(*(one(g) for g in self.gateways))

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

    # -- writers --------------------------------------------------------------------------------

    async def own_read(self, rng: random.Random, table: str, ctx: pb.ReadContext,
                       kind: str = "own_writes") -> list[str]:
        """Read-your-own-writes: the txn's view through a random gateway and the oracle; the names it sees."""
        g = self.any_gateway(rng)
        if rng.random() < 0.3:
            await self.compare(kind, "GetPartitionsByNames", pb.GetPartitionsByNamesRequest(
                db_name=DB, table_name=table, names=self.random_names(rng, variants=False), read=ctx),
                in_txn=True, gateways=[g])
        listed = await self.compare(kind, "ListPartitionNames", pb.ListPartitionNamesRequest(
            db_name=DB, table_name=table, read=ctx), in_txn=True, gateways=[g])
        if rng.random() < 0.2:
            await self.compare(kind, "GetTable", pb.GetTableRequest(db_name=DB, table_name=table, read=ctx),
                               in_txn=True, gateways=[g])
        return list(listed.reply.names) if listed.ok else []

    async def own_reads(self, rng: random.Random, table: str, txn: int, early: pb.ReadContext,
                        wrote: bool) -> list[str]:
        """Before its first write a txn reads with the snapshot taken when it opened. After writing, it
        reads twice: Hive's way, with a snapshot taken after its write id was allocated (its own write
        id is valid in it: `own_writes`), and with the snapshot taken before it wrote plus its txn id
        (`own_writes_early_snapshot`: the gateway must still show the txn its own writes)."""
        if not wrote:
            return await self.own_read(rng, table, early)
        await self.own_read(rng, table, early, "own_writes_early_snapshot")
        fresh = (await self.snapshot(rng, txn, [table]))[table]
        return await self.own_read(rng, table, fresh)

    async def acid_txn(self, rng: random.Random, writer: int) -> None:
        table = rng.choice(self.acid)
        opened = await self.any_gateway(rng).txns.OpenTxns(tpb.OpenTxnsRequest(
            num_txns=1, user="consistency", hostname="driver", agent_info=f"writer{writer}"), timeout=CALL_TIMEOUT_S)
        txn = opened.txn_ids[0]
        self._open_txns.add(txn)
        outcome = "commit"
        try:
            ctx = (await self.snapshot(rng, txn, [table]))[table]
            wrote = False
            for _ in range(rng.randint(1, 3)):
                visible = await self.own_reads(rng, table, txn, ctx, wrote)
                try:
                    await self.acid_write(rng, table, txn, ctx.table_id, visible)
                    wrote = True
                except grpc.aio.AioRpcError as exc:
                    if exc.code() == C.ABORTED:
                        self.counts["write_conflicts"] += 1
                    elif exc.code() == C.NOT_FOUND and (exc.details() or "").startswith("table "):
                        # The ACID tables are never dropped or renamed: a write must always find them.
                        self.violate(Violation("write_not_found", "?", "acid_write", f"txn {txn} on {DB}.{table}",
                                               f"NOT_FOUND: {exc.details()}", "OK or ABORTED",
                                               "the table existed throughout the run", scope="acid_write"))
                    elif exc.code() in (C.NOT_FOUND, C.ALREADY_EXISTS):
                        self.counts["write_races"] += 1  # altered/dropped what another txn just dropped
                    else:
                        self.error(f"txn {txn} write to {table}: {exc.code().name}: {exc.details()}")
                    outcome = "abort"
                    break
            if outcome == "commit":
                await self.own_reads(rng, table, txn, ctx, wrote)
                if rng.random() < self.cfg.abort_share:
                    outcome = "abort"
            if outcome == "commit":
                try:
                    await self.any_gateway(rng).txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), timeout=CALL_TIMEOUT_S)
                    self.counts["txns_committed"] += 1
                except grpc.aio.AioRpcError as exc:
                    self.error(f"commit of txn {txn}: {exc.code().name}: {exc.details()}")
            if outcome == "abort":
                await self.any_gateway(rng).txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[txn]), timeout=CALL_TIMEOUT_S)
                self.counts["txns_aborted"] += 1
        finally:
            self._open_txns.discard(txn)

    async def acid_write(self, rng: random.Random, table: str, txn: int, table_id: int, visible: list[str]) -> None:
        tag = f"t{txn}.{next(self._tags)}"
        guard = table_id if rng.random() < 0.5 else 0
        g = self.any_gateway(rng)
        op = rng.choices(("add", "alter", "drop", "alter_table"), weights=(45, 35, 15, 5))[0]
        if op in ("alter", "drop") and not visible:
            op = "add"
        if op == "add":
            values = rng.sample(UNIVERSE, rng.randint(1, 3))
            await g.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=table, txn_id=txn, table_id=guard, if_not_exists=True,
                partitions=[pb.Partition(values=list(v), parameters={"tag": tag}) for v in values]),
                timeout=CALL_TIMEOUT_S)
        elif op == "alter":
            chosen = rng.sample(visible, min(len(visible), rng.randint(1, 3)))
            await g.catalog.AlterPartitions(pb.AlterPartitionsRequest(
                db_name=DB, table_name=table, txn_id=txn, table_id=guard,
                partitions=[pb.Partition(values=list(part_values(n)), parameters={"tag": tag}) for n in chosen]),
                timeout=CALL_TIMEOUT_S)
        elif op == "drop":
            chosen = rng.sample(visible, min(len(visible), rng.randint(1, 2)))
            await g.catalog.DropPartitions(pb.DropPartitionsRequest(
                db_name=DB, table_name=table, txn_id=txn, table_id=guard, names=chosen, if_exists=True),
                timeout=CALL_TIMEOUT_S)
        else:
            await g.catalog.AlterTable(pb.AlterTableRequest(
                db_name=DB, table_name=table, txn_id=txn, table=table_message(table, acid=True, tag=tag)),
                timeout=CALL_TIMEOUT_S)
        self.counts[f"acid_{op}"] += 1

    async def ext_state(self, table: str) -> ExtState:
        got = await self.oracle.catalog.GetTable(pb.GetTableRequest(db_name=DB, table_name=table),
                                                 timeout=CALL_TIMEOUT_S)
        listed = await self.oracle.catalog.ListPartitionNames(pb.ListPartitionNamesRequest(
            db_name=DB, table_name=table), timeout=CALL_TIMEOUT_S)
        parts = await self.oracle.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
            db_name=DB, table_name=table, names=list(listed.names)), timeout=CALL_TIMEOUT_S)
        return ExtState(got.table.parameters.get("tag", ""),
                        tuple(sorted((p.name, p.parameters.get("tag", "")) for p in parts.partitions)))

    async def ext_write(self, rng: random.Random) -> None:
        ext = self.ext[rng.choice(sorted(self.ext))]
        async with ext.lock:
            ext.started += 1
            ext.in_flight += 1
            try:
                current = ext.history[-1][1].part_map
                tag = f"x{next(self._tags)}"
                g = self.any_gateway(rng)
                op = rng.choices(("add", "alter", "drop", "alter_table"), weights=(40, 35, 15, 10))[0]
                if op in ("alter", "drop") and not current:
                    op = "add"
                if op == "add":
                    values = rng.sample(UNIVERSE, rng.randint(1, 3))
                    reply: Any = await g.catalog.AddPartitions(pb.AddPartitionsRequest(
                        db_name=DB, table_name=ext.name, if_not_exists=True,
                        partitions=[pb.Partition(values=list(v), parameters={"tag": tag}) for v in values]),
                        timeout=CALL_TIMEOUT_S)
                elif op == "alter":
                    chosen = rng.sample(sorted(current), min(len(current), rng.randint(1, 2)))
                    reply = await g.catalog.AlterPartitions(pb.AlterPartitionsRequest(
                        db_name=DB, table_name=ext.name,
                        partitions=[pb.Partition(values=list(part_values(n)),
                                                 parameters={"tag": tag}) for n in chosen]),
                        timeout=CALL_TIMEOUT_S)
                elif op == "drop":
                    chosen = rng.sample(sorted(current), min(len(current), rng.randint(1, 2)))
                    reply = await g.catalog.DropPartitions(pb.DropPartitionsRequest(
                        db_name=DB, table_name=ext.name, names=chosen), timeout=CALL_TIMEOUT_S)
                else:
                    reply = await g.catalog.AlterTable(pb.AlterTableRequest(
                        db_name=DB, table_name=ext.name, table=table_message(ext.name, acid=False, tag=tag)),
                        timeout=CALL_TIMEOUT_S)
                self.counts[f"ext_{op}"] += 1
                if reply.event_id:
                    ext.history.append((reply.event_id, await self.ext_state(ext.name)))
            except grpc.aio.AioRpcError as exc:
                self.error(f"external write to {ext.name}: {exc.code().name}: {exc.details()}")
            finally:
                ext.in_flight -= 1

    # -- loops ----------------------------------------------------------------------------------

    def running(self) -> bool:
        return not self._stop.is_set() and time.monotonic() < self._deadline

    async def writer(self, i: int) -> None:
        rng = random.Random(f"{self.cfg.seed}/writer/{i}")
        while self.running():
            choice = rng.random()
            if self.ddl.tables and choice < self.cfg.churn_write_share:
                await self.ddl.write_txn(rng)
            elif self.ext and choice < self.cfg.churn_write_share + self.cfg.external_write_share:
                await self.ext_write(rng)
            else:
                await self.acid_txn(rng, i)
            await asyncio.sleep(rng.uniform(0, 0.02))

    async def reader(self, i: int) -> None:
        rng = random.Random(f"{self.cfg.seed}/reader/{i}")
        while self.running():
            in_txn = rng.random() < self.cfg.reader_txn_share
            txn = 0
            if in_txn:
                opened = await self.any_gateway(rng).txns.OpenTxns(tpb.OpenTxnsRequest(
                    num_txns=1, user="consistency", hostname="driver", agent_info=f"reader{i}"), timeout=CALL_TIMEOUT_S)
                txn = opened.txn_ids[0]
                self._open_txns.add(txn)
            try:
                kind = "reader_txn" if in_txn else "snapshot"
                if not in_txn and self._old_snapshots and rng.random() < 0.15:
                    # An old snapshot outside any txn (seconds to a minute old): the cache may still hold
                    # the versions it needs; once version GC passed it, "snapshot too old" on both sides.
                    snap, kind = rng.choice(self._old_snapshots), "old_snapshot"
                else:
                    snap = await self.snapshot(rng, txn, self.acid)
                    if not in_txn:
                        self._old_snapshots = [*self._old_snapshots[-30:], snap]
                long_txn = in_txn and rng.random() < 0.1  # holds its snapshot for several seconds
                for _ in range(rng.randint(15, 25) if long_txn else rng.randint(2, 6)):
                    if self.ext and rng.random() < 0.25:
                        await self.ext_read(rng, rng.choice(sorted(self.ext)))
                    elif rng.random() < 0.02:  # a managed read without a snapshot: refused by all alike
                        await self.compare("no_snapshot", "GetTable", pb.GetTableRequest(
                            db_name=DB, table_name=rng.choice(self.acid)), in_txn=in_txn)
                    else:
                        table = rng.choice(self.acid)
                        await self.acid_read(rng, table, snap[table], in_txn=in_txn, kind=kind)
                    await asyncio.sleep(rng.uniform(0, 0.25))
                self.counts["reader_snapshots"] += 1
            finally:
                if txn:
                    await self.any_gateway(rng).txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), timeout=CALL_TIMEOUT_S)
                    self._open_txns.discard(txn)

    # -- phases ---------------------------------------------------------------------------------

    async def setup(self) -> None:
        rng = random.Random(f"{self.cfg.seed}/setup")
        o = self.oracle
        await o.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=DB)), timeout=CALL_TIMEOUT_S)
        for t in self.acid:
            await o.catalog.CreateTable(pb.CreateTableRequest(table=table_message(t, acid=True)),
                                        timeout=CALL_TIMEOUT_S)
            (txn,) = (await o.txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="consistency"))).txn_ids
            await o.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=t, txn_id=txn,
                partitions=[pb.Partition(values=list(v), parameters={"tag": "init"})
                            for v in rng.sample(UNIVERSE, self.cfg.initial_partitions)]), timeout=CALL_TIMEOUT_S)
            await o.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), timeout=CALL_TIMEOUT_S)
        for ext in self.ext.values():
            await o.catalog.CreateTable(pb.CreateTableRequest(table=table_message(ext.name, acid=False, tag="init")),
                                        timeout=CALL_TIMEOUT_S)
            added = await o.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=ext.name,
                partitions=[pb.Partition(values=list(v), parameters={"tag": "init"})
                            for v in rng.sample(UNIVERSE, self.cfg.initial_partitions)]), timeout=CALL_TIMEOUT_S)
            ext.history.append((added.event_id, await self.ext_state(ext.name)))
        await self.ddl.setup()
        await self.wait_caught_up()

    async def wait_caught_up(self, timeout_s: float = 30.0) -> int:
        head = (await self.oracle.events.GetCurrentNotificationEventId(
            epb.GetCurrentNotificationEventIdRequest(), timeout=CALL_TIMEOUT_S)).event_id
        async with asyncio.timeout(timeout_s):
            for g in self.gateways:
                while (await g.stats()).poller_position < head:
                    await asyncio.sleep(0.02)
        return head

    async def final_sweep(self) -> list[GatewayShare]:
        """After catch-up, with a fresh snapshot: every read equals the oracle and comes from the cache.
        A table a gateway never loaded misses once (unknown_table starts its lazy fill): then the pass
        is repeated, for up to 10 s, until it has no such miss."""
        await self.wait_caught_up()
        rng = random.Random(f"{self.cfg.seed}/final")
        out = []
        for g in self.gateways:
            for _ in range(50):
                snap = await self.snapshot(rng, 0, self.acid)
                before, sent = await g.stats(), g.reads_sent
                requests: list[tuple[str, Any]] = []
                for t in self.acid:
                    requests += [("GetTable", pb.GetTableRequest(db_name=DB, table_name=t, read=snap[t])),
                                 ("GetPartitionsByNames", pb.GetPartitionsByNamesRequest(
                                     db_name=DB, table_name=t, names=list(ALL_NAMES), read=snap[t])),
                                 ("ListPartitionNames", pb.ListPartitionNamesRequest(
                                     db_name=DB, table_name=t, read=snap[t]))]
                for t in self.ext:
                    requests += [("GetTable", pb.GetTableRequest(db_name=DB, table_name=t)),
                                 ("GetPartitionsByNames", pb.GetPartitionsByNamesRequest(
                                     db_name=DB, table_name=t, names=list(ALL_NAMES))),
                                 ("ListPartitionNames", pb.ListPartitionNamesRequest(db_name=DB, table_name=t))]
                for method, request in requests:
                    await self.compare("final", method, request, in_txn=False, gateways=[g])
                after = await g.stats()
                misses = {k: v - before.misses_by_reason.get(k, 0) for k, v in after.misses_by_reason.items()
                          if v - before.misses_by_reason.get(k, 0)}
                share = GatewayShare(g.name, after.hits - before.hits, misses, g.reads_sent - sent)
                if set(misses) != {"unknown_table"}:
                    break
                self.counts["final_sweep_refills"] += 1
                await asyncio.sleep(0.2)
            out.append(share)
        return out

    async def run(self) -> ConsistencyReport:
        started = time.monotonic()
        await self.setup()
        self.log(f"consistency: seed {self.cfg.seed}, {len(self.gateways)} gateways + oracle, "
                 f"{self.cfg.duration_s:g}s, {self.cfg.writers} writers, {self.cfg.readers} readers")
        before = [await g.stats() for g in self.gateways]
        sent = [g.reads_sent for g in self.gateways]
        self._deadline = time.monotonic() + self.cfg.duration_s
        tasks = [asyncio.create_task(self.writer(i)) for i in range(self.cfg.writers)]
        tasks += [asyncio.create_task(self.reader(i)) for i in range(self.cfg.readers)]
        tasks += [asyncio.create_task(self.ddl.churner(t)) for t in self.ddl.tables]
        try:
            for task in asyncio.as_completed(tasks):
                await task
        except BaseException:
            self._stop.set()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self._open_txns:
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await self.oracle.txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=sorted(self._open_txns)))
            raise
        after = [await g.stats() for g in self.gateways]
        shares = []
        for g, b, a, s in zip(self.gateways, before, after, sent):
            misses = {k: a.misses_by_reason.get(k, 0) - b.misses_by_reason.get(k, 0) for k in a.misses_by_reason}
            shares.append(GatewayShare(g.name, a.hits - b.hits, misses, g.reads_sent - s))
        run_s = time.monotonic() - started
        final = await self.final_sweep()
        self.check_observations()
        return ConsistencyReport(self.cfg.seed, run_s, self.counts, self.violations, shares, final, self.errors)


async def run_consistency(gateway_addresses: Sequence[str], oracle_address: str, cfg: ConsistencyConfig,
                          log: Callable[[str], None] = print) -> ConsistencyReport:
    """Drive the caching gateways at `gateway_addresses` and the cache-less `oracle_address` (all on
    one fresh, migrated database) for `cfg.duration_s`; see the module docstring for what is checked."""
    gateways = [await Endpoint.open(f"gw{i + 1}", a) for i, a in enumerate(gateway_addresses)]
    oracle = await Endpoint.open("oracle", oracle_address)
    try:
        return await Driver(gateways, oracle, cfg, log).run()
    finally:
        for ep in (*gateways, oracle):
            await ep.channel.close()


def seed_from_env(default: int | None = None) -> int:
    value = os.environ.get("CONSISTENCY_SEED")
    if value:
        return int(value)
    return default if default is not None else random.SystemRandom().randrange(1, 2**31)


async def _main_async(args: argparse.Namespace) -> int:
    cfg = ConsistencyConfig(duration_s=args.duration, seed=args.seed if args.seed is not None else seed_from_env(),
                            writers=args.writers, readers=args.readers)
    print(f"consistency seed: {cfg.seed}", flush=True)
    with workdir() as root:
        async with fresh_database(args.dsn, "consistency", root) as dsn:
            common = [f"hive.metastore.acid.housekeeper.interval={args.housekeeping}"]
            procs = [GatewayProcess(["--dsn", dsn, *conf_args(*CACHED_GATEWAY_CONF, *common)], root / f"gw{i + 1}.log")
                     for i in range(args.gateways)]
            procs.append(GatewayProcess(["--dsn", dsn, *conf_args(*ORACLE_CONF, *common)], root / "oracle.log"))
            try:
                addresses = [await asyncio.to_thread(p.wait_serving, 120) for p in procs]
                report = await run_consistency(addresses[:-1], addresses[-1], cfg)
            finally:
                codes = [p.stop() for p in procs]
                bad = [p for p, c in zip(procs, codes) if c != 0]
                for p in bad:
                    print(f"gateway {p.argv} exited {p.proc.returncode}:\n{p.output()[-3000:]}", file=sys.stderr)
    print(report.summary(), flush=True)
    return 0 if report.ok and not bad else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtest.consistency", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of writes and reads (default 30)")
    parser.add_argument("--seed", type=int, help="default: $CONSISTENCY_SEED, else random (printed)")
    parser.add_argument("--gateways", type=int, default=3, help="caching gateway processes (default 3)")
    parser.add_argument("--writers", type=int, default=3)
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--housekeeping", default="30s",
                        help="hive.metastore.acid.housekeeper.interval of every gateway (default 30s: version GC "
                             "runs during a long run, so snapshots outside txns may become too old)")
    parser.add_argument("--dsn", help="PostgreSQL server to create the run's database in (default: an embedded one)")
    return asyncio.run(_main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
