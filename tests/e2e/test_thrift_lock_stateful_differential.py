"""Random sequences of txn and lock calls made one at a time, in the same order, against the gateway's
Thrift endpoint and the real Hive Metastore 2.3.10 (pyspark's jars, its transactions on PostgreSQL,
hive.txn.timeout an hour on both), compared step by step: each answer (txn and lock ids normalized to
their order of creation in the example; a failure by its exception type), then the whole of SHOW LOCKS
on both (which requests are ACQUIRED or WAITING, on what, of which txn and user).

Draws: open_txns (1 to 3, users from a pool), abort_txn, abort_txns, commit_txn, heartbeat (txn and lock
ids, 0 and ids that do not exist too), heartbeat_txn_range (past the last txn too), lock requests inside
and outside txns of 1 to 3 components (SHARED_READ, SHARED_WRITE, EXCLUSIVE on databases, tables and
partitions, names that exist and names that do not, which both lock by name), with operation types and
isAcid / isDynamicPartitionWrite as Hive 2.3's DbTxnManager sends them (see IN_TXN and NO_TXN),
check_lock, unlock, show_locks with and without a filter, get_open_txns, get_open_txns_info. Each example
ends with its txns aborted and its standalone locks released on both sides, and nothing left locked.

Where the answers part, the two lock managers decide by different rules, both written here as models
over the lock table each server showed (hive23_decision: Hive 2.3's TxnHandler.checkLock, its jump
table, sort order and ignoreConflict, read from the 2.3.10 jar; gateway_decision: the gateway's rule,
hive/lock_rules.py). Every lock and check_lock answer of Hive is held to hive23_decision and every one
of the gateway to gateway_decision, so a parting is accepted only where the two rules part, for one of
the documented reasons in DELIBERATE; anything else fails. Once the two lock tables differ the example
stops calling (its later steps would compare two different states), still drawing them, and cleans up.

DELIBERATE (README, Locks and Transactions and snapshots; hive/lock_rules.py; store/txns.py):
- "strict FIFO": a request waits behind every earlier conflicting request, waiting ones included (Hive
  4's CheckLockFunction). Hive 2.3 scans the earlier locks sorted acquired first, then SHARED_READ <
  SHARED_WRITE < EXCLUSIVE, and its jump table stops at the first acquired shared lock a reader meets
  and never sees a waiting lock sorted behind the request: a reader overtakes a waiting writer, a
  SHARED_WRITE a waiting EXCLUSIVE (README: "so a stream of readers cannot starve a writer").
- "shared writes": Hive 4's matrix, where SHARED_WRITEs do not exclude each other (README, Types and
  matrix; two updaters run at once and the second to commit is aborted by the write-set check); Hive
  2.3's jump table makes one wait for the other.
- "same txn or request": Hive 2.3 acquires a component at once when the first lock its scan meets that
  it would wait for is its own txn's (or, outside a txn, its own request's), without looking further;
  the gateway skips those and goes on checking every earlier request.
- "commit again": committing a committed txn returns (idempotent, as in Hive 4; store/txns.py
  commit_txn); Hive 2.3's commitTxn heartbeats the txn first: NoSuchTxnException.
- "two deletes": a txn's DELETE conflicts at commit with another's overlapping DELETE (Hive 4's rule;
  README: Hive 2.3's and 3.1's write-set checks count only pairs with an update).
- "dynamic writes": an UPDATE or DELETE component with isDynamicPartitionWrite enters the txn's
  write-set as an update of its whole table until add_dynamic_partitions names the partitions (README,
  Transactions and snapshots; hive/lock_rules.write_set_entries), so it conflicts at commit with another
  txn's update of that table; Hive 2.3 records nothing for it until addDynamicPartitions, and without
  that call the two commit.
Not drawn, as Hive 2.3's DbTxnManager never sends them and Hive 2.3 fails on them with an internal error
or the gateway refuses them on purpose: duplicate scopes in one request (the gateway merges them into the
strongest type, README), a SHARED_WRITE outside a txn (IllegalStateException in Hive's checkLock), UNSET
or NO_TXN of an ACID table in a txn (IllegalStateException in Hive's enqueue), an update or delete of a
database (Hive's commit writes a WRITE_SET row without a table and fails), partition names with more
keys than their table has (the gateway refuses them, README).
SHOW LOCKS rows are compared without their component ids (the gateway numbers a request's components
in lexicographic order of their scopes, Hive in the order sent), times, heartbeat counts, agent info
and blocked-by ids (each server names the first blocker its own scan met). get_open_txns is read with
the gateway's own IDL on its side: it answers Hive 3's list with abortedBits, a binary that hmsclient's
Python Thrift cannot skip (it decodes it as UTF-8).

test_txn_and_lock_ids_at_the_edges_are_answered_as_hive_metastore_does makes one fixed sequence of calls with
ids no txn or lock has (0, negative) and requests at hive.txn.max.open.batch on both; where Hive 2.3.10 and the
gateway answer otherwise on purpose, EDGE_DELIBERATE says why.

Skipped without Java, pyspark's jars or PostgreSQL's JDBC driver. `make test` runs EXAMPLES (12,
derandomized, about 15 s with the Hive Metastore's start); the `soak` run LOCK_DIFFERENTIAL_SOAK_EXAMPLES
(300). The module's tally of agreements and partings is printed at its end (-s).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass, field, replace
from typing import Any, AsyncIterator, Callable, Iterator

import pytest
import thriftpy2.rpc
from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
from hmsclient.genthrift.hive_metastore import ttypes as ht
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from gateway.thrift.idl import SERVICE
from hive.lock_rules import LockComponent, LockLevel, LockScope, LockType, blocks
from loadtest.hms import hms_process, hms_unavailable_reason, postgres_unavailable_reason
from tests.conftest import PgCluster, running_gateway
from tests.e2e.test_thrift_differential import _part, _table

_REASON = hms_unavailable_reason() or postgres_unavailable_reason()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"Hive Metastore reference: {_REASON}")

Client = ThriftHiveMetastore.Client
SR, SW, X = ht.LockType.SHARED_READ, ht.LockType.SHARED_WRITE, ht.LockType.EXCLUSIVE
OP = ht.DataOperationType
EXAMPLES = int(os.environ.get("LOCK_DIFFERENTIAL_EXAMPLES", "12"))
SOAK_EXAMPLES = int(os.environ.get("LOCK_DIFFERENTIAL_SOAK_EXAMPLES", "300"))
STEPS = (8, 24)
TIMEOUT = "3600s"  # hive.txn.timeout on both: nothing times out during a run
USERS = ("alice", "bob")

# Scopes: a database, table or partition; existing ones (ldb, ldb.t partitioned by ds with ds=1 and ds=2,
# ldb.u unpartitioned) and missing ones (database nodb, table ldb.nt, partition ldb.t/ds=9).
Scope = tuple[str, str | None, str | None]
SCOPES: tuple[Scope, ...] = (
    ("ldb", None, None), ("nodb", None, None),
    ("ldb", "t", None), ("ldb", "u", None), ("ldb", "nt", None), ("nodb", "t", None),
    ("ldb", "t", "ds=1"), ("ldb", "t", "ds=2"), ("ldb", "t", "ds=9"), ("ldb", "nt", "ds=1"),
)
# (type, operation, isAcid) as Hive 2.3's DbTxnManager sends them: in a txn, reads, ACID inserts
# (SHARED_READ), ACID updates and deletes (SHARED_WRITE), non-ACID inserts and DDL (EXCLUSIVE). Not
# NO_TXN on an ACID table in a txn: Hive 2.3's enqueue throws IllegalStateException ("Unexpected
# DataOperationType"), an internal error.
IN_TXN = ((SR, OP.SELECT, True), (SR, OP.SELECT, False), (SR, OP.INSERT, True), (SW, OP.UPDATE, True),
          (SW, OP.DELETE, True), (X, OP.INSERT, False), (X, OP.NO_TXN, False))
NO_TXN = ((SR, OP.SELECT, False), (X, OP.INSERT, False), (X, OP.NO_TXN, False), (SR, OP.UNSET, False),
          (X, OP.UNSET, False))
_TYPE = {SR: LockType.SHARED_READ, SW: LockType.SHARED_WRITE, X: LockType.EXCLUSIVE}


# -- the models ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One component of SHOW LOCKS, ids normalized: `lock` the request's index in the example, `txn`
    its txn's (None outside a txn)."""

    lock: int
    db: str
    table: str | None
    part: str | None
    state: str
    type: str
    txn: int | None
    user: str
    host: str

    @property
    def scope(self) -> Scope:
        return self.db, self.table, self.part


def _level(scope: Scope) -> str:
    return "db" if scope[1] is None else "table" if scope[2] is None else "part"


def _overlap(a: Scope, b: Scope) -> bool:
    """Hive 2.3's test: same database, tables equal or one null, partitions equal or one null."""
    return a[0] == b[0] and (a[1] is None or b[1] is None or a[1] == b[1]) and (
        a[2] is None or b[2] is None or a[2] == b[2])


_ORDER = {"SHARED_READ": 0, "SHARED_WRITE": 1, "EXCLUSIVE": 2}
# jump[requested][existing][existing state]: Hive 2.3.10's buildJumpTable (read from the jar).
_JUMP = {
    "SHARED_READ": {"SHARED_READ": {"ACQUIRED": "acquire", "WAITING": "look"},
                    "SHARED_WRITE": {"ACQUIRED": "acquire", "WAITING": "look"},
                    "EXCLUSIVE": {"ACQUIRED": "wait", "WAITING": "wait"}},
    "SHARED_WRITE": {"SHARED_READ": {"ACQUIRED": "look", "WAITING": "look"},
                     "SHARED_WRITE": {"ACQUIRED": "wait", "WAITING": "wait"},
                     "EXCLUSIVE": {"ACQUIRED": "wait", "WAITING": "wait"}},
    "EXCLUSIVE": {t: {"ACQUIRED": "wait", "WAITING": "wait"} for t in _ORDER},
}


def _ignore_conflict(desired: tuple[Row, int], existing: tuple[Row, int]) -> bool:
    """Hive 2.3.10's TxnHandler.ignoreConflict (its partition clauses included)."""
    d, e = desired[0], existing[0]
    dl, el = _level(d.scope), _level(e.scope)
    return ((dl == "db" and d.type == "SHARED_READ" and el in ("table", "part") and e.type == "EXCLUSIVE")
            or (el == "db" and e.type == "SHARED_READ" and dl in ("table", "part") and d.type == "EXCLUSIVE")
            or (d.txn is not None and d.txn == e.txn) or (d.txn is None and d.lock == e.lock))


def hive23_decision(table: list[tuple[Row, int]], lock: int) -> str:
    """Hive 2.3's checkLock of request `lock` over `table` (rows with their component ids in the order
    sent): ACQUIRED or WAITING."""
    return _hive23(table, lock)[0]


def _hive23(table: list[tuple[Row, int]], lock: int) -> tuple[str, set[str]]:
    """hive23_decision, and how: "blocked by SHARED_WRITE" when a SHARED_WRITE waits for another, "same
    txn or request" when a component was acquired by ignoreConflict of its own txn's or request's lock.
    The rows of ext id <= lock, sorted acquired first, then by type, ext id and component id; each waiting
    component scans back from its place in that order and stops at the first acquire or wait."""
    rows = sorted((r for r in table if r[0].lock <= lock),
                  key=lambda r: (r[0].state != "ACQUIRED", _ORDER[r[0].type], r[0].lock, r[1]))
    how: set[str] = set()
    for info in [r for r in rows if r[0].lock == lock]:
        if info[0].state == "ACQUIRED":
            continue
        index = rows.index(info)
        for i in range(index - 1, -1, -1):
            other = rows[i]
            if not _overlap(info[0].scope, other[0].scope):
                continue
            action = _JUMP[info[0].type][other[0].type][other[0].state]
            if action == "wait" and not _ignore_conflict(info, other):
                if info[0].type == other[0].type == "SHARED_WRITE":
                    how.add("blocked by SHARED_WRITE")
                return "WAITING", how
            if action == "wait" and (other[0].lock == lock or (info[0].txn is not None
                                                                and other[0].txn == info[0].txn)):
                how.add("same txn or request")
            if action in ("wait", "acquire"):
                break
    return "ACQUIRED", how


def _component(row: Row) -> LockComponent:
    return LockComponent(LockScope(*row.scope), LockType[row.type])


def gateway_decision(table: list[tuple[Row, int]], lock: int) -> str:
    """The gateway's rule (README, Locks): WAITING while any component of an earlier request, in any
    state, of another txn (or any, outside a txn) conflicts with one of this request's."""
    mine = [r for r, _ in table if r.lock == lock]
    if all(r.state == "ACQUIRED" for r in mine):
        return "ACQUIRED"
    earlier = [r for r, _ in table if r.lock < lock]
    def txn(r: Row) -> int:  # the txn id blocks() takes: 0 for none
        return 0 if r.txn is None else r.txn + 1

    return "WAITING" if any(blocks(_component(e), txn(e), _component(m), txn(m))
                            for m in mine for e in earlier) else "ACQUIRED"


def deliberate(table: list[tuple[Row, int]], lock: int) -> str:
    """Which documented difference makes the two rules part on `lock` (module docstring); AssertionError
    when none does."""
    state, how = _hive23(table, lock)
    if state == "WAITING":
        assert "blocked by SHARED_WRITE" in how, f"Hive waits for a lock the gateway passes: {table}"
        return "shared writes"
    return "same txn or request" if "same txn or request" in how else "strict FIFO"


# -- one server ------------------------------------------------------------------------------------


def _raised(exc: Exception) -> dict[str, str]:
    return {"raised": type(exc).__name__}


@dataclass
class Side:
    """One server and the ids it answered, in the example's order of creation."""

    client: Any
    idl: Any  # the client of get_open_txns (_clients)
    txns: list[int] = field(default_factory=list)
    locks: list[int | None] = field(default_factory=list)

    def call(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - a declared exception is an answer like any other
            if not isinstance(exc, ht.TException) or type(exc).__module__.startswith("thrift.transport"):
                raise
            return _raised(exc)

    def txn_id(self, index: int | None) -> int:
        if index is None:
            return (self.txns[-1] if self.txns else 0) + 1000  # a txn that does not exist
        return self.txns[index]

    def lock_id(self, index: int | None) -> int:
        taken = [i for i in self.locks if i is not None]
        if index is None or self.locks[index] is None:
            return (max(taken) if taken else 0) + 1000  # a lock that does not exist
        return self.locks[index]  # type: ignore[return-value]

    def txn_index(self, txn_id: int) -> int | str | None:
        if not txn_id:
            return None
        return self.txns.index(txn_id) if txn_id in self.txns else "other"

    def rows(self, request: ht.ShowLocksRequest | None = None) -> list[tuple[Row, int]]:
        got = Client.show_locks(self.client, request or ht.ShowLocksRequest())
        out = []
        for e in got.locks:
            if e.lockid not in self.locks:
                raise AssertionError(f"a lock from outside the example: {e}")
            txn = self.txn_index(e.txnid or 0)
            assert not isinstance(txn, str), e
            out.append((Row(self.locks.index(e.lockid), e.dbname, e.tablename or None, e.partname or None,
                            ht.LockState._VALUES_TO_NAMES[e.state], ht.LockType._VALUES_TO_NAMES[e.type], txn,
                            e.user, e.hostname), e.lockIdInternal or 0))
        return out


def _shown(rows: list[tuple[Row, int]]) -> list[Row]:
    return sorted((r for r, _ in rows), key=lambda r: (r.lock, r.db, r.table or "", r.part or ""))


# -- steps -----------------------------------------------------------------------------------------


@dataclass
class Example:
    hms: Side
    gw: Side
    txn_users: list[str] = field(default_factory=list)
    lock_txns: list[int | None] = field(default_factory=list)
    committed: set[str] = field(default_factory=set)  # the labels of the commits answered, "commit_txn(i)"
    ended: set[int | None] = field(default_factory=set)  # txns a commit or abort step was drawn for
    writes: dict[int, set[str]] = field(default_factory=dict)  # each txn's UPDATE, DELETE, dynamic

    def both(self, step: Callable[[Side], Any]) -> tuple[Any, Any]:
        return step(self.hms), step(self.gw)


def _components(data: Any, in_txn: bool) -> list[ht.LockComponent]:
    scopes = data.draw(st.lists(st.sampled_from(SCOPES), min_size=1, max_size=3, unique=True), label="scopes")
    out = []
    for db, table, part in scopes:
        # Updates and deletes name a table or partition: of a database, Hive 2.3's commit fails (a
        # WRITE_SET row without a table, an internal error).
        kinds = [k for k in (IN_TXN if in_txn else NO_TXN) if table is not None or k[0] != SW]
        kind, op, acid = data.draw(st.sampled_from(kinds), label="kind")
        dynamic = (in_txn and table is not None and part is None and op in (OP.INSERT, OP.UPDATE, OP.DELETE)
                   and data.draw(st.booleans(), label="dynamic partition write"))
        level = ht.LockLevel.DB if table is None else ht.LockLevel.TABLE if part is None else ht.LockLevel.PARTITION
        out.append(ht.LockComponent(type=kind, level=level, dbname=db, tablename=table, partitionname=part,
                                    operationType=op, isAcid=acid, isDynamicPartitionWrite=dynamic))
    return out


def _ours(side: Side, ids: Any) -> list[int | str | None]:
    return sorted((side.txn_index(i) for i in ids if i in side.txns), key=str)


def draw_step(ex: Example, data: Any) -> tuple[str, Callable[[Side], Any], int | None]:
    """A step: its label, what it does on one side (returning a normalized answer), and the index of the
    lock it decides (lock, check_lock) or None."""
    txn_choice = st.one_of(st.none(), st.integers(0, len(ex.txn_users) - 1)) if ex.txn_users else st.none()
    lock_choice = st.one_of(st.none(), st.integers(0, len(ex.lock_txns) - 1)) if ex.lock_txns else st.none()
    kinds = ["open_txns", "lock", "lock", "lock", "show_locks", "get_open_txns", "get_open_txns_info"]
    if ex.txn_users:
        kinds += ["abort_txn", "abort_txns", "commit_txn", "commit_txn", "heartbeat", "heartbeat_txn_range",
                  "lock", "lock"]
    if ex.lock_txns:
        kinds += ["check_lock", "check_lock", "unlock", "heartbeat"]
    kind = data.draw(st.sampled_from(kinds), label="step")
    if kind == "open_txns":
        n, user = data.draw(st.integers(1, 3), label="n"), data.draw(st.sampled_from(USERS), label="user")
        ex.txn_users += [user] * n

        def open_txns(s: Side) -> Any:
            got = s.call(lambda: Client.open_txns(s.client, ht.OpenTxnRequest(n, user, "h1")))
            if isinstance(got, dict):
                return got
            s.txns += got.txn_ids
            return [s.txn_index(i) for i in got.txn_ids]
        return f"open_txns({n}, {user})", open_txns, None
    if kind in ("abort_txn", "commit_txn"):
        t = data.draw(txn_choice, label="txn")
        ex.ended.add(t)
        request = ht.AbortTxnRequest if kind == "abort_txn" else ht.CommitTxnRequest
        method = Client.abort_txn if kind == "abort_txn" else Client.commit_txn
        return f"{kind}({t})", lambda s: s.call(lambda: method(s.client, request(s.txn_id(t)))), None
    if kind == "abort_txns":
        ts = data.draw(st.lists(txn_choice, min_size=1, max_size=3), label="txns")
        ex.ended.update(ts)
        return (f"abort_txns({ts})",
                lambda s: s.call(lambda: Client.abort_txns(s.client, ht.AbortTxnsRequest([s.txn_id(t) for t in ts]))),
                None)
    if kind == "heartbeat":
        t = data.draw(st.one_of(st.just("0"), txn_choice), label="txn")  # "0": the id 0, no txn
        lk = data.draw(st.one_of(st.just("0"), lock_choice), label="lock")

        def heartbeat(s: Side) -> Any:
            request = ht.HeartbeatRequest(lockid=0 if lk == "0" else s.lock_id(lk),
                                          txnid=0 if t == "0" else s.txn_id(t))
            return s.call(lambda: Client.heartbeat(s.client, request))
        return f"heartbeat(txn {t}, lock {lk})", heartbeat, None
    if kind == "heartbeat_txn_range":
        a, b = sorted(data.draw(st.lists(st.integers(0, len(ex.txn_users) - 1), min_size=2, max_size=2),
                                label="range"))
        extra = data.draw(st.integers(0, 2), label="past the end")

        def heartbeat_range(s: Side) -> Any:
            got = s.call(lambda: Client.heartbeat_txn_range(
                s.client, ht.HeartbeatTxnRangeRequest(s.txns[a], s.txns[b] + extra)))
            if isinstance(got, dict):
                return got
            past = lambda ids: sorted(i - s.txns[b] for i in ids if i > s.txns[b])  # noqa: E731
            return {"aborted": _ours(s, got.aborted), "nosuch": _ours(s, got.nosuch),
                    "nosuch past the end": past(got.nosuch)}
        return f"heartbeat_txn_range({a}, {b}+{extra})", heartbeat_range, None
    if kind == "get_open_txns":
        def open_txns_of(s: Side) -> Any:
            got = s.idl.get_open_txns()
            return {"hwm": s.txn_index(got.txn_high_water_mark), "open": _ours(s, got.open_txns)}
        return "get_open_txns", open_txns_of, None
    if kind == "get_open_txns_info":
        def info(s: Side) -> Any:
            got = Client.get_open_txns_info(s.client)
            return {"hwm": s.txn_index(got.txn_high_water_mark),
                    "txns": sorted(((s.txn_index(t.id), ht.TxnState._VALUES_TO_NAMES[t.state], t.user, t.hostname)
                                    for t in got.open_txns if t.id in s.txns), key=str)}
        return "get_open_txns_info", info, None
    if kind == "show_locks":
        scope = data.draw(st.one_of(st.none(), st.sampled_from(SCOPES)), label="filter")

        def show(s: Side) -> Any:
            request = ht.ShowLocksRequest() if scope is None else ht.ShowLocksRequest(*scope)
            got = s.call(lambda: s.rows(request))
            return got if isinstance(got, dict) else _shown(got)
        return f"show_locks({scope})", show, None
    if kind == "lock":
        in_txn = bool(ex.txn_users) and data.draw(st.booleans(), label="in a txn")
        live = [i for i in range(len(ex.txn_users)) if i not in ex.ended]
        # Mostly a txn no step ended yet (so that txns hold locks side by side), sometimes any.
        t = (data.draw(st.sampled_from(live) if live and data.draw(st.integers(0, 4), label="live") else
                       st.integers(0, len(ex.txn_users) - 1), label="txn") if in_txn else None)
        components = _components(data, t is not None)
        for c in components if t is not None else ():
            if c.operationType in (OP.UPDATE, OP.DELETE):
                ex.writes.setdefault(t, set()).add(  # type: ignore[arg-type]
                    "dynamic" if c.isDynamicPartitionWrite else OP._VALUES_TO_NAMES[c.operationType])
        user = ex.txn_users[t] if t is not None else data.draw(st.sampled_from(USERS), label="user")
        index = len(ex.lock_txns)
        ex.lock_txns.append(t)

        def lock(s: Side) -> Any:
            request = ht.LockRequest(components, s.txn_id(t) if t is not None else None, user, "h1")
            got = s.call(lambda: Client.lock(s.client, request))
            if isinstance(got, dict):
                s.locks.append(None)  # refused: the index names no lock
                return got
            s.locks.append(got.lockid)
            return ht.LockState._VALUES_TO_NAMES[got.state]

        def components_text() -> str:
            return ", ".join(f"{ht.LockType._VALUES_TO_NAMES[c.type]} {c.dbname}.{c.tablename}/{c.partitionname} "
                             f"{OP._VALUES_TO_NAMES[c.operationType]}{' acid' if c.isAcid else ''}"
                             f"{' dynamic' if c.isDynamicPartitionWrite else ''}" for c in components)
        return f"lock #{index} (txn {t}, {user}): {components_text()}", lock, index
    lk = data.draw(lock_choice, label="lock")
    if kind == "check_lock":
        def check(s: Side) -> Any:
            got = s.call(lambda: Client.check_lock(s.client, ht.CheckLockRequest(s.lock_id(lk))))
            return got if isinstance(got, dict) else ht.LockState._VALUES_TO_NAMES[got.state]
        return f"check_lock(#{lk})", check, lk
    return (f"unlock(#{lk})", lambda s: s.call(lambda: Client.unlock(s.client, ht.UnlockRequest(s.lock_id(lk)))),
            None)


class Parted(Exception):
    """The two servers' lock tables parted for a documented reason: the example stops comparing."""


def run_step(ex: Example, label: str, step: Callable[[Side], Any], decides: int | None, tally: dict[str, int],
             notes: list[str]) -> None:
    """One step on both servers, compared (module docstring); Parted when they part as documented."""
    before = ex.hms.rows(), ex.gw.rows()
    theirs, ours = ex.both(step)
    after = ex.hms.rows(), ex.gw.rows()
    notes.append(f"{label}: Hive {theirs}, gateway {ours}")
    if decides is not None and isinstance(theirs, str) and isinstance(ours, str):
        # Each server by its own rule, over its own lock table as the decision found it: the table after
        # the step with the decided request's rows in their state before it (WAITING when just taken);
        # a decision writes nothing else.
        hive_rule = hive23_decision(_as_found(after[0], before[0], decides), decides)
        gateway_rule = gateway_decision(_as_found(after[1], before[1], decides), decides)
        assert theirs == hive_rule, f"{label}: Hive answered {theirs}, Hive 2.3's rule says {hive_rule} (the model)"
        assert ours == gateway_rule, f"{label}: the gateway answered {ours}, its rule says {gateway_rule}"
        if theirs != ours:
            reason = deliberate(after[0], decides)
            tally[reason] = tally.get(reason, 0) + 1
            raise Parted(f"{label}: {reason}")
    if label.startswith("commit_txn"):
        writes = ex.writes.get(int(label[len("commit_txn("):-1]), set()) if label[-2].isdigit() else set()
        if theirs is None and ours == {"raised": "TxnAbortedException"}:
            dynamic = any("dynamic" in w for w in ex.writes.values())
            why = "dynamic writes" if dynamic else "two deletes" if writes == {"DELETE"} else None
            assert why, f"{label}: Hive committed, the gateway aborted, with no documented reason ({ex.writes})"
            tally[why] = tally.get(why, 0) + 1
            raise Parted(f"{label}: {why}")
        if label in ex.committed and theirs == {"raised": "NoSuchTxnException"} and ours is None:
            tally["commit again"] = tally.get("commit again", 0) + 1
            ours = theirs
        if theirs is None and ours is None:
            ex.committed.add(label)
    assert theirs == ours, f"{label}: Hive answered {theirs}, the gateway {ours}"
    assert _shown(after[0]) == _shown(after[1]), (f"{label}: SHOW LOCKS after it, Hive {_shown(after[0])}, "
                                                  f"gateway {_shown(after[1])}")


def _as_found(after: list[tuple[Row, int]], before: list[tuple[Row, int]], lock: int) -> list[tuple[Row, int]]:
    was = {(r.lock, n): r.state for r, n in before}
    return [(replace(r, state=was.get((r.lock, n), "WAITING")) if r.lock == lock else r, n) for r, n in after]


def clean_up(ex: Example) -> None:
    """Abort every txn of the example and release every standalone lock, on both sides; nothing is left."""
    for s in (ex.hms, ex.gw):
        if s.txns:
            Client.abort_txns(s.client, ht.AbortTxnsRequest(list(s.txns)))
        for lock_id in filter(None, s.locks):
            with contextlib.suppress(ht.NoSuchLockException, ht.TxnOpenException):
                Client.unlock(s.client, ht.UnlockRequest(lock_id))
        left = Client.show_locks(s.client, ht.ShowLocksRequest()).locks
        assert not left, left


async def run_example(servers: Servers, data: Any) -> None:
    """Draws here (Hypothesis' context is this thread's), calls in a worker thread (blocking clients,
    and the gateway serves on this loop)."""
    ex = Example(Side(servers.hms, servers.hms_idl), Side(servers.gw, servers.gw_idl))
    tally = servers.tally
    parted = False
    try:
        for _ in range(data.draw(st.integers(*STEPS), label="steps")):
            # Drawn whatever the servers answer (Hypothesis replays draws), run until the two part.
            label, step, decides = draw_step(ex, data)
            if parted:
                continue
            notes: list[str] = []
            try:
                await asyncio.to_thread(run_step, ex, label, step, decides, tally, notes)
            except Parted as why:
                notes.append(f"parted: {why}")
                parted = True
            except Exception as exc:
                notes.append(f"failed: {exc!r}")
                raise
            finally:
                for text in notes:
                    note(text)
        if not parted:
            tally["agreed to the end"] = tally.get("agreed to the end", 0) + 1
    finally:
        await asyncio.to_thread(clean_up, ex)


# -- the servers -----------------------------------------------------------------------------------


@dataclass
class Servers:
    hms: Any
    gw: Any
    hms_idl: Any
    gw_idl: Any
    tally: dict[str, int] = field(default_factory=dict)


def _connect(address: str) -> Any:
    host, _, port = address.rpartition(":")
    socket = TSocket.TSocket(host, int(port))
    socket.setTimeout(30_000)  # a call that hangs fails the test instead
    client = hmsclient.HMSClient(iprot=TBinaryProtocol.TBinaryProtocol(TTransport.TBufferedTransport(socket)))
    client.open()
    return client


def _create_objects(client: Any) -> None:
    Client.create_database(client, ht.Database("ldb", "", None, {}))
    Client.create_table(client, _table("ldb", "t"))
    Client.create_table(client, _table("ldb", "u", ()))
    for ds in ("1", "2"):
        Client.add_partition(client, _part("ldb", "t", [ds]))


@contextlib.contextmanager
def _clients(hms_address: str, gw_address: str) -> Iterator[tuple[Any, Any, Any, Any]]:
    hms, gw = _connect(hms_address), _connect(gw_address)
    # get_open_txns: Hive 2.3 answers a set (hmsclient's IDL), the gateway Hive 3's list and abortedBits,
    # which hmsclient's Python Thrift cannot skip (it decodes a binary as UTF-8): the gateway's own IDL.
    gw_idl = thriftpy2.rpc.make_client(SERVICE, "127.0.0.1", int(gw_address.rpartition(":")[2]), timeout=30_000)
    try:
        yield hms, gw, hms, gw_idl
    finally:
        for client in (hms, gw, gw_idl):
            client.close()


@pytest.fixture(scope="module")
async def servers(pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Servers]:
    root = tmp_path_factory.mktemp("lock-differential")
    async with contextlib.AsyncExitStack() as stack:
        hms = await stack.enter_async_context(hms_process(
            workdir=root / "hms", backing="postgresql", transactions=True, quick_start=True,
            jvm_args=["-Ddatanucleus.connectionPoolingType=dbcp", f"-Dhive.txn.timeout={TIMEOUT}"]))
        gw = await stack.enter_async_context(running_gateway(
            await pg_cluster.fresh_database(),
            **{"hive.metastore.warehouse.dir": str(root / "gateway-warehouse"), "hive.txn.timeout": TIMEOUT}))
        clients = stack.enter_context(_clients(hms.address, f"127.0.0.1:{gw.thrift_port}"))
        await asyncio.to_thread(_create_objects, clients[0])
        await asyncio.to_thread(_create_objects, clients[1])
        servers = Servers(*clients)
        yield servers
        print(f"\nlock differential: {servers.tally}")


PHASES = [Phase.explicit, Phase.reuse, Phase.generate]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=PHASES)
@given(data=st.data())
async def test_txn_and_lock_calls_are_answered_as_hive_metastore_does(servers: Servers, data: Any) -> None:
    await run_example(servers, data)


@pytest.mark.soak
@pytest.mark.timeout(0)  # one test for every example, past pyproject's 300 s per test
@settings(max_examples=SOAK_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES)
@given(data=st.data())
async def test_txn_and_lock_calls_are_answered_as_hive_metastore_does_soak(servers: Servers, data: Any) -> None:
    await run_example(servers, data)


def test_the_models_part_where_the_documented_differences_say() -> None:
    """The two rules on small tables: a reader passes a waiting writer in Hive 2.3 only; two SHARED_WRITEs."""
    def row(lock: int, scope: Scope, state: str, kind: str, txn: int | None = None) -> tuple[Row, int]:
        return Row(lock, *scope, state, kind, txn, "alice", "h1"), 1

    t = ("ldb", "t", None)
    table = [row(0, t, "ACQUIRED", "SHARED_READ"), row(1, t, "WAITING", "EXCLUSIVE"),
             row(2, t, "WAITING", "SHARED_READ")]
    assert hive23_decision(table, 2) == "ACQUIRED" and gateway_decision(table, 2) == "WAITING"
    assert deliberate(table, 2) == "strict FIFO"
    table = [row(0, t, "ACQUIRED", "SHARED_WRITE", 0), row(1, t, "WAITING", "SHARED_WRITE", 1)]
    assert hive23_decision(table, 1) == "WAITING" and gateway_decision(table, 1) == "ACQUIRED"
    assert deliberate(table, 1) == "shared writes"
    assert LockLevel.DB.value == "d"


async def test_two_txns_shared_writes_part_as_documented(servers: Servers) -> None:
    """The "shared writes" parting, drawn rarely: txn 0's UPDATE of ldb.t holds SHARED_WRITE; txn 1's
    UPDATE of ldb.t/ds=1 waits in Hive 2.3 and is granted by the gateway, each as its model says."""
    ex = Example(Side(servers.hms, servers.hms_idl), Side(servers.gw, servers.gw_idl))

    def update(part: str | None) -> ht.LockComponent:
        return ht.LockComponent(type=SW, level=ht.LockLevel.TABLE if part is None else ht.LockLevel.PARTITION,
                                dbname="ldb", tablename="t", partitionname=part, operationType=OP.UPDATE,
                                isAcid=True, isDynamicPartitionWrite=False)

    def run() -> tuple[Any, Any, list[tuple[Row, int]], list[tuple[Row, int]]]:
        answers = []
        for s in (ex.hms, ex.gw):
            s.txns += Client.open_txns(s.client, ht.OpenTxnRequest(2, "alice", "h1")).txn_ids
            for txn, part in ((0, None), (1, "ds=1")):
                got = Client.lock(s.client, ht.LockRequest([update(part)], s.txns[txn], "alice", "h1"))
                s.locks.append(got.lockid)
            answers.append(ht.LockState._VALUES_TO_NAMES[got.state])
        return answers[0], answers[1], ex.hms.rows(), ex.gw.rows()

    try:
        theirs, ours, hms_rows, gw_rows = await asyncio.to_thread(run)
    finally:
        await asyncio.to_thread(clean_up, ex)
    assert (theirs, ours) == ("WAITING", "ACQUIRED")
    assert hive23_decision(_as_found(hms_rows, [], 1), 1) == theirs
    assert gateway_decision(_as_found(gw_rows, [], 1), 1) == ours
    assert deliberate(_as_found(hms_rows, [], 1), 1) == "shared writes"


async def test_commits_part_only_as_documented(servers: Servers) -> None:
    """The commit partings, drawn rarely: txn a commits a write to ldb.t, then txn b (opened with a, so the
    two overlap) commits its own. Two DELETEs of one partition ("two deletes") and a dynamic-partition
    UPDATE without add_dynamic_partitions on either side ("dynamic writes"): Hive 2.3 commits b, the
    gateway aborts it. An UPDATE of the table and one of a partition of it: both commit on both."""
    def write(op: int, part: str | None = None, dynamic: bool = False) -> ht.LockComponent:
        return ht.LockComponent(type=SW, level=ht.LockLevel.TABLE if part is None else ht.LockLevel.PARTITION,
                                dbname="ldb", tablename="t", partitionname=part, operationType=op, isAcid=True,
                                isDynamicPartitionWrite=dynamic)

    cases = {"two deletes": (write(OP.DELETE, "ds=1"), write(OP.DELETE, "ds=1")),
             "dynamic writes, first": (write(OP.UPDATE, dynamic=True), write(OP.UPDATE)),
             "dynamic writes, second": (write(OP.UPDATE), write(OP.UPDATE, dynamic=True)),
             "table and partition": (write(OP.UPDATE), write(OP.UPDATE, "ds=1"))}

    def run(s: Side) -> dict[str, Any]:
        out = {}
        for case, (first, second) in cases.items():
            a, b = Client.open_txns(s.client, ht.OpenTxnRequest(2, "alice", "h1")).txn_ids
            s.txns += [a, b]
            for txn, component in ((a, first), (b, second)):
                s.locks.append(Client.lock(s.client, ht.LockRequest([component], txn, "alice", "h1")).lockid)
                out[case] = s.call(lambda: Client.commit_txn(s.client, ht.CommitTxnRequest(txn)))  # noqa: B023
        return out

    ex = Example(Side(servers.hms, servers.hms_idl), Side(servers.gw, servers.gw_idl))
    try:
        theirs, ours = await asyncio.to_thread(ex.both, run)
    finally:
        await asyncio.to_thread(clean_up, ex)
    aborted = {"raised": "TxnAbortedException"}
    assert theirs == dict.fromkeys(cases)
    assert ours == {"two deletes": aborted, "dynamic writes, first": aborted, "dynamic writes, second": aborted,
                    "table and partition": None}


# -- txn and lock ids at the edges: one fixed sequence -----------------------------------------------

# label -> (Hive 2.3.10's answer, the gateway's, why they differ). Each is asserted as written: an answer that
# changes on either side fails the test, and so does any other difference.
EDGE_DELIBERATE: dict[str, tuple[Any, Any, str]] = {
    "open_txns(0)": ([], {"raised": "TApplicationException"},
                     "refused, as Hive 3 and 4 refuse it (TxnHandler.openTxns: MetaException \"Invalid input for "
                     "number of txns: 0\", which open_txns does not declare: TApplicationException); Hive 2.3 opens "
                     "none"),
    "heartbeat_txn_range(b + 1, b + 1001)": (
        {"aborted": {"ours": [], "not txn ids": [], "others": 0},
         "nosuch": {"ours": [], "not txn ids": [], "others": 1001}},
        {"raised": "TApplicationException"},
        "a range over more txns than hive.txn.max.open.batch, more than one open_txns gives (Hive's streaming clients "
        "heartbeat the batch they opened), is refused: a bound on the work of one call; Hive heartbeats any range"),
    "abort_txns(the txns open_txns(1001) opened, and b)": (
        None, {"raised": "NoSuchTxnException"},
        "more txns than hive.txn.max.open.batch in one call are refused (the method's one declared exception), "
        "nothing aborted: a bound on the work of one call; Hive aborts any number"),
}


def _edge_range(s: Side, got: Any) -> Any:
    """A heartbeat_txn_range answer: the example's txns by index, ids of no txn (0 or below) as they are,
    and how many other txns (the module's earlier examples' or none yet) each set holds."""
    if isinstance(got, dict):
        return got
    return {key: {"ours": _ours(s, ids), "not txn ids": sorted(i for i in ids if i <= 0),
                  "others": sum(1 for i in ids if i > 0 and i not in s.txns)}
            for key, ids in (("aborted", got.aborted), ("nosuch", got.nosuch))}


def edge_steps(s: Side) -> dict[str, Any]:
    """The txn and lock calls with ids at the edges (0, negative, empty, over hive.txn.max.open.batch) on one
    server, each answer normalized; the example's txns are aborted at the end."""
    out: dict[str, Any] = {}
    opened: list[int] = []  # by open_txns over the batch size: aborted in one call of at most that size

    def step(label: str, call: Callable[[], Any], normal: Callable[[Any], Any] = lambda got: got) -> None:
        got = s.call(call)
        out[label] = got if isinstance(got, dict) else normal(got)

    def info(got: Any) -> Any:
        return sorted((s.txn_index(t.id), ht.TxnState._VALUES_TO_NAMES[t.state]) for t in got.open_txns
                      if t.id in s.txns)

    s.txns += Client.open_txns(s.client, ht.OpenTxnRequest(2, "alice", "h1")).txn_ids
    a, b = s.txns
    try:
        # abort_txns skips what is no open txn (Hive 2.3 to 4: an UPDATE ... WHERE TXN_ID IN (...) AND
        # TXN_STATE = 'o'): an id of 0 or below too.
        step("abort_txns([])", lambda: Client.abort_txns(s.client, ht.AbortTxnsRequest([])))
        step("abort_txns([0])", lambda: Client.abort_txns(s.client, ht.AbortTxnsRequest([0])))
        step("abort_txns([-1, 0])", lambda: Client.abort_txns(s.client, ht.AbortTxnsRequest([-1, 0])))
        step("abort_txns([0, a])", lambda: Client.abort_txns(s.client, ht.AbortTxnsRequest([0, a])))
        step("txns after abort_txns([0, a])", lambda: Client.get_open_txns_info(s.client), info)
        # heartbeat_txn_range heartbeats each id of the range; Hive's heartbeatTxn of txn 0 does nothing, a
        # negative id is no txn's (nosuch); min above max fails (Hive: an internal error).
        for label, low, high in (("0, 0", 0, 0), ("-2, 0", -2, 0), ("a, b", a, b), ("b + 5, b + 3", b + 5, b + 3)):
            step(f"heartbeat_txn_range({label})", lambda: Client.heartbeat_txn_range(  # noqa: B023
                s.client, ht.HeartbeatTxnRangeRequest(low, high)), lambda got: _edge_range(s, got))  # noqa: B023
        # unlock of a lock that does not exist returns (Hive's unlock "to make the operation idempotent"), an id
        # of 0 or below too; check_lock of one is NoSuchLockException.
        for lock_id in (0, -1):
            step(f"unlock({lock_id})", lambda: Client.unlock(s.client, ht.UnlockRequest(lock_id)))  # noqa: B023
        step("check_lock(0)", lambda: Client.check_lock(s.client, ht.CheckLockRequest(0)))
        # open_txns opens at most hive.txn.max.open.batch (Hive 2.3's and 4's cap: the first that many; 3.1's
        # TxnHandler.openTxns caps a variable its inner openTxns does not read), fewer than 1 none; abort_txns and
        # heartbeat_txn_range over more than that: EDGE_DELIBERATE.
        step("heartbeat_txn_range(b + 1, b + 1001)", lambda: Client.heartbeat_txn_range(
            s.client, ht.HeartbeatTxnRangeRequest(b + 1, b + 1001)), lambda got: _edge_range(s, got))

        def open_many() -> Any:
            ids = Client.open_txns(s.client, ht.OpenTxnRequest(1001, "alice", "h1")).txn_ids
            opened.extend(ids)
            return {"opened": len(ids), "consecutive after b": ids == list(range(b + 1, b + 1 + len(ids)))}
        step("open_txns(1001)", open_many)
        for n in (0, -1):
            step(f"open_txns({n})", lambda: Client.open_txns(s.client, ht.OpenTxnRequest(n, "alice", "h1")),  # noqa: B023
                 lambda got: got.txn_ids)
        step("abort_txns(the txns open_txns(1001) opened, and b)",
             lambda: Client.abort_txns(s.client, ht.AbortTxnsRequest([*opened, b])))
    finally:
        for chunk in (s.txns, opened):
            if chunk:
                Client.abort_txns(s.client, ht.AbortTxnsRequest(list(chunk)))
    return out


async def test_txn_and_lock_ids_at_the_edges_are_answered_as_hive_metastore_does(servers: Servers) -> None:
    """Ids no txn or lock has (0, negative), empty requests and requests over hive.txn.max.open.batch (1000 on
    both), each call once on both servers: the same answers but for EDGE_DELIBERATE."""
    ex = Example(Side(servers.hms, servers.hms_idl), Side(servers.gw, servers.gw_idl))
    theirs, ours = await asyncio.to_thread(ex.both, edge_steps)
    assert list(theirs) == list(ours)
    for label, (hive, gateway, why) in EDGE_DELIBERATE.items():
        assert (theirs[label], ours[label]) == (hive, gateway), f"{label} ({why}): Hive {theirs[label]}, gateway " \
                                                                f"{ours[label]}"
    differing = {label: (theirs[label], ours[label]) for label in theirs
                 if label not in EDGE_DELIBERATE and theirs[label] != ours[label]}
    assert not differing, differing
    # Real answers, not two sides failing alike.
    assert theirs["txns after abort_txns([0, a])"] == [(0, "ABORTED"), (1, "OPEN")]
    assert theirs["open_txns(1001)"] == {"opened": 1000, "consecutive after b": True}
    assert theirs["heartbeat_txn_range(-2, 0)"]["nosuch"] == {"ours": [], "not txn ids": [-2, -1], "others": 0}
