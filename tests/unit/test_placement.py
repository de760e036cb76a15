"""Where a rename moves a managed table's partition (store/placement.py): Hive's rules, pure."""

from __future__ import annotations

import asyncio

from hive import names as n
from store.models import FieldSchema, StorageDescriptor, Table
from store.placement import renamed_partition_location

KEYS = (FieldSchema("a:b", "string"), FieldSchema("event day", "string"))
TABLE = Table("d1", "s", partition_keys=KEYS, sd=StorageDescriptor(location="file:/w/d1.db/s"))


async def _database_location(db: str) -> str:
    return f"file:/w/{db}.db"


def _moved(location: str, old: tuple[str, str], new: tuple[str, str]) -> str | None:
    return asyncio.run(renamed_partition_location(TABLE, location, n.make_partition_name(KEYS, old),
                                                  n.make_partition_name(KEYS, new), "", _database_location))


def test_a_partition_at_its_default_place_spelled_in_its_keys_declared_case_moves_to_the_new_names() -> None:
    # Spark's data source table keyed by `a:b` and `Event Day` writes a%3Ab=k%3Dv/Event Day=x y; the metastore's
    # name is a%3Ab=k%3Dv/event day=x y. Spark's rename counts on the move to the new lower-case default place
    # (then renames that to its own spelling), as Hive 2.3.10 moves it.
    assert _moved("file:/w/d1.db/s/a%3Ab=k%3Dv/Event Day=x y", ("k=v", "x y"), ("q", "x y")) == \
        "file:/w/d1.db/s/a%3Ab=q/event day=x y"
    assert _moved("file:/w/d1.db/s/A%3AB=k%3Dv/event day=x y", ("k=v", "x y"), ("q", "x y")) == \
        "file:/w/d1.db/s/a%3Ab=q/event day=x y"


def test_a_partition_placed_elsewhere_stays() -> None:
    assert _moved("file:/w/parts/p1", ("k=v", "x y"), ("q", "x y")) is None
    # Not its own name's directory: another value's.
    assert _moved("file:/w/d1.db/s/a%3Ab=other/Event Day=x y", ("k=v", "x y"), ("q", "x y")) is None
