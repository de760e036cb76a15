"""Every method of Hive's ThriftHiveMetastore service (and its FacebookService base), driven with
random and hostile arguments built from the thriftpy2 specs of the loaded IDL: unset fields (required
ones too), empty strings, NULs, strings over the gateway's limits, extreme and negative integers,
unknown enum values, empty and large lists and maps, names that exist and names that do not, nested
structs to a bounded depth. Each call goes over a real Thrift connection to a real gateway on
127.0.0.1. For every call:

- the answer is a success, or an exception the method declares, or (only for a method that declares
  none, or one this gateway does not serve: UNKNOWN_METHOD) a TApplicationException; never the
  gateway's internal-error answer, and the gateway logs no "internal error in thrift";
- every error message stays under a bound, and the connection answers the next call;
- a call that fails changes nothing: the catalog (databases, tables, partition names), the
  notification log's head, the open txns and the locks are as before, except that a txn the call
  names may be aborted (TxnAbortedException: Hive's rule, one ABORT_TXN event).

`make test` runs a short version (every method a few times); the `soak` run takes many more.
New methods are picked up from the IDL with no change here.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import Counter
from typing import Any, AsyncIterator

import pytest
import thriftpy2.rpc
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from thriftpy2.thrift import TApplicationException, TException, TType

from gateway.app import Gateway
from gateway.thrift.errors import MAX_MESSAGE_CHARS
from gateway.thrift.handler import HiveMetastoreHandler
from gateway.thrift.idl import SERVICE, hms
from tests.conftest import running_gateway
from tests.thrift_client import thrift_table

# Excluded, each for its reason:
EXCLUDED = {
    # oneway no-ops (fb303): no answer to check, and a thriftpy2 client does not wait for one
    "shutdown": "oneway",
    "reinitialize": "oneway",
}
METHODS = sorted(set(SERVICE.thrift_services) - set(EXCLUDED))
CALL_TIMEOUT_MS = 20_000  # nothing may hang: a call over this fails the test (the client's socket time-out)
INTERNAL = "internal error (request id"
MAX_DEPTH = 3  # nested structs deeper than this are left unset

# -- values: plausible ones (so calls get past the first check), and hostile ones ---------------------

DB, TABLE, ACID, FLAT = "db", "t", "acid", "flat"
PARTS = [("2024-01-01", "1"), ("2024-01-02", "2")]
NAMES = [DB, TABLE, ACID, FLAT, "DB", "nope", "@hive#db", "@spark#db", "hive", "db.t", "db.acid",
         "ds=2024-01-01/hr=1", "ds=2024-01-02/hr=2", "ds=2024-01-01/hr=01", "2024-01-01", "1", "hr=1", "ds", "hr",
         "string", "int", "bigint", "array<int>", "MANAGED_TABLE", "EXTERNAL_TABLE", "VIRTUAL_VIEW", "ds > 'a'",
         "hr = 1", "db.t:1:9223372036854775807::", "5:100::", "__HIVE_DEFAULT_PARTITION__", "*", "/tmp/x", "true",
         "alice", "public", "admin", "hive.metastore.client.socket.timeout", "fn", "db.fn"]
HOSTILE = ["", "a\x00b", "\x00", "x" * 5000, "x" * 70_000, "(" * 500 + "hr=1" + ")" * 500, "NOT " * 3000 + "hr=1",
           "ds='\x00'", "db.t:-1:9223372036854775807::", "db.t:3:9:9:", "-5:1::", "%00", "ds=%00/hr=1",
           "ds=a/hr=" + "9" * 40, "é\u2028\U0001f600", "'", "\\", "ds=" + "x" * 5000 + "/hr=1", "@", "@hive#",
           "#", "@hive", "db." + "x" * 300]
_PLAUSIBLE = st.sampled_from(NAMES)
# Plausible values three times in five, so calls often get past the first check to the deeper ones.
STRINGS = st.one_of(_PLAUSIBLE, _PLAUSIBLE, _PLAUSIBLE, st.sampled_from(HOSTILE), st.text(max_size=20))
I16 = st.one_of(st.sampled_from([0, 1, -1, 2**15 - 1, -(2**15)]), st.integers(-(2**15), 2**15 - 1))
I32 = st.one_of(st.sampled_from([0, 1, 2, 3, -1, -2, 7, 100, 2**31 - 1, -(2**31)]), st.integers(-(2**31), 2**31 - 1))
I64 = st.one_of(I32, st.sampled_from([2**63 - 1, -(2**63), 2**40]), st.integers(-(2**63), 2**63 - 1))
SCALARS: dict[int, st.SearchStrategy[Any]] = {
    TType.BOOL: st.booleans(),
    TType.BYTE: st.integers(-128, 127),
    TType.I16: I16,
    TType.I32: I32,
    TType.I64: I64,
    TType.DOUBLE: st.floats(),
    TType.STRING: STRINGS,
    TType.BINARY: st.binary(max_size=64),
}


def _enum(cls: Any) -> st.SearchStrategy[int]:
    known = sorted(cls._VALUES_TO_NAMES)
    return st.one_of(st.sampled_from(known), st.sampled_from([-1, max(known) + 1, 99, 2**31 - 1, -(2**31)]))


def values(ttype: int, arg: Any, depth: int) -> st.SearchStrategy[Any]:
    """Values of one thriftpy2 type (`ttype` and its spec argument: enum, struct, element or key and
    value types), None where a nested struct would go deeper than MAX_DEPTH."""
    if ttype == TType.I32 and arg is not None:
        return _enum(arg)
    if ttype in SCALARS:
        return SCALARS[ttype]
    if ttype == TType.STRUCT:
        return st.none() if depth >= MAX_DEPTH else structs(arg, depth + 1)
    if ttype in (TType.LIST, TType.SET):
        element_type, element_arg = arg if isinstance(arg, tuple) else (arg, None)
        element = values(element_type, element_arg, depth)
        few = st.lists(element, max_size=3)
        if element_type in SCALARS:  # many: over the batch limits, cheap to send
            return st.one_of(few, few, st.lists(element, min_size=1001, max_size=1001).map(list))
        return few
    if ttype == TType.MAP:
        (key_type, key_arg), (value_type, value_arg) = ((x, None) if isinstance(x, int) else x for x in arg)
        if key_type not in SCALARS:  # map<list<string>, string> (SkewedInfo): Python cannot key a dict by lists
            return st.just({})
        keys, vals = values(key_type, key_arg, depth), values(value_type, value_arg, depth)
        return st.one_of(st.dictionaries(keys, vals, max_size=3),
                         st.dictionaries(st.text(min_size=1, max_size=8), st.just("v"), min_size=300, max_size=300))
    raise AssertionError(f"no strategy for Thrift type {ttype}")


def _field(spec: tuple[Any, ...], depth: int) -> st.SearchStrategy[Any]:
    ttype, arg = spec[0], (spec[2] if len(spec) == 4 else None)
    # unset now and then, a required field too (what a careless client's encoder sends)
    return st.one_of(values(ttype, arg, depth), values(ttype, arg, depth), values(ttype, arg, depth), st.none())


@st.composite
def structs(draw: st.DrawFn, cls: Any, depth: int = 0) -> Any:
    return cls(**{spec[1]: draw(_field(spec, depth)) for _, spec in sorted(cls.thrift_spec.items())})


@st.composite
def arguments(draw: st.DrawFn, method: str) -> list[Any]:
    """The positional arguments of one call of `method`."""
    spec = getattr(SERVICE, f"{method}_args").thrift_spec
    return [draw(_field(field, 0)) for _, field in sorted(spec.items())]


def declared(method: str) -> tuple[type, ...]:
    return tuple(spec[2] for fid, spec in getattr(SERVICE, f"{method}_result").thrift_spec.items() if fid != 0)


# -- the gateway, its fixed world, and what "changed nothing" compares ---------------------------------


class World:
    def __init__(self, gw: Gateway, port: int, caplog: pytest.LogCaptureFixture) -> None:
        self.gw = gw
        self.client = thriftpy2.rpc.make_client(SERVICE, "127.0.0.1", port, timeout=CALL_TIMEOUT_MS)
        self.caplog = caplog
        self.outcomes: Counter[str] = Counter()  # method and outcome, printed with -s: what the run reached
        self.known: tuple[Any, ...] | None = None  # the state now, when known

    async def call(self, method: str, *args: Any) -> Any:
        return await asyncio.to_thread(getattr(self.client, method), *args)

    def _state(self) -> tuple[Any, ...]:
        """Every database, table and partition name, the log's head, the open txns and the locks."""
        c = self.client
        tables: list[Any] = []
        dbs = sorted(c.get_all_databases())
        for db in dbs:
            for name in sorted(c.get_all_tables(db)):
                try:
                    parts: Any = sorted(c.get_partition_names(db, name, -1))
                except TException as exc:
                    parts = type(exc).__name__
                tables.append((db, name, parts))
        head = c.get_current_notificationEventId().eventId
        txns = sorted((t.id, t.state) for t in c.get_open_txns_info().open_txns)
        locks = sorted((lk.lockid, lk.state) for lk in c.show_locks(hms.ShowLocksRequest()).locks or [])
        return dbs, tables, head, txns, locks

    async def state(self) -> tuple[Any, ...]:
        if self.known is None:
            self.known = await asyncio.to_thread(self._state)
        return self.known

    async def build(self) -> None:
        """The fixed world (again, where a successful call dropped part of it)."""
        dbs = await self.call("get_all_databases")
        if DB not in dbs:
            await self.call("create_database", hms.Database(name=DB, description="", parameters={}))
        tables = await self.call("get_all_tables", DB)
        if TABLE not in tables:
            await self.call("create_table", thrift_table(TABLE, keys=("ds", "hr")))
        if FLAT not in tables:
            await self.call("create_table", thrift_table(FLAT))
        if ACID not in tables:
            await self.call("create_table", thrift_table(ACID, transactional="true"))
        have = set(await self.call("get_partition_names", DB, TABLE, -1))
        for ds, hr in PARTS:
            if f"ds={ds}/hr={hr}" not in have:
                await self.call("add_partition", hms.Partition(
                    values=[ds, hr], dbName=DB, tableName=TABLE, parameters={},
                    sd=thrift_table(TABLE).sd))
        self.known = None

    def internal_errors(self) -> list[str]:
        return [r.getMessage() for r in self.caplog.records if "internal error in thrift" in r.getMessage()]


@pytest.fixture
async def world(pg_dsn: str, caplog: pytest.LogCaptureFixture) -> AsyncIterator[World]:
    caplog.set_level(logging.ERROR, logger="gateway")
    async with running_gateway(pg_dsn) as gw:
        w = World(gw, gw.thrift_port, caplog)
        try:
            await w.build()
            yield w
        finally:
            print("\n".join(f"{n:5d} {outcome}" for outcome, n in sorted(w.outcomes.items())))
            w.client.close()


async def _check_round(world: World, calls: list[tuple[str, list[Any]]]) -> None:
    """Every call checked; the failures of the whole round told together (one per method), each
    with its arguments (the round is not shrunk: it would take minutes and the arguments are here)."""
    failures: dict[str, str] = {}
    for method, args in calls:
        try:
            await _check_one_call(world, method, args)
        except AssertionError as exc:
            failures.setdefault(method, f"{str(exc).splitlines()[0][:400]}\n    arguments: {repr(args)[:600]}")
            await world.build()
    assert not failures, f"{len(failures)} method(s) failed:\n" + "\n".join(failures.values())


async def _check_one_call(world: World, method: str, args: list[Any]) -> None:
    before = await world.state()
    logged = len(world.internal_errors())
    served = hasattr(HiveMetastoreHandler, method)
    try:
        await world.call(method, *args)
    except TApplicationException as exc:
        message = exc.message or ""
        world.outcomes[f"{method} TApplicationException {exc.type}"] += 1
        if served:
            assert not declared(method), f"{method} answered TApplicationException {exc.type}: {message[:300]}"
        else:
            assert exc.type == TApplicationException.UNKNOWN_METHOD, f"{method}: {exc.type} {message[:300]}"
        assert INTERNAL not in message, f"{method}: {message[:300]}"
        assert len(message) <= MAX_MESSAGE_CHARS + 100, f"{method}: a {len(message)}-character message"
        failed: Exception | None = exc
    except declared(method) as exc:
        message = getattr(exc, "message", None) or ""
        world.outcomes[f"{method} {type(exc).__name__}"] += 1
        assert INTERNAL not in message, f"{method} answered an internal error: {message[:300]}"
        assert len(message) <= MAX_MESSAGE_CHARS + 100, f"{method}: a {len(message)}-character message"
        failed = exc
    else:
        world.outcomes[f"{method} OK"] += 1
        failed = None
    assert world.internal_errors()[logged:] == [], f"{method} logged an internal error"
    assert await world.call("getVersion")  # the connection still answers
    world.known = None
    after = await world.state()
    if failed is None:
        if after != before:
            await world.build()  # a successful write: the fixed world again for the next call
        return
    detail = f"{method} failed ({type(failed).__name__}: {str(failed)[:200]}) and changed state"
    if isinstance(failed, hms.TxnAbortedException):  # Hive's rule: the txn is aborted, nothing else
        assert after[:2] == before[:2] and after[2] - before[2] <= 1, detail
    else:
        assert after == before, detail


@st.composite
def rounds(draw: st.DrawFn) -> list[tuple[str, list[Any]]]:
    """One call of every method, in a random order."""
    order = draw(st.permutations(METHODS))
    return [(method, draw(arguments(method))) for method in order]


NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]
EXAMPLES = int(os.environ.get("THRIFT_PROPERTY_EXAMPLES", "2"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=NO_SHRINK)
@given(calls=rounds())
async def test_every_thrift_method_answers_hostile_arguments_cleanly(
        world: World, calls: list[tuple[str, list[Any]]]) -> None:
    await _check_round(world, calls)


@pytest.mark.soak
@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), phases=NO_SHRINK)
@given(calls=rounds())
async def test_every_thrift_method_answers_hostile_arguments_cleanly_soak(
        world: World, calls: list[tuple[str, list[Any]]]) -> None:
    await _check_round(world, calls)


def test_every_idl_method_is_driven() -> None:
    """Every method the IDL declares is driven but those excluded for a reason (162 when this was written)."""
    assert set(METHODS) | set(EXCLUDED) == set(SERVICE.thrift_services)
    assert len(METHODS) >= 160
