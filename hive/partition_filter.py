"""Hive-style partition filters (the text `get_partitions_by_filter` accepts) over a table's keys.

Design note. A filter is parsed once into an immutable AST whose literals are already converted to
the key's type, then used two ways that must agree exactly: `Filter.matches` (a precompiled closure
with a bounded per-key memo of typed values, run over cached partitions) and `Filter.to_sql` (a
parameterised PostgreSQL expression over `part_values`). Agreement rests on three shared rules:

* One strict syntax per type (the `_*_SYNTAX` regexes, valid in Python and in PostgreSQL). A stored
  value that does not match it, or that the type rejects (2024-02-30), is NULL exactly like
  `__HIVE_DEFAULT_PARTITION__`; SQL casts sit behind the same guard in a CASE, so a bad value never
  fails a query. Integer types compare as numeric, float/double/decimal as exact Decimal, dates and
  timestamps (ISO, at most microseconds) as such, strings by code point (= UTF-8 bytes = COLLATE "C").
* Three-valued logic: a leaf over a NULL value is unknown; NOT unknown is unknown; AND/OR are
  Kleene's, as in SQL; only a filter that is true selects a partition.
* Literals are checked against the key's type when parsed and travel as parameters, never in the
  SQL text. Dates and timestamps travel as ISO text cast in SQL: asyncpg would send date.max and
  datetime.max as 'infinity'.

Grammar (keywords and key names case-insensitive; a key may be written `quoted` in backticks)::

    filter   := or ; or := and (OR and)* ; and := not (AND not)* ; not := NOT not | primary
    primary  := '(' or ')' | key op value | value op key | key [NOT] IN '(' value (',' value)* ')'
              | key [NOT] BETWEEN value AND value | key [NOT] LIKE string
    key      := name | '(' key ')'
    op       := = | == | != | <> | < | <= | > | >=
    value    := 'string' | "string" | number | TRUE | FALSE

A key in parentheses is the key: Hive 2.3's grammar takes IN only as `(key) [NOT] IN (...)`, which
is what Spark SQL's Hive client sends; `key IN (...)` is taken too. A value must fit its key: an
integer for integer keys, a number for float/double/decimal (either may be quoted), a quoted ISO
date or timestamp, TRUE/FALSE or 'true'/'false' for booleans, a quoted string for string, varchar
and char keys. A bare number against a string key is refused (`ds = 01`, `ds > 5`), in both
dialects: which side should yield is unclear (as text, `month > 5` selects '6' but not '10'), and
Hive Metastore 2.3.10 refuses it too (MetaException "Filtering is supported only on partition keys
of type string"), so quote it to compare text (`month = '05'`). In a quoted string a backslash
makes the next character literal (`\\'`, `\\"`, `\\\\`); there are no C escapes (`'\\n'` is the letter n). Hive 2.3's
dialect (below) keeps a string's backslashes instead, as Hive's lexer does: `"a\\b"` is a, a
backslash, b (what Spark's Hive client sends for that value: it quotes values and escapes nothing),
and `"a\\"b"` is a, a backslash, a quote, b.

LIKE depends on the dialect. In the gateway's own (PARTITION_FILTER, gRPC's GetPartitionsByFilter)
patterns follow SQL: `%` is any run, `_` one character, and a backslash *in the pattern* escapes the
next character, so a literal percent is written `'100\\\\%'` (the string `100\\%`); a pattern may not
end with a lone backslash. In Hive 2.3's (HIVE_PARTITION_FILTER, Thrift's get_partitions_by_filter,
to which Spark SQL sends `ds like "2024.*"` for StartsWith) the pattern is what Hive 2.3.10's metastore
makes of it (`_hive_like`): `.*` any run, `.` one character, a leading `(?i)` ignores the case of
ASCII letters, and every other character is itself, `%`, `_`, `[`, `+` and `|` included. LIKE is
case-sensitive otherwise and applies to the stored text; Hive's applies to string keys only.
"""

from __future__ import annotations

import datetime as _dt
import operator
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, NoReturn, Sequence, Union

from hive.errors import InvalidArgument
from hive.limits import FILTER, check_text
from hive.schema import FieldSchema
from hive.jdo_regex import like_of_java_regex as _hive_like
from hive.names import DEFAULT_PARTITION_NAME
from hive.wildcard import LikePattern

Value = Union[bool, int, Decimal, _dt.date, _dt.datetime, str]
Tri = Union[bool, None]  # True, False, or unknown (SQL NULL)
Matcher = Callable[[Sequence[Union[str, None]]], Tri]

# --- typed values: one syntax per type, the same in Python and PostgreSQL --------------------------

# PostgreSQL's regex engine caps repetition counts at 255; the caps also keep casts far from overflow.
_INT_SYNTAX = r"[+-]?[0-9]{1,255}"
_DECIMAL_SYNTAX = r"[+-]?([0-9]{1,255}(\.[0-9]{0,255})?|\.[0-9]{1,255})([eE][+-]?[0-9]{1,3})?"
_DATE_SYNTAX = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
_TIMESTAMP_SYNTAX = _DATE_SYNTAX + r"([ T]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?)?"
_BOOLEAN_SYNTAX = r"[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]"


@dataclass(frozen=True, slots=True)
class _KeyType:
    """How one kind of partition key reads a stored value, in Python (`parse`) and in SQL."""

    kind: str  # int, decimal, date, timestamp, boolean or string
    regex: re.Pattern[str] | None  # the syntax; None for strings (all but the default partition)
    pg_type: str
    convert: Callable[[str], Value]  # applied only to text matching `regex`; may raise ValueError

    def parse(self, text: str) -> Value | None:
        """The typed value of a stored partition value, or None (NULL) for the default partition
        and for text this type does not accept."""
        if self.regex is None:
            return None if text == DEFAULT_PARTITION_NAME else text
        if not self.regex.fullmatch(text):
            return None
        try:
            return self.convert(text)
        except ValueError:
            return None

    def sql(self, elem: str, *, as_text: bool = False) -> str:
        """The array element as a typed value (or as its text), NULL wherever `parse` answers None."""
        if self.regex is None:
            return f"NULLIF({elem}, '{DEFAULT_PARTITION_NAME}') COLLATE \"C\""
        guard = f"{elem} ~ '^({self.regex.pattern})$'"
        if self.kind in ("date", "timestamp"):  # the syntax admits 2024-02-30 and year 0
            guard += f" AND pg_input_is_valid({elem}, '{self.pg_type}')"
        if as_text:
            return f"(CASE WHEN {guard} THEN {elem} END) COLLATE \"C\""
        if self.kind == "boolean":
            return f"(CASE WHEN {guard} THEN {elem} ~ '^[Tt]' END)"
        return f"(CASE WHEN {guard} THEN {elem}::{self.pg_type} END)"


_INT = _KeyType("int", re.compile(_INT_SYNTAX), "numeric", int)
_DECIMAL = _KeyType("decimal", re.compile(_DECIMAL_SYNTAX), "numeric", Decimal)
_DATE = _KeyType("date", re.compile(_DATE_SYNTAX), "date", _dt.date.fromisoformat)
_TIMESTAMP = _KeyType("timestamp", re.compile(_TIMESTAMP_SYNTAX), "timestamp", _dt.datetime.fromisoformat)
_BOOLEAN = _KeyType("boolean", re.compile(_BOOLEAN_SYNTAX), "boolean", lambda s: s[0] in "Tt")
_STRING = _KeyType("string", None, "text", str)
_BY_TYPE = {  # Hive type names without parameters; binary, intervals and complex types are not filterable
    "tinyint": _INT, "smallint": _INT, "int": _INT, "integer": _INT, "bigint": _INT, "float": _DECIMAL,
    "double": _DECIMAL, "double precision": _DECIMAL, "decimal": _DECIMAL, "numeric": _DECIMAL, "date": _DATE,
    "timestamp": _TIMESTAMP, "boolean": _BOOLEAN, "string": _STRING, "varchar": _STRING, "char": _STRING,
}


def _type_of(key: FieldSchema) -> _KeyType | None:
    return _BY_TYPE.get(key.type.split("(")[0].strip().lower())


def _filterable_type(key: FieldSchema) -> _KeyType:
    kt = _type_of(key)
    assert kt is not None, key  # the parser admits only keys of a filterable type
    return kt


# --- the AST --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Comparison:
    key: int  # index into the table's partition keys (0-based)
    op: str  # one of =, <>, <, <=, >, >= (the key is always on the left)
    value: Value


@dataclass(frozen=True, slots=True)
class InList:
    key: int
    values: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class Between:
    key: int
    low: Value
    high: Value


@dataclass(frozen=True, slots=True)
class Like:
    key: int
    pattern: str  # SQL LIKE syntax with backslash as the escape character
    ascii_case_blind: bool = False  # compare with ASCII letters in lower case (the pattern already is)


@dataclass(frozen=True, slots=True)
class IsNull:
    """The key's value is NULL: the default partition, or text its type does not accept (no filter text
    says this; Hive's partition expressions do: hive/partition_expr.py)."""

    key: int


@dataclass(frozen=True, slots=True)
class Unknown:
    """A condition that is neither true nor false for any partition (SQL NULL): a comparison of a key with a
    null constant, which Hive's comparison functions answer NULL whatever the key holds (no filter text says
    this; Hive's partition expressions do: hive/partition_expr.py)."""


@dataclass(frozen=True, slots=True)
class Not:
    operand: Node


@dataclass(frozen=True, slots=True)
class And:
    operands: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Or:
    operands: tuple[Node, ...]


Node = Union[Comparison, InList, Between, Like, IsNull, Unknown, Not, And, Or]

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}
_FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_COLUMN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")


@dataclass(frozen=True, slots=True)
class Dialect:
    """What a filter's keys are and how it reads LIKE, strings and numbers. Partition filters name the
    table's partition keys in any case and take SQL LIKE patterns, gRPC's as they are, Hive 2.3's
    (Thrift's) as Hive's metastore rewrites them (`hive_like`); Hive's table filter
    (hive/table_filter.py) names its fields exactly, admits a parameter's field on first use, allows
    each field some operators only, reads LIKE as Hive's metastore does too, keeps a string's
    backslashes and reads numbers as Hive 2.3's grammar does."""

    subject: str  # "partition filter": the error messages' "bad partition filter at position ..."
    key_noun: str  # "partition key"
    exact_names: bool = False
    hive_like: bool = False  # LIKE as Hive 2.3.10's metastore runs it (`_hive_like`)
    # A quoted string is its text between the quotes, backslashes included, as Hive 2.3's lexer leaves
    # it (a backslash only keeps the next character from ending the string); otherwise `\x` is x.
    verbatim_strings: bool = False
    # A number is Hive 2.3's integral literal, digits after an optional minus, read as a Java long;
    # against a text key it stands for that long's decimal text (`= 010` means "10"), as Hive's
    # Long.toString makes it. Otherwise any decimal number, standing for its source text.
    integral_numbers: bool = False
    like_numbers: Callable[[FieldSchema], bool] | None = None  # keys whose LIKE takes a number (integral_numbers)
    # Against a text key a bare number stands for its text (the table filter's owner and parameters, which
    # Hive 2.3 compares with a number's Long text). Partition filters refuse it instead (`_convert`).
    text_numbers: bool = False
    # Whitespace between tokens is Hive 2.3's lexer's (Filter.g's WS): space, tab, CR and LF; any other space
    # character is refused there, as Hive refuses it. Otherwise any Unicode whitespace.
    hive_whitespace: bool = False
    # An IN list's values and BETWEEN's bounds are all unquoted dates or none is, as Hive's grammar (Filter.g)
    # takes a list of one kind of literal. Otherwise they may be mixed.
    one_kind_lists: bool = False
    admit: Callable[[str], FieldSchema | None] | None = None  # a key named beyond the given ones, or None
    refuse: Callable[[FieldSchema, str], str | None] | None = None  # why a key may not take an operator
    keys_hint: Callable[[Sequence[FieldSchema]], str] | None = None  # what may be named, for "unknown key"


PARTITION_FILTER = Dialect("partition filter", "partition key")
"""The gateway's own partition filter (gRPC's GetPartitionsByFilter): LIKE is SQL's."""
HIVE_PARTITION_FILTER = Dialect("partition filter", "partition key", hive_like=True, verbatim_strings=True,
                                integral_numbers=True, hive_whitespace=True, one_kind_lists=True)
"""Hive 2.3's partition filter (Thrift's get_partitions_by_filter, which Spark SQL's Hive client sends
`ds like "2024.*"` for StartsWith): LIKE is what Hive 2.3.10 makes of a Java regular expression, and a
number is its grammar's, a Java long (`+5`, `1.5` and 99999999999999999999 are refused, as Hive refuses them)."""


@dataclass(frozen=True, slots=True)
class Filter:
    """A parsed filter over one table's partition keys. Immutable; evaluate it as often as needed."""

    text: str
    keys: tuple[FieldSchema, ...]
    root: Node
    _match: Matcher = field(repr=False, compare=False)
    dialect: Dialect = field(repr=False, compare=False)

    def matches(self, values: Sequence[str | None]) -> bool:
        """Whether a partition with these values (in key order, as stored; None is NULL) is selected:
        the filter must be true; false and unknown (a NULL value somewhere decisive) both reject it."""
        return self._match(values) is True

    def evaluate(self, values: Sequence[str | None]) -> Tri:
        """The filter's value for a partition with these values: True, False or None (unknown)."""
        return self._match(values)

    def to_sql(self, first_param: int, *, column: str = "part_values") -> tuple[str, list[object]]:
        """A PostgreSQL boolean expression over the text[] `column` that selects exactly the rows
        `matches` selects, and its parameter values, numbered from `$first_param`."""
        if first_param < 1:
            raise ValueError(f"first_param must be at least 1, not {first_param}")
        if not _COLUMN.fullmatch(column):
            raise ValueError(f"column must be a (qualified) identifier, not {column!r}")
        params: list[object] = []
        return _SqlWriter(self.keys, column, first_param, params).node(self.root), params


MAX_FILTER_CHARS = FILTER
MAX_FILTER_DEPTH = 64
"""Nesting of NOT and parentheses; real filters nest a few levels (Spark's converted filters less than 10)."""


def key_kind(type_name: str) -> str | None:
    """How a key of this Hive type compares (int, decimal, date, timestamp, boolean or string), None for a
    type no filter compares: the one rule of which types a filter's or an expression's value may have."""
    kt = _BY_TYPE.get(type_name.split("(")[0].strip().lower())
    return kt.kind if kt else None


def filter_of(root: Node, keys: Sequence[FieldSchema], text: str = "") -> Filter:
    """A Filter of an AST built elsewhere (hive/partition_expr.py), its literals already of their keys'
    types (`key_kind`), naming only keys of a type `key_kind` knows; `text` says what it came from."""
    key_tuple = tuple(keys)
    return Filter(text, key_tuple, root, _Compiler(key_tuple).compile(root), PARTITION_FILTER)


def parse_filter(text: str, keys: Sequence[FieldSchema], dialect: Dialect = PARTITION_FILTER) -> Filter:
    """Parse `text` against the table's partition keys (names lower-case, types Hive's). Raises
    InvalidArgument, naming the 1-based position with a caret line, for any syntax error, unknown
    key, literal that does not fit its key's type, or key type that cannot be filtered on.
    With another dialect the keys are that dialect's fields, plus those it admits while parsing."""
    check_text(text, f"the {dialect.subject}", MAX_FILTER_CHARS)
    parser = _Parser(text, tuple(keys), dialect)
    root = parser.parse()
    key_tuple = tuple(parser.keys)
    return Filter(text, key_tuple, root, _Compiler(key_tuple).compile(root), dialect)


# --- lexer and parser -----------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<str>'([^'\\]|\\.)*'|"([^"\\]|\\.)*")
      | (?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})(?![A-Za-z0-9_.:-])
      | (?P<baddate>[0-9]+-[0-9]+-[^\s(),]*)
      | (?P<num>[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?)(?![A-Za-z0-9_])
      | (?P<word>[A-Za-z0-9_]+)
      | `(?P<quoted>[^`]*)`
      | (?P<op>==|!=|<>|<=|>=|=|<|>)
      | (?P<punct>[(),])""",
    re.VERBOSE | re.DOTALL,
)
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)
_NOT_HIVE_WHITESPACE = re.compile(r"[^ \t\r\n]")
_INTEGRAL = re.compile(r"-?[0-9]+")
_KEYWORDS = frozenset(["AND", "OR", "NOT", "IN", "BETWEEN", "LIKE"])
_NOT_KEYS = _KEYWORDS | {"TRUE", "FALSE"}  # words that never name a key


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # num, date, word, quoted, str, op, punct, eof
    text: str  # source text, or for str/quoted the decoded content
    pos: int  # 0-based offset in the filter text

    def is_kw(self, keyword: str) -> bool:
        return self.kind == "word" and self.text.upper() == keyword

    def is_punct(self, char: str) -> bool:
        return self.kind == "punct" and self.text == char

    def show(self) -> str:
        return "the end of the filter" if self.kind == "eof" else f"'{self.text}'"


@dataclass
class _Group:
    """A parenthesised group being read (the whole filter: `opening` None), with the NOTs before it. Its
    terms are kept with how deep NOT, AND and OR nest in each (a condition: 0)."""

    opening: _Token | None
    nots: int
    or_terms: list[tuple[Node, int]] = field(default_factory=list)
    and_terms: list[tuple[Node, int]] = field(default_factory=list)

    def end_and(self) -> None:
        """An OR: the conditions ANDed so far are one of the group's ORed terms."""
        self.or_terms.append(_joined(And, self.and_terms))
        self.and_terms = []

    def node(self) -> tuple[Node, int]:
        self.end_and()
        return _joined(Or, self.or_terms)


def _joined(kind: type[And] | type[Or], terms: list[tuple[Node, int]]) -> tuple[Node, int]:
    """`terms` joined by AND or OR, a term of the same kind merged into it (its operands are one level less
    deep than it); a single term as it is."""
    if len(terms) == 1:
        return terms[0]
    flat: list[Node] = []
    deepest = 0
    for term, depth in terms:
        if isinstance(term, kind):
            flat.extend(term.operands)
            depth -= 1
        else:
            flat.append(term)
        deepest = max(deepest, depth)
    return kind(tuple(flat)), deepest + 1


class _Parser:
    """Recursive descent over the token list; literals are converted as soon as their key is known."""

    def __init__(self, text: str, keys: tuple[FieldSchema, ...], dialect: Dialect) -> None:
        self._text = text
        self.keys = list(keys)  # grows by the keys the dialect admits
        self._dialect = dialect
        self._noun = dialect.key_noun
        self._tokens = self._lex()
        self._i = 0
        # Where the run of '(' at each token ends (itself, if not '('): one pass, where scanning each run from
        # each of its tokens would cost the square of a deep filter's length.
        self._run_end = list(range(len(self._tokens)))
        for i in range(len(self._tokens) - 2, -1, -1):
            if self._tokens[i].is_punct("("):
                self._run_end[i] = self._run_end[i + 1]

    def parse(self) -> Node:
        if self._peek().kind == "eof":
            self._fail(self._peek(), "the filter is empty")
        return self._expression()

    def _fail(self, tok: _Token, message: str) -> NoReturn:
        line = "".join(" " if c.isspace() else c for c in self._text)  # one line, columns kept
        start = max(0, tok.pos - 60)
        shown = ("..." if start else "") + line[start:tok.pos + 60]
        caret = " " * (tok.pos - start + (3 if start else 0)) + "^"
        raise InvalidArgument(f"bad {self._dialect.subject} at position {tok.pos + 1}: {message}\n  {shown}\n  {caret}")

    def _lex(self) -> list[_Token]:
        tokens: list[_Token] = []
        text, i = self._text, 0
        while i < len(text):
            m = _TOKEN.match(text, i)
            if m is None or m.lastgroup is None:
                problem = f"unterminated string: no closing {text[i]}" if text[i] in "'\"" else \
                    f"unexpected character {text[i]!r}"
                self._fail(_Token("char", text[i], i), problem)
            kind = m.lastgroup
            if kind == "baddate":
                self._fail(_Token("char", m.group(), i), f"'{m.group()}' is not a date as a filter writes one "
                                                          "unquoted (yyyy-mm-dd); quote a value that is not")
            if kind == "ws" and self._dialect.hive_whitespace:
                other = _NOT_HIVE_WHITESPACE.search(m.group())
                if other is not None:
                    at = i + other.start()
                    self._fail(_Token("char", text[at], at), f"unexpected character {text[at]!r} (between the "
                                                             "tokens of Hive's filters: space, tab, CR and LF only)")
            if kind == "str":
                quoted = m.group()[1:-1]
                content = quoted if self._dialect.verbatim_strings else _UNESCAPE.sub(r"\1", quoted)
                tokens.append(_Token(kind, content, i))
            elif kind != "ws":
                tokens.append(_Token(kind, m.group("quoted") if kind == "quoted" else m.group(), i))
            i = m.end()
        tokens.append(_Token("eof", "", len(text)))
        return tokens

    def _peek(self) -> _Token:
        return self._tokens[self._i]

    def _next(self) -> _Token:
        tok = self._tokens[self._i]
        self._i += tok.kind != "eof"
        return tok

    def _expression(self) -> Node:
        """The whole filter: conditions joined by AND (binding first) and OR, under NOT and parentheses.

        Read with a stack of open groups, not by recursion: a filter may be nested as deep as it is long
        (Hudi's Hive sync writes its partitions as `((((p = 'a') OR (p = 'b')) OR (p = 'c')) ...)`, one level
        per partition, which Hive's parser takes). A group's ORs (and ANDs) are merged into the enclosing
        ones, which mean the same (both are associative, in SQL's three-valued logic too); what remains nested
        after that, NOT under AND under OR and so on, is bounded (MAX_FILTER_DEPTH), since the compiler and
        the SQL writer walk it by recursion."""
        groups = [_Group(None, 0)]
        while True:
            nots = 0
            while self._peek().is_kw("NOT"):
                self._next()
                nots += 1
            if self._peek().is_punct("(") and not self._parenthesised_key():
                groups.append(_Group(self._next(), nots))
                continue
            node, depth = self._predicate(), 0
            while True:  # the operand is done: NOTs before it, then operators, or the end of its groups
                for _ in range(nots):
                    node, depth = Not(node), depth + 1
                if depth > MAX_FILTER_DEPTH:
                    self._fail(self._peek(), f"the filter nests NOT, AND and OR more than {MAX_FILTER_DEPTH} deep")
                groups[-1].and_terms.append((node, depth))
                tok = self._peek()
                if tok.is_kw("AND") or tok.is_kw("OR"):
                    self._next()
                    if tok.is_kw("OR"):
                        groups[-1].end_and()
                    break
                group = groups[-1]
                if group.opening is None:
                    if tok.kind != "eof":
                        self._fail(tok, f"expected AND, OR or the end of the filter, found {tok.show()}")
                    return self._bounded(group.node())
                self._next()
                if not tok.is_punct(")"):
                    self._fail(tok, f"expected ')' to close the '(' at position {group.opening.pos + 1}, found "
                                    f"{tok.show()}")
                groups.pop()
                node, depth = group.node()
                nots = group.nots

    def _bounded(self, node_depth: tuple[Node, int]) -> Node:
        node, depth = node_depth
        if depth > MAX_FILTER_DEPTH:
            self._fail(self._peek(), f"the filter nests NOT, AND and OR more than {MAX_FILTER_DEPTH} deep")
        return node

    def _key_index(self, name: str) -> int | None:
        for index, key in enumerate(self.keys):
            if key.name == name or (not self._dialect.exact_names and key.name.lower() == name.lower()):
                return index
        admitted = self._dialect.admit(name) if self._dialect.admit else None
        if admitted is None:
            return None
        self.keys.append(admitted)
        return len(self.keys) - 1

    def _parenthesised_key(self) -> int:
        """How many parentheses enclose a key at the next token, as in Hive 2.3's `(ds) IN (...)`, the
        only IN its grammar (Filter.g) takes and what Spark sends; 0 where no key is enclosed there.
        A key alone is no condition, so `(key)` cannot start a sub-expression: reading it as the key
        leaves nothing ambiguous. Any parentheses beyond the ones closing right after the key open a
        sub-expression, as in `((ds) IN ('a') OR ds = 'b')`."""
        opening = self._run_end[self._i]
        depth, tok = opening - self._i, self._tokens[opening]
        if depth == 0 or not (tok.kind == "quoted" or tok.kind == "word" and tok.text.upper() not in _NOT_KEYS):
            return 0
        closing = opening + 1
        while closing - opening - 1 < depth and self._tokens[closing].is_punct(")"):
            closing += 1
        return depth if closing - opening - 1 == depth else 0

    def _operand(self, what: str, where: str) -> tuple[int | None, _Token]:
        """A key (its index), bare or in parentheses, or a literal token (index None)."""
        enclosing = self._parenthesised_key()
        self._i += enclosing
        tok = self._next()
        self._i += enclosing
        if tok.kind in ("word", "quoted"):
            index = self._key_index(tok.text)
            if index is not None:
                key = self.keys[index]
                if _type_of(key) is None:
                    self._fail(tok, f"{self._noun} '{key.name}' has type {key.type}, which filters do not support")
                return index, tok
            if tok.kind == "word" and tok.text.upper() in ("TRUE", "FALSE"):
                return None, tok
            if tok.kind == "quoted" or tok.text.upper() not in _KEYWORDS:
                if self._dialect.keys_hint:
                    hint = self._dialect.keys_hint(self.keys)
                else:
                    names = ", ".join(k.name for k in self.keys) or "none: the table is not partitioned"
                    hint = f"the keys are {names}"
                self._fail(tok, f"unknown {self._noun} '{tok.text}' ({hint})")
        elif tok.kind in ("str", "num", "date"):
            return None, tok
        self._fail(tok, f"expected {what} {where}, found {tok.show()}")

    def _check_operator(self, key: int, tok: _Token, operator_name: str) -> None:
        why = self._dialect.refuse(self.keys[key], operator_name) if self._dialect.refuse else None
        if why:
            self._fail(tok, why)

    def _literal(self, key: int, where: str) -> Value:
        index, tok = self._operand("a value", where)
        if index is not None:
            self._fail(tok, f"expected a value {where}, found {self._noun} '{tok.text}'")
        return self._convert(key, tok)

    def _predicate(self) -> Node:
        left, left_tok = self._operand(f"a {self._noun} or a value", "at the start of a condition")
        tok = self._next()
        if tok.kind == "op":
            op = {"==": "=", "!=": "<>"}.get(tok.text, tok.text)
            if left is not None:
                self._check_operator(left, tok, tok.text)
                return Comparison(left, op, self._literal(left, f"after '{tok.text}'"))
            right, right_tok = self._operand(f"a {self._noun}", f"after '{tok.text}'")
            if right is None:
                self._fail(right_tok, f"expected a {self._noun} after '{tok.text}', found {right_tok.show()}: "
                                      "a comparison needs a key on one side")
            self._check_operator(right, tok, tok.text)
            return Comparison(right, _FLIPPED[op], self._convert(right, left_tok))
        negated = tok.is_kw("NOT")
        if negated:
            tok = self._next()
        word = tok.text.upper() if tok.kind == "word" else ""
        if word not in ("IN", "BETWEEN", "LIKE"):
            expected = "IN, BETWEEN or LIKE after NOT" if negated else \
                f"a comparison operator, IN, BETWEEN or LIKE after {left_tok.show()}"
            self._fail(tok, f"expected {expected}, found {tok.show()}")
        if left is None:
            self._fail(left_tok, f"{word} needs a {self._noun} on its left, not a value")
        self._check_operator(left, tok, word)
        node: Node
        if word == "IN":
            node = InList(left, self._in_list(left, tok))
        elif word == "BETWEEN":
            dates = self._peek().kind == "date"
            low = self._literal(left, "after BETWEEN")
            and_tok = self._next()
            if not and_tok.is_kw("AND"):
                self._fail(and_tok, f"expected AND between the bounds of BETWEEN, found {and_tok.show()}")
            if self._dialect.one_kind_lists and (self._peek().kind == "date") != dates:
                self._fail(self._peek(), "BETWEEN's bounds are both unquoted dates or neither is (Hive's grammar)")
            node = Between(left, low, self._literal(left, "after BETWEEN ... AND"))
        else:
            pattern = self._next()
            like_numbers = self._dialect.like_numbers
            if pattern.kind == "num" and like_numbers is not None and like_numbers(self.keys[left]):
                pattern = _Token("str", str(self._long(pattern)), pattern.pos)
            if pattern.kind != "str":
                self._fail(pattern, f"expected a quoted pattern after LIKE, found {pattern.show()}")
            if self._dialect.hive_like:
                node = self._hive_like(left, tok, pattern)
            else:
                if (len(pattern.text) - len(pattern.text.rstrip("\\"))) % 2:
                    self._fail(pattern, "a LIKE pattern must not end with its escape character, a lone backslash")
                node = Like(left, pattern.text)
        return Not(node) if negated else node

    def _hive_like(self, key: int, like_tok: _Token, pattern: _Token) -> Like:
        """Hive 2.3's LIKE: only on a key typed string (its JDO filter's rule, refused there with a
        MetaException), the pattern rewritten as Hive's metastore does (`_hive_like`)."""
        fs = self.keys[key]
        if fs.type.strip().lower() != "string":
            self._fail(like_tok, f"LIKE applies to keys of type string only, and '{fs.name}' has type {fs.type} "
                                 "(Hive 2.3's rule)")
        text, ascii_case_blind = pattern.text, pattern.text.startswith("(?i)")
        if ascii_case_blind:
            text = text[len("(?i)"):]
            if any(not c.isascii() and (c.lower() != c or c.upper() != c) for c in text):
                self._fail(pattern, "with (?i), a LIKE pattern may hold ASCII letters only: Hive's metastore "
                                    "lower-cases by Java's rules, which the gateway does not reproduce")
            text = text.translate(_ASCII_LOWER)
        return Like(key, _hive_like(text), ascii_case_blind)

    def _in_list(self, key: int, in_tok: _Token) -> tuple[Value, ...]:
        tok = self._next()
        if not tok.is_punct("("):
            self._fail(tok, f"expected '(' after IN, found {tok.show()}")
        dates = self._peek().kind == "date"
        values = [self._literal(key, "in the IN list")]
        while True:
            tok = self._next()
            if tok.is_punct(")"):
                return tuple(values)
            if not tok.is_punct(","):
                self._fail(tok, f"expected ',' or ')' in the IN list at position {in_tok.pos + 1}, found {tok.show()}")
            if self._dialect.one_kind_lists and (self._peek().kind == "date") != dates:
                self._fail(self._peek(), "an IN list's values are all unquoted dates or none is (Hive's grammar)")
            values.append(self._literal(key, "after ','"))

    def _long(self, tok: _Token) -> int:
        """A number as Hive 2.3's grammar reads it (integral_numbers): a Java long."""
        if not _INTEGRAL.fullmatch(tok.text):
            self._fail(tok, f"a number in a {self._dialect.subject} is a whole number, digits after an optional "
                            f"minus (Hive 2.3's grammar): write '{tok.text}' in quotes")
        value = int(tok.text)
        if not -2**63 <= value < 2**63:
            self._fail(tok, f"{tok.text} does not fit a Java long, as Hive 2.3 reads a number")
        return value

    def _convert(self, key: int, tok: _Token) -> Value:
        """The literal as a value of the key's type, or an error pointing at the literal."""
        fs = self.keys[key]
        kt = _filterable_type(fs)
        if tok.kind == "num" and self._dialect.integral_numbers and (kt is not _STRING or self._dialect.text_numbers):
            tok = _Token("num", str(self._long(tok)), tok.pos)  # (against a string key: refused below, as written)
        if tok.kind == "date":
            # Hive's filter grammar has date literals, unquoted (Filter.g's DateLiteral, since Hive 0.13): Hudi's
            # Hive sync and some Spark versions write a date key's value so. Hive reads one against a date key
            # as that date and against a string key as its text, and refuses one that is no date (2024-02-30).
            if kt is _STRING:
                return tok.text
            if kt is not _DATE:
                self._fail(tok, f"{tok.text} is a date, but key '{fs.name}' has type {fs.type}")
        if tok.kind == "word":  # TRUE or FALSE
            if kt is not _BOOLEAN:
                self._fail(tok, f"{tok.text} is a boolean, but key '{fs.name}' has type {fs.type}")
            return tok.text.upper() == "TRUE"
        if kt is _STRING:
            if tok.kind == "num" and not self._dialect.text_numbers:
                quoted = f' ("{tok.text}")' if len(tok.text) <= 40 else ""
                self._fail(tok, f"key '{fs.name}' has type {fs.type}, but {_short(tok.text)} is a number: quote "
                                f"it{quoted} to compare text (a string key is never compared with a number, as in "
                                "Hive Metastore 2.3)")
            return tok.text
        if tok.kind == "num" and kt in (_DATE, _TIMESTAMP, _BOOLEAN):
            self._fail(tok, f"key '{fs.name}' has type {fs.type}: write its value as a quoted string")
        value = kt.parse(tok.text)
        if value is None:
            self._fail(tok, f"'{tok.text}' is not a valid {fs.type} for key '{fs.name}'")
        return value


def _short(number: str) -> str:
    """A number's text for a message (digits, signs, a dot, an exponent: nothing to escape), cut at 40."""
    return number if len(number) <= 40 else number[:40] + "..."


# --- evaluation in Python -------------------------------------------------------------------------


_MEMO_LIMIT = 1 << 16  # typed values remembered per key and filter; the memo restarts when full


class _Compiler:
    """Builds the closure behind `Filter.matches`. Cached partitions repeat a few values per key
    (days, hours, regions), so each key's typed values are memoized, bounded, for the filter's life."""

    def __init__(self, keys: tuple[FieldSchema, ...]) -> None:
        self._keys = keys
        self._readers: dict[int, Callable[[Sequence[str | None]], Value | None]] = {}

    def reader(self, i: int) -> Callable[[Sequence[str | None]], Value | None]:
        """values -> the typed value of key i, or None for NULL."""
        if i in self._readers:
            return self._readers[i]
        kt = _filterable_type(self._keys[i])
        if kt.regex is None:
            def read(values: Sequence[str | None]) -> Value | None:
                s = values[i]
                return None if s == DEFAULT_PARTITION_NAME else s
        else:
            memo: dict[str, Value | None] = {}

            def read(values: Sequence[str | None]) -> Value | None:
                s = values[i]
                if s is None:
                    return None
                try:
                    return memo[s]
                except KeyError:
                    if len(memo) >= _MEMO_LIMIT:
                        memo.clear()
                    v = memo[s] = kt.parse(s)
                    return v

        self._readers[i] = read
        return read

    def compile(self, node: Node) -> Matcher:
        if isinstance(node, (And, Or)):
            parts = tuple(self.compile(n) for n in node.operands)
            decisive = isinstance(node, Or)  # OR stops at True, AND at False

            def junction(values: Sequence[str | None]) -> Tri:
                unknown = False
                for part in parts:
                    r = part(values)
                    if r is decisive:
                        return decisive
                    unknown = unknown or r is None
                return None if unknown else not decisive

            return junction
        if isinstance(node, Not):
            inner = self.compile(node.operand)
            return lambda values: None if (r := inner(values)) is None else not r
        if isinstance(node, Unknown):
            return lambda values: None
        read, i = self.reader(node.key), node.key
        if isinstance(node, IsNull):
            return lambda values: read(values) is None
        if isinstance(node, Comparison):
            op, lit = _OPS[node.op], node.value
            return lambda values: None if (v := read(values)) is None else op(v, lit)
        if isinstance(node, InList):
            contains = frozenset(node.values).__contains__
            return lambda values: None if (v := read(values)) is None else contains(v)
        if isinstance(node, Between):
            lo, hi = node.low, node.high
            return lambda values: None if (v := read(values)) is None else lo <= v <= hi  # type: ignore[operator]
        fullmatch = LikePattern(node.pattern).fullmatch  # linear in the value (hive/wildcard.py)
        case_blind = node.ascii_case_blind

        def like(values: Sequence[str | None]) -> Tri:
            s = values[i]
            if s is None or read(values) is None:
                return None
            return fullmatch(s.translate(_ASCII_LOWER) if case_blind else s)

        return like


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


# --- translation to SQL ---------------------------------------------------------------------------


class _SqlWriter:
    def __init__(self, keys: tuple[FieldSchema, ...], column: str, first: int, params: list[object]) -> None:
        self._keys, self._column, self._first, self._params = keys, column, first, params

    def _param(self, value: Value | list[Value], kt: _KeyType) -> str:
        suffix = "[]" if isinstance(value, list) else ""
        cast = f"::{kt.pg_type}{suffix}"
        if kt in (_DATE, _TIMESTAMP):  # asyncpg would send date.max and datetime.max as infinity
            value = [_iso(v) for v in value] if isinstance(value, list) else _iso(value)
            cast = f"::text{suffix}{cast}"
        self._params.append(value)
        return f"${self._first + len(self._params) - 1}{cast}"

    def node(self, node: Node) -> str:
        if isinstance(node, (And, Or)):
            joiner = " AND " if isinstance(node, And) else " OR "
            return "(" + joiner.join(self.node(n) for n in node.operands) + ")"
        if isinstance(node, Not):
            return f"(NOT {self.node(node.operand)})"
        if isinstance(node, Unknown):
            return "(NULL::boolean)"
        kt = _filterable_type(self._keys[node.key])
        elem = f"{self._column}[{node.key + 1}]"
        if isinstance(node, Like):
            text = kt.sql(elem, as_text=True)
            if node.ascii_case_blind:  # lower() under COLLATE "C" changes ASCII letters only
                text = f"lower({text})"
            return f"({text} LIKE {self._param(node.pattern, _STRING)})"
        value = kt.sql(elem)
        if isinstance(node, IsNull):
            return f"({value} IS NULL)"
        if isinstance(node, Comparison):
            return f"({value} {node.op} {self._param(node.value, kt)})"
        if isinstance(node, InList):
            return f"({value} = ANY({self._param(list(node.values), kt)}))"
        low, high = self._param(node.low, kt), self._param(node.high, kt)
        return f"({value} BETWEEN {low} AND {high})"


def _iso(value: Value) -> str:
    assert isinstance(value, _dt.date)  # datetime is a date too
    return value.isoformat()
