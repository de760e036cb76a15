"""Whose data a table's is, and where a rename or an exchange moves it: Hive's rules, in one place.

The Thrift methods that move a managed table's directories with its metadata (a table's or a
partition's rename, an exchange) plan the moves from the gateway's view of the tables, which may be
behind another gateway's change (its poller has not applied it yet). The store applies these same
rules to the rows as its transaction has locked them, places the objects accordingly and hands the
moves that follow to the gateway's hook (store/catalog.py `MoveLocations`), which refuses the change
when they are not the moves it planned (gateway/warehouse.py `Moves`): what the store finds decides,
and nothing moves on a stale view.

A move is (from, to): where the object's directory is, where it goes; (x, x) when it stays.
"""

from __future__ import annotations

from typing import Awaitable, Callable

from hive import names as n
from store.models import Partition, Table, TableType

Move = tuple[str, str]


def is_external(table: Table) -> bool:
    """Hive's MetaStoreUtils.isExternalTable, plus the table type Spark and Hive 3 set together with it."""
    return table.table_type == TableType.EXTERNAL or table.parameters.get("EXTERNAL", "").upper() == "TRUE"


def owns_data(table: Table) -> bool:
    """Whether the metastore deletes or moves this table's data: managed tables only (views have none)."""
    return table.table_type == TableType.MANAGED and not is_external(table)


def renames(old: Table, new: Table) -> bool:
    """Whether an alter of `old` to `new` gives the table another name (database or table)."""
    return (n.normalize_identifier(new.db_name or old.db_name, "database"),
            n.normalize_identifier(new.name or old.name, "table")) != (old.db_name, old.name)


def same_location(sent: str, stored: str) -> bool:
    """Whether a location a client sends back names the stored one: equal, or equal but for the `file:`
    scheme the Thrift endpoint now qualifies a bare path with (fs.defaultFS `file:///`), so an object
    stored before with a bare path (`/w/db.db/t`) is still at its place when the client sends it back
    (`file:/w/db.db/t`). Only local locations are moved, so only `file:` needs this: two local locations
    (`file:` or no scheme) are one place when their paths, as Hadoop's Path reads them, are one."""
    if sent == stored:
        return True
    (sent_scheme, sent_path), (stored_scheme, stored_path) = n.split_location(sent), n.split_location(stored)
    return {sent_scheme, stored_scheme} <= {"", "file"} and sent_path == stored_path


async def renamed_table_location(old: Table, new: Table,
                                 database_location: Callable[[str], Awaitable[str]]) -> str | None:
    """Where a rename of `old` to `new`'s name moves the table's directory, or None when it stays
    (or it is no rename). Hive 3's rule: a managed, non-transactional table at its default place under
    its database goes to the new name's default place under the target database, unless the caller
    placed it (gave a location other than its own); a table placed elsewhere by its creator stays
    there, as does an external table's data. `database_location` answers a database's location (asked
    only when the rule needs it)."""
    if not renames(old, new) or not owns_data(old) or old.transactional:
        return None
    if new.sd.location and not same_location(new.sd.location, old.sd.location):
        return None  # the caller placed it
    if old.sd.location != n.default_location(await database_location(old.db_name), old.name):
        return None
    new_db = n.normalize_identifier(new.db_name or old.db_name, "database")
    return n.default_location(await database_location(new_db), n.normalize_identifier(new.name or old.name, "table"))


async def renamed_partition_location(table: Table, old_location: str, old_name: str, new_name: str,
                                     requested: str,
                                     database_location: Callable[[str], Awaitable[str]]) -> str | None:
    """Where a rename of partition `old_name` (at `old_location`) to `new_name` moves its directory, or
    None when it stays: a managed table's partition at its default place (the keys' names in any case) goes
    to the new name's under the table's directory, unless the caller placed it (`requested`, the new
    partition's location, is neither empty nor the old one). Its default place is the name's directories
    under the table's directory, or under the table's default one (`<database location>/<table>`,
    `database_location` answering the database's), where its partitions stay when the table is given
    another location (SET LOCATION moves none): Hive moves every managed table's partition to the new
    name's directory under the table's, and Spark's rename of one whose key is declared in upper case
    counts on that (it then renames that directory to its own spelling); one placed elsewhere stays."""
    if not owns_data(table) or (requested and not same_location(requested, old_location)):
        return None
    if _at_default_place(old_location, table.sd.location, old_name) or _at_default_place(
            old_location, n.default_location(await database_location(table.db_name), table.name), old_name):
        return n.default_location(table.sd.location, new_name)
    return None


def _at_default_place(location: str, table_location: str, name: str) -> bool:
    """Whether a partition named `name` at `location` is at its default place, the keys' names in any case:
    Spark keeps a Hive table's partition columns in the case they were declared in and writes `Ds=x` where the
    metastore's name (and default directory) is `ds=x`. Spark's rename of such a partition counts on the
    metastore moving it to the lower-case default directory, as Hive does, and then renames that to its own.
    A key is lower-cased as a name, not as its escaped text: `A%3AB=x` (key `A:B`) is at `a%3AB`'s place."""
    default = n.default_location(table_location, name)
    if location == default:
        return True
    depth = name.count("/") + 1  # a directory a key (an escaped value holds no '/')
    parts = location.split("/")
    if len(parts) <= depth:
        return False
    lowered = [n.escape_path_name(n.unescape_path_name(k).lower()) + sep + v
               for k, sep, v in (part.partition("=") for part in parts[-depth:])]
    return "/".join(parts[:-depth] + lowered) == default


def exchanged_location(p: Partition, source: Table, dest: Table) -> str:
    """Where an exchanged partition goes when the caller can move the files: when the source owns its
    data, from its default place under the source table to its default place under `dest`, an external
    `dest` too, as Hive moves it (left in the source's directory, a drop of the source, whose data is
    deleted whole, would take the partition's files with it, and a rename of the source would move them
    from under it); otherwise, or when it is placed elsewhere, it stays where it is (an external table's
    data is not the metastore's to move)."""
    if owns_data(source) and dest.sd.location and p.sd.location == n.default_location(source.sd.location, p.name):
        return n.default_location(dest.sd.location, p.name)
    return p.sd.location
