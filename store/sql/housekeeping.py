"""Query text of the housekeeping loops. Each loop's transaction first takes its advisory lock
(pg_try_advisory_xact_lock), so with any number of gateways one runs a round at a time."""

TRY_LEADERSHIP = "SELECT pg_try_advisory_xact_lock($1)"

# Open txns whose heartbeat is older than $1 seconds, oldest first; rows being committed or
# heartbeated right now are skipped rather than waited for.
TIMED_OUT_TXNS = """
SELECT txn_id FROM txns
WHERE state = 'o' AND last_heartbeat < clock_timestamp() - make_interval(secs => $1)
ORDER BY txn_id
LIMIT $2
FOR UPDATE SKIP LOCKED
"""

# HIVE-18747's mark without Hive's min(aborted txn) term: min(next txn id, min MIN_HISTORY_LEVEL).
# Below it every txn is decided in every snapshot still in use. Hive also stops at the oldest
# aborted txn, because it deletes every TXN_TO_WRITE_ID row below the mark and an aborted write id
# without a row would read as committed; here the cleaner keeps aborted txns' rows instead
# (DELETE_T2W_BELOW), so one aborted txn no longer holds back the cleaning of everything after it.
T2W_LOW_WATER_MARK = """
SELECT LEAST((SELECT next FROM next_txn_id WHERE id = 1), (SELECT min(min_open_txn_id) FROM min_history_level))
"""

# The rows of committed txns in [$1, $2): $1 the mark of the last round (below it only aborted
# txns' rows are left, which every round keeps), $2 this round's. An aborted txn's rows stay while
# its txn row does: its write ids are listed as aborted in every ValidWriteIdList meanwhile
# (TABLE_WRITE_ID_ROWS reads the rows of the snapshot's exceptions, whatever cleaned_hwm is).
# Index: txn_to_write_id (txn_id, table_id); txns primary key for the state.
DELETE_T2W_BELOW = """
WITH gone AS (
    DELETE FROM txn_to_write_id tw
    WHERE tw.txn_id >= $1 AND tw.txn_id < $2
      AND NOT EXISTS (SELECT 1 FROM txns x WHERE x.txn_id = tw.txn_id AND x.state = 'a')
    RETURNING tw.table_id, tw.write_id
)
SELECT table_id, max(write_id) AS max_write_id FROM gone GROUP BY table_id
"""

RAISE_CLEANED_HWM = """
UPDATE next_write_id n SET cleaned_hwm = GREATEST(n.cleaned_hwm, x.w)
FROM unnest($1::bigint[], $2::bigint[]) AS x(table_id, w) WHERE n.table_id = x.table_id
"""

RAISE_T2W_CLEANED_BELOW = "UPDATE txn_housekeeping SET t2w_cleaned_below = GREATEST(t2w_cleaned_below, $1) WHERE id = 1"

DELETE_COMMITTED_TXNS_BELOW = "DELETE FROM txns WHERE state = 'c' AND txn_id < $1"

# Aborted txns that wrote nothing (Hive's cleanEmptyAbortedAndCommittedTxns): no txn_to_write_id
# row (an aborted txn cannot allocate one any more) nor a write id reserved under a table name (a
# CTAS's, its files written under it: the table's creation takes the id over, and a txn forgotten would
# then read as committed), and not of a type $1 whose directories are named by its txn id (a
# compaction's base_N_vT), aborted more than $2 seconds ago, oldest first, at most $3. Rows a commit,
# abort or heartbeat holds are skipped. Answers how many and the highest id. Index:
# txns_not_committed; txn_to_write_id (txn_id, table_id) and write_id_reservations_txn for the probes.
FORGET_EMPTY_ABORTED_TXNS = """
WITH gone AS (
    DELETE FROM txns WHERE txn_id IN (
        SELECT x.txn_id FROM txns x
        WHERE x.state = 'a' AND x.txn_type <> ALL($1::smallint[])
          AND x.finished_at < clock_timestamp() - make_interval(secs => $2)
          AND NOT EXISTS (SELECT 1 FROM txn_to_write_id tw WHERE tw.txn_id = x.txn_id)
          AND NOT EXISTS (SELECT 1 FROM write_id_reservations r WHERE r.txn_id = x.txn_id)
        ORDER BY x.txn_id
        LIMIT $3
        FOR UPDATE SKIP LOCKED)
    RETURNING txn_id
)
SELECT count(*) AS n, max(txn_id) AS highest FROM gone
"""

RAISE_ABORTED_FORGOTTEN_UPTO = """
UPDATE txn_housekeeping SET aborted_forgotten_upto = GREATEST(aborted_forgotten_upto, $1) WHERE id = 1
"""

# Below this txn id every txn is decided in every open txn's snapshot: min(next, min MHL).
VERSION_LOW_WATER_MARK = T2W_LOW_WATER_MARK

# Per table, the highest write id h such that every write id <= h belongs to a txn below the mark
# (decided for every open snapshot): versions ended by a write id <= h are seen by no one.
_HORIZON = """
SELECT nw.table_id,
       LEAST(nw.next, coalesce((SELECT min(tw.write_id) FROM txn_to_write_id tw
                                WHERE tw.table_id = nw.table_id AND tw.txn_id >= $1), nw.next)) - 1 AS h
FROM next_write_id nw
"""

GC_PARTITION_VERSIONS = f"""
WITH horizon AS ({_HORIZON}),
gone AS (
    DELETE FROM partitions p USING horizon
    WHERE p.table_id = horizon.table_id AND p.dropped_wid IS NOT NULL AND p.dropped_wid <= horizon.h
    RETURNING p.table_id, p.dropped_wid
)
SELECT table_id, max(dropped_wid) AS w, count(*) AS n FROM gone GROUP BY table_id
"""

GC_TABLE_VERSIONS = f"""
WITH horizon AS ({_HORIZON}),
gone AS (
    DELETE FROM tbls t USING horizon
    WHERE t.table_id = horizon.table_id AND t.dropped_wid IS NOT NULL AND t.dropped_wid <= horizon.h
    RETURNING t.table_id, t.dropped_wid
)
SELECT table_id, max(dropped_wid) AS w, count(*) AS n FROM gone GROUP BY table_id
"""

RAISE_GC_WATERMARK = """
UPDATE next_write_id n SET gc_watermark = GREATEST(n.gc_watermark, x.w)
FROM unnest($1::bigint[], $2::bigint[]) AS x(table_id, w) WHERE n.table_id = x.table_id
"""

DELETE_OLD_EVENTS = """
DELETE FROM notification_log WHERE event_time < clock_timestamp() - make_interval(secs => $1)
"""
