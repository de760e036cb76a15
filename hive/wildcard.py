"""SQL LIKE patterns matched in time linear in the text: the one matcher of every pattern a client sends.

A client's pattern is matched in Python in three places, all through `LikePattern`: the name patterns of
get_databases, get_tables, get_functions and their kin (hive/names.py `matches_hive_pattern`), and the LIKE
of a partition filter, the gateway's own and Hive 2.3's, evaluated over cached partitions
(hive/partition_filter.py; Hive's table filter is the same LIKE, run in PostgreSQL). Hive's dialects are
first rewritten to SQL LIKE (hive/jdo_regex.py `like_of_java_regex`), which is what Hive's metastore runs.

The language: `%` any run of characters, `_` exactly one (line ends included), a backslash makes the next
character literal (one at the end is itself), every other character is itself; the whole text must match,
case-sensitively (callers fold case first, as they did). This used to be translated to a Python regular
expression, and Python's backtracking engine takes time exponential in the number of `%`:
`%a%a%a%a%a%b` against 128 a's ran for seconds on the event loop, freezing every other call.

Here the pattern is split at its `%` into fixed-length pieces of literal characters and `_`. The first piece
must match at the start of the text, the last at its end, and each piece between at its leftmost occurrence
after the previous one: taking the leftmost leaves the most text to the pieces after it, so the greedy
choice never loses a match, and nothing is ever tried again. A piece of literal characters is found with
str.find (linear); one with `_` by a regular expression of single characters and `.` only, which has
nothing to backtrack into: each position is tried once, in at most the piece's length steps. So a match
costs O(len(text) * len(pattern)) at worst, in C, and about len(text) for the usual patterns.

PostgreSQL is sent the same patterns as LIKE (a partition filter read from the database, a table filter),
never as a regular expression; its LIKE (like_match.c) stops as soon as a `%` finds no place in the rest of
the text, which bounds it the same way, and it runs in the database's process, not on the event loop.
"""

from __future__ import annotations

import re


class _Piece:
    """A fixed-length part of a pattern (no `%`): literal characters and `_`."""

    __slots__ = ("length", "literal", "_regex")

    def __init__(self, tokens: list[str | None]) -> None:  # a character, or None for `_`
        self.length = len(tokens)
        if all(t is not None for t in tokens):
            self.literal: str | None = "".join(t for t in tokens if t is not None)  # found with str.find
            self._regex: re.Pattern[str] | None = None
        else:
            # A straight line of single characters and `.` (any one): no repetition, no alternative, so the
            # engine tries each position once, in at most `length` steps (str.find cannot skip `_`).
            self.literal = None
            self._regex = re.compile("".join("." if t is None else re.escape(t) for t in tokens), re.DOTALL)

    def at(self, text: str, pos: int) -> bool:
        """Whether the piece matches `text` at `pos` (the caller checks that it fits)."""
        if self.literal is not None:
            return text.startswith(self.literal, pos)
        assert self._regex is not None
        return self._regex.match(text, pos) is not None

    def find(self, text: str, start: int, end: int) -> int:
        """The leftmost position p, start <= p and p + length <= end, where the piece matches; -1 if none."""
        if start + self.length > end:
            return -1
        if self.literal is not None:
            return text.find(self.literal, start, end)
        assert self._regex is not None
        found = self._regex.search(text, start, end)
        return -1 if found is None else found.start()


class LikePattern:
    """A compiled SQL LIKE pattern (backslash the escape character); `fullmatch` says whether a text matches
    all of it. Compiling is linear in the pattern, matching (at worst) in the text times the pattern."""

    __slots__ = ("pattern", "_pieces")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        pieces: list[_Piece] = []
        tokens: list[str | None] = []
        i = 0
        while i < len(pattern):
            c = pattern[i]
            if c == "\\" and i + 1 < len(pattern):
                i += 1
                tokens.append(pattern[i])
            elif c == "%":
                pieces.append(_Piece(tokens))
                tokens = []
            else:
                tokens.append(None if c == "_" else c)
            i += 1
        pieces.append(_Piece(tokens))
        self._pieces = tuple(pieces)

    def __repr__(self) -> str:
        return f"LikePattern({self.pattern!r})"

    def fullmatch(self, text: str) -> bool:
        pieces, n = self._pieces, len(text)
        first = pieces[0]
        if len(pieces) == 1:  # no `%`: the text is exactly as long as the pattern
            return n == first.length and first.at(text, 0)
        last = pieces[-1]
        end = n - last.length  # where the last piece starts: at the end of the text
        if end < first.length or not first.at(text, 0) or not last.at(text, end):
            return False
        pos = first.length
        for piece in pieces[1:-1]:
            found = piece.find(text, pos, end)
            if found < 0:
                return False
            pos = found + piece.length
        return True
