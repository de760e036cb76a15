"""Partition filters and partial specifications, drawn at random, sent to the real Hive Metastore 2.3.10
(pyspark's jars, on Derby) and to the gateway (with its cache, and with the cache off: PostgreSQL), the
answers compared.

Spark SQL's Hive client pushes a query's partition predicates to the metastore as `get_partitions_by_filter`
(Shim_v2_0.convertFilters: `=`, `!=`, `<`, ..., `and`, `or`, `(key) in (...)`, `like "2024.*"`), and
Trino and Hive list partitions by partial specifications (`get_partition_names_ps`, `get_partitions_ps`).
An answer that leaves out a partition silently gives a query wrong rows, so every difference from Hive is
either a listed one (KNOWN_DIFFERENCES, each checked to be still there by a fixed example) or a failure.

The tables hold awkward values: values the path escapes (`/`, `=`, `%`, `:`, `#`, quotes), spaces, non-ASCII
letters, `__HIVE_DEFAULT_PARTITION__` in every key, negative numbers, the ends of int and bigint, numbers
stored in a string key, strings alike but for case or a dot. The `other` table has a varchar key, which
Hive 2.3 does not filter, and smallint and tinyint keys, which it does.

One Hive Metastore and two gateways on one database for the module. A filter goes to all three through
`get_partitions_by_filter` (every partition, and at most a few: Hive answers in name order) and
`get_num_partitions_by_filter`; also in the forms only the gateway takes (`==`, IN without parentheses,
NOT), which must mean the same there and which Hive must refuse. Where Hive cannot answer a filter as the
gateway reads it (it refuses it, or its JDO query reads it otherwise), the gateway's answer is checked
against Hive's answers to the filter's conditions one by one. A partial specification goes through
`get_partition_names_ps` and `get_partitions_ps` (every partition, and at most a few: Hive's order is
its database's, so a few are checked to be some of all). The two gateways must answer exactly alike.
Failures compare by exception type. Typed values are stored in their canonical form (the gateway refuses
`x1` for an int key and stores `007` as `7`, as Hive's client converts values before it sends them; Hive
2.3's server stores what it is sent), so the tables hold what both store alike.

`make test` runs a short version (FILTER_DIFFERENTIAL_EXAMPLES, 20 filters and 20 specifications,
derandomized); the `soak` run takes FILTER_DIFFERENTIAL_SOAK_EXAMPLES (1000) of each.
Skipped when Java or pyspark's jars are missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Sequence

import pytest
import thriftpy2.rpc
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from thriftpy2.thrift import TApplicationException, TException

from gateway.thrift.idl import SERVICE, hms
from hive.jdo_regex import like_of_java_regex
from hive.names import DEFAULT_PARTITION_NAME as DEFAULT
from hive.names import escape_path_name
from loadtest.hms import hms_server, hms_unavailable_reason
from tests.conftest import PgCluster, running_gateway, wait_applied
from tests.like_oracle import like_fullmatch
from tests.thrift_client import thrift_table

_REASON = hms_unavailable_reason()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"Hive Metastore reference: {_REASON}")

DB = "fd"
CALL_TIMEOUT_MS = 30_000

# -- the tables -------------------------------------------------------------------------------------

MAIN_KEYS: tuple[tuple[str, str], ...] = (("s", "string"), ("i", "int"), ("b", "bigint"), ("d", "date"))
STRING_VALUES = [
    "a", "a/b", "x=y", "50%", "c:d", "h#1", "sp ace", "é", "日本", DEFAULT, 'q"uote', "q'uote", "a.b", "axb",
    "007", "7", "a\\b", "A", "-1", "10", "9", "a_b", "(?i)", "[x]", "%", "b", "ab", "2024-01-01", "a%b", "*",
]
# Typed values as the gateway stores them: in their type's canonical form (hive/names.py `validate_partition_values`:
# `007` of an int key is stored `7`, as Hive's client converts it with hive.typecheck.on.insert; Hive 2.3's
# server stores what it is sent, so a stored `007` is not compared here: a literal `007` is).
INT_VALUES = ["1", "7", "-3", "0", "10", DEFAULT, "2147483647", "-2147483648", "5", "12", "-10", "3"]
BIGINT_VALUES = ["1", "-5", "9223372036854775807", "-9223372036854775808", "0", DEFAULT, "10", "7", "100"]
DATE_VALUES = ["2024-01-01", "2024-02-29", "1999-12-31", DEFAULT, "2024-01-02", "0001-01-01"]
MAIN_ROWS: list[tuple[str, ...]] = [(s, INT_VALUES[k % len(INT_VALUES)], BIGINT_VALUES[(3 * k) % len(BIGINT_VALUES)],
              DATE_VALUES[(5 * k) % len(DATE_VALUES)]) for k, s in enumerate(STRING_VALUES)]

OTHER_KEYS: tuple[tuple[str, str], ...] = (("v", "varchar(8)"), ("sm", "smallint"), ("ti", "tinyint"))
OTHER_ROWS: list[tuple[str, ...]] = [
    ("a", "1", "-128"), ("a.b", "-32768", "127"), ("A", "2", "0"), ("x/y", DEFAULT, "1"), (DEFAULT[:8], "3", DEFAULT),
    ("b", "32767", "5")]

TABLES: dict[str, tuple[tuple[tuple[str, str], ...], list[tuple[str, ...]]]] = {
    "t": (MAIN_KEYS, MAIN_ROWS), "other": (OTHER_KEYS, OTHER_ROWS)}
INTEGRAL = ("int", "bigint")
# Hive's alone: `other` with its varchar key typed string, which Hive filters (what the gateway answers of
# `other` is checked against Hive's answers of this one).
MIRRORS = {"other": "other_s"}
MIRROR_KEYS: tuple[tuple[str, str], ...] = (("v", "string"),) + OTHER_KEYS[1:]


def _table(name: str) -> Any:
    keys = MIRROR_KEYS if name in MIRRORS.values() else TABLES[name][0]
    table = thrift_table(name, DB)
    table.partitionKeys = [hms.FieldSchema(name=k, type=t, comment="") for k, t in keys]
    return table


def _partition(name: str, values: Sequence[str]) -> Any:  # (the table's storage; its keys do not matter)
    return hms.Partition(values=list(values), dbName=DB, tableName=name, parameters={}, sd=_table(name).sd)


# -- filters: drawn as a tree that knows what it holds, rendered in Hive 2.3's syntax ------------------


@dataclass(frozen=True)
class Drawn:
    """A filter as Hive 2.3 reads it (`hive`), the same filter in forms only the gateway takes (`ext`,
    '' when it has none), and what it holds: the keys it names and its features."""

    hive: str
    ext: str = ""
    keys: frozenset[str] = frozenset()
    features: frozenset[str] = frozenset()
    plain: str = ""  # `hive` with every key named as declared (lower case), when it names one otherwise
    # ("leaf", the condition Hive reads as the gateway does or None, key index, whether the key is a string)
    # or ("and" | "or", (trees ...)); None for a mistake
    tree: Any = None

    def __or__(self, other: Drawn) -> Drawn:
        return Drawn("", "", self.keys | other.keys, self.features | other.features)

    @property
    def as_declared(self) -> str:
        return self.plain or self.hive


# Features. Those Hive refuses with MetaException but the gateway answers (each a listed difference):
QUOTED_INTEGRAL = "a quoted number against an integral key"
LIKE_AND_NOT_STRING = "LIKE with a condition on a key not typed string"
VARCHAR_KEY = "a varchar key"
# (Its direct SQL compares the date's text with a string key alone, and beside other conditions often fails and
# falls back to its JDO query, which refuses any key not typed string.)
DATE_AGAINST_STRING = "an unquoted date against a string key"
# Those the gateway refuses with MetaException but Hive answers:
LAX_DATE = "a date not written yyyy-mm-dd"
# Hive answers otherwise: a filter it runs as a JDO query (one with LIKE) compares `=`, `<>` and IN with the
# partition's name built with the key as written, so a key named in upper case matches nothing there.
KEY_CASE = "a key named in upper case"
# Hive refuses, but the gateway answers: that JDO query builds a partition name of `=`'s value, and there is
# none of an empty string ("Partition spec is incorrect").
EMPTY_EQUALS = "an empty string compared for equality in a filter with LIKE"
# Hive answers otherwise: Derby compares strings padded with spaces (`s = "a "` selects a; the gateway compares
# them exactly, as Hive on PostgreSQL does).
TRAILING_SPACE = "a string literal ending with a space"
# The gateway refuses, but Hive answers: Hive 2.3's parser stops after the first whole expression.
TRAILING_JUNK = "something after a whole filter"
# A mistake both refuse (MetaException):
MISTAKE = "mistake"
LIKE = "like"


def _quote(value: str, quote: str | None = None) -> str | None:
    """A Hive 2.3 string literal of `value` (its lexer keeps a backslash and the character after it), or
    None when the value cannot be written (a quote of each kind, or a backslash at the end)."""
    if value.endswith("\\"):
        return None
    for q in ([quote] if quote else ['"', "'"]):
        if q not in value:
            return f"{q}{value}{q}"
    return None


MAIN_STRINGS = sorted(set(STRING_VALUES) | {"", "a ", "Z", "日", "b.b", "a/", "q", "~", "__HIVE", "10a"})
INTEGERS = [0, 1, 7, -3, 10, 5, -1, 2147483647, 2147483648, -2147483648, 9223372036854775807, -9223372036854775808,
            -5, 9]
DATES = ["2024-01-01", "2024-02-29", "1999-12-31", "2024-01-02", "0001-01-01", "2023-12-31", "9999-12-31"]
LAX_DATES = ["2024-1-1", "2024-01-1", "2024-01-01x", "2024-2-29"]
NOT_DATES = ["2024-02-30", "abc", "2024/01/01", "", "20240101"]
OPS = ["=", "!=", "<>", "<", "<=", ">", ">="]
MIRROR = {"=": "=", "!=": "!=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


Lit = tuple[str, frozenset[str], "str | None"]  # text, features, the text Hive reads as the gateway does


@st.composite
def _literal(draw: st.DrawFn, key_type: str) -> Lit:
    """A literal for a key of `key_type`: its text, features, and the literal Hive 2.3 reads as the gateway reads
    this one (None when there is none): mostly one that fits, sometimes not."""
    fits = draw(st.integers(0, 14)) > 0
    if key_type in ("string", "varchar(8)"):
        if fits and draw(st.integers(0, 9)) == 0:
            date = draw(st.sampled_from(DATES))  # a date literal, unquoted: Hive reads it as its text here
            return date, frozenset([DATE_AGAINST_STRING]), date
        if fits:
            value = draw(st.sampled_from(MAIN_STRINGS))
            text = _quote(value, draw(st.sampled_from([None, '"', "'"]))) or '"a"'
            if '"' in value and draw(st.booleans()):
                text = '"' + value.replace('"', '\\"') + '"'  # the backslash is kept: another value
            if value.endswith(" "):  # Derby compares strings padded with spaces: `s = "a "` selects a there
                return text, frozenset([TRAILING_SPACE]), None
            return text, frozenset(), text
        return str(draw(st.sampled_from(INTEGERS))), frozenset([MISTAKE]), None  # a number against a string key
    if key_type in INTEGRAL or key_type in ("smallint", "tinyint"):
        if fits:
            n = draw(st.sampled_from(INTEGERS))
            text = str(n)
            if n >= 0 and draw(st.booleans()):
                text = "00" + text  # leading zeros: the same number
            return text, frozenset(), text
        return draw(st.sampled_from([
            ('"7"', frozenset([QUOTED_INTEGRAL]), "7"), ('"-3"', frozenset([QUOTED_INTEGRAL]), "-3"),
            ('"007"', frozenset([QUOTED_INTEGRAL]), "7"), ('"x"', frozenset([MISTAKE]), None),
            ("1.5", frozenset([MISTAKE]), None), ("99999999999999999999", frozenset([MISTAKE]), None),
            ("-9223372036854775809", frozenset([MISTAKE]), None), ("+5", frozenset([MISTAKE]), None),
            ("1e3", frozenset([MISTAKE]), None), ('"__HIVE_DEFAULT_PARTITION__"', frozenset([MISTAKE]), None),
        ]))
    assert key_type == "date"
    if fits:  # quoted, or unquoted as Hudi's sync and some Spark versions write it (Filter.g's DateLiteral)
        date = draw(st.sampled_from(DATES))
        text = draw(st.sampled_from([f'"{date}"', date]))
        return text, frozenset(), text
    return draw(st.sampled_from([
        *[(f'"{d}"', frozenset([LAX_DATE]), None) for d in LAX_DATES],
        *[(f'"{d}"', frozenset([MISTAKE]), None) for d in NOT_DATES], ("2024", frozenset([MISTAKE]), None),
        ("2024-02-30", frozenset([MISTAKE]), None), ("2024-1-1", frozenset([MISTAKE]), None),
    ]))


LIKE_PIECES = [".*", ".*", ".", "a", "b", "A", "_", "%", "\\.", "x", "/", "é", "0", "7", "1", "-", "[", "q", "'",
               "=", "2024", "*", "(?i)", "\\", " "]


def _like_pattern(pieces: list[str], quote: str) -> str | None:
    text = "".join(pieces)
    if text.endswith("\\") or quote in text:
        return None
    return f"{quote}{text}{quote}"


KEY = "\x01"  # where a leaf names its key


@st.composite
def _leaf(draw: st.DrawFn, table: str) -> Drawn:
    keys, _ = TABLES[table]
    index = draw(st.integers(0, len(keys) - 1))
    name, key_type = keys[index]
    features: set[str] = set()
    if key_type not in ("string",):
        features.add("not string")
    if key_type.startswith("varchar"):
        features.add(VARCHAR_KEY)
    upper = draw(st.integers(0, 9)) == 0  # key names in any case
    drawn = draw(_leaf_text(key_type, features))
    # (Not with a date against a string key: Hive may run that as its JDO query, where an upper-case key matches
    # nothing; the rule for that, KEY_CASE, is checked by conditions that Hive may refuse alone here.)
    upper = upper and DATE_AGAINST_STRING not in drawn.features
    text, ext = drawn.hive.replace(KEY, name.upper() if upper else name), drawn.ext.replace(KEY, name)
    features = set(drawn.features)
    ref = drawn.plain.replace(KEY, name) if drawn.plain and MISTAKE not in features else None
    tree = ("leaf", ref, index, key_type in ("string", "varchar(8)"))  # (a varchar key's: on the mirror)
    if upper and KEY_CASE in features:
        return Drawn(text, ext, drawn.keys and frozenset([name]), frozenset(features),
                     drawn.hive.replace(KEY, name), tree)
    features.discard(KEY_CASE)
    return Drawn(text, ext, drawn.keys and frozenset([name]), frozenset(features), "", tree)


@st.composite
def _leaf_text(draw: st.DrawFn, key_type: str, features: set[str]) -> Drawn:
    """A condition on one key of `key_type`, the key written KEY; `keys` is non-empty when it names the key,
    `plain` is what Hive reads as the gateway reads it, '' when nothing."""
    shown = KEY
    kind = draw(st.sampled_from(["cmp"] * 12 + ["in"] * 4 + ["like"] * 4 + ["between"] * 2
                                + ["unknown key", "garbage"]))
    if kind == "unknown key":
        return Drawn('nope = "a"', "", frozenset(), frozenset([MISTAKE]))
    if kind == "garbage":
        text = draw(st.sampled_from([f"{shown} = ", f"{shown} >> 1", '= "a"', f"{shown} in (1", '"a" "b"',
                                     f"{shown} = = 1", f"({shown} = 1", f"{shown} like", "and", f"{shown}", "()",
                                     f"{shown} like {shown}", f'{shown} like "a" "b"', f"({shown}) in ()"]))
        if text == f'{shown} like "a" "b"':
            # Hive 2.3's parser reads `key like "a"` whole and leaves `"b"` unread (of a string key it answers
            # that LIKE's partitions: the soak's seed 12011), as it does TRAILING_JUNK; the gateway refuses it
            return Drawn(text, "", frozenset(), frozenset([MISTAKE, TRAILING_JUNK]))
        return Drawn(text, "", frozenset(), frozenset([MISTAKE]))
    if kind == "like" and key_type == "string":
        pieces = draw(st.lists(st.sampled_from(LIKE_PIECES), max_size=5))
        pattern = _like_pattern(pieces, draw(st.sampled_from(['"', "'"])))
        if pattern is not None:
            text = f"{shown} {draw(st.sampled_from(['like', 'LIKE', 'Like']))} {pattern}"
            return Drawn(text, "", frozenset([KEY]), frozenset(features | {LIKE}), text)
    if kind == "in":
        literals = draw(st.lists(_literal(key_type), min_size=1, max_size=4))
        negated = draw(st.booleans())
        body = ", ".join(t for t, _, _ in literals)
        for _, f, _ in literals:
            features |= f
        word = draw(st.sampled_from(["not in", "NOT IN", "Not In"] if negated else ["in", "IN"]))
        if any(t in ('""', "''") for t, _, _ in literals):
            features.add(EMPTY_EQUALS)
        ref = "" if any(r is None for _, _, r in literals) else \
            f"({shown}) {word} ({', '.join(str(r) for _, _, r in literals)})"
        return Drawn(f"({shown}) {word} ({body})", f"{shown} {word} ({body})", frozenset([KEY]),
                     frozenset(features | {KEY_CASE}), ref)
    if kind == "between":
        (low, f1, r1), (high, f2, r2) = draw(_literal(key_type)), draw(_literal(key_type))
        word = draw(st.sampled_from(["not between", "between", "BETWEEN"]))
        ref = f"{shown} {word} {r1} and {r2}" if r1 is not None and r2 is not None else ""
        return Drawn(f"{shown} {word} {low} and {high}", "", frozenset([KEY]), frozenset(features | f1 | f2), ref)
    literal, f, lit_ref = draw(_literal(key_type))
    features |= f
    op = draw(st.sampled_from(OPS))
    ext = ""
    if draw(st.booleans()):
        text = f"{literal} {MIRROR[op]} {shown}"
        ref = f"{lit_ref} {MIRROR[op]} {shown}"
    else:
        text = f"{shown} {op} {literal}"
        ref = f"{shown} {op} {lit_ref}"
        if op == "=":
            ext = f"{shown} == {literal}"
    if op in ("=", "!=", "<>"):
        features.add(KEY_CASE)
        if literal in ('""', "''"):
            features.add(EMPTY_EQUALS)
    return Drawn(text, ext, frozenset([KEY]), frozenset(features), ref if lit_ref is not None else "")


def _junction(drawn: tuple[list[Drawn], str]) -> Drawn:
    parts, word = drawn
    merged = parts[0]
    for p in parts[1:]:
        merged = merged | p
    hive = f" {word} ".join(f"({p.hive})" for p in parts)
    ext = f" {word} ".join(f"({p.ext or p.hive})" for p in parts) if any(p.ext for p in parts) else ""
    plain = f" {word} ".join(f"({p.as_declared})" for p in parts) if any(p.plain for p in parts) else ""
    return Drawn(hive, ext, merged.keys, merged.features, plain, (word.lower(), tuple(p.tree for p in parts)))


def _filters(table: str) -> st.SearchStrategy[Drawn]:
    def combine(children: st.SearchStrategy[Drawn]) -> st.SearchStrategy[Drawn]:
        return st.tuples(st.lists(children, min_size=2, max_size=3),
                         st.sampled_from(["and", "or", "AND", "Or"])).map(_junction)

    return st.recursive(_leaf(table), combine, max_leaves=6)


@st.composite
def drawn_filters(draw: st.DrawFn) -> tuple[str, Drawn]:
    table = draw(st.sampled_from(["t", "t", "t", "other"]))
    drawn = draw(_filters(table))
    if draw(st.integers(0, 4)) == 0:  # NOT, which Hive 2.3's grammar lacks: not not F is F
        drawn = Drawn(drawn.hive, f"not (not ({drawn.ext or drawn.hive}))", drawn.keys, drawn.features, drawn.plain,
                      drawn.tree)
    if draw(st.integers(0, 9)) == 0:  # other whitespace after the first key: Hive's lexer's, or not
        space = draw(st.sampled_from(["\t", "\n", "\r\n", "  ", "\u00a0", "\x0c"]))
        at = drawn.hive.find(" ")
        if at > 0 and '"' not in drawn.hive[:at] and "'" not in drawn.hive[:at]:
            features = drawn.features | ({MISTAKE} if space in ("\u00a0", "\x0c") else set())
            drawn = Drawn(drawn.hive[:at] + space + drawn.hive[at + 1:], "", drawn.keys, features, "",
                          drawn.tree if space not in ("\u00a0", "\x0c") else None)
    if draw(st.integers(0, 29)) == 0:  # something after a whole filter, which Hive 2.3's parser leaves unread
        drawn = Drawn(drawn.hive + draw(st.sampled_from([" xyz", ")", ' "b"', " s = 1", " ("])), "", drawn.keys,
                      drawn.features | {TRAILING_JUNK})
    if draw(st.integers(0, 29)) == 0:  # cut short somewhere: a mistake, or a whole filter and then the start of
        # its next token (`(a = 1) or (b = 2) o`), which Hive 2.3 leaves unread as it does TRAILING_JUNK
        cut = draw(st.integers(0, max(0, len(drawn.hive) - 1)))
        drawn = Drawn(drawn.hive[:cut], "", drawn.keys, drawn.features | {MISTAKE, TRAILING_JUNK})
    return table, drawn


# -- partial specifications -------------------------------------------------------------------------

EXTRA_PARTIALS = ["", "", "", "A", "a.", "a.b", "b.b", "2024-01-0", "2024.01-01", "07", "+5", "x1", "a%2Fb",
                  "__HIVE_DEFAULT_PARTITION__", "_", "%", ".*", "a"]


@st.composite
def partial_specs(draw: st.DrawFn) -> tuple[str, list[str]]:
    table = draw(st.sampled_from(["t", "t", "t", "other"]))
    keys, rows = TABLES[table]
    length = draw(st.sampled_from([1, 2, len(keys) - 1, len(keys), len(keys), len(keys), len(keys) + 1]))
    if draw(st.integers(0, 19)) == 0:
        length = 0
    spec = []
    for index in range(length):
        column = sorted({row[index] for row in rows}) if index < len(keys) else ["x"]
        spec.append(draw(st.sampled_from([*column, *EXTRA_PARTIALS])))
    return table, spec


def exact_partial(row: Sequence[str], spec: Sequence[str]) -> bool:
    return all(want == "" or want == have for want, have in zip(spec, row))


def hive_partial(keys: Sequence[tuple[str, str]], row: Sequence[str], spec: Sequence[str]) -> bool:
    """Hive 2.3.10's match (MetaStoreUtils.makePartNameMatcher, run by its JDO query as SQL LIKE): the
    partition's name against `k1=v1/k2=.*...` of the escaped values, `.*` for an empty one and after a
    specification shorter than the keys; a `.` in a value is any character."""
    pattern = "/".join(f"{k}={escape_path_name(v) if v else '.*'}" for (k, _), v in zip(keys, spec))
    if len(spec) < len(keys):
        pattern += ".*"
    name = "/".join(f"{k}={escape_path_name(v)}" for (k, _), v in zip(keys, row))
    return like_fullmatch(like_of_java_regex(pattern), name)


# -- the listed differences ----------------------------------------------------------------------------

# Each: why the gateway answers otherwise, and a fixed example checked to still differ.
KNOWN_DIFFERENCES: dict[str, tuple[str, str, tuple[Any, ...]]] = {
    "the default partition of a string key": (
        "a string key's `__HIVE_DEFAULT_PARTITION__` is NULL to the gateway, so no condition on the key selects it "
        "(`s <> \"a\"`, `s like \".*\"`, `s = \"__HIVE_DEFAULT_PARTITION__\"`), as Spark and Hive's query engines "
        "read it; Hive 2.3's metastore compares the text (its integral keys it reads as NULL too). The gateway's "
        "answer is the part of Hive's without those partitions: what Spark keeps of Hive's when it filters the "
        "partitions again, as it always does",
        "get_partitions_by_filter", ("t", 's <> "a"', -1)),
    QUOTED_INTEGRAL: (
        "answered, the key's type deciding (`i = \"7\"` is i = 7); Hive 2.3 refuses it (MetaException): its direct "
        "SQL wants a number, its JDO a string key", "get_partitions_by_filter", ("t", 'i = "7"', -1)),
    LIKE_AND_NOT_STRING: (
        "answered; Hive 2.3 runs a filter with LIKE as a JDO query, which refuses a condition on a key not typed "
        "string (MetaException) unless hive.metastore.integral.jdo.pushdown is set",
        "get_partitions_by_filter", ("t", 's like "a.*" and i > 0', -1)),
    VARCHAR_KEY: (
        "answered as a string key; Hive 2.3 filters only keys typed string, int and date-like (MetaException)",
        "get_partitions_by_filter", ("other", 'v = "x"', -1)),
    DATE_AGAINST_STRING: (
        "answered, the date compared as its text (`s = 2024-01-01` is s = \"2024-01-01\"), as Hive 2.3 answers it "
        "alone; beside other conditions Hive 2.3 often refuses it (MetaException: its direct SQL fails and its JDO "
        "query takes only string keys)", "get_partitions_by_filter", ("t", "s = 2024-01-01 and d = 2024-01-01", -1)),
    LAX_DATE: (
        "refused (MetaException, saying the date is not valid): the gateway reads a date as yyyy-mm-dd, where Hive "
        "2.3's SimpleDateFormat takes `2024-1-1` and ignores what follows a date (`2024-01-01x`); Spark sends "
        "yyyy-mm-dd", "get_partitions_by_filter", ("t", 'd = "2024-1-1"', -1)),
    KEY_CASE: (
        "the key's partitions; in a filter Hive 2.3 runs as a JDO query (one with LIKE), `=`, `<>` and IN compare "
        "the partition's name with the key as the filter writes it (ExpressionTree.makeFilterForEquals), so "
        "`S = \"a\"` matches nothing there (its direct SQL reads the key in any case, as the gateway does)",
        "get_partitions_by_filter", ("t", 's like "a.*" and S = "a"', -1)),
    EMPTY_EQUALS: (
        "answered (no partition has an empty value); Hive 2.3's JDO query (a filter with LIKE) makes a partition "
        "name of the value `=`, `<>` or IN compares with, and refuses an empty one (MetaException)",
        "get_partitions_by_filter", ("t", 's like "a.*" or s = ""', -1)),
    TRAILING_SPACE: (
        "the gateway compares strings exactly, as Hive on PostgreSQL does; Hive on Derby, as here, compares them "
        "padded with spaces (SQL's PAD SPACE), so `s = \"a \"` selects the partition a",
        "get_partitions_by_filter", ("t", 's = "a "', -1)),
    TRAILING_JUNK: (
        "refused (MetaException, saying what was found after the filter); Hive 2.3's parser reads the first whole "
        "expression and leaves the rest unread, so `s = \"a\" xyz` and `s = \"a\")` are s = \"a\" there",
        "get_partitions_by_filter", ("t", 's = "a" xyz', -1)),
    "the gateway's own forms": (
        "`==`, IN without parentheses and NOT are taken (what gRPC's filters take); Hive 2.3's grammar has none "
        "of them (MetaException)", "get_partitions_by_filter", ("t", 's in ("a") or not s == "b"', -1)),
    "a partial specification matches its values exactly": (
        "Hive 2.3 matches a specification as a pattern of the partition's name: a `.` in a value is any character "
        "(Spark filters Hive's answer again for that) and the last value of one shorter than the keys is a prefix "
        "(`['a']` matches s=abc); the gateway compares the values",
        "get_partition_names_ps", ("t", ["a"], -1)),
    "get_partitions_ps of no value": (
        "at most max_parts partitions, as asked, and more values than keys refused; Hive 2.3's get_partitions_ps "
        "answers every partition when each value of the specification is empty, whatever max_parts and however "
        "many values (`[\"\"]` of a table without keys is no partition there; its get_partition_names_ps "
        "does not)",
        "get_partitions_ps", ("t", ["", "", "", ""], 1)),
    "an empty partial specification": (
        "every partition, as no key is constrained; Hive 2.3 fails building its name pattern (MetaException "
        "'Invalid partition key & values')", "get_partition_names_ps", ("t", [], -1)),
}


# -- the servers -------------------------------------------------------------------------------------


class Server:
    """A Thrift client of one server (the calls are blocking: each runs in a thread)."""

    def __init__(self, label: str, port: int) -> None:
        self.label, self.port = label, port
        self._client = thriftpy2.rpc.make_client(SERVICE, "127.0.0.1", port, timeout=CALL_TIMEOUT_MS)

    async def call(self, method: str, *args: Any, application_errors: bool = False) -> Any:
        """The answer, or ('raised', exception type name); an answer the client could not read fails, and so
        does a TApplicationException unless `application_errors` (then ('raised', 'TApplicationException'))."""
        try:
            return await asyncio.to_thread(getattr(self._client, method), *args)
        except TApplicationException as exc:
            if application_errors:
                return ("raised", "TApplicationException")
            raise AssertionError(f"{self.label} {method}{args!r}: TApplicationException {exc.message}") from exc
        except TException as exc:
            return ("raised", type(exc).__name__)

    def close(self) -> None:
        self._client.close()


@dataclass
class World:
    hive: Server
    cached: Server
    uncached: Server
    hits: Callable[[], int]
    seen: dict[str, int] = field(default_factory=dict)  # outcomes, printed with -s

    @property
    def gateways(self) -> tuple[Server, Server]:
        return self.cached, self.uncached


async def _load(server: Server) -> None:
    assert await server.call("create_database", hms.Database(name=DB, description="", parameters={})) is None
    tables = [(name, rows) for name, (_, rows) in TABLES.items()]
    if server.label == "hive":
        tables += [(mirror, TABLES[name][1]) for name, mirror in MIRRORS.items()]
    flat = thrift_table("flat", DB)  # not partitioned
    assert await server.call("create_table", flat) is None
    for name, rows in tables:
        assert await server.call("create_table", _table(name)) is None, name
        for row in rows:
            assert not _raised(await server.call("add_partition", _partition(name, row))), (server.label, name, row)


@pytest.fixture(scope="module")
async def world(pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    root: Path = tmp_path_factory.mktemp("filter-differential")
    dsn = await pg_cluster.fresh_database()
    async with contextlib.AsyncExitStack() as stack:
        hive_address = await stack.enter_async_context(hms_server(
            workdir=root / "hms", jvm_args=["-Ddatanucleus.connectionPoolingType=dbcp"], quick_start=True))
        cached_gw = await stack.enter_async_context(running_gateway(dsn))
        uncached_gw = await stack.enter_async_context(running_gateway(dsn, **{"metastore.gateway.cache.enabled":
                                                                              "false"}))
        hive = Server("hive", int(hive_address.rsplit(":", 1)[1]))
        cached, uncached = Server("cached", cached_gw.thrift_port), Server("uncached", uncached_gw.thrift_port)
        for server in (hive, cached, uncached):
            stack.callback(server.close)
        await asyncio.gather(_load(hive), _load(cached))
        await wait_applied(cached_gw)
        assert cached_gw.cache is not None
        cache = cached_gw.cache
        w = World(hive, cached, uncached, lambda: cache.stats.hits)
        for table in TABLES:  # the same partitions on every side
            names = [await s.call("get_partition_names", DB, table, -1) for s in (hive, cached, uncached)]
            assert sorted(names[0]) == sorted(names[1]) == names[1] == names[2], names
        yield w
        print("\n".join(f"{n:5d} {outcome}" for outcome, n in sorted(w.seen.items())))


def _values(answer: Any) -> Any:
    """An answer as comparable data: partitions as their value tuples (in order), a count, or ('raised', type)."""
    if isinstance(answer, list):
        return [tuple(p.values) if hasattr(p, "values") else p for p in answer]
    return answer


def _raised(answer: Any) -> bool:
    return isinstance(answer, tuple) and answer[:1] == ("raised",)


async def _both_gateways(world: World, method: str, *args: Any) -> Any:
    """The gateways' answer, which must be the same from the cache and from PostgreSQL."""
    cached, uncached = [_values(await g.call(method, *args)) for g in world.gateways]
    assert cached == uncached, f"{method}{args!r}: cached {cached!r} but from PostgreSQL {uncached!r}"
    return cached


def _is_default_difference(table: str, drawn: Drawn, ours: list[tuple[str, ...]],
                           theirs: list[tuple[str, ...]]) -> bool:
    """Whether the gateway's answer is Hive's without partitions holding the default partition's name in a
    string key the filter names (the first listed difference), in Hive's order."""
    keys, _ = TABLES[table]
    named = [i for i, (k, t) in enumerate(keys) if k in drawn.keys and t == "string"]
    rest = [row for row in theirs if not any(row[i] == DEFAULT for i in named)]
    return ours == rest and len(rest) < len(theirs)


def _note(world: World, outcome: str) -> None:
    world.seen[outcome] = world.seen.get(outcome, 0) + 1


async def _by_conditions(world: World, table: str, tree: Any) -> set[tuple[str, ...]] | None:
    """What the gateway must answer for a filter of AND and OR (Hive's grammar has no other NOT than NOT IN
    and NOT BETWEEN), from Hive's answers to each condition alone, as Hive reads it the way the gateway
    does (`plain`); None where a condition has no such form, or Hive refuses it. Without NOT, a filter is
    true (SQL's three-valued logic) where it is true with each unknown condition false; a condition on a
    string key is unknown for its default partition, which Hive's answer holds when the text matches."""
    if tree is None:
        return None
    if tree[0] == "leaf":
        _, condition, index, is_string = tree
        if condition is None:
            return None
        answer = _values(await world.hive.call("get_partitions_by_filter", DB, MIRRORS.get(table, table), condition,
                                               -1))
        if _raised(answer):
            return None
        return {row for row in answer if not (is_string and row[index] == DEFAULT)}
    parts = [await _by_conditions(world, table, t) for t in tree[1]]
    if any(p is None for p in parts):
        return None
    sets = [p for p in parts if p is not None]
    return set.intersection(*sets) if tree[0] == "and" else set.union(*sets)


async def _check_by_conditions(world: World, table: str, drawn: Drawn, ours: list[tuple[str, ...]]) -> str:
    """The gateway's answer checked against Hive's answers to the filter's conditions one by one, where
    Hive cannot answer the whole filter as the gateway reads it; ', checked by conditions' when done."""
    expected = await _by_conditions(world, table, drawn.tree)
    if expected is None:
        return ""
    assert set(ours) == expected, f"{drawn.hive!r}: the gateway answered {ours!r}, Hive's conditions {expected!r}"
    return ", checked by conditions"


async def check_filter(world: World, table: str, drawn: Drawn, few: int) -> None:
    text = drawn.hive
    theirs = _values(await world.hive.call("get_partitions_by_filter", DB, table, text, -1))
    ours = await _both_gateways(world, "get_partitions_by_filter", DB, table, text, -1)
    hive_refuses = {QUOTED_INTEGRAL, VARCHAR_KEY, DATE_AGAINST_STRING} & drawn.features
    if LIKE in drawn.features and "not string" in drawn.features:
        hive_refuses.add(LIKE_AND_NOT_STRING)
    if LIKE in drawn.features and EMPTY_EQUALS in drawn.features:
        hive_refuses.add(EMPTY_EQUALS)
    mistaken = MISTAKE in drawn.features
    if not _raised(ours):
        keys = TABLES[table][0]
        assert ours == sorted(ours, key=lambda row: _name(keys, row)), f"{text!r}: not in name order: {ours!r}"
    if _raised(theirs) and _raised(ours):
        assert ours == theirs, f"{text!r}: the gateway raised {ours[1]}, Hive {theirs[1]}"
        _note(world, "filter: both refuse")
    elif _raised(theirs):
        # (A filter cut short exactly at the end of a whole one is no mistake: the gateway answers it.)
        cut_whole = TRAILING_JUNK in drawn.features
        assert hive_refuses and (not mistaken or cut_whole), \
            f"{text!r}: Hive raised {theirs[1]}, the gateway answered {ours!r}"
        checked = await _check_by_conditions(world, table, drawn, ours)
        _note(world, f"filter: Hive alone refuses ({sorted(hive_refuses)[0]}){checked}")
    elif _raised(ours):
        gateway_refuses = {LAX_DATE, TRAILING_JUNK} & drawn.features
        assert gateway_refuses, f"{text!r}: the gateway raised {ours[1]}, Hive answered {theirs!r}"
        _note(world, f"filter: the gateway alone refuses ({sorted(gateway_refuses)[0]})")
    elif ours == theirs:
        _note(world, "filter: the same partitions" if ours else "filter: both answer none")
    else:
        if _is_default_difference(table, drawn, ours, theirs):
            why = "the default partition of a string key"
        elif (LIKE in drawn.features or DATE_AGAINST_STRING in drawn.features) and drawn.plain:
            why = KEY_CASE  # (Hive runs both as its JDO query)
        else:
            assert TRAILING_SPACE in drawn.features, f"{text!r}: the gateway answered {ours!r}, Hive {theirs!r}"
            why = TRAILING_SPACE
        checked = await _check_by_conditions(world, table, drawn, ours)
        assert checked or why != KEY_CASE, f"{text!r}: the gateway answered {ours!r}, Hive {theirs!r}"
        _note(world, f"filter: {why}{checked}")
        return  # Hive's count and first few are of another answer
    # the count, and at most `few` (the first in name order on both)
    count = await _both_gateways(world, "get_num_partitions_by_filter", DB, table, text)
    their_count = await world.hive.call("get_num_partitions_by_filter", DB, table, text)
    assert _raised(count) == _raised(ours) and (_raised(count) or count == len(ours)), (text, count, ours)
    assert _raised(their_count) == _raised(theirs) and (_raised(their_count) or their_count == len(theirs)), \
        (text, their_count, theirs)
    limited = await _both_gateways(world, "get_partitions_by_filter", DB, table, text, few)
    their_limited = _values(await world.hive.call("get_partitions_by_filter", DB, table, text, few))
    assert limited == (ours if _raised(ours) else ours[:_upto(few)]), (text, few, limited, ours)
    assert their_limited == (theirs if _raised(theirs) else theirs[:_upto(few)]), (text, few, their_limited, theirs)
    if drawn.ext:  # the gateway's own forms: the same answer there, refused by Hive
        assert await _both_gateways(world, "get_partitions_by_filter", DB, table, drawn.ext, -1) == ours, drawn.ext
        assert _raised(await world.hive.call("get_partitions_by_filter", DB, table, drawn.ext, -1)), drawn.ext


async def check_partial(world: World, table: str, spec: list[str], few: int) -> None:
    keys, rows = TABLES[table]
    for method in ("get_partition_names_ps", "get_partitions_ps"):
        theirs = _values(await world.hive.call(method, DB, table, spec, -1))
        ours = await _both_gateways(world, method, DB, table, spec, -1)
        their_few = _values(await world.hive.call(method, DB, table, spec, few))
        our_few = await _both_gateways(world, method, DB, table, spec, few)
        if method == "get_partition_names_ps" and not _raised(ours):
            by_name = {"/".join(f"{k}={escape_path_name(v)}" for (k, _), v in zip(keys, row)): row for row in rows}
            ours, our_few = [by_name[n] for n in ours], [by_name[n] for n in our_few]
            theirs = theirs if _raised(theirs) else [by_name[n] for n in theirs]
            their_few = their_few if _raised(their_few) else [by_name[n] for n in their_few]
        if not spec:
            assert _raised(theirs) and not _raised(ours), (spec, ours, theirs)
            assert sorted(ours) == sorted(rows), spec
            _note(world, "partial: an empty specification")
            continue
        if _raised(theirs) or _raised(ours):
            assert ours == theirs == our_few == their_few, f"{method}{spec!r}: ours {ours!r}, Hive's {theirs!r}"
            _note(world, "partial: both refuse")
            continue
        expected = [row for row in rows if exact_partial(row, spec)]
        assert sorted(ours) == sorted(expected) and ours == sorted(ours, key=lambda r: [
            n for n in [_name(keys, r)]]), (method, spec, ours)
        hive_model = {row for row in rows if hive_partial(keys, row, spec)}
        assert set(ours) <= set(theirs) and set(theirs) - set(ours) <= hive_model - set(expected), \
            f"{method}{spec!r}: the gateway answered {ours!r}, Hive {theirs!r}"
        _note(world, "partial: the same partitions" if set(ours) == set(theirs) else
              "partial: Hive's name pattern matches more")
        if method == "get_partitions_ps" and not any(spec):
            assert their_few == theirs, f"{method}{spec!r}: Hive answered {their_few!r} of at most {few}"
            _note(world, "partial: Hive ignores max_parts")
        else:  # Hive's order is its database's
            assert len(their_few) == len(theirs[:_upto(few)]) and set(their_few) <= set(theirs), \
                f"{method}{spec!r}: Hive answered {their_few!r} of at most {few} of {theirs!r}"
        assert our_few == ours[:_upto(few)], \
            f"{method}{spec!r}: the gateway answered {our_few!r} of at most {few} of {ours!r}"


def _upto(max_parts: int) -> int | None:
    """How many of all a max_parts asks for (a slice's end): a negative one is every one."""
    return None if max_parts < 0 else max_parts


def _name(keys: Sequence[tuple[str, str]], row: Sequence[str]) -> str:
    return "/".join(f"{k}={escape_path_name(v)}" for (k, _), v in zip(keys, row))


# -- the tests ---------------------------------------------------------------------------------------

# Not shrunk: each step is a few calls to three servers; a failure's report shows the filter as drawn.
PHASES = [Phase.explicit, Phase.reuse, Phase.generate]
EXAMPLES = int(os.environ.get("FILTER_DIFFERENTIAL_EXAMPLES", "20"))
SOAK_EXAMPLES = int(os.environ.get("FILTER_DIFFERENTIAL_SOAK_EXAMPLES", "1000"))
FEW = st.sampled_from([0, 1, 2, 3, 5, -3])  # a negative max_parts is every partition, as -1


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=PHASES)
@given(drawn=drawn_filters(), few=FEW)
async def test_filters_answer_as_hive_metastore_does(world: World, drawn: tuple[str, Drawn], few: int) -> None:
    await check_filter(world, *drawn, few)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=PHASES)
@given(spec=partial_specs(), few=FEW)
async def test_partial_specifications_answer_as_hive_metastore_does(world: World, spec: tuple[str, list[str]],
                                                                    few: int) -> None:
    await check_partial(world, *spec, few)


@pytest.mark.soak
@pytest.mark.timeout(0)  # one test for every example, past pyproject's 300 s per test
@settings(max_examples=SOAK_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES)
@given(drawn=drawn_filters(), few=FEW)
async def test_filters_answer_as_hive_metastore_does_soak(world: World, drawn: tuple[str, Drawn], few: int) -> None:
    await check_filter(world, *drawn, few)


@pytest.mark.soak
@pytest.mark.timeout(0)  # one test for every example, past pyproject's 300 s per test
@settings(max_examples=SOAK_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES)
@given(spec=partial_specs(), few=FEW)
async def test_partial_specifications_answer_as_hive_metastore_does_soak(world: World, spec: tuple[str, list[str]],
                                                                         few: int) -> None:
    await check_partial(world, *spec, few)


@pytest.mark.parametrize("label", sorted(KNOWN_DIFFERENCES))
async def test_each_listed_difference_is_still_one(world: World, label: str) -> None:
    _, method, (table, *args) = KNOWN_DIFFERENCES[label]
    theirs = _values(await world.hive.call(method, DB, table, *args))
    ours = await _both_gateways(world, method, DB, table, *args)
    assert ours != theirs, f"{label}: the same answer as Hive's now ({ours!r}): take it off the list"


async def test_the_cache_answered(world: World) -> None:
    """The cached gateway's answers came from its cache (the other one's from PostgreSQL)."""
    before = world.hits()
    await check_filter(world, "t", Drawn('s > "a"', "", frozenset(["s"])), 2)
    assert world.hits() > before


@pytest.mark.parametrize(("text", "features"), [
    ("", frozenset()),  # every partition, on both
    ("   ", frozenset([MISTAKE])),  # "the filter is empty" here, a parse error in Hive
    ('(s) in ("a", "A") and d >= "2024-01-01"', frozenset(["not string"])),
    ('s like "(?i)A.*" or s like "%" or s like "_"', frozenset([LIKE])),
    ('b = -9223372036854775808 or b = 9223372036854775807 or i < -2147483648', frozenset(["not string"])),
    # Unquoted dates (Filter.g's DateLiteral), and Hudi's Hive sync's one level of parentheses per partition.
    ("d = 2024-01-01 or (d) in (2024-02-29, 1999-12-31) or d between 2023-01-01 and 2023-12-31", frozenset()),
    ("s = 2024-01-01", frozenset()),
    ("(" * 199 + '(s = "a")' + "".join(f' or (s = "{v}"))' for v in ["b", "a/b", "7"] * 66 + ["q"]),
     frozenset()),
])
async def test_fixed_filters_answer_as_hive_metastore_does(world: World, text: str, features: frozenset[str]) -> None:
    await check_filter(world, "t", Drawn(text, "", frozenset(), features), 2)


@pytest.mark.parametrize(("method", "args"), [
    ("get_partitions_by_filter", ("nope", 's = "a"', -1)),
    ("get_partitions_by_filter", ("flat", 's = "a"', -1)),
    ("get_partitions_by_filter", ("flat", "", -1)),
    ("get_partitions_by_filter", ("T", 's = "a"', -1)),
    ("get_partitions_by_filter", ("t", 's = "a"', -32768)),
    ("get_num_partitions_by_filter", ("nope", 's = "a"')),
    ("get_num_partitions_by_filter", ("flat", "")),
    ("get_partition_names_ps", ("nope", ["a"], -1)),
    ("get_partition_names_ps", ("flat", ["a"], -1)),
    ("get_partition_names_ps", ("T", ["a", ""], -1)),
    ("get_partitions_ps", ("nope", ["a"], -1)),
    ("get_partitions", ("flat", -1)),
    ("get_partition_names", ("flat", -1)),
    # (get_partitions_ps of `flat` by [] and [""]: the listed differences of an empty specification and of
    # get_partitions_ps of no value)
])
async def test_missing_and_unpartitioned_tables_answer_as_hive_metastore_does(world: World, method: str,
                                                                             args: tuple[Any, ...]) -> None:
    """A table that does not exist, one that is not partitioned, names in upper case, the smallest max_parts."""
    theirs = _values(await world.hive.call(method, DB, *args))
    assert await _both_gateways(world, method, DB, *args) == theirs
