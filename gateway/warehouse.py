"""The file-system side of DDL on managed tables, as Hive's metastore does it.

Engines rely on the metastore for this part of a managed table's life: Spark's DROP TABLE and DROP
PARTITION ask the metastore to delete the data (`deleteData`), Hive's TRUNCATE TABLE asks it to
empty the locations, and a partition rename asks it to move the partition's directory. External
tables (`tableType` EXTERNAL_TABLE or the `EXTERNAL=TRUE` parameter) are never touched: their data
belongs to someone else (store/placement.py has the rules). The order is Hive's: data is deleted
after the metadata change has committed (a failed delete leaves files no table points at, which is
logged, never a table whose files are gone), and a move runs inside the transaction, after the moved
rows are written and before the commit, and is undone when the commit fails. A move is planned from
this gateway's view of the tables, which may be older than the rows the store locks: the store
decides the moves again there, and a plan that differs is refused (`Moves`).

Creating is the one exception for external tables: as Hive's metastore does, a database, table
(external too) or partition gets its directory when it is created and the directory is missing, after
the create's rows are written and before it commits (so a concurrent create of the same name, which
waits on those rows and then fails, never touches it), and the directories made are removed again
when the create fails. Spark's CREATE TABLE ... AS SELECT loads its rows into the new table's
directory and fails when there is none. The transaction waits meanwhile: a file system slower than
PostgreSQL's idle_in_transaction_session_timeout (metastore.gateway.db.idle.in.transaction.timeout)
fails the create, and it is undone.

The gateway reaches local file systems only (a bare path or a `file:` URI). A location on another
file system (hdfs://, s3a://, ...) is left as it is, with one warning per scheme: an engine on such
a warehouse must manage the data itself (a limit of a metastore without Hadoop's file systems).
Every operation runs in a worker thread with a bound, so the event loop never blocks on a disk.

It works only inside its data roots (metastore.gateway.data.roots: by default the warehouse directory),
checked on the path with its symbolic links resolved; a root itself is never deleted, emptied or
moved. A location the caller chose anywhere else (a database's, a managed table's or a partition's) is
not the gateway's to touch, as a path Hive's metastore may not write is not Hive's: a drop with
deleteData of such a database or managed table, or of partitions of such a table, is refused before
anything changes (`check_deletable`), as Hive refuses one it may not delete; a partition placed there
by itself is dropped and its files left (logged); a create makes no directory there; a truncate or a
move is refused. Without this, any caller could have the gateway delete whatever its OS user may.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import shutil
from typing import AsyncIterator, Callable, Iterable, Sequence

from pipeline.acid import base_dir_name
from hive.names import split_location
from store.catalog import MakeLocations
from store.errors import Aborted, FailedPrecondition
from store.placement import Move

log = logging.getLogger(__name__)

# A delete or move of a large tree on a slow disk may take long; past this the call goes on without
# waiting (the thread finishes on its own) and says so in the log.
FILE_OPERATION_TIMEOUT_S = 120.0

# Hive's AcidMetaDataFile: the marker in a base its truncate writes.
ACID_METADATA_FILE = "_metadata_acid"
TRUNCATED_BASE_METADATA = {"thisFileVersion": "0", "dataFormat": "truncated"}


ANYWHERE = "*"  # metastore.gateway.data.roots: no bound but the OS user's
MAX_WARNED_PATHS = 10_000


class Warehouse:
    def __init__(self, roots: Sequence[str] = (ANYWHERE,)) -> None:
        """`roots`: the local directories (paths or file: URIs) the gateway's file work stays inside;
        ANYWHERE for no bound."""
        self._warned_schemes: set[str] = set()
        self._warned_paths: set[str] = set()  # each path left outside the roots is logged once (bounded)
        self._anywhere = ANYWHERE in roots
        self._roots = tuple(os.path.realpath(p) for p in map(self._local, (r for r in roots if r != ANYWHERE))
                            if p is not None)

    def local_path(self, location: str) -> str | None:
        """The local path of `location` inside the data roots, or None when it is not on a local file
        system (`_local`) or lies outside the roots (logged)."""
        path = self._local(location)
        if path is None or self._inside(path, root_too=True):
            return path
        if path not in self._warned_paths and len(self._warned_paths) < MAX_WARNED_PATHS:
            self._warned_paths.add(path)
            log.warning("left %s as it is: outside the gateway's data roots (metastore.gateway.data.roots: %s)",
                        path, ", ".join(self._roots) or "none")
        return None

    def _inside(self, path: str, *, root_too: bool = False) -> bool:
        """Whether `path`, its symbolic links resolved, lies in a data root (or is one, with `root_too`)."""
        if self._anywhere:
            return True
        real = os.path.realpath(path)
        return any(real.startswith(root.rstrip(os.sep) + os.sep) or (root_too and real == root)
                   for root in self._roots)

    def is_outside_roots(self, location: str) -> bool:
        """Whether `location` is a local directory outside the data roots, where the gateway changes no
        file (a root itself, and whatever is below one, is inside). The compactor's Cleaner asks this
        before deleting what a compaction made obsolete below a table's or a partition's location."""
        path = self._local(location)
        return path is not None and not self._inside(path, root_too=True)

    def check_deletable(self, location: str, what: str) -> None:
        """Before a drop with deleteData: FailedPrecondition, so that nothing is dropped, when the object's
        local data lies outside the data roots (or is one), as Hive's metastore refuses to drop what it may
        not delete ("metadata not deleted since ... is not writable"); dropped, the metadata would go and the
        files stay, and a table or partition made again under the name would read them."""
        self._changeable(location, what, subject="its data at ",
                         remedy="nothing was dropped: list that directory there, or drop it without its data "
                                "(deleteData false)")

    def _changeable(self, location: str, what: str, *, subject: str = "",
                    remedy: str = "the gateway changes no files there, so nothing was changed") -> str | None:
        """The local path of a location a truncate, a move or a drop changes: None when it is not local;
        FailedPrecondition, before anything changes, when it is outside the data roots or is one."""
        path = self._local(location)
        if path is not None and not self._inside(path):
            raise FailedPrecondition(f"{what}: {subject}{path} is outside the gateway's data roots "
                                     f"(metastore.gateway.data.roots), or is one; {remedy}")
        return path

    def _local(self, location: str) -> str | None:
        """The local path of `location`, or None when it is not on a local file system (or names no
        path a file system can hold: a NUL, which the store refuses in any location).

        Read as Hadoop's Path reads a location, not as a URL: what follows the scheme (and the
        authority, after `//`) is the path as it is, so a partition directory Hive escaped, such as
        `hr=10%3A00`, is that directory and not `hr=10:00`, and `#` or `?` are part of the path."""
        if not location or "\x00" in location:
            return None
        scheme, path = split_location(location)
        if scheme in ("", "file") and path.startswith("/"):
            return os.path.normpath(path)
        if scheme not in self._warned_schemes:
            self._warned_schemes.add(scheme)
            log.warning("locations on %s:// are not on a local file system: the gateway makes, deletes and moves "
                        "none of their directories (the engine must manage them)", scheme)
        return None

    async def delete(self, locations: Iterable[str], what: str) -> None:
        """Delete each location's tree after a drop committed; failures are logged, never raised. A data
        root itself is not deleted (a database placed at the warehouse's root leaves the root)."""
        paths = sorted({p for p in map(self.local_path, locations) if p is not None and self._inside(p)})
        # A partition's directory under the table's is removed with it: delete the outermost only.
        outermost = [p for p in paths if not any(p != q and p.startswith(q + os.sep) for q in paths)]
        for path in outermost:
            try:
                await self._run(what, shutil.rmtree, path)
            except FileNotFoundError:
                pass
            except OSError as e:
                log.error("%s committed, but its data at %s could not be deleted: %s", what, path, e)

    async def delete_empty_parents(self, locations: Iterable[str], root: str) -> None:
        """Hive's deleteParentRecursive after a partition drop: `a=1/` goes once its last `b=.../` has."""
        top = self.local_path(root)
        paths = [p for p in map(self.local_path, locations) if p is not None]
        if top is not None and paths:
            await self._run("remove empty partition directories", _remove_empty_parents, top, *paths)

    async def empty(self, locations: Iterable[str], what: str) -> None:
        """Hive's truncate: remove what each directory holds and keep the directory itself."""
        locations = list(locations)
        for location in locations:  # all checked before any is emptied
            self._changeable(location, what)
        for path in sorted({p for p in map(self._local, locations) if p is not None}):
            try:
                await self._run(what, _empty_dir, path)
            except OSError as e:
                raise FailedPrecondition(f"{what}: could not empty {path}: {e}") from e

    async def add_empty_base(self, locations: Iterable[str], write_id: int, what: str) -> None:
        """Hive 4's truncate of a transactional table: an empty `base_<write id>` in each location, holding
        only Hive's `_metadata_acid` marker (Hive's listing skips an empty directory). A reader whose
        snapshot holds the write id reads nothing older; the files stay for the cleaner, and the base of
        a write id whose txn aborts is read by no one, so this runs before the metadata change commits."""
        base = base_dir_name(write_id)
        locations = list(locations)
        for location in locations:
            self._changeable(location, what)
        for path in sorted({p for p in map(self._local, locations) if p is not None}):
            try:
                await self._run(what, _write_truncating_base, os.path.join(path, base))
            except OSError as e:
                raise FailedPrecondition(f"{what}: could not make {os.path.join(path, base)}: {e}") from e

    async def move(self, source: str, target: str, what: str) -> bool:
        """Move a directory before its metadata change commits. False when there is nothing to move
        (the source does not exist or is not local); FailedPrecondition when the target exists."""
        src, dst = self._changeable(source, what), self._changeable(target, what)
        if src is None or dst is None or src == dst or not os.path.exists(src):
            return False
        if os.path.exists(dst):
            raise FailedPrecondition(f"{what}: the new location {target} already exists; remove it or choose "
                                     f"another name")
        await self._run(what, _rename, src, dst)
        return True

    @contextlib.asynccontextmanager
    async def creating(self, what: str) -> AsyncIterator[MakeLocations]:
        """For a create: yields what the store runs with the locations of the objects it creates, once
        their rows are written and before it commits (store/catalog.py `MakeLocations`, Hive's order).
        It makes each location's directory where it is missing, or raises FailedPrecondition with none of
        that call's made when a location is a file or cannot be made (the create then rolls back). When
        the block raises, every directory it made is removed again; the block is the store's
        transaction, so that happens only when nothing was committed."""
        made: list[str] = []

        async def make(locations: Sequence[str]) -> None:
            paths = sorted({p for p in map(self.local_path, locations) if p is not None})
            if not paths:
                return
            try:
                made.extend(await asyncio.wait_for(asyncio.to_thread(_make_dirs, paths), FILE_OPERATION_TIMEOUT_S))
            except TimeoutError as e:
                raise FailedPrecondition(f"{what}: making the directories {', '.join(paths)} took more than "
                                         f"{FILE_OPERATION_TIMEOUT_S:.0f} s") from e
            except OSError as e:
                raise FailedPrecondition(f"{what}: {e.filename} is not a directory and could not be made one "
                                         f"({e.strerror})") from e

        try:
            yield make
        except Exception:  # (not on cancellation: the create may have committed; an empty directory is harmless)
            if made:
                await self._run(f"undo of the directories of {what}", _remove_made, *made)
            raise

    @contextlib.asynccontextmanager
    async def moving(self, moves: Sequence[Move], what: str) -> AsyncIterator[Moves]:
        """For a rename or an exchange: yields what the store runs once the moved rows are written and
        before it commits (store/catalog.py `MoveLocations`, Hive's order: a concurrent rename of the same
        object waits on those rows, finds the old name gone and moves nothing). It checks the store's
        moves are `moves` (see `Moves`), then moves each (source, target) directory (see `move`), once
        however often a retried transaction runs it. When the block raises, the moves made are undone,
        the last first."""
        run = Moves(self, moves, what)
        try:
            yield run
        except BaseException:  # (cancelled too: the change did not commit, or its answer is lost either way)
            for source, target in reversed(run.done):
                await self.move(target, source, f"undo of {what}")
            raise

    @staticmethod
    async def _run(what: str, fn: Callable[..., None], *paths: str) -> None:
        try:
            await asyncio.wait_for(asyncio.to_thread(fn, *paths), FILE_OPERATION_TIMEOUT_S)
        except TimeoutError:
            log.error("%s: the file operation on %s is still running after %.0f s; not waiting for it",
                      what, ", ".join(paths), FILE_OPERATION_TIMEOUT_S)


def _empty_dir(path: str) -> None:
    if not os.path.isdir(path):
        os.makedirs(path, exist_ok=True)
        return
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


def _write_truncating_base(base: str) -> None:
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, ACID_METADATA_FILE), "w", encoding="utf-8") as f:
        json.dump(TRUNCATED_BASE_METADATA, f, separators=(",", ":"))


def _rename(src: str, dst: str) -> None:
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    os.rename(src, dst)


class Moves:
    """The directory moves of one rename or exchange (Warehouse.moving), as planned from this gateway's
    view of the tables. The store calls it inside its transaction with the moves its change implies as
    it found the objects, their rows locked (store/catalog.py `MoveLocations`); when they differ from
    the plan (a table or partition changed since this gateway read it: another client's change, or
    one its poller has not applied yet) the change is refused (Aborted) before anything moves, as
    the objects are not where the plan, or the client, saw them. `done` holds the moves made, in order."""

    def __init__(self, warehouse: Warehouse, moves: Sequence[Move], what: str) -> None:
        self._warehouse = warehouse
        self._moves = _actual(moves)
        self._what = what
        self._ran = False
        self.done: list[Move] = []

    async def __call__(self, moves: Sequence[Move]) -> None:
        found = _actual(moves)
        if sorted(found) != sorted(self._moves):
            raise Aborted(f"{self._what}: the tables or partitions changed while it ran (another client's change, "
                          f"which this gateway had not seen yet): it planned to move {_described(self._moves)}, but "
                          f"as they are now it moves {_described(found)}; nothing was changed, retry")
        if self._ran:
            return
        self._ran = True
        for source, target in self._moves:
            if await self._warehouse.move(source, target, self._what):
                self.done.append((source, target))


def _actual(moves: Iterable[Move]) -> list[Move]:
    """The moves that move something (an object that stays is no move)."""
    return [(source, target) for source, target in moves if source != target]


def _described(moves: Sequence[Move], limit: int = 3) -> str:
    if not moves:
        return "nothing"
    shown = ", ".join(f"{source} to {target}" for source, target in moves[:limit])
    return shown + (f" and {len(moves) - limit} more" if len(moves) > limit else "")


def _remove_empty_parents(root: str, *paths: str) -> None:
    for path in paths:
        parent = os.path.dirname(path)
        while parent.startswith(root + os.sep):
            try:
                os.rmdir(parent)  # only when empty
            except OSError:
                break
            parent = os.path.dirname(parent)


def _make_dirs(paths: Sequence[str]) -> list[str]:
    """Make each missing directory; the directories made. All or nothing: on a failure the ones made
    before it are removed again."""
    made: list[str] = []
    try:
        for path in paths:
            made += _make_dir(path)
    except OSError:
        _remove_made(*made)
        raise
    return made


def _make_dir(path: str) -> list[str]:
    """Make `path` where it is missing, with its missing parents; those made. One system call when the
    parent exists (a new partition of a table), two when `path` does: each call of a worker thread
    waits for the GIL again, behind a busy event loop."""
    try:
        os.mkdir(path)
        return [path]
    except FileExistsError:
        if not os.path.isdir(path):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path) from None
        return []
    except FileNotFoundError:  # a parent is missing too
        missing = _missing(path)
        os.makedirs(path, exist_ok=True)
        return missing


def _missing(path: str) -> list[str]:
    """`path` and those of its parents that do not exist, innermost first."""
    missing = []
    while not os.path.lexists(path) and path not in missing:
        missing.append(path)
        path = os.path.dirname(path)
    return missing


def _remove_made(*made: str) -> None:
    """Remove the directories made that are empty, the deepest first so a parent goes after its children
    (a sibling another create made meanwhile, or files written into them, keep a parent)."""
    for path in sorted(made, key=len, reverse=True):
        try:
            os.rmdir(path)
        except OSError:
            pass
