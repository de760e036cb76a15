"""`Filter.to_sql` selects in PostgreSQL exactly the partitions `Filter.matches` selects in memory.

Hypothesis draws key sets and stored values (the default partition, values no type accepts, quotes,
unicode, LIKE wildcards, the limits of asyncpg's codecs); random filters over them are rendered to
text from a drawn seed (cheap to generate; a failure prints the filter and the rows that differ).
Every example loads the rows into a scratch table and asks for all its filters in one query.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from typing import AsyncIterator

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.errors import InvalidArgument
from hive.schema import FieldSchema
from hive.names import DEFAULT_PARTITION_NAME as DEFAULT
from hive.partition_filter import HIVE_PARTITION_FILTER, Filter, parse_filter

_TEXTS = ["a", "A", "b", "ab", "us", "us%", "u_s", "it's", 'say "hi"', "back\\slash", "a\\%b", "é", "日本", "😀",
          "z", "a b", "100%", "_", "%", "x\ny", "Z9", "", "abc", "a\u0301", "a.b", "(x)+", "[z]*", "$1^", DEFAULT]
_BAD_NUMBERS = [" 5", "5 ", "0x1F", "1_000", "abc", "", "١٢", "NaN", "Infinity", "inf", "+", "-", "1e", "9" * 300,
                DEFAULT]
_INTS = ["0", "007", "+5", "-0", "9223372036854775807", "-9223372036854775808", "99999999999999999999", "1e3"]
_DECIMALS = ["1.5", "1.50", "-0.0", ".5", "5.", "1e3", "1E-3", "-2.25", "1e999", "1e9999", "1e99999", "1e999999",
             "0.1", "10"]
_DATES = ["2024-02-29", "2023-02-29", "2024-13-01", "0000-01-01", "2024-1-1", "20240101", "2024-01-01 ", "today",
          "epoch", "9999-12-31", "0001-01-01", "2024-01-01", DEFAULT]
_TIMESTAMPS = ["2024-01-01 24:00:00", "2024-01-01 23:59:60", "2024-01-01T10:00", "2024-01-01 10:00:00.1234567",
               "2024-01-01", "2024-01-01 10:00:00+02", "2024-01-01 10:00", "2024-01-01 10:00:00.5",
               "9999-12-31 23:59:59.999999", "0001-01-01 00:00:00", "2000-01-01 00:00:00.0000009", DEFAULT]
_BOOLEANS = ["true", "false", "TRUE", "False", "t", "1", "yes", "tRuE", DEFAULT]
TYPES = ["string", "varchar(10)", "int", "bigint", "smallint", "date", "decimal(10,2)", "double", "boolean",
         "timestamp"]

_date = st.dates(dt.date(1999, 12, 25), dt.date(2000, 1, 5))
_timestamp = st.datetimes(dt.datetime(2000, 1, 1), dt.datetime(2000, 1, 1, 3))


def _values(type_name: str) -> st.SearchStrategy[str]:
    """Stored values for a key of this type: ordinary ones and the edge cases above."""
    base = type_name.split("(")[0]
    if base in ("string", "varchar"):
        text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=5)
        return st.one_of(st.sampled_from(_TEXTS), text)
    if base in ("int", "bigint", "smallint"):
        return st.one_of(st.integers(-20, 20).map(str), st.sampled_from(_INTS + _BAD_NUMBERS))
    if base in ("decimal", "double"):
        return st.one_of(st.decimals(-20, 20, places=2).map(str), st.sampled_from(_DECIMALS + _BAD_NUMBERS))
    if base == "date":
        return st.one_of(_date.map(dt.date.isoformat), st.sampled_from(_DATES))
    if base == "timestamp":
        return st.one_of(_timestamp.map(lambda t: t.isoformat(sep=" ")), _timestamp.map(dt.datetime.isoformat),
                         st.sampled_from(_TIMESTAMPS))
    return st.sampled_from(_BOOLEANS)


class FilterWriter:
    """Random filter text over given keys, literals often taken from the values stored."""

    def __init__(self, rnd: random.Random, keys: list[FieldSchema], columns: list[list[str]]) -> None:
        self.rnd, self.keys, self.columns = rnd, keys, columns

    def filter(self, depth: int = 3) -> str:
        rnd = self.rnd
        if depth == 0 or rnd.random() < 0.35:
            return self.leaf()
        shape = rnd.choice(["AND", "OR", "NOT", "()"])
        if shape == "NOT":
            return f"{self.kw('NOT')} {self.filter(depth - 1)}"
        if shape == "()":
            return f"({self.filter(depth - 1)})"
        return f"{self.filter(depth - 1)} {self.kw(shape)} {self.filter(depth - 1)}"

    def leaf(self) -> str:
        rnd = self.rnd
        index = rnd.randrange(len(self.keys))
        key, present = self.keys[index], self.columns[index]
        ref = rnd.choice([key.name, key.name.upper()])
        ref = f"`{ref}`" if rnd.random() < 0.2 else ref
        no = self.kw("NOT") + " " if rnd.random() < 0.5 else ""
        shape = rnd.choice(["cmp", "cmp", "cmp", "in", "between", "like"])
        if shape == "cmp":
            op, lit = rnd.choice(["=", "==", "!=", "<>", "<", "<=", ">", ">="]), self.literal(key, present)
            return f"{ref} {op} {lit}" if rnd.random() < 0.5 else f"{lit}{op}{ref}"
        if shape == "in":
            items = [self.literal(key, present) for _ in range(rnd.randint(1, 4))]
            return f"{ref} {no}{self.kw('IN')} ({', '.join(items)})"
        if shape == "between":
            low, high = self.literal(key, present), self.literal(key, present)
            return f"{ref} {no}{self.kw('BETWEEN')} {low} {self.kw('AND')} {high}"
        return f"{ref} {no}{self.kw('LIKE')} {self.like_pattern(present)}"

    def kw(self, word: str) -> str:
        return self.rnd.choice([word, word.lower(), word.capitalize()])

    def quote(self, text: str) -> str:
        q = self.rnd.choice("'\"")
        escaped = (f"\\{c}" if c in ("\\", q) or (c.isalpha() and self.rnd.random() < 0.1) else c for c in text)
        return q + "".join(escaped) + q

    def literal(self, key: FieldSchema, present: list[str]) -> str:
        """A literal the key's type accepts."""
        for _ in range(3):
            candidate = self.quote(self.rnd.choice(present)) if self.rnd.random() < 0.6 else self.fresh(key)
            try:
                parse_filter(f"`{key.name}` = {candidate}", [key])
                return candidate
            except InvalidArgument:
                continue
        return self.fresh(key)

    def fresh(self, key: FieldSchema) -> str:
        rnd, base = self.rnd, key.type.split("(")[0]
        if base in ("int", "bigint", "smallint"):
            n = str(rnd.randint(-25, 25))
            return rnd.choice([n, n, f"'{n}'", "9223372036854775807", "-99999999999999999999"])
        if base in ("decimal", "double"):
            d = str(Decimal(rnd.randint(-2500, 2500)).scaleb(-rnd.randint(0, 3)))
            return rnd.choice([d, d, f"'{d}'", "1e1", "-.5", "2.", "1E-2"])
        if base == "date":
            return f"'{dt.date(1999, 12, 25) + dt.timedelta(days=rnd.randint(0, 11))}'"
        if base == "timestamp":
            t = dt.datetime(2000, 1, 1) + dt.timedelta(seconds=rnd.randint(0, 10800), microseconds=rnd.choice([0, 7]))
            return f"'{t.isoformat(sep=rnd.choice(' T'))}'"
        if base == "boolean":
            return rnd.choice(["TRUE", "false", "'true'", "'FALSE'", "True"])
        if rnd.random() < 0.15:
            return self.quote(str(rnd.randint(-3, 12)))  # numeric text (a bare number is refused)
        return self.quote(rnd.choice(_TEXTS))

    def like_pattern(self, present: list[str]) -> str:
        rnd = self.rnd
        out = []
        for c in rnd.choice(present) if rnd.random() < 0.6 else rnd.choice(_TEXTS):
            roll = rnd.randrange(10)
            if roll < 2:
                out.append("%_"[roll])
            elif c in "%_\\" and (roll < 8 or c == "\\"):
                out.append("\\" + c)  # escaped in the pattern: matches itself
            else:
                out.append(c)  # a bare % or _ from the value stays a wildcard
        return self.quote(rnd.choice(["", "%"]) + "".join(out) + rnd.choice(["", "%", "_"]))


@pytest.fixture
async def scratch(pg_dsn: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(pg_dsn)
    # The embedded server has no linguistic collation (no ICU, only C locales), so string order is
    # byte order here whatever the SQL says; a unit test checks the SQL imposes COLLATE "C" itself.
    await conn.execute("CREATE TEMP TABLE p (id int PRIMARY KEY, part_values text[] NOT NULL)")
    try:
        yield conn
    finally:
        await conn.close()


async def _hits(conn: asyncpg.Connection, filters: list[Filter]) -> dict[int, list[bool]]:
    """Row id -> whether each filter's SQL selects the row, from one query in which the filters
    number their parameters one after another (so every filter but the first starts past $1)."""
    columns: list[str] = []
    params: list[object] = []
    for f in filters:
        sql, more = f.to_sql(len(params) + 1)
        columns.append(f"({sql}) IS TRUE")
        params += more
    rows = await conn.fetch(f"SELECT id, ARRAY[{', '.join(columns)}] AS hits FROM p", *params)
    return {r["id"]: list(r["hits"]) for r in rows}


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
async def test_sql_and_memory_select_the_same_partitions(scratch: asyncpg.Connection, data: st.DataObject) -> None:
    count = data.draw(st.integers(1, 3), label="key count")
    types = data.draw(st.permutations(TYPES), label="types")[:count]
    keys = [FieldSchema(f"k{i}_{t.split('(')[0]}", t) for i, t in enumerate(types)]
    # Each key takes its values from a small pool, so rows share values and literals hit them.
    pools = [data.draw(st.lists(_values(t), min_size=2, max_size=8, unique=True), label=t) for t in types]
    rows = data.draw(st.lists(st.tuples(*[st.sampled_from(p) for p in pools]), min_size=10, max_size=40), label="rows")
    writer = FilterWriter(random.Random(data.draw(st.integers(0, 2**32), label="seed")), keys,
                          [[row[i] for row in rows] for i in range(len(keys))])
    texts = [writer.filter() for _ in range(8)]
    filters = [parse_filter(text, keys) for text in texts]

    await scratch.execute("DELETE FROM p")
    await scratch.copy_records_to_table("p", records=[(i, list(r)) for i, r in enumerate(rows)])
    hits = await _hits(scratch, filters)
    for n, (text, f) in enumerate(zip(texts, filters)):
        in_memory = {i for i, r in enumerate(rows) if f.matches(r)}
        in_sql = {i for i, h in hits.items() if h[n]}
        assert in_memory == in_sql, (
            f"filter {text!r} over keys {types}: only in memory {[rows[i] for i in in_memory - in_sql]}, "
            f"only in SQL {[rows[i] for i in in_sql - in_memory]}\nSQL: {f.to_sql(1)}"
        )


_EDGES = {"string": _TEXTS, "int": _INTS + _BAD_NUMBERS + ["-7", "12"], "decimal(10,2)": _DECIMALS + _BAD_NUMBERS,
          "date": _DATES, "timestamp": _TIMESTAMPS, "boolean": _BOOLEANS}


@pytest.mark.parametrize("type_name", sorted(_EDGES))
async def test_every_edge_value_against_every_literal(scratch: asyncpg.Connection, type_name: str) -> None:
    key = FieldSchema("k", type_name)
    values = _EDGES[type_name]
    literals = []
    for v in values:
        for literal in (v, "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"):
            try:
                parse_filter(f"k = {literal}", [key])
                literals.append(literal)
            except InvalidArgument:
                pass
    texts = [f"k {op} {lit}" for op in ("=", "<>", "<", "<=", ">", ">=") for lit in literals]
    texts += [f"NOT k = {lit}" for lit in literals] + [f"k IN ({', '.join(literals)})"]
    texts += [f"k LIKE '{p}'" for p in ("%", "_", "%0%", "2024%", "t%", "%\\\\%%", "%.%")]
    filters = [parse_filter(t, [key]) for t in texts]

    await scratch.copy_records_to_table("p", records=[(i, [v]) for i, v in enumerate(values)])
    hits = await _hits(scratch, filters)
    for i, value in enumerate(values):
        for text, f, hit in zip(texts, filters, hits[i]):
            assert f.matches([value]) == hit, f"{text!r} on {type_name} value {value!r}: memory {not hit}, SQL {hit}"


async def test_filter_runs_against_the_partitions_table(pg_dsn: str) -> None:
    keys = [FieldSchema("ds", "date"), FieldSchema("hr", "int"), FieldSchema("region", "string")]
    stored = [("2024-01-01", "9", "us"), ("2024-01-01", "10", "eu"), ("2024-01-02", "3", "us"),
              (DEFAULT, "11", "us"), ("2024-01-03", DEFAULT, "eu"), ("2024-01-03", "12", DEFAULT)]
    conn = await asyncpg.connect(pg_dsn)
    try:
        await conn.executemany(
            "INSERT INTO partitions (table_id, part_name, part_values, body, create_time) VALUES ($1, $2, $3, '{}', 0)",
            [(t, "/".join(v), list(v)) for t in (7, 8) for v in stored],
        )
        f = parse_filter("ds >= '2024-01-01' AND hr > 9 OR NOT region = 'us'", keys)
        where, params = f.to_sql(2)
        rows = await conn.fetch(f"SELECT part_values FROM partitions WHERE table_id = $1 AND {where}", 7, *params)
    finally:
        await conn.close()
    expected = [v for v in stored if f.matches(v)]
    assert sorted(tuple(r["part_values"]) for r in rows) == sorted(expected)
    assert sorted(expected) == [
        ("2024-01-01", "10", "eu"), ("2024-01-03", "12", DEFAULT), ("2024-01-03", DEFAULT, "eu")]


_HIVE_PATTERNS = ["a.b", "a.*", ".*b", "(?i)A.*", "(?i)US", "a\\.b", "us%", "u_s", "us.*", "[z].*", "(x)+", "$1^",
                  "a\\%b", "back\\\\slash", "back\\slash", ".", "..", ".*", "", "(?i)", "x.y", "Z.", "(?i)z.",
                  "日本", ".本", "a b"]


async def test_hive_like_selects_the_same_in_sql_and_in_memory(scratch: asyncpg.Connection) -> None:
    """Hive 2.3's LIKE (Thrift's dialect, hive/partition_filter.py `_hive_like`) over awkward values."""
    keys = [FieldSchema("s", "string")]
    rows = [[t] for t in _TEXTS]
    # Written as a client writes them: Hive 2.3's strings keep their backslashes (none ends with one).
    filters = [parse_filter(f's like "{p}"', keys, HIVE_PARTITION_FILTER) for p in _HIVE_PATTERNS]
    await scratch.copy_records_to_table("p", records=[(i, r) for i, r in enumerate(rows)])
    hits = await _hits(scratch, filters)
    selected = {}
    for n, (pattern, f) in enumerate(zip(_HIVE_PATTERNS, filters)):
        in_memory = [r[0] for r in rows if f.matches(r)]
        assert in_memory == [rows[i][0] for i, h in sorted(hits.items()) if h[n]], pattern
        selected[pattern] = in_memory
    # What Hive Metastore 2.3.10 makes of them: `.*` any run, `.` one character, the rest itself.
    assert selected["a.b"] == ["a b", "a.b"] and selected["a\\.b"] == ["a.b"]
    assert selected["us%"] == ["us%"] and selected["u_s"] == ["u_s"] and selected["us.*"] == ["us", "us%"]
    assert selected["[z].*"] == ["[z]*"] and selected["(x)+"] == ["(x)+"] and selected["$1^"] == ["$1^"]
    assert selected["(?i)US"] == ["us"] and selected["(?i)z."] == ["Z9"] and selected["Z."] == ["Z9"]
    assert selected["a\\%b"] == ["a\\%b"]  # a backslash, then `%` as LIKE reads it: any run
    assert selected["back\\\\slash"] == [] and selected["back\\slash"] == ["back\\slash"]
    assert selected["."] == [t for t in _TEXTS if len(t) == 1] and selected["x.y"] == ["x\ny"]
    assert selected[".本"] == ["日本"] and selected[".*"] == [t for t in _TEXTS if t != DEFAULT]
