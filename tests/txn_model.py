"""A pure-Python model of the gateway's transactional (ACID) metadata, for model-based tests.

No I/O here: the driver (tests/e2e/test_txn_model.py) sends the same operations to a real gateway
and compares. The model knows nothing about write ids, versions or SQL; it only keeps, per txn,
the *net effect* of its writes, and derives everything from the commit order:

* A txn's writes are state-setting: after it wrote object X (a partition, or the table itself for
  AlterTable/rename), X is either a full new state or gone. `Txn.effects[X]` is the last such state.
  Adding and then dropping a partition that did not exist before the txn leaves no trace (the
  gateway deletes the txn's own version), so that effect is forgotten.
* Latest state (what writers see and what existence checks use) = the effects of committed txns
  applied in commit order, then the effects of open txns (disjoint, see conflicts).
* A snapshot = the set C of txns committed when it was taken (for `GetOpenTxns(current_txn_id=R)`
  only txns below R: Hive clips the high-water mark at the reader's txn) plus the reader's own txn.
  What it reads = the effects of C in commit order, then the reader's own effects *now*
  (read-your-own-writes also for writes made after the snapshot was taken).
* Conflicts: a write touching an object some other open txn has an effect on is ABORTED; a rename
  onto a name another open txn renamed a table from or to is ABORTED as well. As in Hive, the
  writer's txn is aborted with it (its effects gone, its commit ABORTED).

Column statistics (Hive's TAB_COL_STATS/PART_COL_STATS) are not versioned by snapshot: one committed
set, `Model.stats`, keyed by (table, partition name or '' for the table's own, column), and what each
open txn wrote waiting for its commit. What the rules of store/column_stats.py say, as the model keeps them:

* Written without a txn, they replace (or merge into) the committed ones at once; the partition must
  exist in the latest state (an open txn's added partition counts, one an open txn dropped does not).
* Written under a txn (set_aggr_stats_for with its write id), they wait in `Txn.stats`; the commit
  moves them in, the abort forgets them.
* Reads (`visible_stats`): a reader whose ValidWriteIdList counts an open txn's write as committed
  (that txn's own list: Hive's rule, a txn's own write id is valid to it, and statistics hold for a
  reader whose list counts the write id that wrote them) sees what that txn wrote over the committed
  ones, and not the committed ones that txn's drops marked; every other reader, and one without a
  list, sees the committed set.
* A txn's drop of a partition only marks its statistics (`StatsRow.mark`), and those other txns
  wrote for it and are waiting (`PendingStats.mark`; its own waiting ones go at once): they stay,
  visible or waiting, until the txn commits, which deletes them, and its abort unmarks them. A
  partition the txn added itself exists nowhere once it drops it again: that drop deletes every
  statistics of it at once.
* Statistics describe one incarnation of a partition (`PartState.born`: an add makes a new one, an
  alter keeps it). A commit moves in only those whose incarnation is the partition's now: in the
  latest state, or the committed one an open txn's drop still has to take (then they carry that
  txn's mark). Statistics of a dropped partition do not come back with a later partition of that name.
* After any txn ends, no statistics, committed or waiting, remain of a partition that does not exist
  (in the latest state), unless an open txn's drop is still to take them.
* Written without a txn to a partition an open txn dropped and added again (the latest partition is
  its new one; the old one's committed statistics, if any, carry its mark), they wait for that txn's
  commit as its own write would.
* Documented imprecision, mirrored: a write under a txn that replaces its waiting row marked by
  another txn's drop keeps the mark (whether it describes the old partition or the dropping txn's new
  one cannot be told).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

DB = "db"
OPEN, COMMITTED, ABORTED = "open", "committed", "aborted"

Params = tuple[tuple[str, str], ...]
StatsValue = tuple[tuple[str, float], ...]  # one column's statistics: (field, number) pairs, sorted
StatsKey = tuple[int, str, str]  # (table key, partition name or '' for the table's own, column)
TABLE_LEVEL = ""


def freeze(params: Mapping[str, str]) -> Params:
    return tuple(sorted(params.items()))


def escape(value: str) -> str:
    """Hive's escapePathName for the characters the driver's value domain uses."""
    return "".join(f"%{ord(c):02X}" if c in '"#%\'*/:=?\\{[]^' or ord(c) < 0x20 else c for c in value)


def part_name(keys: Sequence[str], values: Sequence[str]) -> str:
    return "/".join(f"{k}={escape(v)}" for k, v in zip(keys, values))


@dataclass(frozen=True)
class PartState:
    values: tuple[str, ...]
    location: str
    params: Params
    writer: int  # the txn whose write made this version
    born: int = 0  # the incarnation: new at each add of the name, kept by alters


@dataclass(frozen=True)
class TableState:
    name: str
    params: Params  # without 'transactional', which the gateway always adds
    writer: int  # 0: the CreateTable version (write id 0)


State = PartState | TableState | None
Key = tuple[int, str | None]  # (table key, partition name); None names the table itself


@dataclass(frozen=True)
class StatsRow:
    """A column's committed statistics, as every reader sees them."""

    value: StatsValue
    mark: int = 0  # the open txn whose drop of the partition deletes them at its commit; 0: none


@dataclass(frozen=True)
class PendingStats:
    """A column's statistics a txn wrote, waiting for its commit."""

    value: StatsValue
    born: int  # the incarnation of the partition they describe (0: the table's own)
    mark: int = 0  # the open txn whose drop of the partition deletes them at its commit; 0: none


_SUMMED_STATS = ("numNulls",)
_LOWEST_STATS = ("lowValue",)


def merge_stats(old: StatsValue, new: StatsValue) -> StatsValue:
    """hive/column_stats.py's merge for the fields the driver writes: null counts add up, the low
    value is the lower, every other field (high value, distinct count, lengths) the larger."""
    a, b = dict(old), dict(new)
    merged: dict[str, float] = {}
    for name in a.keys() | b.keys():
        if name not in a or name not in b:
            merged[name] = a[name] if name in a else b[name]
        elif name in _SUMMED_STATS:
            merged[name] = a[name] + b[name]
        elif name in _LOWEST_STATS:
            merged[name] = min(a[name], b[name])
        else:
            merged[name] = max(a[name], b[name])
    return tuple(sorted((k, float(v)) for k, v in merged.items()))


@dataclass
class Txn:
    txn_id: int
    opened_at: int
    state: str = OPEN
    committed_at: int = 0
    effects: dict[Key, State] = field(default_factory=dict)
    pre: dict[Key, State] = field(default_factory=dict)  # latest state before this txn first changed it
    write_ids: dict[int, int] = field(default_factory=dict)  # table key -> write id, as answered
    stats: dict[StatsKey, PendingStats] = field(default_factory=dict)  # written under it, for its commit


@dataclass
class TableInfo:
    key: int
    table_id: int
    location: str
    initial: TableState


@dataclass(frozen=True)
class Outcome:
    code: str  # "OK" or a grpc.StatusCode name
    changed: tuple[str, ...] = ()  # partition names the write changed, in request order
    holders: frozenset[int] = frozenset()  # for ABORTED: the open txns in the way (any may be named)
    why: str = ""


@dataclass
class Snapshot:
    sid: int
    reader: int  # 0: taken outside any txn
    taken_at: int
    committed: frozenset[int]
    txn_list: str
    captured: dict[int, tuple[str, str, int]]  # table key -> (name, valid_write_id_list, table_id)
    gc_exposed: bool = False  # housekeeping ran while nothing protected it: "snapshot too old" allowed


class Model:
    def __init__(self, partition_keys: Sequence[str]) -> None:
        self.keys = tuple(partition_keys)
        self.tables: dict[int, TableInfo] = {}
        self.txns: dict[int, Txn] = {}
        self.commit_log: list[int] = []
        self.clock = 0
        self.stats: dict[StatsKey, StatsRow] = {}
        self.stats_changes = 0  # counts changes of `stats` and of pending statistics (a driver's cue to check)
        self.stats_events: dict[str, int] = {}  # how often each statistics rule applied (a run's coverage)
        self.births = 0

    # -- bookkeeping --------------------------------------------------------------------------

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def add_table(self, key: int, table_id: int, name: str, location: str) -> None:
        self.tables[key] = TableInfo(key, table_id, location, TableState(name, (), 0))

    def open_txn(self, txn_id: int) -> None:
        assert txn_id not in self.txns, f"txn id {txn_id} handed out twice"
        assert all(txn_id > t for t in self.txns), f"txn id {txn_id} not above earlier ids"
        self.txns[txn_id] = Txn(txn_id, self.tick())

    def open_txns(self) -> list[int]:
        return sorted(t.txn_id for t in self.txns.values() if t.state == OPEN)

    def name(self, values: Sequence[str]) -> str:
        return part_name(self.keys, values)

    def default_location(self, tk: int, name: str) -> str:
        return f"{self.tables[tk].location.rstrip('/')}/{name}"

    def learn_write_id(self, txn_id: int, tk: int, write_id: int) -> str | None:
        """Record a write id the gateway answered; a problem description when it is inconsistent."""
        txn = self.txns[txn_id]
        known = txn.write_ids.get(tk)
        if known is not None and known != write_id:
            return f"txn {txn_id} has write id {known} on table #{tk} but now answered {write_id}"
        for other in self.txns.values():
            if other.txn_id != txn_id and other.write_ids.get(tk) == write_id:
                return f"write id {write_id} of table #{tk} answered for txns {other.txn_id} and {txn_id}"
        txn.write_ids[tk] = write_id
        return None

    def write_id_of(self, writer: int, tk: int) -> int | None:
        return 0 if writer == 0 else self.txns[writer].write_ids.get(tk)

    # -- txn outcomes ---------------------------------------------------------------------------

    def commit(self, txn_id: int) -> Outcome:
        txn = self.txns[txn_id]
        if txn.state == ABORTED:
            return Outcome("ABORTED", why="committing an aborted txn")
        if txn.state == COMMITTED:
            return Outcome("OK", why="idempotent re-commit")
        txn.state, txn.committed_at = COMMITTED, self.tick()
        self.commit_log.append(txn_id)
        self._stats_at_commit(txn)
        return Outcome("OK")

    def abort(self, txn_id: int) -> Outcome:
        txn = self.txns[txn_id]
        if txn.state == COMMITTED:
            return Outcome("FAILED_PRECONDITION", why="aborting a committed txn")
        if txn.state == OPEN:
            txn.state = ABORTED
            self.tick()
            self._stats_at_abort(txn)
        return Outcome("OK")

    # -- states ---------------------------------------------------------------------------------

    def fold(self, tk: int, txn_ids: Iterable[int]) -> tuple[TableState, dict[str, PartState]]:
        """The table and its partitions after applying these txns' effects, in this order."""
        table = self.tables[tk].initial
        parts: dict[str, PartState] = {}
        for t in txn_ids:
            for (k, pname), state in self.txns[t].effects.items():
                if k != tk:
                    continue
                if pname is None:
                    assert isinstance(state, TableState)
                    table = state
                elif state is None:
                    parts.pop(pname, None)
                else:
                    assert isinstance(state, PartState)
                    parts[pname] = state
        return table, parts

    def latest(self, tk: int) -> tuple[TableState, dict[str, PartState]]:
        """The database's latest versions: committed effects in commit order, then open txns'."""
        return self.fold(tk, [*self.commit_log, *self.open_txns()])

    def latest_name(self, tk: int) -> str:
        return self.latest(tk)[0].name

    def view(self, tk: int, snap: Snapshot) -> tuple[TableState, dict[str, PartState]]:
        """What a read through this snapshot must answer now."""
        order = [t for t in self.commit_log if t in snap.committed]
        if snap.reader and self.txns[snap.reader].state != ABORTED:
            order.append(snap.reader)
        return self.fold(tk, order)

    def snapshot_committed(self, reader: int) -> frozenset[int]:
        return frozenset(t for t in self.commit_log if not reader or t < reader)

    # -- conflicts ------------------------------------------------------------------------------

    def holder(self, key: Key, me: int) -> int:
        for t in self.open_txns():
            if t != me and key in self.txns[t].effects:
                return t
        return 0

    def name_holder(self, name: str, me: int) -> int:
        for t in self.open_txns():
            if t == me:
                continue
            txn = self.txns[t]
            for key, state in txn.effects.items():
                if key[1] is None:
                    pre = txn.pre[key]
                    assert isinstance(state, TableState) and isinstance(pre, TableState)
                    if name in (state.name, pre.name):
                        return t
        return 0

    def stale_overwrite(self, me: int, keys: Iterable[Key]) -> frozenset[int]:
        """The txns that committed a change to one of `keys` after `me` opened: first committer
        wins, so `me` writing over it is ABORTED (a lost update under snapshot isolation); the
        gateway may name any of them."""
        opened = self.txns[me].opened_at
        keys = list(keys)
        return frozenset(t for t in self.commit_log if t != me and self.txns[t].committed_at > opened
                         and any(k in self.txns[t].effects for k in keys))

    def stale_name(self, me: int, name: str) -> int:
        """A txn that committed a change of a table named `name` (before or after) after `me`
        opened, or 0: the gateway checks every version that carries the name."""
        opened = self.txns[me].opened_at
        for t in self.commit_log:
            txn = self.txns[t]
            if t == me or txn.committed_at <= opened:
                continue
            for key, state in txn.effects.items():
                pre = txn.pre.get(key)
                if key[1] is None and isinstance(state, TableState) and isinstance(pre, TableState) \
                        and name in (state.name, pre.name):
                    return t
        return 0

    def _set(self, me: int, key: Key, state: State, latest: State) -> None:
        txn = self.txns[me]
        if key not in txn.pre:
            txn.pre[key] = latest
        if key[1] is not None and txn.pre[key] is None and state is None:
            del txn.pre[key]  # added and dropped again by this txn: the gateway keeps nothing
            txn.effects.pop(key, None)
        else:
            txn.effects[key] = state

    def _conflict(self, me: int, tk: int, names: Sequence[str]) -> Outcome | None:
        held = {n: self.holder((tk, n), me) for n in names}
        held = {n: h for n, h in held.items() if h}
        winners = self.stale_overwrite(me, [(tk, n) for n in names])
        if held or winners:  # the gateway names any one of them
            return self._lose(me, Outcome("ABORTED", holders=frozenset(held.values()) | winners,
                                          why=f"held by open txns {held}; committed after {me} opened by "
                                              f"{sorted(winners)}"))
        return None

    def _lose(self, me: int, outcome: Outcome) -> Outcome:
        """Hive's conflict rule: the writer that met a write-write conflict has its txn aborted."""
        if me:
            self.abort(me)
        return outcome

    # -- writes (predict the outcome; apply it when OK) ------------------------------------------

    def add_partitions(self, me: int, tk: int, parts: Sequence[tuple[tuple[str, ...], str, Params]],
                       if_not_exists: bool) -> Outcome:
        names = [self.name(v) for v, _, _ in parts]
        assert len(set(names)) == len(names)
        _, cur = self.latest(tk)
        # A name to insert conflicts as any write does; one found there was created (not replaced) by
        # an open txn (the add waits for its end: the driver's short deadline ends the call first) or
        # is simply there, whoever changed it and when (the add writes nothing to it).
        conflict = self._conflict(me, tk, [n for n in names if n not in cur])
        if conflict:
            return conflict
        waits_for = {h for n in names if n in cur and (h := self.holder((tk, n), me))
                     and self.txns[h].pre[(tk, n)] is None}
        if waits_for:
            return Outcome("DEADLINE_EXCEEDED", why=f"waits for open txns {sorted(waits_for)}")
        existing = [n for n in names if n in cur]
        if existing and not if_not_exists:
            return Outcome("ALREADY_EXISTS", why=f"{existing} exist")
        added = []
        for n, (values, location, params) in zip(names, parts):
            if n in cur:
                continue
            self._set(me, (tk, n), PartState(values, location or self.default_location(tk, n), params, me,
                                             self._birth()), None)
            added.append(n)
        return Outcome("OK", tuple(added))

    def alter_partitions(self, me: int, tk: int, parts: Sequence[tuple[tuple[str, ...], str, Params]]) -> Outcome:
        names = [self.name(v) for v, _, _ in parts]
        assert len(set(names)) == len(names)
        conflict = self._conflict(me, tk, names)
        if conflict:
            return conflict
        _, cur = self.latest(tk)
        missing = [n for n in names if n not in cur]
        if missing:
            return Outcome("NOT_FOUND", why=f"{missing} missing")
        for n, (values, location, params) in zip(names, parts):
            self._set(me, (tk, n), PartState(values, location or cur[n].location, params, me, cur[n].born), cur[n])
        return Outcome("OK", tuple(names))

    def drop_partitions(self, me: int, tk: int, names: Sequence[str], if_exists: bool) -> Outcome:
        wanted = list(dict.fromkeys(names))
        conflict = self._conflict(me, tk, wanted)
        if conflict:
            return conflict
        _, cur = self.latest(tk)
        missing = [n for n in wanted if n not in cur]
        if missing and not if_exists:
            return Outcome("NOT_FOUND", why=f"{missing} missing")
        dropped = [n for n in wanted if n in cur]
        for n in dropped:
            pre = self.txns[me].pre.get((tk, n), cur[n])
            added_here = (tk, n) in self.txns[me].pre and pre is None
            self._set(me, (tk, n), None, cur[n])
            if added_here:  # exists nowhere now, whatever `me` does: its statistics go at once
                self._delete_partition_stats(tk, n)
                continue
            if isinstance(pre, PartState) and pre.born != cur[n].born:  # `me` added it again: others' stats of it go
                for x, k, pending in self._waiting_stats():
                    if k[:2] == (tk, n) and x.txn_id != me and pending.born == cur[n].born and not pending.mark:
                        del x.stats[k]
                        self._count("waiting, of a partition added again, deleted by the adder's drop")
            self._mark_stats(me, tk, n)
        return Outcome("OK", tuple(dropped))

    def alter_table(self, me: int, tk: int, new_name: str, params: Params) -> Outcome:
        cur, _ = self.latest(tk)
        renamed = new_name != cur.name
        if renamed and any(self.latest_name(x) == new_name for x in self.tables if x != tk):
            return Outcome("ALREADY_EXISTS", why=f"a table is named {new_name}")
        h = self.holder((tk, None), me)
        winners = self.stale_overwrite(me, [(tk, None)]) | ({h} if h else set())
        if winners:
            return self._lose(me, Outcome("ABORTED", holders=frozenset(winners),
                                          why=f"table changed or held by txns {sorted(winners)}"))
        if renamed:
            names = {self.name_holder(new_name, me), self.stale_name(me, new_name)} - {0}
            if names:
                return self._lose(me, Outcome("ABORTED", holders=frozenset(names),
                                              why=f"name {new_name} reserved by txns {names}"))
        self._set(me, (tk, None), TableState(new_name, params, me), cur)
        return Outcome("OK")

    # -- column statistics ----------------------------------------------------------------------

    def _birth(self) -> int:
        self.births += 1
        return self.births

    def stats_incarnation(self, tk: int, part: str) -> int | None:
        """The incarnation a statistics write of `part` ('' the table's own) describes: the
        partition's in the latest state; None when it does not exist there (the write is NOT_FOUND)."""
        if part == TABLE_LEVEL:
            return 0
        state = self.latest(tk)[1].get(part)
        return None if state is None else state.born

    def visible_stats(self, tk: int, reader: int = 0) -> dict[tuple[str, str], StatsValue]:
        """What a reader of the table's statistics sees, (partition name, column) -> statistics: the
        committed ones, and for a reader whose snapshot counts open txn `reader`'s write as committed (0:
        none) what that txn wrote in their place and not what its drops marked."""
        own = self.txns[reader] if reader and self.txns[reader].state == OPEN else None
        seen = {(part, col): row.value for (k, part, col), row in self.stats.items()
                if k == tk and not (own is not None and row.mark == own.txn_id)}
        if own is not None:
            seen.update({(part, col): p.value for (k, part, col), p in own.stats.items()
                         if k == tk and p.mark != own.txn_id})  # (its own drop deletes its own: never marked so)
        return seen

    def write_stats(self, me: int, tk: int, writes: Sequence[tuple[str, Mapping[str, StatsValue]]],
                    merge: bool) -> Outcome:
        """One call's statistics writes (all or nothing), in order: per entry the partition ('' the
        table's own, which comes alone: gateway/thrift/stats_methods.py) and column -> statistics. Under
        txn `me` (0: none) they wait for its commit; a merge merges into the txn's own row, else the
        committed one unless the txn's drop marked it."""
        levels = [part == TABLE_LEVEL for part, _ in writes]
        if (levels[0] and len(levels) > 1) or (not levels[0] and any(levels)):
            # Hive reads a request at its first entry's level: a table's own statistics come alone.
            return Outcome("REFUSED", why="a table's own statistics come alone in a set_aggr_stats_for")
        if me and self.txns[me].state != OPEN:
            return Outcome("REFUSED", why=f"txn {me} is {self.txns[me].state}")
        born = {part: self.stats_incarnation(tk, part) for part, _ in writes}
        missing = sorted(part for part, b in born.items() if b is None)
        if missing:
            return Outcome("NOT_FOUND", why=f"partitions {missing} do not exist in the latest state")
        for part, columns in writes:
            txn = self.txns[me] if me else None
            if txn is None and (marking := self.marking_txn(tk, part)):
                txn = self.txns[marking]  # what it describes is that txn's version: waits for its commit
                self._count("written without a txn over an open drop's marks: waits for the dropper")
            elif txn is None and (replacing := self.replacing_txn(tk, part)):
                txn = self.txns[replacing]  # the same, where the old partition had nothing to mark
                self._count("written without a txn to a partition an open txn added again: waits for it")
            for col, value in columns.items():
                key = (tk, part, col)
                row = self.stats.get(key)
                if txn is not None:
                    prev = txn.stats.get(key)
                    # Not the committed row the txn's own drop marked: it describes what the txn replaced.
                    base = prev.value if prev else row.value if row and row.mark != txn.txn_id else None
                    new = merge_stats(base, value) if merge and base else value
                    # A marked row keeps its mark, and so describes the partition the mark's drop takes.
                    txn.stats[key] = PendingStats(new, prev.born, prev.mark) if prev and prev.mark else \
                        PendingStats(new, born[part] or 0)
                else:
                    new = merge_stats(row.value, value) if merge and row else value
                    assert not (row and row.mark), f"{key}: marked by open txn {row.mark}, yet written at once"
                    self.stats[key] = StatsRow(new)
        self.stats_changes += 1
        return Outcome("OK")

    def replacing_txn(self, tk: int, part: str) -> int:
        """The open txn that dropped the committed `part` and added it again (the latest partition is its
        new incarnation), 0: none."""
        if part == TABLE_LEVEL:
            return 0
        latest = self.latest(tk)[1].get(part)
        committed = self.fold(tk, self.commit_log)[1].get(part)
        if latest is None or committed is None or latest.born == committed.born:
            return 0
        return latest.writer if self.txns[latest.writer].state == OPEN else 0

    def marking_txn(self, tk: int, part: str) -> int:
        """The open txn whose drop marked committed statistics of `part` ('' the table's own), 0: none."""
        return next((row.mark for (k, p, _), row in self.stats.items()
                     if (k, p) == (tk, part) and row.mark and self.txns[row.mark].state == OPEN), 0)

    def delete_stats(self, tk: int, part: str, column: str | None) -> Outcome:
        """Delete one column's statistics (every column's: None) of the table or a partition, at once."""
        gone = [k for k in self.stats if k[:2] == (tk, part) and column in (None, k[2])]
        if not gone and column is None and (part == "" or part in self.latest(tk)[1]):
            return Outcome("OK")  # every column's of one that has none: nothing to delete (Hive 2.3: true)
        if not gone:
            return Outcome("NOT_FOUND", why=f"no statistics of {part or 'the table'} {column or ''}")
        for k in gone:
            del self.stats[k]
        self.stats_changes += 1
        return Outcome("OK")

    def _count(self, event: str, n: int = 1) -> None:
        if n:
            self.stats_events[event] = self.stats_events.get(event, 0) + n

    def _waiting_stats(self) -> Iterable[tuple[Txn, StatsKey, PendingStats]]:
        return [(x, k, p) for x in self.txns.values() for k, p in x.stats.items()]

    def _delete_partition_stats(self, tk: int, part: str) -> None:
        """A partition that exists nowhere now: its statistics go, every txn's waiting ones too."""
        for k in [k for k in self.stats if k[:2] == (tk, part)]:
            del self.stats[k]
            self._count("deleted by a drop of the txn's own partition")
        for x, k, _ in self._waiting_stats():
            if k[:2] == (tk, part):
                del x.stats[k]
                self._count("waiting deleted by a drop of the txn's own partition")
        self.stats_changes += 1

    def _mark_stats(self, me: int, tk: int, part: str) -> None:
        """A drop by txn `me`: the partition's statistics go at its commit, those other txns wrote for
        it too; its own waiting ones describe what it dropped, and go now."""
        for k, row in self.stats.items():
            if k[:2] == (tk, part):
                self.stats[k] = StatsRow(row.value, me)
                self._count("marked by a drop")
        for x, k, pending in self._waiting_stats():
            if k[:2] == (tk, part):
                if x.txn_id == me:
                    del x.stats[k]
                    self._count("waiting deleted by its own txn's drop")
                else:
                    x.stats[k] = PendingStats(pending.value, pending.born, me)
                    self._count("waiting marked by another txn's drop")
        self.stats_changes += 1

    def _stats_home(self, tk: int, part: str, born: int) -> int | None:
        """Where statistics of this incarnation of `part` go at a commit: 0 (unmarked) when it is the
        latest; the open txn whose drop (or drop and re-add) is still to take the committed one; None
        when it is gone (dropped by a committed txn, discarded by an abort, or the name added anew)."""
        if part == TABLE_LEVEL:
            return 0
        latest = self.latest(tk)[1].get(part)
        if latest is not None and latest.born == born:
            return 0
        committed = self.fold(tk, self.commit_log)[1].get(part)
        if committed is not None and committed.born == born:
            dropper = self.holder((tk, part), 0)
            assert dropper, f"committed partition {part} of table #{tk} is not the latest, yet no open txn holds it"
            return dropper
        return None

    def _stats_at_commit(self, txn: Txn) -> None:
        for k in [k for k, row in self.stats.items() if row.mark == txn.txn_id]:
            del self.stats[k]
            self._count("marked, deleted at commit")
        for x, k, pending in self._waiting_stats():
            if pending.mark == txn.txn_id:
                del x.stats[k]
                self._count("waiting, marked, deleted at the dropper's commit")
        for key, pending in txn.stats.items():
            home = self._stats_home(key[0], key[1], pending.born)
            self._count("waiting, discarded at commit" if home is None else "waiting, moved in marked by an open drop"
                        if home else "waiting, moved in at commit")
            if home is None:
                continue
            row = self.stats.get(key)
            self.stats[key] = StatsRow(pending.value, home or (row.mark if row else 0))
        txn.stats.clear()
        self._collect_stats()
        self.stats_changes += 1

    def _stats_at_abort(self, txn: Txn) -> None:
        for k, row in self.stats.items():
            if row.mark == txn.txn_id:
                self.stats[k] = StatsRow(row.value)
                self._count("marked, unmarked at abort")
        for x, k, pending in self._waiting_stats():
            if pending.mark == txn.txn_id:
                x.stats[k] = PendingStats(pending.value, pending.born)
                self._count("waiting, marked, unmarked at the dropper's abort")
        self._count("waiting, discarded at abort", len(txn.stats))
        txn.stats.clear()
        self._collect_stats()
        self.stats_changes += 1

    def _collect_stats(self) -> None:
        """No statistics of a partition that does not exist, unless an open txn's drop is to take them;
        waiting ones neither (an abort discarded the partition they describe)."""
        for k in self.stats_without_partition({k: row.mark for k, row in self.stats.items()}):
            del self.stats[k]
            self._count("of a partition an abort discarded")
        for x in self.txns.values():
            for k in self.stats_without_partition({k: p.mark for k, p in x.stats.items()}):
                del x.stats[k]
                self._count("waiting, of a partition an abort discarded")
            # The partition they describe an abort discarded, though an older one of the name is back (its
            # txn dropped that one and added it again): they go now, as at their own commit.
            for k in [k for k, p in x.stats.items() if k[1] != TABLE_LEVEL and x.state == OPEN
                      and not (p.mark and self.txns[p.mark].state == OPEN)
                      and self._stats_home(k[0], k[1], p.born) is None]:
                del x.stats[k]
                self._count("waiting, of a partition added again that an abort discarded")

    def stats_without_partition(self, rows: Mapping[StatsKey, int]) -> list[StatsKey]:
        """Of these statistics (key -> the txn that marked them, 0: none), those that must not exist:
        of a partition missing from the latest state, and not marked by an open txn's drop."""
        parts = {tk: self.latest(tk)[1] for tk in {k[0] for k in rows}}
        return [k for k, mark in rows.items() if k[1] != TABLE_LEVEL and k[1] not in parts[k[0]]
                and not (mark and self.txns[mark].state == OPEN)]
