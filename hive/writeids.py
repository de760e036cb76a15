"""Snapshot arithmetic of Hive ACID: valid-txn and valid-write-id lists, their strings and comparisons.

Design note. Pure functions of plain data (no I/O): the txn and write-id modules feed it rows, the cache
the lists it stores. Names and strings follow Hive's storage-api and metastore (Hive 3 unless noted), so
a list written here is read unchanged by a Hive client and vice versa.

Two comparisons exist and they answer different questions:

- `compare` is Hive's `TxnIdUtils.compare`, a freshness order. It is 0 exactly when two well-formed lists
  (exceptions within 1..hwm) commit the same write ids, but for snapshots that each saw a commit the other
  did not it still answers +-1, so it cannot prove that a cache entry is safe to serve.
- `covers` / `committed_between` are exact set tests over the committed write ids, computed from the
  exception arrays only (a high-water mark can be ~1e9). The cache decides with these.

Validity is always decided through the owning txn and the snapshot, never by `write_id <= x` alone:
write ids are allocated in allocation order, not txn order.
"""

from __future__ import annotations

import enum
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hive.errors import InvalidArgument

LONG_MAX = 9223372036854775807
"""Java `Long.MAX_VALUE`: the "no open id" value of minOpenTxn / minOpenWriteId, and the hwm of ''."""
LONG_MIN = -9223372036854775808
MIN_RANGE_LENGTH = 5
"""Hive 4 `ValidReadTxnList`: runs of at least this many consecutive ids are written as `first-last`."""
MAX_EXPANDED_RANGE_IDS = 1_000_000
"""Cap on ids produced by `a-b` tokens of one list: strings arrive from clients, and a one-token range
must not allocate billions of ints (Hive has no such cap)."""

_LONG_RE = re.compile(r"[+-]?[0-9]+")
_RANGE_RE = re.compile(r"([0-9]+)-([0-9]+)")


class InvalidSnapshotError(InvalidArgument, ValueError):
    """A txn / write-id list string or value that Hive would not produce or cannot read."""


class RangeResponse(enum.Enum):
    """Hive `ValidTxnList.RangeResponse` (shared by `ValidWriteIdList`)."""

    NONE = "NONE"
    SOME = "SOME"
    ALL = "ALL"


# --- shared helpers: both list classes are "hwm + sorted exceptions + aborted bits" -----------------


def _parse_long(token: str) -> int:
    # Java Long.parseLong: optional sign, digits only; Python int() would also take '1_0' and ' 7'.
    if not _LONG_RE.fullmatch(token):
        raise InvalidSnapshotError(f"not a long: {token!r}")
    value = int(token)
    if not LONG_MIN <= value <= LONG_MAX:
        raise InvalidSnapshotError(f"out of the long range: {token!r}")
    return value


def _java_split(text: str, sep: str) -> list[str]:
    """`str.split` with Java `String.split` semantics: trailing empty strings are dropped."""
    parts = text.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _parse_ids(field: str, allow_ranges: bool) -> list[int]:
    ids: list[int] = []
    expanded = 0
    for token in _java_split(field, ","):
        match = _RANGE_RE.fullmatch(token) if allow_ranges else None
        if match is None:
            ids.append(_parse_long(token))
            continue
        first, last = _parse_long(match[1]), _parse_long(match[2])
        expanded += last - first + 1
        if last < first or expanded > MAX_EXPANDED_RANGE_IDS:
            raise InvalidSnapshotError(f"bad or oversized id range: {token!r}")
        ids.extend(range(first, last + 1))
    return ids


def _parse_body(values: list[str], *, ranges: bool, legacy: bool) -> tuple[int, int, list[int], list[int]]:
    """Parse `hwm:minOpen[:open[:aborted]]` (already Java-split) into (hwm, min_open, open, aborted)."""
    if len(values) < 2:
        raise InvalidSnapshotError("expected <hwm>:<minOpen>[:<open>[:<aborted>]]")
    hwm, min_open = _parse_long(values[0]), _parse_long(values[1])
    lists = values[2:]
    if len(lists) > 2:
        # Hive 3 reads fields 3 and 4 and silently ignores the rest, which would turn every further id
        # valid. Only the Hive 2.x `hwm:minOpenTxn:e1:e2:...` shape (one id per field) is accepted.
        if not (legacy and all(_LONG_RE.fullmatch(v) for v in lists)):
            raise InvalidSnapshotError("too many ':' fields")
        ids = _txn_ids_as_read(_parse_long(v) for v in lists)
        # Hive 2.x lists open and aborted txns alike: minOpenTxn is one of them, or none is open.
        _check_written_form("ValidTxnList", hwm, LONG_MAX, [], ids, min_open_above_hwm=False) \
            if min_open == LONG_MAX else _check_written_form("ValidTxnList", hwm, min_open, [min_open], ids,
                                                              min_open_above_hwm=False)
        if min_open != LONG_MAX and min_open not in ids:
            raise InvalidSnapshotError(f"ValidTxnList: minOpenTxn {min_open} is not among the listed txns")
        return hwm, min_open, ids, []
    open_ids = _parse_ids(lists[0], ranges) if lists else []
    aborted_ids = _parse_ids(lists[1], ranges) if len(lists) == 2 else []
    return hwm, min_open, open_ids, aborted_ids


def _txn_ids_as_read(ids: Iterable[int]) -> list[int]:
    """One list of a ValidTxnList string's txn ids as Hive's ValidReadTxnList.readFromString reads it:
    in ascending order, as it sorts them (their order means nothing), each once, and without ids of 0
    or below, which no txn has (Hive keeps them as exceptions that match no txn; kept here, one below
    the cleaner's mark would read as an open txn there, a snapshot too old)."""
    return sorted({i for i in ids if i > 0})


def _check_written_form(what: str, hwm: int, min_open: int, open_ids: list[int], aborted_ids: list[int],
                        *, min_open_above_hwm: bool) -> None:
    """What a Hive writer can produce, checked on strings from clients (the constructors stay as
    lenient as Hive's, for lists built here): a non-negative high-water mark; each list strictly
    ascending (Hive writes them sorted, so disorder in a write-id list means a hand-made or corrupted
    string; a txn list's ids come here as Hive reads them, _txn_ids_as_read); every id
    within 1..hwm (an id above the mark is invalid anyway, so listing one is a mistake); and minOpen
    Long.MAX_VALUE (what Hive writes when nothing is open) or an id within 1..hwm, or for a write-id
    list also one above the hwm (the compactor's form, hive-reference section 2.2). So `5:100::` (a
    txn open above the snapshot's own mark) is refused. Hive's readers take minOpen verbatim, and
    lists built here may carry Long.MAX_VALUE beside open ids, so it is not tied to the open ids."""
    if hwm < 0:
        raise InvalidSnapshotError(f"{what}: the high-water mark {hwm} is negative")
    for name, ids in (("open", open_ids), ("aborted", aborted_ids)):
        if any(b <= a for a, b in zip(ids, ids[1:])):
            raise InvalidSnapshotError(f"{what}: the {name} ids are not in ascending order")
        if ids and (ids[0] < 1 or ids[-1] > hwm):
            raise InvalidSnapshotError(
                f"{what}: {name} ids must lie within 1..{hwm} (the high-water mark), found "
                f"{ids[0] if ids[0] < 1 else ids[-1]}")
    if min_open != LONG_MAX and (min_open < 1 or (min_open > hwm and not min_open_above_hwm)):
        raise InvalidSnapshotError(
            f"{what}: minOpen {min_open} is outside 1..{hwm} (the high-water mark); with no id open below the "
            f"mark it is {LONG_MAX} (Long.MAX_VALUE)")


def _normalize(exceptions: Iterable[int], aborted: Iterable[int]) -> tuple[tuple[int, ...], frozenset[int]]:
    ordered = tuple(sorted(exceptions))
    if any(a == b for a, b in zip(ordered, ordered[1:])):
        raise InvalidSnapshotError("an id is listed twice among the exceptions")
    aborted_set = frozenset(aborted)
    if not aborted_set.issubset(ordered):
        raise InvalidSnapshotError("aborted ids must be exceptions")
    return ordered, aborted_set


def _contains(sorted_ids: Sequence[int], value: int) -> bool:
    i = bisect_left(sorted_ids, value)
    return i < len(sorted_ids) and sorted_ids[i] == value


def _format_ids(ids: Sequence[int], compress: bool) -> str:
    if not compress:
        return ",".join(map(str, ids))
    tokens: list[str] = []
    start = 0
    while start < len(ids):
        end = start
        while end + 1 < len(ids) and ids[end + 1] == ids[end] + 1:
            end += 1
        if end - start + 1 >= MIN_RANGE_LENGTH:
            tokens.append(f"{ids[start]}-{ids[end]}")
        else:
            tokens.extend(map(str, ids[start : end + 1]))
        start = end + 1
    return ",".join(tokens)


def _format_lists(exceptions: tuple[int, ...], aborted: frozenset[int], compress: bool) -> str:
    open_ids = [i for i in exceptions if i not in aborted]
    aborted_ids = [i for i in exceptions if i in aborted]
    return f":{_format_ids(open_ids, compress)}:{_format_ids(aborted_ids, compress)}"


def _range_valid(hwm: int, exceptions: tuple[int, ...], lo: int, hi: int) -> RangeResponse:
    # Hive's counting rule, including its quirk that exceptions above hwm are counted twice.
    if lo > hwm:
        return RangeResponse.NONE
    if exceptions and exceptions[0] > hi:
        return RangeResponse.ALL
    count = max(0, hi - hwm) + bisect_right(exceptions, hi) - bisect_left(exceptions, lo)
    if count == 0:
        return RangeResponse.ALL
    return RangeResponse.NONE if count == hi - lo + 1 else RangeResponse.SOME


# --- the three list types --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ValidTxnList:
    """A reader's txn snapshot: Hive `ValidReadTxnList` (interface `ValidTxnList`).

    A txn is valid (committed and visible) iff `t <= high_watermark` and `t` is not an exception.
    Exceptions are stored sorted; `aborted` is the subset Hive marks in `abortedBits`, the rest are open.
    As in Hive's constructor, `min_open_txn` is forced to `LONG_MAX` when there are no exceptions.
    """

    high_watermark: int
    min_open_txn: int = LONG_MAX
    exceptions: tuple[int, ...] = ()
    aborted: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        exceptions, aborted = _normalize(self.exceptions, self.aborted)
        object.__setattr__(self, "exceptions", exceptions)
        object.__setattr__(self, "aborted", aborted)
        if not exceptions:
            object.__setattr__(self, "min_open_txn", LONG_MAX)

    @classmethod
    def parse(cls, text: str | None) -> ValidTxnList:
        """Hive `readFromString`: `hwm:minOpenTxn:open,...:aborted,...`; '' or None = everything valid.

        Fields are split with Java semantics (`9:5` and `9:5::` are the same list), Hive 4 `a-b` range
        tokens are expanded, and the Hive 2.x form `hwm:minOpenTxn:e1:e2:e3...` is read when it has more
        than four fields (its ids become open exceptions). A 2.x string with at most two exceptions is
        read as the Hive 3 form, which gives the same valid set. Each list's ids are read as Hive reads
        them, in any order and without those of no txn (_txn_ids_as_read). Raises `InvalidSnapshotError`.
        """
        if not text:
            return cls(LONG_MAX)
        hwm, min_open, open_ids, aborted_ids = _parse_body(_java_split(text, ":"), ranges=True, legacy=True)
        open_ids, aborted_ids = _txn_ids_as_read(open_ids), _txn_ids_as_read(aborted_ids)
        if aborted_ids or len(_java_split(text, ":")) <= 4:  # the Hive 2.x form was checked as it was read
            _check_written_form("ValidTxnList", hwm, min_open, open_ids, aborted_ids, min_open_above_hwm=False)
        return cls(hwm, min_open, tuple(open_ids + aborted_ids), frozenset(aborted_ids))

    def to_string(self, *, compress_ranges: bool = False) -> str:
        """Hive `writeToString`. Hive 3 form by default; `compress_ranges` writes Hive 4 `a-b` runs,
        which Hive 3 readers cannot parse."""
        return f"{self.high_watermark}:{self.min_open_txn}" + _format_lists(
            self.exceptions, self.aborted, compress_ranges
        )

    def is_txn_valid(self, txn_id: int) -> bool:
        """Hive `isTxnValid`: committed in this snapshot."""
        return txn_id <= self.high_watermark and not _contains(self.exceptions, txn_id)

    def is_txn_aborted(self, txn_id: int) -> bool:
        """Hive `isTxnAborted`: an exception with its aborted bit set."""
        return txn_id in self.aborted

    def is_txn_open(self, txn_id: int) -> bool:
        """An exception that is not aborted (ids above the hwm are invalid but not "open")."""
        return _contains(self.exceptions, txn_id) and txn_id not in self.aborted

    def is_txn_range_valid(self, lo: int, hi: int) -> RangeResponse:
        """Hive `isTxnRangeValid`: how many of the txns `lo..hi` are valid."""
        return _range_valid(self.high_watermark, self.exceptions, lo, hi)

    def before(self, txn_id: int) -> ValidTxnList:
        """This snapshot with no txn from `txn_id` on valid: what every reader still open sees when
        `txn_id` is the lowest open txn (Hive 4's createValidTxnListForCleaner). The Cleaner judges
        by it, so that output a later compaction committed after an open reader began does not count
        as covering the files that reader still reads."""
        hwm = min(self.high_watermark, txn_id - 1)
        below = tuple(t for t in self.exceptions if t <= hwm)
        return ValidTxnList(hwm, min((t for t in below if t not in self.aborted), default=LONG_MAX), below,
                            self.aborted.intersection(below))


@dataclass(frozen=True, slots=True)
class ValidWriteIdList:
    """One table's write-id snapshot: Hive `ValidReaderWriteIdList` (interface `ValidWriteIdList`).

    `table_name` is the full `db.table` name, lower-cased here (Hive compares names ignoring case), or
    None, written as the literal `null`. A write id is valid (committed and visible) iff
    `w <= high_watermark` and `w` is not an exception. `min_open_write_id` is forced to `LONG_MAX`
    when there are no exceptions, as in Hive's constructor.
    """

    table_name: str | None
    high_watermark: int
    min_open_write_id: int = LONG_MAX
    exceptions: tuple[int, ...] = ()
    aborted: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        if self.table_name is not None:
            name = self.table_name.lower()
            # ':' and '$' are separators of the string forms; 'null' would read back as None.
            if ":" in name or "$" in name or name == "null":
                raise InvalidSnapshotError(f"unusable table name: {self.table_name!r}")
            object.__setattr__(self, "table_name", name)
        exceptions, aborted = _normalize(self.exceptions, self.aborted)
        object.__setattr__(self, "exceptions", exceptions)
        object.__setattr__(self, "aborted", aborted)
        if not exceptions:
            object.__setattr__(self, "min_open_write_id", LONG_MAX)

    @classmethod
    def parse(cls, text: str | None) -> ValidWriteIdList:
        """Hive `readFromString`: `db.table:hwm:minOpenWriteId:open,...:aborted,...`.

        '' or None gives a nameless list where everything is valid. Java split semantics as in
        `ValidTxnList.parse`; range tokens and extra fields are rejected, as a Hive reader would.
        """
        if not text:
            return cls(None, LONG_MAX)
        values = _java_split(text, ":")
        hwm, min_open, open_ids, aborted_ids = _parse_body(values[1:], ranges=False, legacy=False)
        _check_written_form(f"ValidWriteIdList of {values[0][:200]}", hwm, min_open, open_ids, aborted_ids,
                            min_open_above_hwm=True)
        name = None if values[0].lower() == "null" else values[0]
        return cls(name, hwm, min_open, tuple(open_ids + aborted_ids), frozenset(aborted_ids))

    def to_string(self) -> str:
        """Hive `writeToString` (this class has no range compression in any Hive version)."""
        name = "null" if self.table_name is None else self.table_name
        return f"{name}:{self.high_watermark}:{self.min_open_write_id}" + _format_lists(
            self.exceptions, self.aborted, False
        )

    def is_write_id_valid(self, write_id: int) -> bool:
        """Hive `isWriteIdValid`: committed in this snapshot."""
        return write_id <= self.high_watermark and not _contains(self.exceptions, write_id)

    committed_in = is_write_id_valid

    def is_write_id_aborted(self, write_id: int) -> bool:
        """Hive `isWriteIdAborted`."""
        return write_id in self.aborted

    def is_write_id_open(self, write_id: int) -> bool:
        """An exception that is not aborted."""
        return _contains(self.exceptions, write_id) and write_id not in self.aborted

    def is_valid_base(self, write_id: int) -> bool:
        """Hive `isValidBase`: a `base_N` is usable only if nothing at or below N is still open."""
        return write_id < self.min_open_write_id and write_id <= self.high_watermark

    def is_write_id_range_valid(self, lo: int, hi: int) -> RangeResponse:
        """Hive `isWriteIdRangeValid` (reader side): how many of `lo..hi` are valid."""
        return _range_valid(self.high_watermark, self.exceptions, lo, hi)

    def is_write_id_range_aborted(self, lo: int, hi: int) -> RangeResponse:
        """Hive `isWriteIdRangeAborted`: how many of `lo..hi` are aborted."""
        count = 0 if self.high_watermark < lo else sum(1 for w in self.aborted if lo <= w <= hi)
        if count == 0:
            return RangeResponse.NONE
        return RangeResponse.ALL if count == hi - lo + 1 else RangeResponse.SOME


@dataclass(frozen=True, slots=True)
class ValidTxnWriteIdList:
    """Hive `ValidTxnWriteIdList`: `txnId$<list 1>$<list 2>...`, one `ValidWriteIdList` per table.

    Tables are kept sorted by name, so equality is map equality and `to_string` is deterministic (Hive's
    order follows a HashMap). Names must be present and distinct; Hive would keep the last duplicate.
    """

    txn_id: int
    tables: tuple[ValidWriteIdList, ...] = ()

    def __post_init__(self) -> None:
        if any(t.table_name is None for t in self.tables):
            raise InvalidSnapshotError("every table list needs a table name")
        ordered = tuple(sorted(self.tables, key=lambda t: t.table_name or ""))
        if any(a.table_name == b.table_name for a, b in zip(ordered, ordered[1:])):
            raise InvalidSnapshotError("a table is listed twice")
        object.__setattr__(self, "tables", ordered)

    @classmethod
    def parse(cls, text: str) -> ValidTxnWriteIdList:
        """Hive `readFromString`. Unlike Hive (txnId null), an empty string is rejected."""
        parts = _java_split(text, "$")
        if not parts:
            raise InvalidSnapshotError("empty ValidTxnWriteIdList string")
        return cls(_parse_long(parts[0]), tuple(ValidWriteIdList.parse(p) for p in parts[1:]))

    def to_string(self) -> str:
        """Hive `writeToString`, tables in name order."""
        return str(self.txn_id) + "".join("$" + t.to_string() for t in self.tables)

    def get_table_valid_write_id_list(self, full_table_name: str) -> ValidWriteIdList | None:
        """Hive `getTableValidWriteIdList`: the list of `db.table`, or None if the txn has none."""
        name = full_table_name.lower()
        return next((t for t in self.tables if t.table_name == name), None)


# --- comparisons -----------------------------------------------------------------------------------


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def _consecutive_up_to(ids: tuple[int, ...], start: int, hwm: int) -> bool:
    """Hive `TxnIdUtils.allInvalidFrom`: ids[start:] is a run of consecutive ids ending at hwm."""
    return all(ids[i] == ids[i - 1] + 1 for i in range(start + 1, len(ids))) and ids[-1] == hwm


def compare(a: ValidWriteIdList, b: ValidWriteIdList) -> int:
    """Hive `TxnIdUtils.compare` with the HIVE-24975 fix: -1 / 0 / 1 = a is older / equivalent / newer.

    Different tables compare by name (Hive returns the raw `String.compareTo`, here only its sign; a
    None name against a named list raises, where Hive throws a NullPointerException). Otherwise the
    first differing exception decides; a trailing run of invalid ids directly above the other list's
    hwm is ignored. The sign of incomparable snapshots is that of their first difference.
    """
    if a.table_name != b.table_name:
        if a.table_name is None or b.table_name is None:
            raise InvalidSnapshotError("cannot compare a nameless list with a named one")
        return -1 if a.table_name < b.table_name else 1
    ea, eb = a.exceptions, b.exceptions
    m = min(len(ea), len(eb))
    for x, y in zip(ea[:m], eb[:m]):
        if x != y:
            return 1 if x > y else -1
    if len(ea) == len(eb):
        return _sign(a.high_watermark - b.high_watermark)
    if len(ea) == m:
        if a.high_watermark != eb[m] - 1:
            return _sign(a.high_watermark - (eb[m] - 1))
        return 0 if _consecutive_up_to(eb, m, b.high_watermark) else -1
    if b.high_watermark != ea[m] - 1:
        return _sign((ea[m] - 1) - b.high_watermark)
    return 0 if _consecutive_up_to(ea, m, a.high_watermark) else 1


def covers(cache: ValidWriteIdList, request: ValidWriteIdList) -> bool:
    """True iff every write id committed in `request` is also committed in `cache`.

    Write ids start at 1, so the request commits `1..request.hwm` minus its exceptions. It is covered
    iff (a) each of those ids is `<= cache.hwm`, i.e. every id in `(cache.hwm, request.hwm]` is a request
    exception, and (b) no cache exception in `1..min(cache.hwm, request.hwm)` is committed in the request.
    Cost O(|cache.exceptions| * log |request.exceptions|), independent of the hwms. Table names are not
    checked (no Hive equivalent: HIVE-21637 design, see `committed_between` for the other direction).
    """
    low = max(cache.high_watermark, 0)
    if request.high_watermark > low:
        rx = request.exceptions
        invalid_above = bisect_right(rx, request.high_watermark) - bisect_right(rx, low)
        if invalid_above != request.high_watermark - low:
            return False
    limit = min(cache.high_watermark, request.high_watermark)
    cx = cache.exceptions
    return all(_contains(request.exceptions, w) for w in cx[bisect_left(cx, 1) : bisect_right(cx, limit)])


def same_visible_set(a: ValidWriteIdList, b: ValidWriteIdList) -> bool:
    """True iff `a` and `b` commit exactly the same write ids (each covers the other).

    For well-formed lists (exceptions within 1..hwm) this is `compare(a, b) == 0`.
    """
    return covers(a, b) and covers(b, a)


def committed_between(cache: ValidWriteIdList, request: ValidWriteIdList) -> list[int]:
    """The request's exceptions that `cache` has committed, ascending: changes the request must not see.

    The full set of write ids committed in `cache` but invisible to `request` is this list plus the ids
    in `(request.hwm, cache.hwm]` that `cache` commits; that second part is unbounded in size and is
    excluded by the single test `write_id > request.high_watermark`. So a cache entry keeping versions
    by write id can answer `request` only if `covers(cache, request)` holds and, for every object, it
    still has the newest version whose write id is neither in this list nor above the request's hwm.
    """
    return [w for w in request.exceptions if cache.is_write_id_valid(w)]


# --- server-side algorithms over plain rows --------------------------------------------------------


def build_valid_txn_list(
    hwm: int, open_or_aborted: Sequence[tuple[int, bool]], current_txn: int = 0
) -> ValidTxnList:
    """Hive `TxnCommonUtils.createValidReadTxnList` over a `GetOpenTxnsResponse`.

    `open_or_aborted` holds `(txn_id, is_aborted)` for every open or aborted txn `<= hwm` (READ_ONLY
    txns already left out by the caller, as `getOpenTxns` does). With `current_txn > 0` the hwm is
    clipped to it and only txns below it are exceptions, so a txn sees its own writes. minOpenTxn is
    the smallest open exception. Hive's trailing `0` exception when `current_txn` is missing from the
    list (read-only txn) is not reproduced.
    """
    if current_txn > hwm:
        raise InvalidSnapshotError(f"current txn {current_txn} above the hwm {hwm}")
    if any(t > hwm for t, _ in open_or_aborted):
        raise InvalidSnapshotError("open/aborted txn ids must not exceed the hwm")
    kept = sorted((t, ab) for t, ab in open_or_aborted if current_txn <= 0 or t < current_txn)
    min_open = min((t for t, ab in kept if not ab), default=LONG_MAX)
    aborted = frozenset(t for t, ab in kept if ab)
    clipped_hwm = min(current_txn, hwm) if current_txn > 0 else hwm
    return ValidTxnList(clipped_hwm, min_open, tuple(t for t, _ in kept), aborted)


def build_valid_write_id_list(
    table_name: str | None,
    txn_list: ValidTxnList,
    t2w_rows: Sequence[tuple[int, int]],
    next_write_id: int | None,
    cleaned_high_watermark: int = 0,
) -> ValidWriteIdList:
    """Hive 3 `TxnHandler.getValidWriteIdsForTable`: one table's snapshot from its TXN_TO_WRITE_ID rows.

    `t2w_rows` are the table's `(T2W_TXNID, T2W_WRITEID)` rows; `next_write_id` is `NEXT_WRITE_ID.NWI_NEXT`
    (None without a row). The write hwm is the largest write id owned by a txn `<= txn_list.hwm`
    (HIVE-18864), else `NWI_NEXT - 1` (all such rows cleaned), else 0. Each write id up to that hwm whose
    owner is not valid in `txn_list` is an exception, aborted iff `txn_list.is_txn_aborted(owner)`;
    ids without a row were cleaned below the low-water mark and count as committed. Not reproduced: the
    request-by-`writeId` variant (step 1) and Hive 4's collapse of a list with no valid write id to its
    lowest invalid id (same visible set, different string).

    Beyond Hive 3: `cleaned_high_watermark` is the largest write id whose row the cleaner deleted (a
    committed one below the low-water mark, or an aborted one whose files the abort clean-up removed).
    Every such id is committed in any snapshot still allowed to read (the caller refuses older ones),
    so the hwm never drops below it; this closes the out-of-order hazard described at
    `txn_to_write_id_low_water_mark`.
    """
    txn_hwm = txn_list.high_watermark
    write_hwm = max((w for t, w in t2w_rows if t <= txn_hwm), default=0)
    if write_hwm <= 0 and next_write_id is not None and next_write_id - 1 > 0:
        write_hwm = next_write_id - 1
    write_hwm = max(write_hwm, cleaned_high_watermark)
    exceptions: list[int] = []
    aborted: set[int] = set()
    min_open = LONG_MAX
    for txn_id, write_id in sorted(t2w_rows, key=lambda row: row[1]):
        if write_id > write_hwm or txn_list.is_txn_valid(txn_id):
            continue
        exceptions.append(write_id)
        if txn_list.is_txn_aborted(txn_id):
            aborted.add(write_id)
        else:
            min_open = min(min_open, write_id)
    return ValidWriteIdList(table_name, write_hwm, min_open, tuple(exceptions), frozenset(aborted))


def txn_to_write_id_low_water_mark(
    next_txn_id: int, min_history_open_txn_ids: Sequence[int], aborted_txn_ids: Sequence[int]
) -> int:
    """Hive 3 `CompactionTxnHandler.cleanTxnToWriteIdTable` (HIVE-18747): TXN_TO_WRITE_ID rows with
    `T2W_TXNID` below this are deletable.

    `min(NTXN_NEXT, min(MHL_MIN_OPEN_TXNID), min aborted TXN_ID)`, each term only if present: every txn
    below it is committed in every current and future snapshot. Caveat, inherited from Hive 3: when a
    txn below the mark owns a larger write id than a kept committed txn above it (write ids allocated
    out of txn order), `build_valid_write_id_list` takes its hwm from the kept rows and loses that
    committed write id until the kept rows are cleaned too.
    """
    return min([next_txn_id, *min_history_open_txn_ids, *aborted_txn_ids])
