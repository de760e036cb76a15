"""hive/stats_accuracy.py: Hive's COLUMN_STATS_ACCURATE read and written as Hive 2.3 does (the values
below are Hive Metastore 2.3.10's, from tests/e2e/test_thrift_differential.py's ACCURACY_STEPS, or follow
its Jackson reader: the two known fields only, a flag true when it reads "true" in any case)."""

from __future__ import annotations

import pytest

from hive.stats_accuracy import STATS_ACCURATE, format_value, mark_columns, parse, unmark_columns


@pytest.mark.parametrize(("value", "expected"), [
    (None, (False, {})),
    ("TRUE", (True, {})),  # Hive's old spelling: the basic statistics
    ("true", (True, {})),
    ("false", (False, {})),
    ("{not json", (False, {})),
    ("", (False, {})),
    ('{"BASIC_STATS":"true","COLUMN_STATS":{"amount":"false","zz":"true"}}', (True, {"amount": False, "zz": True})),
    ('{"BASIC_STATS":true,"COLUMN_STATS":{"a":"TRUE","b":false,"c":1}}',
     (True, {"a": True, "b": False, "c": False})),
    ('  {"COLUMN_STATS":{"id":"true"}} and more', (False, {"id": True})),  # Jackson stops after the object
    ('{"COLUMN_STATS":null}', (False, {})),
    ('{"OTHER":"true"}', (False, {})),  # an unknown field: Jackson's reader fails, nothing is marked
    ('{"COLUMN_STATS":"id"}', (False, {})),
    ('{"COLUMN_STATS":{"id":{"x":1}}}', (False, {})),
])
def test_a_value_reads_as_hives_reader_reads_it(value: str | None, expected: tuple[bool, dict[str, bool]]) -> None:
    assert parse(value) == expected


def test_it_is_written_as_hive_writes_it() -> None:
    assert format_value(False, {}) == "{}"
    assert format_value(True, {}) == '{"BASIC_STATS":"true"}'
    # Java's String order: upper case before lower case, by UTF-16 code unit.
    assert format_value(False, {"b": True, "a": False, "B": True, "\U0001f600": True, "\uffee": True}) == \
        '{"COLUMN_STATS":{"B":"true","a":"false","b":"true","\U0001f600":"true","\uffee":"true"}}'


def test_a_write_marks_new_columns_and_keeps_the_flags_already_there() -> None:
    assert mark_columns({"a": "1"}, ["id"]) == {"a": "1", STATS_ACCURATE: '{"COLUMN_STATS":{"id":"true"}}'}
    before = {STATS_ACCURATE: '{"BASIC_STATS":"true","COLUMN_STATS":{"amount":"false","zz":"true"}}'}
    assert mark_columns(before, ["id", "amount"]) == {
        STATS_ACCURATE: '{"BASIC_STATS":"true","COLUMN_STATS":{"amount":"false","id":"true","zz":"true"}}'}
    assert mark_columns({STATS_ACCURATE: "TRUE"}, ["id"]) == {
        STATS_ACCURATE: '{"BASIC_STATS":"true","COLUMN_STATS":{"id":"true"}}'}
    assert mark_columns({STATS_ACCURATE: "{not json"}, ["amount"]) == {
        STATS_ACCURATE: '{"COLUMN_STATS":{"amount":"true"}}'}


def test_unmarking_rewrites_the_value_even_when_nothing_was_listed() -> None:
    before = {STATS_ACCURATE: '{"BASIC_STATS":"true","COLUMN_STATS":{"amount":"true","id":"true"}}'}
    assert unmark_columns(before, ["amount"]) == {STATS_ACCURATE: '{"BASIC_STATS":"true","COLUMN_STATS":{"id":"true"}}'}
    assert unmark_columns(before, ["amount", "id"]) == {STATS_ACCURATE: '{"BASIC_STATS":"true"}'}
    assert unmark_columns({STATS_ACCURATE: "{not json"}, []) == {STATS_ACCURATE: "{}"}
    assert unmark_columns({}, ["id"]) == {STATS_ACCURATE: "{}"}
