"""Multi-gateway consistency check: every read through a caching gateway, over gRPC or Hive's Thrift API,
must equal what PostgreSQL answers for the same request and snapshot.

    python -m loadtest.consistency                     # 3 gateway processes + oracle, 30 s
    python -m loadtest.consistency --duration 300      # the long version
    python -m loadtest.consistency --seed 42 --dsn postgresql://...   # in an existing PostgreSQL server

The same driver (`run_consistency`) runs for ~20 s in tests/e2e/test_multi_gateway_consistency.py.

Setup. Several gateways (3 by default) with their caches on one database, and an ORACLE: one more
gateway started with `metastore.gateway.cache.enabled=false`, so every read it answers comes from
PostgreSQL. One database `cons` with ACID partitioned tables (`a0`, `a1`, ...; keys ds string, hr int;
names drawn from a small universe so writers collide) and external tables (`e0`, ...).

Writers (through all gateways, every call to a randomly chosen one, so one txn's writes go through
several gateways, as the seed's "one txn, several HMS" case):
* ACID txns: OpenTxns, take the txn's snapshot, then 1-3 of add partitions / alter partitions / drop
  partitions / alter table (its tag; half the time its columns too) on one table, each preceded (and
  the last one followed) by reads of the table inside the txn, compared with the oracle like any
  other read; commit, or abort ~20%.
  Write-write conflicts (ABORTED) abort the txn. Once the txn has written, it reads its own writes two
  ways: `own_writes_early_snapshot`, with the snapshot it took when it opened (before its write id
  existed) plus its txn id, which the API promises shows its own writes; and `own_writes`, Hive's way,
  with a snapshot taken after the write (GetOpenTxns(current_txn_id) -> GetValidWriteIds: its own write
  id is valid in it). The commits of one table are serialized by the driver, and after each the
  oracle's answer for the table under a fresh snapshot of its own (its tag and columns, each
  partition's tag) is recorded: the table's history of committed states, in commit order.
* External (non-transactional) writes: add / alter / drop partitions or alter the table, serialized per
  table by the driver, which records after each write the table's state (read from the oracle) with
  the write's event id: the table's history, in event order.

Readers take snapshots Hive's way (GetOpenTxns, with or without a reader txn, then GetValidWriteIds
for all ACID tables), through any gateway, then read GetTable / GetPartitionsByNames (random name sets
with missing names, duplicates and non-canonical spellings) / ListPartitionNames (random page sizes,
following one page token) several times over a second or so (10% of reader txns hold their snapshot
for several seconds; 15% of reads outside txns reuse a snapshot up to ~30 sessions old, which the
caches answer from older versions, or, after version GC, refuse as "snapshot too old" like PostgreSQL).
Each read goes to every caching gateway (concurrently) and then to the oracle; the parsed responses (or
the gRPC status code and message) must be equal. Gateways are asked first: a version GC between the
two can only turn a right gateway answer (the objects, or that the snapshot had no table of the name read)
into an oracle "snapshot too old" (counted as `gc_race`, not a violation, and only outside txns), or
move the GC watermark that both sides' "snapshot too old" names further on (the same refusal); the
reverse order would be a violation. Inside reader txns "snapshot too old" is always a violation.

Over Hive's Thrift API too (thrift_side.py). Every gateway process, the oracle included, also serves
Hive's metastore Thrift API (its "Hive Thrift API on HOST:PORT" line gives the address). A share of
the readers' reads (`thrift_read_share`, 30%) goes there instead: Hive 4's get_table_req,
get_partitions_by_names_req (names drawn as for gRPC: missing, duplicate, non-canonical) and
get_partition_names_ps_req (Hive's partial specifications: none, a day, an hour of any day, both;
up to maxParts) and get_partitions_req (up to maxParts), and, compared with the oracle only,
get_partitions_ps_with_auth_req (partial specifications, maxParts), carrying the reader's snapshot as Hive 4
sends it (validWriteIdList, and the table id unless the ReadContext had none; Hive's requests carry no
txn id, and a reader txn has written nothing). Each caching gateway's Thrift answer must equal the
oracle's Thrift answer (the parsed structs, or the exception's type and message), with the gRPC rules
(gc_race, "snapshot too old" in txns); scopes `thrift_<kind>`. Half of them are made over gRPC at the
same time on the same gateways (judged as any gRPC read), and on each gateway, the oracle included,
the two answers must describe the same objects: the table's name, id, location, parameters and keys,
or each partition's name, values, location and parameters (get_partitions_req's twin is
GetPartitionsByFilter with a filter every partition matches, `hr >= 0`, and the same maxParts, -1 or
more than 0: gRPC refuses an empty filter and reads max_parts 0 as no limit), or the same names
(`compared.cross_protocol`; a disagreement is a `protocol_mismatch`: the cache keeps each partition
pre-encoded for each protocol).
Writers' reads of their own writes Hive's way (`own_writes`) go over Thrift too, to the same gateway
and the oracle, with the gRPC read (which carries the txn id) as their twin. External tables are read
over Thrift without a snapshot (the latest state) and judged as the gRPC reads without a token: a
state of the history (with its columns: a partition shows the table's), never going backwards per
gateway and protocol (observations of `gwN/thrift`).
The final sweep makes the same Thrift reads (every table, every name), which must come from the
caches as well. Counted: `thrift_reads`, `thrift_ext_reads`, `thrift_refused_by_oracle`.

ACID tables read without a snapshot (`latest_read_share`: 8% of the readers' reads that are not of an
external table), as Spark 3 (a Hive 2.3 client), Hive 2.3's engine and Trino read them. Over gRPC a
managed transactional table's reads must carry a ValidWriteIdList (README, "Transactions and
snapshots"): every kind, with or without a txn id, is FAILED_PRECONDITION on every gateway alike
(compared with the oracle, scope `no_snapshot`). Over
Thrift the gateway promises the latest committed state (store/snapshot.py `latest_committed`,
gateway/thrift/snapshots.py LATEST; the cache answers from what it knows is committed,
store/cache/sharded.py): Hive 4's requests without validWriteIdList (every kind the snapshot reads
draw, with partial specifications and maxParts) and Hive 2.3's get_table, get_partitions_by_names
and get_partition_names, through every caching gateway and the oracle, one at a time per endpoint
and table. The rule, judged at the end against the table's history of committed states (see the
writers): each answer is one of those states (the oracle's answer right after some commit: never a
state with an open or aborted txn's writes, nor one mixing two states; a partition shows the
columns of its state's table), and per gateway and protocol (`<gateway>/thrift`, the oracle's too)
the states read never go backwards (`latest_monotonic_checked`; violations `phantom_state`,
`not_monotonic`, scope `latest`). And a committer's own gateway shows its commit at once (the read
facade holds a table's reads there until its cache applied the commit): 30% of commits are followed
by such a read through the committing gateway's Thrift endpoint, which must show that commit's state
or a later one (scope `own_commit`, `own_commit_reads`).

External tables have no snapshot. Reads with `min_event_id` = the event id of the table's last
completed write are compared with the oracle when no write to that table started or was in flight
during the comparison (else counted as `ext_token_skipped`), and must show a state of the history at
or after that write. Reads without the token (per gateway and table, one at a time) must show states of
the history that never go backwards: monotonic reads per gateway. Both are checked at the end, against
the complete history (a gateway may show a write before the writer's call returned).

The churn tables are read too (`churn_read_share`, 25% of the readers' snapshot reads, over gRPC and
Thrift alike): the snapshot also holds each churn name's ValidWriteIdList (GetValidWriteIds one name at
a time, same ValidTxnList; a name without a table in the snapshot is left out), and a read names the
table by its own name or by the one a rename moves it to, with that name's snapshot, or with the other
name's (its table id and write ids, the list renamed): reads under snapshots from before a rename or a
re-creation, made after it. Judged as any snapshot read (scopes `churn_<kind>`, `thrift_churn_<kind>`),
but a drop deletes a table's versions, so a read pinned to a table whose drop started within the second
before it (or while it ran) may rightly be answered otherwise by those asked before the drop committed
(or applied) and those after: such a disagreement is counted (`ddl_race`), not a violation. Counted:
`churn_reads` (`_own_name`, `_other_name`; `churn_reads_no_snapshot` when neither name had a table).

Writes are judged too (loadtest/ddl_race.py): churn tables are altered under txns, renamed away and
back, dropped and re-created while partition-write txns run on them; a partition write or write-id
allocation must never answer NOT_FOUND while its table kept its name throughout the call.

At the end the writers stop, every gateway catches up (poller position >= the log head), and a final
sweep with a fresh snapshot reads every table through every gateway, over gRPC and Thrift: the ACID
tables, the churn tables that exist then (by the names they have, with their own snapshots) and the
external tables, and the ACID tables over Thrift without a snapshot too (scope `final_latest`, every
kind, Hive 2.3's calls included): all equal to the oracle, and all answered by the caches (hit counter
deltas). The share of reads each gateway's cache served during the
run (Admin.CacheStats hits / (hits + misses), as deltas) is reported, with misses by reason, and
checked against the number of reads the driver sent to that gateway.

The parts: model.py (configuration, report, answers, the catalog), reader.py and writer.py (the
workload), judge.py (the comparisons and the history checks), thrift_side.py (the Thrift endpoints,
requests, answers and the projections shared with gRPC), driver.py (phases, command line);
loadtest/ddl_race.py (DDL racing partition writes, and the judge of those writes).
"""

from loadtest.consistency.driver import Driver, main, run_consistency, seed_from_env
from loadtest.consistency.model import (
    CACHED_GATEWAY_CONF, ORACLE_CONF, ConsistencyConfig, ConsistencyReport, GatewayShare, Violation,
)

__all__ = ["CACHED_GATEWAY_CONF", "ConsistencyConfig", "ConsistencyReport", "Driver", "GatewayShare", "ORACLE_CONF",
           "Violation", "main", "run_consistency", "seed_from_env"]
