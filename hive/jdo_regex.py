"""What Hive's metastore makes of a Java regular expression it runs in a JDO query.

Hive's ObjectStore matches names and filter patterns with JDOQL's `String.matches(regex)`, and
DataNucleus runs that as SQL LIKE (its RegularExpressionConverter): so what Hive documents as a
regular expression is matched by a much smaller language, the one `like_of_java_regex` gives. Used by
the partition and table filters' LIKE (hive/partition_filter.py) and by the name patterns of
get_tables, get_databases, get_functions and their kin (hive/names.py `matches_hive_pattern`). The LIKE
pattern is matched by hive/wildcard.py, in time linear in the text (never by a Python regular expression,
whose backtracking is exponential in the pattern's wildcards).
"""

from __future__ import annotations


def like_of_java_regex(regex: str) -> str:
    """The SQL LIKE pattern (backslash the escape character) Hive 2.3.10's metastore matches for a
    filter's `LIKE "regex"`. Hive's own SQL leaves LIKE out, and its JDO query's String.matches
    becomes SQL LIKE by DataNucleus's RegularExpressionConverter: `.*` is any run, `.` one character,
    `\\.` a dot, `%` and `_` themselves; a backslash before anything else is a backslash followed by
    that character as LIKE reads it (so `\\\\` is two backslashes, `\\%` a backslash and any run), one
    at the end a backslash. Every other character, regular expression syntax included, is itself:
    `2024-01-0[12]` matches only that text (probed against Hive Metastore 2.3.10)."""
    out: list[str] = []
    i = 0
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            escaped = regex[i + 1:i + 2]
            out.append("." if escaped == "." else "\\\\\\\\" if escaped == "\\" else "\\\\" + escaped)
            i += 2
        elif c == ".":
            star = regex.startswith("*", i + 1)
            out.append("%" if star else "_")
            i += 1 + star
        else:
            out.append("\\" + c if c in "%_" else c)
            i += 1
    return "".join(out)

