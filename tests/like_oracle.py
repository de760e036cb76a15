"""The translation of a SQL LIKE pattern to a Python regular expression that hive/wildcard.py replaced,
kept as the tests' reference for the matcher's answers. Only for small inputs: Python's backtracking
engine takes time exponential in the pattern's `%` (the reason it was replaced)."""

from __future__ import annotations

import re


def like_regex(pattern: str) -> str:
    """A Python regular expression (to run with re.DOTALL) matching what the SQL LIKE `pattern` (backslash
    the escape character) matches."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return "".join(out)


def like_fullmatch(pattern: str, text: str) -> bool:
    return re.fullmatch(like_regex(pattern), text, re.DOTALL) is not None


def hive_pattern_regex(pattern: str) -> re.Pattern[str]:
    """hive/names.py's former translation of a SHOW TABLES pattern (match it with the name lower-cased)."""
    from hive.jdo_regex import like_of_java_regex
    alternatives = (like_regex(like_of_java_regex(a.strip().replace("*", ".*"))) for a in pattern.lower().split("|"))
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.DOTALL)
