"""Hive's generated constraint names (store/constraints.py): `<kind>_<Java hash of the names>_<ms>_<n>`, the
hashes those Hive Metastore 2.3.10 generated for the same constraints (seen from its get_primary_keys and
get_foreign_keys: pk_-1452274156_..., fk_-1678860306_...); a call's unnamed rows grouped as Hive groups them."""

from __future__ import annotations

import pytest

from store.constraints import ConstraintColumn, Kind, _generated_base, _group, java_string_hash
from store.errors import ConstraintRefused, InvalidArgument


def _pk(column: str, seq: int, name: str | None = None, table: str = "un") -> ConstraintColumn:
    return ConstraintColumn(Kind.PRIMARY_KEY, "p1", table, column, name, seq)


def test_generated_names_carry_the_hash_hive_computes() -> None:
    assert java_string_hash("") == 0 and java_string_hash("a") == 97
    assert java_string_hash("{p1,un,id,pk}") == -1452274156
    assert _generated_base(_pk("id", 1)) == "pk_-1452274156"
    fk = ConstraintColumn(Kind.FOREIGN_KEY, "p1", "ch5", "id", None, 1, "p1", "par", "id")
    assert _generated_base(fk) == "fk_-1678860306"
    not_null = ConstraintColumn(Kind.NOT_NULL, "db", "t", "amount")
    assert _generated_base(not_null) == f"nn_{java_string_hash('{db,t,amount,nn}')}"


def test_unnamed_rows_group_from_key_seq_1_and_named_rows_by_lower_cased_name() -> None:
    groups = _group([_pk("id", 1), _pk("amount", 2), _pk("x", 1, "PK_A", "t"), _pk("y", 2, "pk_a", "t"),
                     ConstraintColumn(Kind.NOT_NULL, "p1", "t", "x"), ConstraintColumn(Kind.NOT_NULL, "p1", "t", "y")])
    assert [(kind, name, [r.column_name for r in rows]) for kind, name, rows in groups] == [
        (Kind.PRIMARY_KEY, None, ["id", "amount"]), (Kind.PRIMARY_KEY, "pk_a", ["x", "y"]),
        (Kind.NOT_NULL, None, ["x"]), (Kind.NOT_NULL, None, ["y"])]
    with pytest.raises(InvalidArgument, match="key_seq order"):
        _group([_pk("amount", 2)])
    with pytest.raises(ConstraintRefused, match="Constraint name already exists: c"):
        _group([_pk("id", 1, "c"), ConstraintColumn(Kind.NOT_NULL, "p1", "un", "id", "C")])
    with pytest.raises(InvalidArgument, match="must not be empty"):
        _group([_pk("id", 1, " ")])
