"""The copy: a Hive metastore's databases, tables, partitions, functions and column statistics written into
the gateway through its Thrift API, phase by phase, so every write passes the gateway's own validation,
events and caches; then its roles, role grants and privileges (grants.py) and its tables' constraints
(constraints.py), by the same rules.

Each object is read from the gateway first. Missing: written (partitions in batches of `batch_size`,
add_partitions with ifNotExists). There: compared (compare.py); the same is `identical`, another is
`differing` and left as it is, or written over with `replace_differing` (alter_database, alter_table,
alter_partitions, alter_function, the statistics written again). So a run after a partial one (or a crash)
writes only what is missing, and a run after a complete one writes nothing. A table that differs and is
not replaced keeps its partitions and statistics untouched (they are reported skipped): they may not fit
it. A dry run reads both sides and writes nothing, printing what it would write.

Memory stays bounded by the batch: a table's partitions are read by name (get_partition_names, then
get_partitions_by_names of one batch at a time), and only the names of one table are held.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Iterator, Sequence, TextIO

from gateway.hms_import import compare
from gateway.hms_import.constraints import ConstraintCopier
from gateway.hms_import.endpoint import ThriftEndpoint
from gateway.hms_import.grants import GrantCopier, SourceTable
from gateway.hms_import.report import Progress, Summary
from gateway.hms_import.settle import reason_of
from gateway.hms_import.write_ids import WriteIdSeeder, is_transactional
from gateway.thrift.idl import hms
from hive.errors import InvalidArgument
from hive.names import make_partition_name

VIEW = "VIRTUAL_VIEW"
# A replaced table or partition takes the source's parameters as they are, its statistics markers
# (COLUMN_STATS_ACCURATE, numRows) included: Hive's alter would otherwise judge them stale and drop them.
AS_THEY_ARE = hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})


@dataclass(frozen=True)
class CopyOptions:
    databases: str = "*"  # Hive's pattern: * any run, | alternatives
    batch_size: int = 500
    replace_differing: bool = False
    dry_run: bool = False


@dataclass
class TableState:
    """A source table as the tables phase left it: whether its partitions and statistics may be copied."""

    db: str
    name: str
    table: Any
    usable: bool
    new_in_dry_run: bool = False  # a dry run's table the gateway does not have: nothing there to read
    reason: str = ""

    @property
    def full_name(self) -> str:
        return f"{self.db}.{self.name}"


def chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def source_databases(source: ThriftEndpoint, pattern: str) -> list[str]:
    """The source's databases the pattern selects (Hive matches it: `*` any run, `|` alternatives)."""
    names = source.call("get_all_databases") if pattern in ("", "*") else source.call("get_databases", pattern)
    return sorted(names)


class Copier:
    """One import's copy (the module's docstring). `run` goes through the phases in order."""

    def __init__(self, source: ThriftEndpoint, gateway: ThriftEndpoint, options: CopyOptions, summary: Summary,
                 progress: Progress, out: TextIO) -> None:
        self._source = source
        self._gateway = gateway
        self._options = options
        self._summary = summary
        self._progress = progress
        self._out = out
        self._seeder = WriteIdSeeder(source, gateway, summary, dry_run=options.dry_run, out=out)

    def run(self) -> None:
        databases = source_databases(self._source, self._options.databases)
        usable_dbs = self.copy_databases(databases)
        tables = self.copy_tables(usable_dbs)
        self.copy_partitions(tables)
        self.copy_functions(usable_dbs)
        self.copy_table_statistics(tables)
        source_tables = [SourceTable(t.db, t.name, t.table, t.usable, t.reason) for t in tables]
        rules = {"dry_run": self._options.dry_run, "replace_differing": self._options.replace_differing}
        GrantCopier(self._source, self._gateway, self._summary, self._progress, self._out, **rules).run(
            usable_dbs, source_tables)
        ConstraintCopier(self._source, self._gateway, self._summary, self._progress, self._out, **rules).run(
            source_tables)

    # -- one object: write it, or compare it with what the gateway has -------------------------------

    def _settle(self, kind: str, name: str, source_obj: Any, read_there: Callable[[], Any],
                create: Callable[[], Any], replace: Callable[[], Any]) -> str:
        """Write `source_obj` when the gateway has none (`read_there()` answers None: `create()`), else compare
        and, when they differ, replace it or report it. The outcome, counted: copied, identical, replaced,
        differing or failed (a dry run's: would copy, would replace)."""
        try:
            gateway_obj = read_there()
            if gateway_obj is None:
                if self._options.dry_run:
                    self._summary.would_copy[kind] += 1
                    self._out.write(f"would copy {kind[:-1]} {name}\n")
                    return "would copy"
                try:
                    create()
                    self._summary.add(kind, "copied")
                    return "copied"
                except hms.AlreadyExistsException:  # made meanwhile (a retried create that did arrive): compare
                    gateway_obj = read_there()
            diff = compare.differences(compare.plain(source_obj), compare.plain(gateway_obj))
            if not diff:
                self._summary.add(kind, "identical")
                return "identical"
            if not self._options.replace_differing:
                self._summary.add(kind, "differing", name=name, reason="; ".join(diff[:5]) + (
                    f"; ... {len(diff) - 5} more" if len(diff) > 5 else "") + " (--replace-differing writes it over)")
                return "differing"
            if self._options.dry_run:
                self._summary.would_copy[f"{kind} to replace"] += 1
                self._out.write(f"would replace {kind[:-1]} {name}: {'; '.join(diff[:3])}\n")
                return "would replace"
            replace()
            self._summary.add(kind, "replaced")
            return "replaced"
        except (hms.MetaException, hms.InvalidObjectException, hms.InvalidOperationException,
                hms.NoSuchObjectException, hms.AlreadyExistsException) as exc:
            self._summary.add(kind, "failed", name=name, reason=reason_of(exc))
            return "failed"

    # -- databases ------------------------------------------------------------------------------------

    def copy_databases(self, names: list[str]) -> list[str]:
        """The databases whose tables and functions are copied: all but those the gateway refused."""
        self._progress.start("databases", len(names))
        usable = []
        for name in names:
            db = self._source.get("get_database", name)
            if db is None:  # dropped since it was listed
                self._progress.advance()
                continue
            db.privileges = None
            db.catalogName = None
            outcome = self._settle("databases", name, db, partial(self._gateway.get, "get_database", name),
                                   partial(self._gateway.call, "create_database", db),
                                   partial(self._replace_database, db))
            if outcome != "failed":  # a differing description does not make its tables differ: they are compared
                usable.append(name)
            self._progress.advance()
        self._progress.finish()
        return usable

    def _replace_database(self, db: Any) -> None:
        if db.name.lower() == "default":  # each metastore's `default` lives at its own warehouse root: kept
            db = copy.copy(db)
            db.locationUri = self._gateway.call("get_database", db.name).locationUri
        self._gateway.call("alter_database", db.name, db)

    # -- tables ---------------------------------------------------------------------------------------

    def copy_tables(self, databases: list[str]) -> list[TableState]:
        listed = [(db, name) for db in databases for name in sorted(self._source.call("get_all_tables", db))]
        self._progress.start("tables", len(listed))
        states = []
        for db, name in listed:
            state = self._copy_table(db, name)
            if state is not None:
                states.append(state)
            self._progress.advance()
        self._progress.finish()
        return states

    def _copy_table(self, db: str, name: str) -> TableState | None:
        table = self._source.get("get_table", db, name)
        if table is None:  # dropped since it was listed
            return None
        for attr in ("privileges", "colStats", "id", "writeId", "catName", "txnId"):
            setattr(table, attr, None)
        full = f"{db}.{name}"
        acid = is_transactional(table)
        if acid:
            busy = self._seeder.writers(db, name)
            if busy is not None:
                self._summary.add("tables", "failed", name=full, reason=busy)
                return TableState(db, name, table, usable=False, reason="the table was refused (above)")
        outcome = self._settle("tables", full, table, partial(self._gateway.get, "get_table", db, name),
                               partial(self._gateway.call, "create_table", table),
                               partial(self._gateway.call, "alter_table_with_environment_context", db, name, table,
                                       AS_THEY_ARE))
        usable = outcome in ("copied", "identical", "replaced", "would copy", "would replace")
        reasons = {"differing": "the table differs from the source's and was kept (--replace-differing replaces it)",
                   "failed": "the gateway refused the table (above)"}
        state = TableState(db, name, table, usable=usable, new_in_dry_run=outcome == "would copy",
                           reason=reasons.get(outcome, ""))
        if usable and acid and not self._seeder.seed(db, name, table_is_new=state.new_in_dry_run):
            state.usable, state.reason = False, "its write ids could not be seeded"
        return state

    # -- partitions and their statistics --------------------------------------------------------------

    def copy_partitions(self, tables: list[TableState]) -> None:
        partitioned = [t for t in tables if t.table.partitionKeys and t.table.tableType != VIEW]
        for t in partitioned:
            if not t.usable:
                self._summary.add("partitions", "skipped", name=f"{t.full_name} (every partition)",
                                  reason=f"neither copied nor compared: {t.reason}")
        work = [(t, len(self._source.call("get_partition_names", t.db, t.name, -1))) for t in partitioned if t.usable]
        self._progress.start("partitions", sum(count for _, count in work))
        for t, _ in work:
            names = self._source.call("get_partition_names", t.db, t.name, -1)
            added_before = self._summary.counts["partitions", "copied"] + self._summary.would_copy["partitions"]
            for batch in chunks(names, self._options.batch_size):
                self._copy_partition_batch(t, list(batch))
                self._progress.advance(len(batch), note=t.full_name)
            added = self._summary.counts["partitions", "copied"] + self._summary.would_copy["partitions"] - added_before
            if self._options.dry_run and added:
                self._out.write(f"would add {added} partitions to {t.full_name}\n")
        self._progress.finish()

    def _copy_partition_batch(self, t: TableState, names: list[str]) -> None:
        parts = self._source.call("get_partitions_by_names", t.db, t.name, names)
        for p in parts:
            for attr in ("privileges", "catName", "writeId", "colStats"):
                setattr(p, attr, None)
        there = {} if t.new_in_dry_run else {
            tuple(p.values): p for p in self._gateway.call("get_partitions_by_names", t.db, t.name, names)}
        missing = [p for p in parts if tuple(p.values) not in there]
        not_added: set[str] = set()  # their statistics are not written either
        if missing:
            if self._options.dry_run:
                self._summary.would_copy["partitions"] += len(missing)
            else:
                try:
                    self._gateway.call("add_partitions_req", hms.AddPartitionsRequest(
                        dbName=t.db, tblName=t.name, parts=missing, ifNotExists=True, needResult=False))
                    self._summary.add("partitions", "copied", len(missing))
                except (hms.MetaException, hms.InvalidObjectException, hms.AlreadyExistsException):
                    not_added = self._add_one_by_one(t, missing)
        replace = []
        for p in parts:
            have = there.get(tuple(p.values))
            if have is None:
                continue
            diff = compare.differences(compare.plain(p), compare.plain(have))
            if not diff:
                self._summary.add("partitions", "identical")
            elif self._options.replace_differing and not self._options.dry_run:
                replace.append(p)
            elif self._options.replace_differing:
                self._summary.would_copy["partitions to replace"] += 1
            else:
                self._summary.add("partitions", "differing", name=f"{t.full_name} {_name_of(t, p)}",
                                  reason="; ".join(diff[:5]) + " (--replace-differing writes it over)")
        if replace:
            try:
                self._gateway.call("alter_partitions_with_environment_context", t.db, t.name, replace, AS_THEY_ARE)
                self._summary.add("partitions", "replaced", len(replace))
            except (hms.MetaException, hms.InvalidOperationException) as exc:
                for p in replace:
                    self._summary.add("partitions", "failed", name=f"{t.full_name} {_name_of(t, p)}",
                                      reason=reason_of(exc))
        self._copy_partition_statistics(t, [n for n in names if n not in not_added])

    def _add_one_by_one(self, t: TableState, parts: list[Any]) -> set[str]:
        """A refused batch: each partition alone, so one bad partition does not hold back the others and is
        named in the summary. The names of those refused."""
        refused = set()
        for p in parts:
            try:
                self._gateway.call("add_partitions_req", hms.AddPartitionsRequest(
                    dbName=t.db, tblName=t.name, parts=[p], ifNotExists=True, needResult=False))
                self._summary.add("partitions", "copied")
            except (hms.MetaException, hms.InvalidObjectException, hms.AlreadyExistsException) as exc:
                refused.add(_name_of(t, p))
                self._summary.add("partitions", "failed", name=f"{t.full_name} {_name_of(t, p)}", reason=reason_of(exc))
        return refused

    def _stat_columns(self, t: TableState) -> list[str]:
        return [c.name for c in (t.table.sd.cols if t.table.sd else None) or []]

    def _copy_partition_statistics(self, t: TableState, names: list[str]) -> None:
        columns = self._stat_columns(t)
        if not columns:
            return
        theirs = self._source.call("get_partitions_statistics_req", hms.PartitionsStatsRequest(
            dbName=t.db, tblName=t.name, colNames=columns, partNames=names)).partStats or {}
        if not theirs:
            return
        ours = {} if t.new_in_dry_run else (
            self._gateway.call("get_partitions_statistics_req", hms.PartitionsStatsRequest(
                dbName=t.db, tblName=t.name, colNames=columns, partNames=list(theirs))).partStats or {})
        to_write = []
        for part_name, objs in sorted(theirs.items()):
            if not objs:
                continue
            outcome = self._stats_outcome("partition statistics", f"{t.full_name} {part_name}", objs,
                                          ours.get(part_name) or [])
            if outcome == "write":
                to_write.append(hms.ColumnStatistics(statsDesc=hms.ColumnStatisticsDesc(
                    isTblLevel=False, dbName=t.db, tableName=t.name, partName=part_name), statsObj=objs))
        if not to_write:
            return
        if self._options.dry_run:
            self._summary.would_copy["partition statistics"] += len(to_write)
            return
        try:
            self._gateway.call("set_aggr_stats_for", hms.SetPartitionsStatsRequest(colStats=to_write, needMerge=False))
            self._summary.add("partition statistics", "copied", len(to_write))
        except (hms.MetaException, hms.InvalidObjectException, hms.NoSuchObjectException,
                hms.InvalidInputException) as exc:
            for stats in to_write:
                self._summary.add("partition statistics", "failed", name=f"{t.full_name} {stats.statsDesc.partName}",
                                  reason=reason_of(exc))

    def _stats_outcome(self, kind: str, name: str, source_objs: list[Any], gateway_objs: list[Any]) -> str:
        """'write' when the statistics are to be written (none there, or replacing), else counted here."""
        if not gateway_objs:
            return "write"
        diff = compare.differences(_by_column(source_objs), _by_column(gateway_objs))
        if not diff:
            self._summary.add(kind, "identical")
            return "identical"
        if self._options.replace_differing:
            return "write"
        self._summary.add(kind, "differing", name=name,
                          reason="; ".join(diff[:5]) + " (--replace-differing writes them over)")
        return "differing"

    # -- functions ------------------------------------------------------------------------------------

    def copy_functions(self, databases: list[str]) -> None:
        listed = [(db, name) for db in databases for name in sorted(self._source.call("get_functions", db, "*"))]
        self._progress.start("functions", len(listed))
        for db, name in listed:
            function = self._source.get("get_function", db, name)
            if function is not None:
                function.catName = None
                self._settle("functions", f"{db}.{name}", function,
                             partial(self._gateway.get, "get_function", db, name),
                             partial(self._gateway.call, "create_function", function),
                             partial(self._gateway.call, "alter_function", db, name, function))
            self._progress.advance()
        self._progress.finish()

    # -- the tables' own statistics -------------------------------------------------------------------

    def copy_table_statistics(self, tables: list[TableState]) -> None:
        usable = [t for t in tables if t.usable and t.table.tableType != VIEW and self._stat_columns(t)]
        self._progress.start("table statistics", len(usable))
        for t in usable:
            columns = self._stat_columns(t)
            theirs = self._source.call("get_table_statistics_req", hms.TableStatsRequest(
                dbName=t.db, tblName=t.name, colNames=columns)).tableStats or []
            if theirs:
                ours = [] if t.new_in_dry_run else self._gateway.call("get_table_statistics_req", hms.TableStatsRequest(
                    dbName=t.db, tblName=t.name, colNames=columns)).tableStats or []
                if self._stats_outcome("table statistics", t.full_name, theirs, ours) == "write":
                    self._write_table_statistics(t, theirs)
            self._progress.advance()
        self._progress.finish()

    def _write_table_statistics(self, t: TableState, objs: list[Any]) -> None:
        if self._options.dry_run:
            self._summary.would_copy["table statistics"] += 1
            self._out.write(f"would copy the column statistics of {t.full_name}\n")
            return
        try:
            self._gateway.call("update_table_column_statistics", hms.ColumnStatistics(
                statsDesc=hms.ColumnStatisticsDesc(isTblLevel=True, dbName=t.db, tableName=t.name), statsObj=objs))
            self._summary.add("table statistics", "copied")
        except (hms.MetaException, hms.InvalidObjectException, hms.NoSuchObjectException,
                hms.InvalidInputException) as exc:
            self._summary.add("table statistics", "failed", name=t.full_name, reason=reason_of(exc))


def _by_column(objs: list[Any]) -> Any:
    return compare.plain(sorted(objs, key=lambda o: o.colName.lower()))


def _name_of(t: TableState, partition: Any) -> str:
    return partition_name(t.table.partitionKeys, partition.values)


def partition_name(keys: Sequence[Any], values: Sequence[str] | None) -> str:
    """A partition's name as Hive makes it (its keys and escaped values), as get_partition_names lists it."""
    try:
        return make_partition_name(keys, values or [])
    except InvalidArgument:  # values that do not fit the keys: shown as they are
        return "/".join(values or [])
