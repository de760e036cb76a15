"""The catalog as every protocol's servicer sees it: reads cache first with PostgreSQL on a miss,
and the cache bookkeeping of writes, in one place.

Design note. A servicer (gRPC today, Hive Thrift next) converts and validates a request, calls
`CachedCatalog`, and converts the answer back; nothing about consistency is written in it.

Reads come in two steps, so that a hit costs what the cache costs and nothing more:

    hit = catalog.cached_partitions_by_names(db, table, names, snapshot, min_event_id)  # no await
    if isinstance(hit, Miss):
        table, parts = await catalog.fetch_partitions_by_names(db, table, names, snapshot)   # PostgreSQL

The `cached_*` methods are the cache's own bound methods (store/cache/sharded.py), taken once
here: a hit is the cache's lookups and the caller's join, with no extra call, await or
allocation. They take keys as `table_key` / `database_key` return them. The `fetch_*` coroutines
read PostgreSQL through `CatalogStore` under the same snapshot, report the read's latency to
`on_fallback`, and, when the answer was latest-wins (a non-transactional table, a database), hold
this gateway's cache back until it has applied the log position the read saw, so reads on one
gateway never go back in time (monotonic reads). The facade sets no deadline: the caller bounds
a fetch (gRPC wraps the whole coroutine in gateway.errors.within_deadline). Everything after the
database await is synchronous, so a cancelled fetch leaves no bookkeeping half done.

Writes: the servicer writes through `CatalogStore` and hands the outcome to `wrote`. Until the
poller applies the write's event, this gateway reads the object from the database (a client
reads its own writes on the gateway that took them); a write under a txn also sends that txn's
reads of the table to the database until the poller applies its commit or abort.

Names are normalised once, here, by `table_key` (hive.names's, by which the store's row locks also
order tables) and `database_key` (hive.names.normalize_identifier): the bookkeeping normalises
whatever it is handed, so a key a write marks is the key a read looks up, whatever the spelling of
the request.
"""

from __future__ import annotations

import time
from typing import Awaitable, Callable, Iterable, Sequence, TypeVar

from hive import names
from hive.names import table_key as table_key  # the cache's key of a table, for servicers
from hive.partition_filter import PARTITION_FILTER, Dialect
from store.cache._frames import EncodedNames as EncodedNames  # names read in place, for servicers
from store.cache.sharded import Miss as Miss  # the answers of the cached step, for servicers
from store.cache.sharded import PartitionsHit as PartitionsHit
from store.cache.sharded import VersionsHit as VersionsHit
from store.cache.sharded import ShardedCache
from store.catalog_store import CatalogStore, Read
from store.locks import LockResult
from store.models import Database, Partition, Table
from store.snapshot import ReadSnapshot

T = TypeVar("T")


def database_key(name: str) -> str:
    """The cache's key of a database: validated and lower-cased."""
    return names.normalize_identifier(name, "database")


def _ignore(seconds: float) -> None:
    pass


class CachedCatalog:
    """Read-through over a `ShardedCache` and a `CatalogStore`; the only caller of the cache's
    write marks (`hold_until`, `note_writer`). One per gateway, shared by every protocol."""

    def __init__(self, cache: ShardedCache, store: CatalogStore, *,
                 on_fallback: Callable[[float], None] = _ignore) -> None:
        self.cache = cache
        self._store = store
        self._on_fallback = on_fallback
        # Step one of each read: the cache itself (see the module note).
        self.cached_table = cache.read_table
        self.cached_table_object = cache.read_table_object
        self.cached_partition_versions = cache.read_partition_versions
        self.cached_versions_by_filter = cache.read_versions_by_filter
        self.cached_versions_by_partial = cache.read_versions_by_partial
        self.cached_partitions_by_names = cache.read_partitions
        self.cached_partitions_encoded = cache.read_partitions_encoded
        self.cached_partitions_by_filter = cache.read_partitions_by_filter
        self.cached_partition_names = cache.list_partition_names
        self.cached_database = cache.read_database

    @classmethod
    def uncached(cls, store: CatalogStore) -> "CachedCatalog":
        """Every read from the database (a disabled cache), no bookkeeping."""
        return cls(ShardedCache(enabled=False), store)

    # -- reads, step two: the database after a miss -------------------------------------------

    async def fetch_table(self, db_name: str, table_name: str, snapshot: ReadSnapshot) -> Table:
        return await self._fallback(self._store.get_table(db_name, table_name, snapshot), db_name, table_name)

    async def fetch_partitions_by_names(self, db_name: str, table_name: str, partition_names: Sequence[str],
                                        snapshot: ReadSnapshot) -> tuple[Table, list[Partition]]:
        """The table and its partitions of these names, read together (the same snapshot of both, as a
        hit answers from one state: a partition without columns of its own shows that table's)."""
        return await self._fallback(
            self._store.get_partitions_by_names(db_name, table_name, list(partition_names), snapshot),
            db_name, table_name)

    async def fetch_partitions_by_filter(self, db_name: str, table_name: str, filter_text: str, limit: int,
                                         snapshot: ReadSnapshot, dialect: Dialect = PARTITION_FILTER,
                                         after: str = "") -> tuple[Table, list[Partition]]:
        """The table and at most `limit` + 1 matching partitions after the name `after` (as the cached
        step), so the caller can tell "more than the limit", read together."""
        return await self._fallback(
            self._store.get_partitions_by_filter(db_name, table_name, filter_text, limit,
                                                 snapshot, dialect, after), db_name, table_name)

    async def fetch_partition_names(self, db_name: str, table_name: str, page_size: int, page_token: str,
                                    snapshot: ReadSnapshot) -> tuple[list[str], str]:
        """A page of names and the token of the next page ("" after the last)."""
        return await self._fallback(
            self._store.list_partition_names(db_name, table_name, page_size, page_token, snapshot), db_name, table_name)

    async def fetch_partitions(self, db_name: str, table_name: str, limit: int,
                               snapshot: ReadSnapshot) -> tuple[Table, list[Partition]]:
        """The table and every partition the snapshot sees, in name order, at most `limit` + 1."""
        return await self._fallback(self._store.list_partitions(db_name, table_name, limit, snapshot),
                                    db_name, table_name)

    async def fetch_database(self, name: str) -> Database:
        return await self._fallback(self._store.get_database(name), name, "")

    async def _fallback(self, read: Awaitable[Read[T]], db_name: str, table_name: str) -> T:
        started = time.perf_counter()
        result = await read
        self._on_fallback(time.perf_counter() - started)
        if result.latest:
            self._hold(db_name, table_name, result.seen_event_id)
        return result.value

    # -- writes ------------------------------------------------------------------------------

    def wrote(self, db_name: str, table_name: str, event_id: int, txn_id: int = 0,
              renamed_to: tuple[str, str] | None = None) -> None:
        """A write through this gateway succeeded: it appended `event_id` (0: it changed nothing)
        on table `db_name.table_name` ("" as the table: the database itself), under `txn_id` (0:
        none); `renamed_to` is the table's (database, name) after the write, when it may differ.
        Names in any spelling. Reads of the object, and of the new name, on this gateway go to the
        database until the poller has applied `event_id`; the txn's reads of the table go there
        until the poller has applied its outcome."""
        if not self.cache.enabled:
            return  # a disabled cache answers nothing: there is nothing to hold back
        if table_name:
            db_key, tbl_key = table_key(db_name, table_name)
            if txn_id:
                self.cache.note_writer(db_key, tbl_key, txn_id)
        else:
            db_key, tbl_key = database_key(db_name), ""
        self.cache.hold_until(db_key, tbl_key, event_id)
        if renamed_to is not None:
            self.cache.hold_until(*table_key(*renamed_to), event_id)

    def ended_txn(self, txn_id: int, event_id: int, written: Iterable[tuple[str, str]] = ()) -> None:
        """A txn committed or aborted through this gateway (its outcome is event `event_id`; 0: nothing
        to apply): reads of the tables it wrote, also without a snapshot, see the outcome at once here.
        `written`: the tables the store says it wrote (a commit's), which this cache may not know yet
        (the txn's writes went through another gateway, whose events it has not applied)."""
        self.ended_txns((txn_id,), event_id, written)

    def ended_txns(self, txn_ids: Iterable[int], event_id: int, written: Iterable[tuple[str, str]] = ()) -> None:
        """ended_txn of each of `txn_ids`, all ended by event `event_id` at the latest (an abort of many).
        The tables each wrote come from the cache's index of writers, not a pass over every cached table."""
        if self.cache.enabled and event_id > self.cache.applied_event_id:
            for db_name, table_name in written:
                self.cache.hold_until(*table_key(db_name, table_name), event_id)
            # The tables this cache knows the txns wrote (their own writes here, or ALLOC events applied).
            for txn_id in set(txn_ids):
                for entry in self.cache.tables_written_by(txn_id):
                    self.cache.hold_until(entry.db_name, entry.name, event_id)

    def lock_granted(self, result: LockResult) -> None:
        """A lock was granted through this gateway when the log's head was `result.log_head`: reads of
        what it locks (a table; a database: all its tables) here go to the database until the cache has
        applied the head. Hive reads every object fresh, so a client that takes a lock and then reads
        sees every commit made before the grant, the one that freed the lock included: Iceberg's
        HiveCatalog commits so (lock, read metadata_location, alter, unlock), and with a stale read its
        commit would silently replace the previous holder's."""
        if not self.cache.enabled:
            return
        for scope in result.scopes:  # names as a lock keeps them: validated and lower-cased, as keys are
            self.cache.hold_until(scope.db, scope.table or "", result.log_head)

    def _hold(self, db_name: str, table_name: str, event_id: int) -> None:
        """After a latest-wins read from PostgreSQL that saw `event_id`: the object's reads here wait for it."""
        if not self.cache.enabled:
            return
        if table_name:
            self.cache.hold_until(*table_key(db_name, table_name), event_id)
        else:
            self.cache.hold_database_reads(database_key(db_name), event_id)
