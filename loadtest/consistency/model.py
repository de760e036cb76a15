"""The consistency run's vocabulary: its configuration and report, a read's answer (`Outcome`), the
catalog it works on (tables, the universe of partition names, their spellings) and the histories the
judge checks reads without a snapshot against: the external tables' states after each write, the ACID
tables' committed states after each commit."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

import grpc
from google.protobuf import text_format

from hive import names as hive_names
from hive.names import matches_partial_values
from hive.schema import FieldSchema
from loadtest.gateway_targets import bench_table
from loadtest.harness import CALL_TIMEOUT_S, Endpoint
from protos.metastore.v1 import catalog_pb2 as pb

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
    churn_read_share: float = 0.25  # of reader snapshot reads: of a churn table, by either of its names
    thrift_read_share: float = 0.3  # of reader reads: over Hive's Thrift API (when the run has its addresses)
    latest_read_share: float = 0.08  # of reader reads: of an ACID table without a snapshot (Hive 2.3, Trino)
    own_commit_read_share: float = 0.3  # of commits: the committer's gateway read without a snapshot after it


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
            misses = ", ".join(f"{k}={v}" for k, v in sorted(s.misses.items()) if v)
            lines.append(f"  final sweep {s.name}: {s.hits}/{s.reads_sent} reads from the cache"
                         + (f" (misses: {misses})" if misses else ""))
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


# store/catalog.py resolve_table's refusal of a name the snapshot's table did not have then (read under
# the name it is renamed to, say), the same over both protocols.
NOT_IN_SNAPSHOT = "does not exist in this snapshot"


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

    @property
    def of_the_snapshot(self) -> bool:
        """An answer the snapshot's versions decide (its objects, or that it had no table of that name),
        which a later version GC turns into "snapshot too old"."""
        return self.ok or (self.code == C.NOT_FOUND and NOT_IN_SNAPSHOT in self.details)

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
    """The benchmarks' ORC table (its partition keys are KEYS), ACID or external, tagged `tag`."""
    table = bench_table(name, db=DB, external=not acid)
    if tag:
        table.parameters["tag"] = tag
    return table


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


def random_names(rng: random.Random, *, variants: bool) -> list[str]:
    names = rng.sample(ALL_NAMES, rng.randint(1, min(24, len(ALL_NAMES))))
    if rng.random() < 0.5:
        names.append(rng.choice(NEVER_NAMES))
    if rng.random() < 0.3:
        names.append(rng.choice(names))  # a duplicate
    if variants:
        names = [spelling_variant(rng, n) if rng.random() < 0.2 else n for n in names]
    rng.shuffle(names)
    return names


@dataclass(frozen=True)
class ExtState:
    """A table's state as the judge compares it: its tag and columns, and each partition's tag (a
    partition of these runs has no columns of its own: over Thrift it shows the table's)."""

    table_tag: str
    parts: tuple[tuple[str, str], ...]  # (name, tag) sorted by name
    columns: tuple[tuple[str, str], ...] = ()  # the table's (name, type)

    @property
    def part_map(self) -> dict[str, str]:
        return dict(self.parts)


@dataclass
class ExtTable:
    """A table's history: an external table's states after each write (serialized by `lock`), or an
    ACID table's committed states after each commit (commits of the table serialized by `lock`)."""

    name: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    history: list[tuple[int, ExtState]] = field(default_factory=list)  # (event id, state after it)
    started: int = 0  # writes started (a generation counter)
    in_flight: int = 0


@dataclass
class ExtObservation:
    """One read without a snapshot, checked at the end against the table's complete history."""

    gateway: str
    table: str
    method: str
    request: str
    projection: tuple[Any, ...]
    token_index: int | None  # the history index of the min_event_id passed (or of the caller's commit), or None
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
    """Whether `projection` (ext_projection's shapes, or thrift_side.latest_projection's: the same with the
    columns, and `ps`, a partial specification with maxParts) describes `state`. A partition's entry is
    (name, tag), or (name, tag, columns): a partition shows the table's columns."""
    kind = projection[0]
    if kind == "table":
        return state.table_tag == projection[1] and (len(projection) == 2 or state.columns == projection[2])
    parts = state.part_map

    def entry(name: str, like: Any) -> Any:
        if isinstance(like, str):
            return name
        return (name, parts[name]) if len(like) == 2 else (name, parts[name], state.columns)

    if kind == "parts":
        _, wanted, got = projection
        names = [n for n in wanted if n in parts]
        return len(names) == len(got) and all(entry(n, g) == g for n, g in zip(names, got))
    if kind == "ps":
        _, partial, max_parts, got = projection
        names = [n for n in sorted(parts) if matches_partial_values(part_values(n), partial)]
        names = names if max_parts < 0 else names[:max_parts]
        return len(names) == len(got) and all(entry(n, g) == g for n, g in zip(names, got))
    _, page, got_names, more = projection
    names = sorted(parts)
    return tuple(names[:page]) == got_names and (len(names) > page) == more
