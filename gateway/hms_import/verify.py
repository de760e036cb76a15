"""`--verify`: both sides read and compared object by object, nothing written.

For the databases the pattern selects: each database, its tables, their partitions (in batches, as the copy
reads them), its functions, the tables' and partitions' column statistics, and a transactional table's write
ids (the gateway's copy must have allocated at least what the source's files name: write_ids.py). An object
the gateway lacks, or has otherwise (compare.py: what differs by nature left out), is `differing` with each
difference named; a table, partition or function only the gateway has in those databases is reported too.
Then the roles, role grants and privileges (grants.py) and the tables' constraints (constraints.py), each
compared by the same rules, what only the gateway has reported too.
"""

from __future__ import annotations

from typing import Any, TextIO

from gateway.hms_import import compare
from gateway.hms_import.copier import VIEW, chunks, partition_name, source_databases
from gateway.hms_import.constraints import ConstraintCopier
from gateway.hms_import.endpoint import ThriftEndpoint
from gateway.hms_import.grants import GrantCopier, SourceTable
from gateway.hms_import.report import Progress, Summary
from gateway.hms_import.write_ids import WriteIdSeeder, is_transactional
from gateway.thrift.idl import hms


class Verifier:
    def __init__(self, source: ThriftEndpoint, gateway: ThriftEndpoint, pattern: str, batch_size: int,
                 summary: Summary, progress: Progress, out: TextIO) -> None:
        self._source = source
        self._gateway = gateway
        self._pattern = pattern
        self._batch_size = batch_size
        self._summary = summary
        self._progress = progress
        self._seeder = WriteIdSeeder(source, gateway, summary, dry_run=True, out=out)
        self._out = out
        self._databases: list[str] = []  # those on both sides: their grants and tables' constraints compared too
        self._tables: list[SourceTable] = []

    def _same(self, kind: str, name: str, theirs: Any, ours: Any) -> bool:
        if ours is None:
            self._summary.add(kind, "differing", name=name, reason="missing on the gateway")
            return False
        diff = compare.differences(compare.plain(theirs), compare.plain(ours))
        if diff:
            self._summary.add(kind, "differing", name=name, reason="; ".join(diff[:10]) + (
                f"; ... {len(diff) - 10} more" if len(diff) > 10 else ""))
            return False
        self._summary.add(kind, "identical")
        return True

    def _only_on_gateway(self, kind: str, names: list[str]) -> None:
        for name in names:
            self._summary.add(kind, "differing", name=name, reason="only on the gateway, not on the source")

    def run(self) -> None:
        databases = source_databases(self._source, self._pattern)
        self._progress.start("verify", len(databases))
        for db in databases:
            self._verify_database(db)
            self._progress.advance(note=db)
        self._progress.finish()
        GrantCopier(self._source, self._gateway, self._summary, self._progress, self._out, verify=True).run(
            self._databases, self._tables)
        ConstraintCopier(self._source, self._gateway, self._summary, self._progress, self._out, verify=True).run(
            self._tables)

    def _verify_database(self, db: str) -> None:
        theirs = self._source.get("get_database", db)
        ours = self._gateway.get("get_database", db)
        if theirs is not None and ours is not None:
            self._databases.append(db)
        if theirs is None or not self._same("databases", db, theirs, ours):
            return
        source_tables = sorted(self._source.call("get_all_tables", db))
        gateway_tables = set(self._gateway.call("get_all_tables", db))
        self._only_on_gateway("tables", [f"{db}.{t}" for t in sorted(gateway_tables - set(source_tables))])
        for name in source_tables:
            self._verify_table(db, name)
        source_functions = sorted(self._source.call("get_functions", db, "*"))
        gateway_functions = set(self._gateway.call("get_functions", db, "*"))
        self._only_on_gateway("functions", [f"{db}.{f}" for f in sorted(gateway_functions - set(source_functions))])
        for name in source_functions:
            fn = self._source.get("get_function", db, name)
            if fn is not None:
                self._same("functions", f"{db}.{name}", fn, self._gateway.get("get_function", db, name))

    def _verify_table(self, db: str, name: str) -> None:
        full = f"{db}.{name}"
        theirs = self._source.get("get_table", db, name)
        if theirs is None:
            return
        ours = self._gateway.get("get_table", db, name)
        if ours is not None:
            self._tables.append(SourceTable(db, name, theirs))
        if not self._same("tables", full, theirs, ours) and ours is None:
            return  # a table that differs still has its partitions and statistics compared
        if theirs.tableType == VIEW:
            return
        if is_transactional(theirs):
            want, have = self._seeder.expected_seed(db, name), self._seeder.gateway_max(db, name)
            if have < want:
                self._summary.add("write ids", "differing", name=full, reason=(
                    f"the gateway has allocated write ids up to {have}, the source's files name up to {want}"))
            else:
                self._summary.add("write ids", "identical")
        columns = [c.name for c in (theirs.sd.cols if theirs.sd else None) or []]
        if columns:
            self._verify_statistics("table statistics", full, *(
                side.call("get_table_statistics_req", hms.TableStatsRequest(dbName=db, tblName=name, colNames=columns))
                .tableStats or [] for side in (self._source, self._gateway)))
        if not theirs.partitionKeys:
            return
        source_names = self._source.call("get_partition_names", db, name, -1)
        gateway_names = set(self._gateway.call("get_partition_names", db, name, -1))
        self._only_on_gateway("partitions", [f"{full} {n}" for n in sorted(gateway_names - set(source_names))])
        for batch in chunks(source_names, self._batch_size):
            names = list(batch)
            source_parts = {tuple(p.values): p for p in self._source.call("get_partitions_by_names", db, name, names)}
            gateway_parts = {tuple(p.values): p for p in self._gateway.call("get_partitions_by_names", db, name, names)}
            for values, p in source_parts.items():
                self._same("partitions", f"{full} {partition_name(theirs.partitionKeys, values)}", p,
                           gateway_parts.get(values))
            if columns:
                request = hms.PartitionsStatsRequest(dbName=db, tblName=name, colNames=columns, partNames=names)
                source_stats = self._source.call("get_partitions_statistics_req", request).partStats or {}
                gateway_stats = self._gateway.call("get_partitions_statistics_req", request).partStats or {}
                for part_name in sorted(set(source_stats) | set(gateway_stats)):
                    self._verify_statistics("partition statistics", f"{full} {part_name}",
                                            source_stats.get(part_name) or [], gateway_stats.get(part_name) or [])

    def _verify_statistics(self, kind: str, name: str, theirs: list[Any], ours: list[Any]) -> None:
        if not theirs and not ours:
            return
        diff = compare.differences(compare.plain(_sorted(theirs)), compare.plain(_sorted(ours)))
        if diff:
            self._summary.add(kind, "differing", name=name, reason="; ".join(diff[:10]))
        else:
            self._summary.add(kind, "identical")


def _sorted(objs: list[Any]) -> list[Any]:
    return sorted(objs, key=lambda o: o.colName.lower())

