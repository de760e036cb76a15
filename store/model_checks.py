"""The free-text bounds of hive/limits.py applied to the catalog's objects, before any is stored.

Both protocols reach these through the catalog functions (store/catalog.py), so a gRPC and a
Thrift client get the same refusal with the same message. Names, types and partition values
have rules of their own (hive/names.py); here only what those leave free: descriptions, owners,
locations, class names, comments, parameters, view text and the lists a storage descriptor holds.
"""

from __future__ import annotations

from hive import limits as lim
from hive.errors import InvalidArgument
from store.models import OWNER_TYPES, Database, FieldSchema, Partition, StorageDescriptor, Table


def check_owner_type(owner_type: str, what: str) -> None:
    if owner_type not in OWNER_TYPES:
        allowed = ", ".join(OWNER_TYPES)
        raise InvalidArgument(f"{what}: owner type {lim.preview(owner_type, 40)} is not one of {allowed}")


def check_database(db: Database) -> None:
    what = f"database {lim.preview(db.name, 40)}"
    lim.check_text(db.name, f"{what}: name", lim.NAME)
    lim.check_text(db.description or "", f"{what}: description", lim.DESCRIPTION)
    lim.check_text(db.location, f"{what}: location", lim.LOCATION)
    lim.check_text(db.owner or "", f"{what}: owner", lim.OWNER)
    check_owner_type(db.owner_type, what)
    lim.check_params(db.parameters, f"{what}: parameters")


def check_fields(fields: tuple[FieldSchema, ...], what: str) -> None:
    lim.check_count(len(fields), what, lim.LIST_ITEMS * 10)  # wide tables have thousands of columns
    for f in fields:
        lim.check_text(f.name, f"{what}: a name", lim.COLUMN_TYPE)  # names have their own rules; bound first
        lim.check_text(f.type, f"{what} {lim.preview(f.name, 40)}: type", lim.COLUMN_TYPE)
        lim.check_text(f.comment, f"{what} {lim.preview(f.name, 40)}: comment", lim.COMMENT)


def check_storage(sd: StorageDescriptor, what: str) -> None:
    lim.check_text(sd.location, f"{what}: location", lim.LOCATION)
    lim.check_text(sd.input_format, f"{what}: input format", lim.CLASS_NAME)
    lim.check_text(sd.output_format, f"{what}: output format", lim.CLASS_NAME)
    lim.check_text(sd.serde.name, f"{what}: serde name", lim.NAME)
    lim.check_text(sd.serde.serialization_lib, f"{what}: serde class", lim.CLASS_NAME)
    lim.check_params(sd.serde.parameters, f"{what}: serde parameters")
    lim.check_params(sd.parameters, f"{what}: storage parameters")
    lim.check_count(len(sd.bucket_cols), f"{what}: bucket columns")
    for col in sd.bucket_cols:
        lim.check_text(col, f"{what}: a bucket column", lim.PARAM_KEY)
    lim.check_count(len(sd.sort_cols), f"{what}: sort columns")
    for order in sd.sort_cols:
        lim.check_text(order.column, f"{what}: a sort column", lim.PARAM_KEY)
        if order.order not in (0, 1):
            raise InvalidArgument(f"{what}: sort column {lim.preview(order.column, 40)} has order {order.order}; "
                                  "Hive's orders are 1 (ascending) and 0 (descending)")
    skewed = sd.skewed
    lim.check_count(len(skewed.column_names), f"{what}: skewed columns")
    lim.check_count(len(skewed.column_values), f"{what}: skewed values")
    lim.check_count(len(skewed.value_locations), f"{what}: skewed value locations")
    for col in skewed.column_names:
        lim.check_text(col, f"{what}: a skewed column", lim.PARAM_KEY)
    for values in (*skewed.column_values, *(v for v, _ in skewed.value_locations)):
        lim.check_count(len(values), f"{what}: a skewed value tuple")
        for value in values:
            lim.check_text(value, f"{what}: a skewed value", lim.PARTITION_VALUE)
    for _, location in skewed.value_locations:
        lim.check_text(location, f"{what}: a skewed value location", lim.LOCATION)


def check_table(t: Table) -> None:
    what = f"table {lim.preview(t.db_name, 40)}.{lim.preview(t.name, 40)}"
    lim.check_text(t.db_name, f"{what}: database name", lim.NAME)
    lim.check_text(t.name, f"{what}: name", lim.NAME)
    lim.check_text(t.owner or "", f"{what}: owner", lim.OWNER)
    check_owner_type(t.owner_type, what)
    check_fields(t.columns, f"{what}: column")
    check_fields(t.partition_keys, f"{what}: partition key")
    check_storage(t.sd, what)
    lim.check_params(t.parameters, f"{what}: parameters")
    lim.check_text(t.view_original_text, f"{what}: view text", lim.VIEW_TEXT)
    lim.check_text(t.view_expanded_text, f"{what}: expanded view text", lim.VIEW_TEXT)


def check_partition(p: Partition, what: str) -> None:
    """Before the values are checked against their keys (hive/names.py), which quotes them."""
    lim.check_count(len(p.values), f"{what}: values")
    for value in p.values:
        lim.check_text(value, f"{what}: a value", lim.PARTITION_VALUE)
    check_storage(p.sd, what)
    lim.check_params(p.parameters, f"{what}: parameters")
    if p.columns:
        check_fields(p.columns, f"{what}: column")
