"""The notification-log poller: keeps this gateway's cache in step with the shared database.

Design note. One supervised loop per gateway. It is woken by LISTEN/NOTIFY after each commit
(store/sql/events.py) and by a timer as a safety net, reads events after its cursor in batches,
applies a batch to the cache and advances the cursor with no await in between. It reads the log on
its LISTEN connection, not a pooled one: under write load the pool is busy with this gateway's own
writes, and a poller queued behind them holds back every reader's view of other gateways' commits
(`bench_txns --lag`, 16 writers over 3 gateways: apply lag p99 18-20 ms through the pool, 13.2-13.9 ms
on its own connection). Event ids are dense and commit-ordered, so a gap means the log was trimmed
past the cursor: the cache is dropped and reloads. Tables load lazily on first miss (or all at start
with eager prewarm) in one REPEATABLE READ snapshot that records its log position; a fill that
finishes after the poller moved past that position replays the events in between before installing,
so no event is lost or applied twice. A miss does not call into the poller: reads leave the names
they missed in the cache's `fill_requests`, which a companion task of `run` drains, one load per name
at a time. The poller changes the cache only through its methods (`advance`, `install`, `replace`,
`put_database`, `drop_database`, `clear`), each one synchronous step on the event loop.
A database restored from a backup, or failed over to a copy without its last commits, has a log
rewritten from some event on, whose ids new writes take again: each read also answers the time of the
event at the cursor, and one other than the event applied (or a head below the cursor) makes the cache
reload from the log's new head. Database outages are survived: the LISTEN connection's loss wakes the
loop at once, errors back off (at most a second apart) and the loop resumes from its cursor. A batch
the cache cannot take (APPLY_ATTEMPTS times in a row) makes it reload past it instead of stopping the
cursor for good.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Sequence

import asyncpg

from poller.apply import (
    DATABASE_EVENTS,
    TXN_OUTCOME_EVENTS,
    TableBatch,
    affected_table_ids,
    decode,
    new_table_entry,
)
from store import codec as store_codec
from store import events
from store.cache import loader
from store.cache.entry import Codec, TableEntry
from store.cache.sharded import ShardedCache
from hive.backoff import Backoff
from store.db import CONNECTION_LOST, Database, set_session
from store.errors import Unavailable
from store.models import NotificationEvent
from store.sql.events import EVENT_CHANNEL
from store.txn_ends import TxnEnds

_log = logging.getLogger(__name__)

# After the n-th failure in a row: 0.1, 0.2, 0.4 ... s, at most 1 s: while the database restarts the
# poller tries about once a second, so once it is back the cache catches up within a second or two.
_ERROR_BACKOFF = Backoff(initial_s=0.05, max_s=1.0)

# A batch that fails to apply this many times in a row (the database answered; the cache could not
# take an event, e.g. one a newer or broken writer logged) is not retried again: the cache reloads
# from PostgreSQL past it, rather than every read being answered at a position that never moves.
APPLY_ATTEMPTS = 3


@dataclass
class PollerStats:
    batches: int = 0
    events_applied: int = 0
    reloads: int = 0
    fills: int = 0
    errors: int = 0
    head_event_id: int = 0
    last_apply_lag_ms: float = 0.0
    lag_samples_ms: list[float] = field(default_factory=list)
    # time.monotonic() of the first of the failures in a row to read the log, 0.0 while it reads it: how
    # long the cache has been left as it was (the lags above only move when events are applied, so they
    # read as "no lag" all the while the poller cannot read: a LISTEN connection it cannot reopen).
    failing_since: float = 0.0

    def failing_s(self, now: float) -> float:
        """Seconds the poller has failed to read the log without a success (0.0 while it reads it)."""
        return now - self.failing_since if self.failing_since else 0.0


class Poller:
    def __init__(
        self, db: Database, dsn: str, cache: ShardedCache, codec: Codec, *, interval_s: float = 60.0,
        batch_size: int = 1000, prewarm: str = "lazy", txn_ends: TxnEnds | None = None,
    ) -> None:
        if prewarm not in ("lazy", "eager"):
            raise ValueError(f"prewarm must be 'lazy' or 'eager', got {prewarm!r}")
        self._db = db
        self._dsn = dsn
        self.cache = cache
        self._codec = codec
        self._interval_s = interval_s
        self._batch_size = batch_size
        self._prewarm = prewarm
        self.position = 0
        self.caught_up = asyncio.Event()
        self.stats = PollerStats()
        self._wake = asyncio.Event()
        self._running = asyncio.Event()
        self._running.set()
        self._listener: asyncpg.Connection | None = None
        self._listener_lost = False
        self._listener_opened_at = 0.0  # time.monotonic() when the LISTEN connection was opened
        self._cursor_time_ms: int | None = None  # the time of the event at `position`, once known
        self._loading: dict[tuple[str, str], asyncio.Task[None]] = {}
        self.txn_ends = txn_ends  # told of each COMMIT_TXN / ABORT_TXN applied (a write waiting on one)

    # -- start-up ------------------------------------------------------------------------------

    async def bootstrap(self) -> None:
        """Set the cursor (and, for eager prewarm, load everything) from one snapshot."""
        if self._prewarm == "eager":
            await self.prewarm()
        else:
            await self._start_lazily()
        self.caught_up.set()

    async def _start_lazily(self) -> None:
        """The cursor at the log's head, and the databases as of that position; no tables."""
        position, databases = await self._db.read(loader.load_databases)
        for database in databases:
            self.cache.put_database(database)
        self.position = position
        self.cache.advance(position)

    async def prewarm(self) -> None:
        started = time.monotonic()
        last_report = [started]
        partitions = [0]

        def progress(done: int, total: int, entry: TableEntry | None) -> None:
            # A log line every few seconds (not \r on stderr: a captured log must stay one event a line).
            partitions[0] += entry.partition_count if entry is not None else 0
            now = time.monotonic()
            if done < total and now - last_report[0] > 2.0:
                last_report[0] = now
                _log.info("prewarm: %d partitions loaded so far, %d of %d tables (%d%%)", partitions[0], done, total,
                          100 * done // max(total, 1))

        position, entries, databases = await self._db.read(
            loader.load_all, self._codec, progress)
        self.cache.clear()
        for entry in entries:
            self.cache.install(entry)
        for database in databases:
            self.cache.put_database(database)
        self.position = position
        self.cache.advance(position)
        self.cache.enforce_memory_bound()
        _log.info("prewarm loaded %d tables, %d partitions at event %d in %.1fs", len(entries),
                  self.cache.partition_count(), position, time.monotonic() - started)

    # -- the loop ------------------------------------------------------------------------------

    async def run(self) -> None:
        """Catch up forever; cancellation stops it cleanly."""
        failures = 0
        apply_failures = 0  # of the same batch, in a row
        outage = False  # the failures in a row are the database's absence
        fills = asyncio.get_running_loop().create_task(self._serve_fill_requests(), name="cache fills")
        try:
            while True:
                try:
                    await self._running.wait()
                    if self._listener is None or self._listener.is_closed():
                        if self._listener_lost:
                            self._listener_lost = False
                            await self._db.expire_connections()
                        await self._listen()
                    self._wake.clear()
                    read = await self._read_log()
                    if not self._running.is_set():
                        continue  # paused while the batch was read: read again on resume (see pause)
                    rewritten = self._rewritten(read)
                    if rewritten:
                        await self._reload(f"{rewritten}: the database was restored, or failed over to a copy "
                                           "without its last commits", rewind=True)
                        continue
                    batch, head = read.events, read.head
                    if batch and batch[0].event_id != self.position + 1:
                        await self._reload(f"the log continues at {batch[0].event_id} after {self.position} (it was "
                                           "trimmed past this gateway's position)")
                        continue
                    if not batch and head > self.position:  # ids are dense: committed events that cannot be read
                        await self._reload(f"events {self.position + 1}..{head} are gone from the log (it was trimmed "
                                           "past this gateway's position)")
                        continue
                    try:
                        self.apply(batch)
                    except Exception as exc:
                        apply_failures += 1
                        if apply_failures < APPLY_ATTEMPTS:
                            raise
                        apply_failures = 0
                        self.stats.errors += 1
                        _log.error("poller: events %d..%d could not be applied %d times (%s)", batch[0].event_id,
                                   batch[-1].event_id, APPLY_ATTEMPTS, str(exc) or type(exc).__name__,
                                   exc_info=exc)
                        await self._reload("a batch could not be applied")
                        continue
                    apply_failures = 0
                    self.stats.failing_since = 0.0
                    if failures:
                        _log.log(logging.DEBUG if outage else logging.INFO,
                                 "poller: reading the log again after %d failed attempt(s), at event %d", failures,
                                 self.position)
                    failures = 0
                    if len(batch) < self._batch_size:
                        try:
                            async with asyncio.timeout(self._interval_s):
                                await self._wake.wait()
                        except TimeoutError:
                            pass
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - survive database restarts; keep the cursor
                    failures += 1
                    self.stats.errors += 1
                    if not self.stats.failing_since:
                        self.stats.failing_since = time.monotonic()
                    # One line when the trouble starts (and one when it ends, above), not one per retry; none
                    # for a database outage, which the gateway's probe reports (gateway/db_health.py).
                    # The store's list (store/db.py), which also holds what a read on a connection the
                    # server has just ended raises (asyncpg's InternalClientError "cannot switch to state").
                    outage = isinstance(exc, (Unavailable, *CONNECTION_LOST))
                    # The type when the message is empty (a time-out's is).
                    _log.log(logging.WARNING if failures == 1 and not outage else logging.DEBUG,
                             "poller: %s (retry %d)", str(exc) or type(exc).__name__, failures)
                    await self._close_listener()
                    await asyncio.sleep(_ERROR_BACKOFF.delay(failures))
        finally:
            fills.cancel()
            await asyncio.wait([fills])
            await self._close_listener()
            for task in self._loading.values():
                task.cancel()

    async def _read_log(self) -> events.LogRead:
        """The next batch after the cursor and the log's head, on the LISTEN connection (a statement
        past the command time-out raises TimeoutError: the loop replaces the connection)."""
        assert self._listener is not None
        return await events.next_events_and_head(self._listener, self.position, self._batch_size)

    def _rewritten(self, read: events.LogRead) -> str | None:
        """Why the log no longer holds the history this cache applied, or None. Its head is below the
        cursor, or the event at the cursor is another than the one applied (its time differs: the ids
        after a restore are taken again by new writes, so the head alone cannot tell once they pass the
        cursor). The cursor's event is learnt from the first read after a (re)load."""
        if read.head < self.position:
            return f"the log ends at event {read.head}, before this gateway's position {self.position}"
        if self._cursor_time_ms is None or read.cursor_time_ms is None:  # not known yet, or trimmed
            self._cursor_time_ms = self._cursor_time_ms or read.cursor_time_ms
            return None
        if read.cursor_time_ms != self._cursor_time_ms:
            return f"event {self.position} in the log is not the one this gateway applied"
        return None

    def pause(self) -> None:
        """Stop applying events at once (operators: freeze a gateway's cache while investigating;
        tests: hold a gateway at a known log position). A batch being read from the log meanwhile is
        not applied, and is read again on resume: nothing written after this call reaches the cache
        until then (a batch already being applied, which has no awaits, has finished)."""
        self._running.clear()

    def resume(self) -> None:
        self._running.set()
        self._wake.set()

    def apply(self, batch: Sequence[NotificationEvent]) -> None:
        """Apply a batch and advance the cursor; no awaits, so readers see all of it or none."""
        if not batch:
            return
        batches: dict[int, TableBatch] = {}
        try:
            for event in batch:
                message = decode(event)
                if event.event_type in DATABASE_EVENTS:
                    if event.event_type == events.EventType.DROP_DATABASE:
                        self.cache.drop_database(event.db_name)
                    else:
                        self.cache.put_database(store_codec.database_from_row(message["database"]))
                    continue
                if event.event_type == events.EventType.CREATE_TABLE and self.cache.get(event.table_id) is None:
                    self._flush(batches)
                    self.cache.install(new_table_entry(event, message, self._codec))
                    continue
                for table_id in affected_table_ids(event, message):
                    working = batches.get(table_id)
                    if working is None:
                        entry = self.cache.get(table_id)
                        if entry is None:
                            continue
                        working = batches[table_id] = TableBatch(entry, self._codec)
                    working.apply(event, message)
            self._flush(batches)
        except BaseException:
            # A batch changes an entry's maps in place (store/cache/entry.py): a table whose batch
            # stopped part-way is dropped, and read from the database until a fill loads it again.
            for table_id in batches:
                self.cache.remove(table_id)
            raise
        self.cache.enforce_memory_bound()
        if self.txn_ends is not None and self.txn_ends.waiting:
            self.txn_ends.ended(e.txn_id for e in batch if e.event_type in TXN_OUTCOME_EVENTS)
        last = batch[-1]
        self.position = last.event_id
        self._cursor_time_ms = last.event_time_ms
        self.cache.advance(last.event_id)
        self.stats.batches += 1
        self.stats.events_applied += len(batch)
        self.stats.head_event_id = max(self.stats.head_event_id, last.event_id)
        lag = max(0.0, time.time() * 1000 - last.event_time_ms)
        self.stats.last_apply_lag_ms = lag
        self.stats.lag_samples_ms.append(lag)
        del self.stats.lag_samples_ms[:-1000]

    def _flush(self, batches: dict[int, TableBatch]) -> None:
        for table_id, working in batches.items():
            self.cache.replace(table_id, working.finish())
        batches.clear()

    async def _reload(self, why: str, *, rewind: bool = False) -> None:
        """Drop the cache and load it again at the log's head; with `rewind`, a head that may be below
        the cursor. Loads under way are cancelled: they may have read what the log no longer holds."""
        _log.warning("poller: %s: reloading the cache from the database", why)
        self.stats.reloads += 1
        for task in list(self._loading.values()):
            task.cancel()
        self.cache.clear(rewind=rewind)
        self._cursor_time_ms = None
        if rewind:
            self.stats.head_event_id = 0
        if self._prewarm == "eager":
            await self.prewarm()
        else:
            await self._start_lazily()

    # -- lazy fills ----------------------------------------------------------------------------

    async def _serve_fill_requests(self) -> None:
        """Start a load for each table reads missed (`cache.fill_requests`), as they come."""
        while True:
            await self.cache.fill_requests.wait()
            self._start_requested_fills()

    def _start_requested_fills(self) -> None:
        for db_name, table_name in self.cache.fill_requests.drain():
            self.request_load(db_name, table_name)

    def request_load(self, db_name: str, table_name: str) -> None:
        """Load a table into the cache in the background (one load at a time per name)."""
        key = (db_name, table_name)
        if key not in self._loading:
            self._loading[key] = asyncio.get_running_loop().create_task(self._fill(db_name, table_name))

    async def _fill(self, db_name: str, table_name: str) -> None:
        try:
            position, entry = await self._db.read(loader.load_table, db_name, table_name, self._codec)
            while entry is not None and self.position > position:
                # The poller moved past our snapshot while we loaded: replay what we missed.
                missed = await self._db.read(events.next_events, position, self.position - position)
                if not missed or missed[0].event_id != position + 1:
                    # Trimmed from the log meanwhile (retention): the entry cannot be brought up to date.
                    _log.info("poller: the log no longer holds event %d; %s.%s is read from the database until "
                              "a later read loads it again", position + 1, db_name, table_name)
                    return
                entry = self._replay(entry, missed)
                position = missed[-1].event_id
            if entry is not None:
                self.cache.install(entry)
                self.stats.fills += 1
        except asyncio.CancelledError:
            raise
        except Unavailable as exc:  # the database is away (the gateway's probe says so): no traceback
            self.stats.errors += 1
            _log.debug("poller: loading %s.%s into the cache failed: %s", db_name, table_name, exc)
        except Exception:  # noqa: BLE001 - a failed fill only means more database reads
            self.stats.errors += 1
            _log.exception("poller: loading %s.%s into the cache failed", db_name, table_name)
        finally:
            self._loading.pop((db_name, table_name), None)

    def _replay(self, entry: TableEntry, missed: Sequence[NotificationEvent]) -> TableEntry | None:
        working = TableBatch(entry, self._codec)
        for event in missed:
            message = decode(event)
            if entry.table_id in affected_table_ids(event, message):
                working.apply(event, message)
        return working.finish()

    async def wait_loaded(self, timeout_s: float = 30.0) -> None:
        """Wait for the fills under way, including those asked for and not started yet (tests and
        prewarm-on-demand)."""
        self._start_requested_fills()
        if self._loading:
            await asyncio.wait(list(self._loading.values()), timeout=timeout_s)

    # -- LISTEN/NOTIFY -------------------------------------------------------------------------

    async def _listen(self) -> None:
        conn = await asyncpg.connect(self._dsn, timeout=10, command_timeout=self._db.command_timeout_s)
        try:
            await set_session(conn, events.LOG_READER_SETTINGS)
        except BaseException:
            conn.terminate()
            raise

        def notified(_conn: object, _pid: int, _channel: str, payload: str) -> None:
            try:
                self.stats.head_event_id = max(self.stats.head_event_id, int(payload))
            except ValueError:
                pass
            self._wake.set()

        conn.add_termination_listener(self._listener_terminated)
        await conn.add_listener(EVENT_CHANNEL, notified)
        self._listener, self._listener_opened_at = conn, time.monotonic()

    def restart_listener(self, opened_before: float) -> None:
        """Drop the LISTEN connection if it was opened before `opened_before` (time.monotonic()); the loop
        opens a new one and reads the log from its position. For when the database is reachable again after
        it was not since `opened_before`: a partition, or a failover that took the old server away, leaves a
        connection silent rather than closed, and the poller would hear no NOTIFY until its timer's read on
        it ran past the command time-out (117 s after a failover, by hand). One opened since works: kept."""
        listener = self._listener
        if listener is None or listener.is_closed() or self._listener_opened_at >= opened_before:
            return
        # Dropped on purpose, not lost: the pool's connections were expired when the outage was found, and those
        # opened since are sound (a lost listener's loop would expire them all again).
        listener.remove_termination_listener(self._listener_terminated)
        listener.terminate()
        self._wake.set()  # the loop finds it closed and opens a new one

    def _listener_terminated(self, _conn: object) -> None:
        """The LISTEN connection died (a database restart, a terminated backend): notifications stop,
        and without this the loop would sleep until its timer. Wake it: it sees the closed listener
        and reconnects (backing off while the database is away); the same cause usually killed the
        pool's connections, so those are replaced first."""
        # DEBUG: the gateway's database probe reports an outage once (gateway/db_health.py); a lost
        # listener alone is repaired here within a second.
        _log.debug("poller: the LISTEN connection to PostgreSQL was lost; reconnecting")
        self._listener_lost = True
        self._wake.set()

    async def _close_listener(self) -> None:
        conn, self._listener = self._listener, None
        if conn is not None:
            conn.remove_termination_listener(self._listener_terminated)  # closed on purpose: not a loss
        if conn is not None and not conn.is_closed():
            try:
                await asyncio.wait_for(conn.close(), 5)
            except (Exception, asyncio.TimeoutError):  # noqa: BLE001
                conn.terminate()
