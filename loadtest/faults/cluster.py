"""The fault suite's system under test: an embedded PostgreSQL it can stop and start, three caching
gateway processes it can kill, stop and replace, and a cache-off ORACLE gateway (every read it answers
comes from PostgreSQL); plus the one way clients call them (`Calls`), which counts each call and
classifies each error into the current phase's stats."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Sequence, TypeVar

import grpc

from gateway.embedded_pg import EmbeddedPostgres
from loadtest.faults.ledger import ANSWERS_OF_ANY_GATEWAY, PhaseStats, Windows, classify
from loadtest.harness import Endpoint, GatewayProcess, conf_args
from protos.metastore.v1 import locks_pb2_grpc

T = TypeVar("T")

# Durable commits: `-m immediate` kills PostgreSQL without flushing its WAL buffers, so with
# synchronous_commit off (UNSAFE_FAST_SETTINGS) an acknowledged commit could be lost by design, not by
# a bug. fsync stays off: the OS does not crash here, and what was written survives in its page cache.
PG_SETTINGS = {"fsync": "off", "full_page_writes": "off", "synchronous_commit": "on"}


@dataclass(frozen=True)
class Timing:
    """The suite's clocks (hive.txn.timeout and the reaper are short so a dead client is reaped within
    seconds). The poller keeps Hive's 60 s timer on purpose: only LISTEN/NOTIFY can then make lag
    normal within 2 s of the database's return, which is what the suite checks."""

    txn_timeout_s: float = 4.0
    reaper_interval_s: float = 1.0
    heartbeat_s: float = 1.0
    # How long PostgreSQL lets a stopped gateway's transaction sit idle on the row locks every writer
    # takes (metastore.gateway.db.idle.in.transaction.timeout): shorter than a stop, so the others go on.
    idle_in_txn_s: float = 1.0

    def conf(self) -> tuple[str, ...]:
        return (f"hive.txn.timeout={self.txn_timeout_s:g}s",
                f"hive.timedout.txn.reaper.start={self.reaper_interval_s:g}s",
                f"hive.timedout.txn.reaper.interval={self.reaper_interval_s:g}s",
                f"metastore.gateway.db.idle.in.transaction.timeout={self.idle_in_txn_s:g}s",
                "metastore.gateway.shutdown.grace=2s")


@dataclass
class Member:
    """One gateway process and a client channel to it."""

    name: str
    proc: GatewayProcess
    ep: Endpoint
    locks: locks_pb2_grpc.LocksStub
    alive: bool = True


@dataclass
class Calls:
    """Every client call of the suite goes through here: counted in the current phase, and an error
    classified (ledger.classify) as allowed or recorded as a violation, then re-raised."""

    windows: Windows = field(default_factory=Windows)
    phase: PhaseStats = field(default_factory=lambda: PhaseStats("setup"))

    async def __call__(self, gateway: str, what: str, call: Awaitable[T]) -> T:
        phase, started = self.phase, time.monotonic()
        phase.calls += 1
        try:
            answer = await call
            if self.windows.waited_out_the_database(started, time.monotonic()):
                phase.counts["calls_waited_out_the_database"] += 1
            return answer
        except grpc.aio.AioRpcError as exc:
            code, details = exc.code(), exc.details() or ""
            phase.errors[code.name] += 1
            phase.by_gateway[f"{gateway}/{code.name}"] += 1
            kind = classify(code, details, frozen=self.windows.was_frozen(gateway, started, time.monotonic()))
            if kind not in ANSWERS_OF_ANY_GATEWAY:
                phase.not_served[f"{gateway}/{code.name}"] += 1
            if kind is None:
                phase.violate(f"{what} on {gateway}: {code.name}: {details[:300]}")
            else:
                phase.kinds[kind] += 1
                seen = phase.samples.setdefault(kind, [])
                if len(seen) < 3:
                    seen.append(f"{what} on {gateway} after {time.monotonic() - started:.2f}s: {details[:300]}")
            raise
        finally:
            # Evidence that a SIGSTOP froze calls (and a bound on how long any call took).
            phase.figures["slowest_call_s"] = max(phase.figures.get("slowest_call_s", 0.0),
                                                  time.monotonic() - started)


class Cluster:
    def __init__(self, root: Path, pg: EmbeddedPostgres, dsn: str, timing: Timing) -> None:
        self.root = root
        self.pg = pg
        self.dsn = dsn
        self.timing = timing
        self.calls = Calls()
        self.members: list[Member] = []
        self.oracle: Member | None = None
        self._generation = 0

    async def start(self, names: Sequence[str]) -> None:
        starting = [self._spawn(n, cached=True) for n in names]
        oracle = self._spawn("oracle", cached=False)
        self.members = list(await asyncio.gather(*(self._ready(n, p) for n, p in starting)))
        self.oracle = await self._ready(*oracle)

    def _spawn(self, name: str, *, cached: bool) -> tuple[str, GatewayProcess]:
        conf = [*self.timing.conf(), f"hive.metastore.warehouse.dir={self.root / 'warehouse'}"]
        if not cached:
            conf.append("metastore.gateway.cache.enabled=false")
        self._generation += 1
        log = self.root / f"{name}.{self._generation}.log"
        return name, GatewayProcess(["--dsn", self.dsn, *conf_args(*conf)], log)

    @staticmethod
    async def _ready(name: str, proc: GatewayProcess) -> Member:
        address = await asyncio.to_thread(proc.wait_serving, 120)
        ep = await Endpoint.open(name, address)
        return Member(name, proc, ep, locks_pb2_grpc.LocksStub(ep.channel))

    def live(self) -> list[Member]:
        """The caching gateways a client may pick (a SIGSTOPped one included: clients cannot tell)."""
        return [m for m in self.members if m.alive]

    def any(self, rng: random.Random, *, oracle: bool = True, avoid: str | None = None) -> Member:
        choices = [m for m in self.live() if m.name != avoid] + ([self.the_oracle] if oracle else [])
        return rng.choice(choices)

    @property
    def the_oracle(self) -> Member:
        assert self.oracle is not None, "the cluster is not started"
        return self.oracle

    def member(self, name: str) -> Member:
        return next(m for m in self.members if m.name == name)

    # -- faults --------------------------------------------------------------------------------------

    async def restart_postgres(self, mode: str, pause_s: float) -> float:
        """pg_ctl stop -m MODE, wait, start; the monotonic time at which it accepts connections again."""
        self.calls.windows.database_stopping()
        await asyncio.to_thread(self.pg.pg_ctl_stop, 60, mode)
        await asyncio.sleep(pause_s)
        await asyncio.to_thread(self.pg.pg_ctl_start)
        self.calls.windows.database_back()
        return time.monotonic()

    def kill(self, name: str) -> None:
        m = self.member(name)
        m.proc.proc.send_signal(signal.SIGKILL)  # calls racing it answer UNAVAILABLE ("Socket closed")
        m.proc.proc.wait(10)
        m.alive = False

    async def replace(self, name: str) -> Member:
        """A new process for a killed gateway, under the same name (its old channel closed)."""
        old = self.member(name)
        await old.ep.channel.close()
        old.proc.stop()
        new = await self._ready(*self._spawn(name, cached=True))
        self.members[self.members.index(old)] = new
        return new

    def sigstop(self, name: str) -> None:
        self.calls.windows.freeze(name)
        os.kill(self.member(name).proc.pid, signal.SIGSTOP)

    def sigcont(self, name: str) -> None:
        os.kill(self.member(name).proc.pid, signal.SIGCONT)
        self.calls.windows.thaw(name)

    async def close(self) -> list[str]:
        """Channels closed, processes stopped; the output of any that did not exit cleanly."""
        bad = []
        everyone = [*self.members, *([self.oracle] if self.oracle else [])]
        for m in everyone:
            await m.ep.channel.close()
        for m in everyone:
            if m.alive:
                os.kill(m.proc.pid, signal.SIGCONT)  # a failed run may leave one stopped
            code = await asyncio.to_thread(m.proc.stop)
            if m.alive and code != 0:
                bad.append(f"{m.name} exited {code}:\n{m.proc.output()[-3000:]}")
        return bad
