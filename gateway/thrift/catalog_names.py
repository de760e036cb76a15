"""Hive 3's and 4's catalog-qualified database names in the Thrift calls whose arguments name no
catalog of their own.

Since Hive 3 (HIVE-18755, catalogs) the metastore client names a database with its catalog in
every such call, `@hive#db` (MetaStoreUtils.prependCatalogToDbName), and lists every database with
`get_databases("@hive#")`; Hive's HMSHandler reads each of these arguments with parseDbName. So a
Hive 4 DROP TABLE (drop_table_with_environment_context), TRUNCATE (truncate_table_req), SHOW
DATABASES, a listing of partitions by the older methods, ... name `@hive#db`. This metastore has
one catalog, Hive's default `hive`: a name in it is read as the bare name, before the method runs,
so the methods see what Hive 2 clients and Trino send. A name in another catalog is refused as not
found (NoSuchObjectException where the method declares it, else MetaException), where Hive answers
its listings empty: no catalog but `hive` exists here to list. The same hook checks the catalog that a
struct argument names in its own field (a request's catName, catalogName), for every method at once:
the methods themselves never look at those fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hive.names import DEFAULT_CATALOG_NAME, split_catalog
from store.errors import NotFound

# The arguments Hive's HMSHandler reads with parseDbName: a database name, whatever the method.
_DATABASE_ARGUMENTS = frozenset({"db_name", "dbname", "dbName", "source_db", "dest_db"})
# Arguments of other names that carry one in a few methods.
_METHOD_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "get_database": ("name",), "drop_database": ("name",), "get_databases": ("pattern",),
    "get_table_meta": ("db_patterns",),
}
# Request structs whose database field Hive's handler parses too (the client prepends the catalog).
_REQUEST_FIELDS: dict[str, tuple[str, str]] = {
    "truncate_table_req": ("req", "dbName"),                 # HiveMetaStoreClient.truncateTableInternal
    "get_partitions_by_names_req": ("req", "db_name"),       # getPartitionsByNames(cat, db, tbl, names)
    "alter_database_req": ("req", "oldDbName"),               # alterDatabase(cat, db, newDb)
    "drop_table_req": ("req", "dbName"),                     # the newest client's dropTable
    "drop_partition_req": ("req", "dbName"),                 # ... dropPartition
    "append_partition_req": ("req", "dbName"),               # ... appendPartition
    "get_partitions_with_specs": ("request", "dbName"),      # Hive 4's MSCK REPAIR
}


# The fields that name a catalog in Hive 3's and 4's request structs (cat_name: DeleteColumnStatisticsRequest's).
_CATALOG_FIELDS = ("catName", "catalogName", "cat_name")


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the hook does for one method, found from its argument types once: it runs before every
    call, the cached reads' included."""

    database_arguments: tuple[str, ...]  # arguments holding a database name, maybe `@cat#db`
    catalog_fields: tuple[tuple[str, str], ...]  # (struct argument, its field naming a catalog)
    request_field: tuple[str, str] | None  # (request argument, its database field), _REQUEST_FIELDS


_PLANS: dict[str, _Plan] = {}


def unqualify_database_names(method: str, args: Any) -> None:
    """Rewrite, in place, the catalog-qualified database names among `method`'s decoded arguments
    `args` to the bare names (None where `@hive#` names none), and check the catalog a struct argument
    names in its own field (a request's catName or catalogName); raises NotFound for another catalog,
    so no method reads or writes this metastore's objects for a catalog it does not have."""
    plan = _PLANS.get(method) or _PLANS.setdefault(method, _plan_of(method, args))
    for name in plan.database_arguments:
        setattr(args, name, unqualified(getattr(args, name)))
    for name, field in plan.catalog_fields:
        value = getattr(args, name)
        if value is not None:
            check_catalog(getattr(value, field, None))
    if plan.request_field is not None:
        struct_name, field = plan.request_field
        request = getattr(args, struct_name, None)
        if request is not None:
            setattr(request, field, unqualified(getattr(request, field, None)))


def _plan_of(method: str, args: Any) -> _Plan:
    specs = list(args.thrift_spec.values())
    names = {spec[1] for spec in specs}
    catalog_fields: list[tuple[str, str]] = []
    for spec in specs:
        struct = spec[2] if len(spec) > 2 and hasattr(spec[2], "thrift_spec") else None
        fields = {f[1] for f in struct.thrift_spec.values()} if struct is not None else set()
        catalog_fields.extend((spec[1], field) for field in _CATALOG_FIELDS if field in fields)
    return _Plan(
        tuple(n for n in (*sorted(names & _DATABASE_ARGUMENTS), *_METHOD_ARGUMENTS.get(method, ())) if n in names),
        tuple(catalog_fields), _REQUEST_FIELDS.get(method))


def unqualified(value: Any) -> Any:
    """`value` without its catalog when it names one (checked to be this metastore's), else as it is."""
    if not isinstance(value, str):
        return value
    catalog, database = split_catalog(value)
    check_catalog(catalog)
    return database


def check_catalog(catalog: str | None) -> None:
    """Raises NotFound unless `catalog` is this metastore's one catalog (or None: none named), as a
    request's `catName`/`catalogName` field names it."""
    if catalog is not None and catalog.lower() != DEFAULT_CATALOG_NAME:
        raise NotFound(f"catalog {catalog!r} does not exist: this metastore has one catalog, {DEFAULT_CATALOG_NAME!r}")
