"""hive/wildcard.py answers as the Python regular expressions it replaced (tests/like_oracle.py), through
each of its users: SQL LIKE patterns themselves, Hive's name patterns (hive/names.py) and the LIKE of the
partition filters, the gateway's and Hive 2.3's (hive/partition_filter.py). The inputs are small, so the
backtracking reference stays fast; tests/unit/test_pattern_time.py has the large ones."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hive import names
from hive.partition_filter import HIVE_PARTITION_FILTER, PARTITION_FILTER, Like, parse_filter
from hive.schema import FieldSchema
from hive.wildcard import LikePattern
from tests.like_oracle import hive_pattern_regex, like_fullmatch

# Few characters, so that patterns and texts meet often; the pattern's specials, a line end (DOTALL) and
# characters whose case or length changes when lower-cased.
TEXT_CHARS = "ab\n%_\\A"
LIKE_CHARS = "ab%%__\\\nA"
TEXTS = st.text(st.sampled_from(TEXT_CHARS), max_size=10)
LIKE_PATTERNS = st.text(st.sampled_from(LIKE_CHARS), max_size=9)


@st.composite
def text_and_pattern(draw: st.DrawFn) -> tuple[str, str]:
    """A pattern, and a text that often matches it: made from the text by replacing characters with `_`,
    cutting runs out for `%` and escaping what would be special; or drawn independently."""
    text = draw(TEXTS)
    if draw(st.booleans()):
        return text, draw(LIKE_PATTERNS)
    out, i = [], 0
    while i < len(text):
        move = draw(st.sampled_from(["keep", "keep", "one", "run", "insert"]))
        if move == "one":
            out.append("_")
            i += 1
        elif move == "run":
            out.append("%")
            i += draw(st.integers(0, len(text) - i))
        elif move == "insert":
            out.append("%")
        else:
            out.append("\\" + text[i] if text[i] in "%_\\" or draw(st.booleans()) else text[i])
            i += 1
    if draw(st.booleans()):
        out.append(draw(st.sampled_from(["%", "\\", "b", "_"])))
    return text, "".join(out)


@settings(max_examples=3000)
@given(text_and_pattern())
def test_like_pattern_matches_as_the_regular_expression_did(case: tuple[str, str]) -> None:
    text, pattern = case
    assert LikePattern(pattern).fullmatch(text) is like_fullmatch(pattern, text), (pattern, text)


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("", "", True), ("", "a", False), ("%", "", True), ("%%", "abc", True), ("_", "", False), ("_", "\n", True),
    ("a%", "a", True), ("%a", "ba", True), ("%a", "ab", False), ("a%a", "a", False), ("a%a", "aa", True),
    ("%a%a%", "aba", True), ("%a%a%", "ab", False), ("%ab%ab%", "abab", True), ("%aba%aba%", "ababa", False),
    ("_%_", "a", False), ("_%_", "ab", True), ("%a_b%", "xaxbx", True), ("%a_b%", "xabx", False),
    ("a\\%", "a%", True), ("a\\%", "ab", False), ("a\\_", "a_", True), ("a\\_", "ab", False),
    ("a\\\\", "a\\", True), ("a\\", "a\\", True), ("\\a", "a", True), ("%\\%%", "x%y", True),
    ("A%", "a", False), ("%a%a%a%a%a%b", "a" * 128, False), ("%a%a%a%a%a%b", "a" * 127 + "b", True),
])
def test_like_pattern_cases(pattern: str, text: str, expected: bool) -> None:
    assert LikePattern(pattern).fullmatch(text) is expected
    assert like_fullmatch(pattern, text) is expected


HIVE_PATTERN_CHARS = "ab*.|% _\\AİK"  # Hive's syntax, LIKE's specials, blanks stripped, case folded by str.lower
HIVE_NAME_CHARS = "ab. %_\\AiİK\u212a"


@settings(max_examples=3000)
@given(st.text(st.sampled_from(HIVE_NAME_CHARS), max_size=8), st.text(st.sampled_from(HIVE_PATTERN_CHARS), max_size=8))
def test_name_patterns_match_as_the_regular_expression_did(name: str, pattern: str) -> None:
    expected = not pattern or pattern == "*" or hive_pattern_regex(pattern).fullmatch(name.lower()) is not None
    assert names.matches_hive_pattern(name, pattern) is expected, (name, pattern)


@pytest.mark.parametrize(("name", "pattern", "expected"), [
    ("sales_orders", "sales*", True), ("Web", "sales*|web", True), ("websales", "sales*|web", False),
    ("t1", ".*", True), ("", ".*", False), ("t1", "T.", True), ("t", "t_", False), ("t_x", "t_x", True),
    ("a" * 128, "*a" * 5 + "*b", False), ("a" * 127 + "b", "*a" * 5 + "*b", True),
    ("a" * 128, "x|*a*a*a|y", True), ("a" * 128, ".*a" * 5 + ".*b", False), ("ab", " a* | x ", True),
])
def test_name_pattern_cases(name: str, pattern: str, expected: bool) -> None:
    assert names.matches_hive_pattern(name, pattern) is expected


KEYS = (FieldSchema("s", "string"),)


def _quoted(text: str) -> str:
    """`text` as a single-quoted string of the gateway's dialect (a backslash escapes the next character)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@settings(max_examples=2000)
@given(text_and_pattern())
def test_the_gateways_filter_like_matches_as_the_regular_expression_did(case: tuple[str, str]) -> None:
    value, pattern = case
    if (len(pattern) - len(pattern.rstrip("\\"))) % 2:
        pattern += "\\"  # the dialect refuses a lone escape character at the end
    f = parse_filter(f"s like {_quoted(pattern)}", KEYS, PARTITION_FILTER)
    assert f.root == Like(0, pattern)
    assert f.matches([value]) is like_fullmatch(pattern, value), (pattern, value)
    assert parse_filter(f"s not like {_quoted(pattern)}", KEYS).matches([value]) is not like_fullmatch(pattern, value)


HIVE_LIKE_CHARS = "ab.*.%_\\AZ[|+"  # a Java regular expression as Hive's rewriting reads it


@settings(max_examples=2000)
@given(st.text(st.sampled_from(TEXT_CHARS + "Z.[|+"), max_size=10), st.text(st.sampled_from(HIVE_LIKE_CHARS),
                                                                         max_size=9), st.booleans())
def test_hives_filter_like_matches_as_the_regular_expression_did(value: str, regex: str, case_blind: bool) -> None:
    if regex.endswith("\\"):
        regex += "a"  # Hive's lexer: a backslash before the closing quote escapes it
    text = ("(?i)" if case_blind else "") + regex
    f = parse_filter(f'ds like "{text}"', (FieldSchema("ds", "string"),), HIVE_PARTITION_FILTER)
    assert isinstance(f.root, Like)
    folded = value.translate(str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"))
    assert f.matches([value]) is like_fullmatch(f.root.pattern, folded if case_blind else value), (text, value)


def test_a_default_partition_value_is_unknown_to_like() -> None:
    f = parse_filter("s like '%'", KEYS)
    assert f.evaluate(["__HIVE_DEFAULT_PARTITION__"]) is None and f.evaluate([None]) is None
    assert f.evaluate([""]) is True
