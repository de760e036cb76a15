"""hive/stats_accuracy.py: Hive's COLUMN_STATS_ACCURATE read and written as Hive 2.3 does (the values
below are Hive Metastore 2.3.10's, from tests/e2e/test_thrift_differential.py's ACCURACY_STEPS, or follow
its Jackson reader: the two known fields only, a flag true when it reads "true" in any case)."""

from __future__ import annotations

import pytest

from hive.stats_accuracy import (NO_CONTEXT, STATS_ACCURATE, AlterContext, after_partition_alter, after_table_alter,
                                  format_value, mark_columns, parse, unmark_columns)


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


# What Hive Metastore 2.3.10 stores for an alter (tests/e2e/test_thrift_differential.py's MARKS_STEPS compares
# the same alters end to end); numFiles and totalSize, which Hive reads again from the files, stay as sent here.
MARK = '{"BASIC_STATS":"true","COLUMN_STATS":{"id":"true"}}'
MARKED = {STATS_ACCURATE: MARK, "numRows": "5", "numFiles": "1", "totalSize": "10"}


@pytest.mark.parametrize(("properties", "expected"), [
    (None, NO_CONTEXT),
    ({}, NO_CONTEXT),
    ({"DO_NOT_UPDATE_STATS": "true"}, AlterContext(keep=True)),
    ({"DO_NOT_UPDATE_STATS": "TRUE"}, NO_CONTEXT),  # Hive compares with "true" exactly
    ({"DO_NOT_UPDATE_STATS": "false", "CASCADE": "true"}, NO_CONTEXT),
    ({"STATS_GENERATED": "TASK"}, AlterContext(generated="TASK")),
])
def test_an_alters_context_is_read_as_hive_reads_it(properties: dict[str, str] | None,
                                                    expected: AlterContext) -> None:
    assert AlterContext.of(properties) == expected


def test_a_tables_alter_drops_the_mark_unless_its_context_keeps_it() -> None:
    without_mark = {k: v for k, v in MARKED.items() if k != STATS_ACCURATE}
    assert after_table_alter(MARKED, NO_CONTEXT) == without_mark
    assert after_table_alter(MARKED, AlterContext(keep=True)) == MARKED
    assert after_table_alter(MARKED, AlterContext(generated="USER")) == without_mark
    # A statistics task's alter sets the basic statistics' flag and keeps the columns' flags.
    assert after_table_alter(MARKED, AlterContext(generated="TASK")) == MARKED
    assert after_table_alter(without_mark, AlterContext(generated="TASK")) == {
        **without_mark, STATS_ACCURATE: '{"BASIC_STATS":"true"}'}
    partly = {**MARKED, STATS_ACCURATE: '{"COLUMN_STATS":{"id":"true","x":"false"}}'}
    assert after_table_alter(partly, AlterContext(generated="TASK"))[STATS_ACCURATE] == \
        '{"BASIC_STATS":"true","COLUMN_STATS":{"id":"true","x":"false"}}'


def test_do_not_update_stats_among_a_tables_parameters_is_taken_out() -> None:
    assert after_table_alter({**MARKED, "DO_NOT_UPDATE_STATS": "True"}, NO_CONTEXT) == MARKED  # any case
    assert after_table_alter({**MARKED, "DO_NOT_UPDATE_STATS": "no"}, NO_CONTEXT) == {
        k: v for k, v in MARKED.items() if k != STATS_ACCURATE}
    # With the context's flag Hive reads no statistics at all: the marker stays with the parameters.
    assert after_table_alter({**MARKED, "DO_NOT_UPDATE_STATS": "true"}, AlterContext(keep=True)) == {
        **MARKED, "DO_NOT_UPDATE_STATS": "true"}


@pytest.mark.parametrize(("sent", "context", "kept"), [
    ({}, NO_CONTEXT, True),  # the same file statistics
    ({"numFiles": "01"}, NO_CONTEXT, True),  # the same as numbers
    ({"numFiles": "2"}, NO_CONTEXT, False),
    ({"numFiles": None}, NO_CONTEXT, False),  # not sent: Hive reads them again
    ({"numFiles": "many"}, NO_CONTEXT, False),  # Hive's parse fails the call; dropping the mark is the safe side
    ({"numFiles": "1_0"}, NO_CONTEXT, False),  # (not a Java long either, where Python's int reads 10)
    ({"numFiles": "+1"}, NO_CONTEXT, True),
    ({"numFiles": "2"}, AlterContext(keep=True), True),
    ({}, AlterContext(generated="USER"), False),  # ALTER ... UPDATE STATISTICS: read again, whatever was sent
])
def test_a_partitions_alter_keeps_the_mark_only_with_the_same_file_statistics(
        sent: dict[str, str | None], context: AlterContext, kept: bool) -> None:
    new = {k: v for k, v in {**MARKED, **sent}.items() if v is not None}
    assert (after_partition_alter(MARKED, new, context) == new) is kept
    assert (STATS_ACCURATE in after_partition_alter(MARKED, new, context)) is kept


def test_a_partition_stored_without_file_statistics_loses_its_mark_on_any_alter() -> None:
    stored = {STATS_ACCURATE: MARK, "numRows": "5"}
    assert after_partition_alter(stored, stored, NO_CONTEXT) == {"numRows": "5"}
    assert after_partition_alter(stored, stored, AlterContext(generated="TASK")) == stored
