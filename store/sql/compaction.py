"""Query text of the compactor: queue, history, the Initiator's and the Cleaner's questions.

Locks: a claim updates one queue row conditionally (`cq_state = 'i'`), with SKIP LOCKED on the
pick, so two workers never take the same entry; every other state change locks the entry's row
FOR UPDATE first. Marking an entry compacted then locks next_txn_id FOR SHARE (after the compaction
txn's row, commit_txn's order) until its transaction commits. One active ('i' or 'w') entry per
partition is a unique index (compaction_queue_one_active), so a manual request racing the Initiator
cannot double-queue.
"""

_QUEUE_COLUMNS = """cq_id, cq_database, cq_table, cq_partition, cq_table_id, cq_state, cq_type, cq_tblproperties,
cq_worker_id, cq_enqueue_time, cq_start, cq_last_heartbeat, cq_run_as, cq_highest_write_id, cq_error_message,
cq_next_txn_id, cq_txn_id, cq_commit_time, cq_initiator_id, cq_initiator_version, cq_worker_version, cq_manual,
cq_pool_name, cq_worker_user"""

# -- enqueue (index: compaction_queue_one_active) -------------------------------------------------
ACTIVE_ENTRY = """
SELECT cq_id, cq_state, cq_type FROM compaction_queue
WHERE cq_table_id = $1 AND coalesce(cq_partition, '') = coalesce($2::text, '') AND cq_state IN ('i', 'w')
"""

# ON CONFLICT: a concurrent enqueue for the same partition won; the caller reads its id back.
INSERT_ENTRY = """
INSERT INTO compaction_queue (cq_database, cq_table, cq_partition, cq_table_id, cq_state, cq_type, cq_tblproperties,
                              cq_run_as, cq_initiator_id, cq_initiator_version, cq_manual)
VALUES ($1, $2, $3, $4, 'i', $5, $6, $7, $8, $9, $10)
ON CONFLICT (cq_table_id, coalesce(cq_partition, '')) WHERE cq_state IN ('i', 'w') DO NOTHING
RETURNING cq_id
"""

# -- worker ---------------------------------------------------------------------------------------
# The oldest initiated entry; SKIP LOCKED: a row another claimer holds is passed over, not waited for.
# The oldest initiated entry; with $1, the oldest that runs as $1 (a non-admin worker's claim).
PICK_NEXT = f"""
SELECT {_QUEUE_COLUMNS} FROM compaction_queue WHERE cq_state = 'i' AND ($1::text IS NULL OR cq_run_as = $1)
ORDER BY cq_id LIMIT 1 FOR UPDATE SKIP LOCKED
"""

CLAIM = """
UPDATE compaction_queue
SET cq_state = 'w', cq_worker_id = $2, cq_worker_version = $3, cq_worker_user = $4, cq_start = clock_timestamp(),
    cq_last_heartbeat = clock_timestamp(), cq_txn_id = NULL, cq_error_message = NULL
WHERE cq_id = $1 AND cq_state = 'i'
"""

ENTRY_FOR_UPDATE = f"SELECT {_QUEUE_COLUMNS} FROM compaction_queue WHERE cq_id = $1 FOR UPDATE"

HEARTBEAT = "UPDATE compaction_queue SET cq_last_heartbeat = clock_timestamp() WHERE cq_id = $1"

SET_TXN = "UPDATE compaction_queue SET cq_txn_id = $2, cq_last_heartbeat = clock_timestamp() WHERE cq_id = $1"

RECORD_COMPACTION_TXN = "INSERT INTO compaction_txns (txn_id, table_id) VALUES ($1, $2)"

# A committed compaction's output is read as committed: no link to keep.
FORGET_COMPACTION_TXN = "DELETE FROM compaction_txns WHERE txn_id = $1"

# Hive's markCompacted plus the commit's CQ_NEXT_TXN_ID / CQ_COMMIT_TIME, in one step, after the
# compaction txn's commit_txn in the same transaction: the next txn id at commit is the Cleaner's horizon
# (every txn below it may have read the pre-compaction files). Read under a share lock on the counter
# row, as commit_txn reads a writer's commit id (the compaction txn wrote no write ids, so its commit
# took none): an OpenTxns in flight, its ids taken but not committed (a group-commit batch holds
# several), is waited for and counted; an open after it waits for this transaction's commit, so its
# txn takes its snapshot with the compaction committed. Unlocked, the committed value left the ids in
# flight out, and the Cleaner deleted the deltas their snapshots read while they were open.
MARK_COMPACTED = """
UPDATE compaction_queue
SET cq_state = 'r', cq_highest_write_id = $2,
    cq_next_txn_id = (SELECT next FROM next_txn_id WHERE id = 1 FOR SHARE), cq_commit_time = clock_timestamp()
WHERE cq_id = $1
"""

# Dead workers: 'w' entries without a heartbeat for $1 seconds go back to 'i' (Hive's revokeTimedoutWorkers,
# by heartbeat rather than by start time). Returns the compaction txns to abort.
TIMED_OUT_WORKERS = """
SELECT cq_id, cq_txn_id, cq_worker_id FROM compaction_queue
WHERE cq_state = 'w' AND cq_last_heartbeat < clock_timestamp() - make_interval(secs => $1)
ORDER BY cq_id
FOR UPDATE SKIP LOCKED
"""

REQUEUE = """
UPDATE compaction_queue
SET cq_state = 'i', cq_worker_id = NULL, cq_worker_user = NULL, cq_start = NULL, cq_last_heartbeat = NULL,
    cq_txn_id = NULL, cq_error_message = $2
WHERE cq_id = ANY($1::bigint[])
"""

# -- history (index: completed_compactions_entity) -----------------------------------------------
# Moves a queue entry to history in state $2 with error $3.
MOVE_TO_HISTORY = """
WITH gone AS (DELETE FROM compaction_queue WHERE cq_id = $1 RETURNING *)
INSERT INTO completed_compactions (cc_id, cc_database, cc_table, cc_partition, cc_table_id, cc_state, cc_type,
    cc_tblproperties, cc_worker_id, cc_enqueue_time, cc_start, cc_end, cc_run_as, cc_highest_write_id,
    cc_error_message, cc_next_txn_id, cc_txn_id, cc_commit_time, cc_initiator_id, cc_initiator_version,
    cc_worker_version, cc_manual, cc_pool_name)
SELECT cq_id, cq_database, cq_table, cq_partition, cq_table_id, $2, cq_type, cq_tblproperties, cq_worker_id,
    cq_enqueue_time, cq_start, clock_timestamp(), cq_run_as, cq_highest_write_id, coalesce($3, cq_error_message),
    cq_next_txn_id, cq_txn_id, cq_commit_time, cq_initiator_id, cq_initiator_version, cq_worker_version, cq_manual,
    cq_pool_name
FROM gone
RETURNING cc_id
"""

# A "did not initiate" row, straight into history, with an id from the queue's own sequence.
INSERT_NOT_INITIATED = """
INSERT INTO completed_compactions (cc_id, cc_database, cc_table, cc_partition, cc_table_id, cc_state, cc_type,
                                   cc_error_message, cc_initiator_id, cc_initiator_version)
VALUES (nextval(pg_get_serial_sequence('compaction_queue', 'cq_id')), $1, $2, $3, $4, 'a', $5, $6, $7, $8)
RETURNING cc_id
"""

# The newest history states of one partition, did-not-initiate rows left out (Hive's checkFailedCompactions).
RECENT_OUTCOMES = """
SELECT cc_state, cc_manual FROM completed_compactions
WHERE cc_table_id = $1 AND coalesce(cc_partition, '') = coalesce($2::text, '') AND cc_state <> 'a'
ORDER BY cc_id DESC LIMIT $3
"""

# purgeCompactionHistory: per partition and final state keep the newest $n of 's', 'f', 'a'.
PURGE_HISTORY = """
DELETE FROM completed_compactions c USING (
    SELECT cc_id, row_number() OVER (PARTITION BY cc_table_id, coalesce(cc_partition, ''), cc_state
                                     ORDER BY cc_id DESC) AS rank, cc_state
    FROM completed_compactions
) r
WHERE c.cc_id = r.cc_id
  AND r.rank > CASE r.cc_state WHEN 's' THEN $1::int WHEN 'f' THEN $2::int WHEN 'a' THEN $3::int ELSE $4::int END
"""

# -- SHOW COMPACTIONS: queue then history, each newest last ---------------------------------------
_MS = "(extract(epoch FROM {c}) * 1000)::bigint"
SHOW = f"""
SELECT cq_id AS id, cq_database AS db, cq_table AS tbl, cq_partition AS part, cq_type AS type, cq_state AS state,
       cq_worker_id AS worker_id, {_MS.format(c="cq_enqueue_time")} AS enqueue_ms,
       {_MS.format(c="cq_start")} AS start_ms,
       NULL::bigint AS end_ms, cq_run_as AS run_as, cq_highest_write_id AS highest_write_id,
       cq_error_message AS error_message, cq_next_txn_id AS next_txn_id, cq_txn_id AS txn_id,
       {_MS.format(c="cq_commit_time")} AS commit_ms, cq_initiator_id AS initiator_id,
       cq_initiator_version AS initiator_version, cq_worker_version AS worker_version, cq_pool_name AS pool_name,
       cq_manual AS manual
FROM compaction_queue
WHERE ($1::text IS NULL OR cq_database = $1) AND ($2::text IS NULL OR cq_table = $2)
  AND ($3::text IS NULL OR cq_partition = $3) AND ($5::bigint IS NULL OR cq_id = $5)
  AND ($6::text IS NULL OR cq_type = $6) AND ($7::text IS NULL OR cq_state = $7)
  AND ($8::text IS NULL OR cq_pool_name = $8)
UNION ALL
SELECT cc_id, cc_database, cc_table, cc_partition, cc_type, cc_state, cc_worker_id,
       {_MS.format(c="cc_enqueue_time")}, {_MS.format(c="cc_start")}, {_MS.format(c="cc_end")}, cc_run_as,
       cc_highest_write_id, cc_error_message, cc_next_txn_id, cc_txn_id, {_MS.format(c="cc_commit_time")},
       cc_initiator_id, cc_initiator_version, cc_worker_version, cc_pool_name, cc_manual
FROM completed_compactions
WHERE ($1::text IS NULL OR cc_database = $1) AND ($2::text IS NULL OR cc_table = $2)
  AND ($3::text IS NULL OR cc_partition = $3) AND ($5::bigint IS NULL OR cc_id = $5)
  AND ($6::text IS NULL OR cc_type = $6) AND ($7::text IS NULL OR cc_state = $7)
  AND ($8::text IS NULL OR cc_pool_name = $8)
ORDER BY id
LIMIT $4
"""

# -- Initiator ------------------------------------------------------------------------------------
# Managed transactional tables whose write-id counter moved since the Initiator last looked, or with
# aborted write ids (their leftovers may need cleaning, and an old abort becomes due with time alone).
# Index: next_write_id primary key; txns_not_committed for the aborted probe.
CANDIDATE_TABLES = """
SELECT t.version_id, t.table_id, t.db_name, t.tbl_name, t.table_type, t.transactional, t.body, t.create_time,
       t.created_wid, nw.next AS next_write_id
FROM tbls t
JOIN next_write_id nw ON nw.table_id = t.table_id
LEFT JOIN compaction_checked c ON c.table_id = t.table_id
WHERE t.dropped_wid IS NULL AND t.transactional AND t.table_type = 'MANAGED_TABLE'
  AND (c.next_write_id IS DISTINCT FROM nw.next
       OR EXISTS (SELECT 1 FROM txn_to_write_id tw JOIN txns x ON x.txn_id = tw.txn_id AND x.state = 'a'
                  WHERE tw.table_id = t.table_id))
ORDER BY t.table_id
LIMIT $1
"""

MARK_CHECKED = """
INSERT INTO compaction_checked (table_id, next_write_id) VALUES ($1, $2)
ON CONFLICT (table_id) DO UPDATE SET next_write_id = $2, checked_at = clock_timestamp()
"""

FORGET_CHECKED = "DELETE FROM compaction_checked WHERE table_id = $1"

# Aborted write ids of a table with the time their txn ended (the old-abort rule).
ABORTED_WRITE_IDS = """
SELECT tw.write_id, (extract(epoch FROM x.finished_at))::float8 AS finished_s
FROM txn_to_write_id tw JOIN txns x ON x.txn_id = tw.txn_id AND x.state = 'a'
WHERE tw.table_id = $1
"""

DB_NOW_S = "SELECT extract(epoch FROM clock_timestamp())::float8"

LATEST_TABLE_BY_ID = """
SELECT version_id, table_id, db_name, tbl_name, table_type, transactional, body, create_time, created_wid
FROM tbls WHERE table_id = $1 AND dropped_wid IS NULL
"""

LATEST_PARTITIONS = """
SELECT part_name, part_values, body, create_time, created_wid FROM partitions
WHERE table_id = $1 AND dropped_wid IS NULL ORDER BY part_name
"""

LATEST_PARTITION = """
SELECT part_name, part_values, body, create_time, created_wid FROM partitions
WHERE table_id = $1 AND part_name = $2 AND dropped_wid IS NULL
"""

# -- Cleaner --------------------------------------------------------------------------------------
# The smallest txn still open, or the next txn id when none is: a compaction whose commit-time
# next txn id is at or below it was committed before every open txn began (HIVE-24291/26704).
MIN_OPEN_TXN_WATERMARK = """
SELECT LEAST((SELECT next FROM next_txn_id WHERE id = 1), (SELECT min(txn_id) FROM txns WHERE state = 'o'))
"""

READY_TO_CLEAN = f"""
SELECT {_QUEUE_COLUMNS} FROM compaction_queue
WHERE cq_state = 'r' AND (cq_next_txn_id IS NULL OR cq_next_txn_id <= $1)
ORDER BY cq_id
LIMIT $2
FOR UPDATE SKIP LOCKED
"""

# -- Abort clean-up (Hive 4's AbortedTxnCleaner) --------------------------------------------------
# Tables due for it, as Hive 4's findReadyToCleanAborts picks them: more than $1 aborted write ids, or
# the oldest aborted more than $2 seconds ago (hive.compactor.abortedtxn.threshold and
# hive.compactor.aborted.txn.time.threshold), at most $4 tables; of each, the aborted write ids
# whose txns ended more than $3 seconds ago (hive.txn.timeout: a writer that has not yet learnt of
# its abort may still be writing). Index: txns_not_committed; txn_to_write_id (txn_id, table_id).
ABORTED_WRITES_DUE = """
WITH aborted AS (
    SELECT tw.table_id, tw.write_id, x.finished_at
    FROM txns x JOIN txn_to_write_id tw ON tw.txn_id = x.txn_id
    WHERE x.state = 'a'
),
due AS (
    SELECT table_id FROM aborted GROUP BY table_id
    HAVING count(*) > $1 OR min(finished_at) < clock_timestamp() - make_interval(secs => $2)
    ORDER BY table_id
    LIMIT $4
)
SELECT a.table_id, array_agg(a.write_id ORDER BY a.write_id) AS write_ids
FROM aborted a JOIN due USING (table_id)
WHERE a.finished_at < clock_timestamp() - make_interval(secs => $3)
GROUP BY a.table_id
ORDER BY a.table_id
"""

# Every directory a version of the table, or of one of its partitions, still names, with the
# number of partition keys under a table's directory. Versions a snapshot may still read are all
# here (garbage collection deletes only those no snapshot can see).
TABLE_ROOTS = """
SELECT body->'sd'->>'location' AS location, max(jsonb_array_length(coalesce(body->'partition_keys', '[]'))) AS depth
FROM tbls WHERE table_id = $1 GROUP BY 1
UNION ALL
SELECT DISTINCT body->'sd'->>'location', 0 FROM partitions WHERE table_id = $1
"""

# Aborted compaction txns that ended more than $1 seconds ago, with the tables they compacted, at
# most $2 tables' worth. Index: compaction_txns primary key; txns primary key.
ABORTED_COMPACTION_TXNS_DUE = """
WITH due AS (
    SELECT DISTINCT c.table_id FROM compaction_txns c JOIN txns x ON x.txn_id = c.txn_id AND x.state = 'a'
    WHERE x.finished_at < clock_timestamp() - make_interval(secs => $1)
    ORDER BY c.table_id
    LIMIT $2
)
SELECT c.table_id, array_agg(c.txn_id ORDER BY c.txn_id) AS txn_ids
FROM compaction_txns c JOIN due USING (table_id) JOIN txns x ON x.txn_id = c.txn_id AND x.state = 'a'
WHERE x.finished_at < clock_timestamp() - make_interval(secs => $1)
GROUP BY c.table_id
"""

# Aborted compaction txns of $1 whose directories are gone: forgotten as housekeeping forgets the
# aborted txns that wrote nothing (txn_housekeeping.aborted_forgotten_upto, raised by the caller).
FORGET_ABORTED_COMPACTION_TXNS = """
WITH gone AS (
    DELETE FROM txns WHERE txn_id = ANY($1::bigint[]) AND state = 'a'
    RETURNING txn_id
), unlinked AS (
    DELETE FROM compaction_txns c USING gone WHERE c.txn_id = gone.txn_id
)
SELECT txn_id FROM gone
"""

# The write ids of $2 whose txns are aborted lose their rows: from now on no snapshot lists them
# (an id without a row counts as committed), which is right only once no directory holds them. The
# table's cleaned_hwm rises to the highest, as for committed rows cleaned away: a list's high-water
# mark is the highest id it has a row for, so one forgotten at the top of the table's ids would drop
# out of the lists until a later id's row raised the mark again, and a cache loaded meanwhile would
# take it, never decided, for one still open (store/cache/entry.py CommittedWriteIds._raise_hwm).
FORGET_ABORTED_WRITE_IDS = """
WITH gone AS (
    DELETE FROM txn_to_write_id tw USING txns x
    WHERE tw.table_id = $1 AND tw.write_id = ANY($2::bigint[]) AND x.txn_id = tw.txn_id AND x.state = 'a'
    RETURNING tw.write_id
), raised AS (
    UPDATE next_write_id n SET cleaned_hwm = GREATEST(n.cleaned_hwm, (SELECT max(write_id) FROM gone))
    WHERE n.table_id = $1 AND EXISTS (SELECT 1 FROM gone)
)
SELECT write_id FROM gone
"""


# -- a dropped transactional table's entries ---------------------------------------------------------
# Hive's AcidEventListener deletes them with the table or its database (TxnHandler.cleanupRecords): the
# queue's (a worker holding one finds it gone: NotFound) and the history's. The queue's scan reads the
# few rows of the table (compaction_queue_one_active covers its active ones); the history's uses
# completed_compactions_entity.
DELETE_QUEUE_OF_TABLE = "DELETE FROM compaction_queue WHERE cq_table_id = $1"
DELETE_HISTORY_OF_TABLE = "DELETE FROM completed_compactions WHERE cc_table_id = $1"

# Hive's GetLatestCommittedCompactionInfoHandler: the compactions whose files readers may use (succeeded, or
# waiting for the Cleaner), newest first; by the table's id, so a renamed table keeps its own. Indexes: the
# queue's and the history's by table id (0006).
LATEST_COMMITTED = """
SELECT id, part, type FROM (
    SELECT cc_id AS id, cc_partition AS part, cc_type AS type FROM completed_compactions
    WHERE cc_table_id = $1 AND cc_state = 's'
    UNION ALL
    SELECT cq_id, cq_partition, cq_type FROM compaction_queue WHERE cq_table_id = $1 AND cq_state = 'r'
) AS c
WHERE ($2::text[] IS NULL OR part = ANY($2)) AND ($3::bigint IS NULL OR id > $3)
ORDER BY id DESC
"""
