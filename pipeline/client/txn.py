"""A transaction's life on the driver: open, keep alive, commit or abort; and the heartbeat keeper.

`HeartbeatKeeper` is a daemon thread that heartbeats one txn every `interval_s` (Hive's client:
hive.txn.timeout / 2) until stopped. It never raises in its thread. When the gateway answers that
the txn is aborted or unknown (the reaper timed it out, someone aborted it), the keeper records a
`TxnAborted`, calls `on_abort` once (a Spark job uses it to cancel its running job group, so the
driver does not keep writing for a txn that can no longer commit) and stops. The caller sees the
abort from `check()`, and at the latest from `commit()`. A heartbeat that fails for another reason
(gateway briefly unreachable, a stalled call) is logged and tried again soon, from 1 s on and
doubling, not a whole interval later: the txn lives hive.txn.timeout (two intervals) after its last
beat, so waiting an interval after a failure would leave the reaper a race it wins. For the same
reason one attempt waits at most half an interval for its answer.

`Transaction` is a context manager: normal exit commits, an exception aborts (and is re-raised;
a failing abort is logged, not raised over the original error). Commit and abort stop the keeper
first, so no heartbeat races the end of the txn.

A commit whose answer is lost (its deadline passed, the connection dropped with it in flight, the
gateway failed after its database committed) may have committed. CommitTxn is idempotent, so it is
asked again; if that answer is lost too, the txn is aborted, whose answer tells (an abort of a
committed txn is refused as FAILED_PRECONDITION). Only when that fails as well is the outcome
unknown (state "unknown", `CommitOutcomeUnknown`): a caller must then keep what the txn wrote,
since readers may already see it (pipeline/txn_write.py removes its files only for a txn known
not to have committed).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Callable, Iterable

import grpc

from pipeline.client.errors import CommitOutcomeUnknown, GatewayError, TxnAborted
from pipeline.client.snapshot import Snapshot, TableSnapshot, full_table_name
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import transactions_pb2 as tpb
from hive.backoff import Backoff
from hive.clock import SYSTEM_CLOCK, ThreadClock
from hive.lock_rules import Statement

if TYPE_CHECKING:
    from pipeline.client.gateway import GatewayClient

_log = logging.getLogger(__name__)

# Statuses after which a commit may or may not have happened: no answer came (the call's deadline,
# a lost connection, a cancelled call), or the gateway failed after its database may have committed.
OUTCOME_UNKNOWN = frozenset({grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE,
                             grpc.StatusCode.CANCELLED, grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL})
COMMIT_ATTEMPTS = 2  # CommitTxn is idempotent: a lost answer is asked for once more (UNAVAILABLE: after retries)


class HeartbeatKeeper:
    def __init__(self, client: GatewayClient, txn_id: int, interval_s: float,
                 on_abort: Callable[[TxnAborted], None] | None = None, *, clock: ThreadClock = SYSTEM_CLOCK) -> None:
        if interval_s <= 0:
            raise ValueError(f"heartbeat interval must be positive, got {interval_s}")
        self._client = client
        self.txn_id = txn_id
        self.interval_s = interval_s
        self._on_abort = on_abort
        self._clock = clock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"txn-{txn_id}-heartbeat", daemon=True)
        self.aborted: TxnAborted | None = None
        self.beats = 0
        self.failures = 0
        self._failing = 0  # failed beats since the last one that went through
        self._retry_waits = Backoff(initial_s=min(1.0, interval_s / 10), max_s=interval_s)

    def start(self) -> HeartbeatKeeper:
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop beating; waits for a beat in progress. Idempotent."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    def check(self) -> None:
        """Raise the `TxnAborted` the keeper saw, if any."""
        if self.aborted is not None:
            raise self.aborted

    def _run(self) -> None:
        while not self._clock.wait(self._stop, self.next_wait_s()):
            if self.beat_once():
                return

    def next_wait_s(self) -> float:
        """An interval after a beat that went through; after failed ones, 1 s (or a tenth of the
        interval, if shorter), doubling, at most an interval."""
        if not self._failing:
            return self.interval_s
        return self._retry_waits.delay(self._failing - 1)

    def beat_once(self) -> bool:
        """One heartbeat; True when the txn turned out aborted (the keeper is then done)."""
        try:
            reply = self._client.txns.Heartbeat(_heartbeat_request(self.txn_id),
                                                timeout=min(self.interval_s / 2, self._client.config.call_timeout_s))
        except grpc.RpcError as exc:
            self._failed()
            _log.warning("heartbeat of txn %d failed (%s: %s); retrying in %.1fs", self.txn_id,
                         exc.code().name if hasattr(exc, "code") else "?",
                         exc.details() if hasattr(exc, "details") else exc, self.next_wait_s())
            return False
        except Exception:  # never let the thread die silently
            self._failed()
            _log.exception("heartbeat of txn %d failed", self.txn_id)
            return False
        self.beats += 1
        self._failing = 0
        if self.txn_id in reply.aborted_txn_ids or self.txn_id in reply.nosuch_txn_ids:
            why = ("aborted" if self.txn_id in reply.aborted_txn_ids
                   else "unknown to the gateway (aborted and cleaned)")
            self.aborted = TxnAborted(
                f"txn {self.txn_id} is {why}: it missed heartbeats for hive.txn.timeout or was aborted by another "
                f"client; nothing it wrote will become visible", txn_id=self.txn_id, method="Heartbeat",
                code=grpc.StatusCode.ABORTED, address=self._client.config.address)
            _log.error("%s", self.aborted)
            self._stop.set()
            if self._on_abort is not None:
                try:
                    self._on_abort(self.aborted)
                except Exception:
                    _log.exception("on_abort callback of txn %d failed", self.txn_id)
            return True
        return False


    def _failed(self) -> None:
        self.failures += 1
        self._failing += 1


def _heartbeat_request(txn_id: int) -> tpb.HeartbeatRequest:
    return tpb.HeartbeatRequest(txn_ids=[txn_id])


class Transaction:
    """An open txn. Use `GatewayClient.transaction()` to make one."""

    def __init__(self, client: GatewayClient, txn_id: int, keeper: HeartbeatKeeper | None) -> None:
        self.client = client
        self.id = txn_id
        self.keeper = keeper
        self.state = "open"
        self._write_ids: dict[str, int] = {}

    @classmethod
    def open(cls, client: GatewayClient, *, heartbeat: bool = True,
             on_abort: Callable[[TxnAborted], None] | None = None) -> Transaction:
        txn_id = client.open_txn()
        keeper = HeartbeatKeeper(client, txn_id, client.config.heartbeat_interval_s, on_abort).start() \
            if heartbeat else None
        return cls(client, txn_id, keeper)

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if self.state != "open":
            return
        if exc_type is None:
            self.commit()
            return
        try:
            self.abort()
        except Exception:
            _log.exception("aborting txn %d after %s failed", self.id, exc_type.__name__)

    def check(self) -> None:
        """Raise `TxnAborted` if the heartbeat keeper found the txn aborted."""
        if self.keeper is not None:
            self.keeper.check()

    def snapshot(self, tables: Iterable[str]) -> Snapshot:
        """The snapshot as this txn sees it (its own writes included)."""
        self.check()
        return self.client.snapshot(tables, self.id)

    def table_snapshot(self, db: str, table: str) -> TableSnapshot:
        return self.snapshot([full_table_name(db, table)]).tables[0]

    def allocate_write_id(self, db: str, table: str) -> int:
        self.check()
        name = full_table_name(db, table)
        if name not in self._write_ids:
            self._write_ids[name] = self.client.allocate_write_id(self.id, db, table)
        return self._write_ids[name]

    def lock(self, statement: Statement, db: str, table: str, *, xlock_iow: bool | None = None) -> lpb.LockResponse:
        """Hive's lock for `statement` on the table, held until this txn ends (`xlock_iow`: that setting
        for this lock, else the config's)."""
        self.check()
        return self.client.lock_table_for(statement, db, table, self.id, xlock_iow=xlock_iow)

    def commit(self) -> None:
        if self.state != "open":
            raise GatewayError(f"txn {self.id} is already {self.state}")
        self._stop_keeper()
        if self.keeper is not None and self.keeper.aborted is not None:
            self.state = "aborted"
            raise self.keeper.aborted
        for attempt in range(1, COMMIT_ATTEMPTS + 1):
            try:
                self.client.commit_txn(self.id)
                break
            except GatewayError as exc:
                if exc.code == grpc.StatusCode.ABORTED:
                    self.state = "aborted"
                    raise TxnAborted(str(exc), txn_id=self.id, method=exc.method, code=exc.code,
                                     details=exc.details, address=exc.address) from exc
                if exc.code not in OUTCOME_UNKNOWN:
                    raise  # the gateway refused the commit: not committed; "open" for abort()
                if attempt == COMMIT_ATTEMPTS:
                    self._settle_unknown_commit(exc)
                    return
                _log.warning("the answer to the commit of txn %d was lost (%s); asking again (CommitTxn is "
                             "idempotent)", self.id, exc.code.name if exc.code else "?")
        self.state = "committed"

    def _settle_unknown_commit(self, lost: GatewayError) -> None:
        """The commit's answers were lost: abort, whose answer says how the txn ended."""
        try:
            self.client.abort_txn(self.id)
        except GatewayError as exc:
            if exc.code == grpc.StatusCode.FAILED_PRECONDITION and "committed" in exc.details:
                _log.warning("txn %d: the commit's answer was lost, and the txn turned out committed", self.id)
                self.state = "committed"
                return
            self.state = "unknown"
            raise CommitOutcomeUnknown(
                f"txn {self.id}: the answer to its commit was lost ({lost}) and so was the answer to its abort "
                f"({exc}); it may have committed. What it wrote is kept: if it did not commit, the gateway aborts "
                "it after hive.txn.timeout and its Cleaner removes the files", txn_id=self.id, method="CommitTxn",
                code=lost.code, details=lost.details, address=lost.address) from exc
        self.state = "aborted"
        raise TxnAborted(f"txn {self.id}: the answer to its commit was lost ({lost}), and it was then aborted: "
                         "nothing it wrote will become visible; run the write again", txn_id=self.id,
                         method="CommitTxn", code=lost.code, details=lost.details, address=lost.address) from lost

    def abort(self) -> None:
        if self.state == "aborted":
            return
        if self.state == "committed":
            raise GatewayError(f"txn {self.id} is already committed")
        self._stop_keeper()
        self.client.abort_txn(self.id)
        self.state = "aborted"

    def _stop_keeper(self) -> None:
        if self.keeper is not None:
            self.keeper.stop()
