"""Query text of the lock manager (Hive's HIVE_LOCKS, NEXT_LOCK_ID; hive-reference §6).

Row locks, in the one order every writer takes them, so they cannot deadlock: a txn's row (enqueue
FOR SHARE, commit/abort FOR UPDATE), then the next_lock_id row (enqueue FOR UPDATE until commit,
the DDL guard FOR SHARE), then hive_locks rows in (ext_id, int_id) order. The enqueue's hold on
next_lock_id is what makes ext ids visible in id order (see store/locks.py).
"""

# -- the enqueue and the conflict rule ------------------------------------------------------------
# A Lock call, or a group-commit batch of them, in one statement: the function enqueue_locks
# (store/schema/0037_lock_conflict_lookups.sql) checks the txns, takes the ext ids and inserts the
# requests, each checked against every earlier one it can meet (first_lock_blocker, by index) with the
# conflict rule lock_blocks; $12 is
# `conflict_keys()` (hive/lock_rules.py). A row per component, or one naming the txn refused. It
# checks no database, table or partition: a lock names them, as Hive's does (store/locks.py).
_ENQUEUE_CALL = """enqueue_locks($1, $2::bigint[], $3::int[], $4::int[], $5::text[], $6::text[], $7::text[],
                              $8::text[], $9::text[], $10::bigint[], $11::text[], $12::text[], $13::text[],
                              $14::text[], $15::text[])"""
ENQUEUE = f"SELECT * FROM {_ENQUEUE_CALL}"

# The same, when requests name updates or deletes: the statement also adds them to their txns'
# write-sets ($16..$20: txn, database, table, partition or NULL, 'u'/'d';
# hive/lock_rules.write_set_entries), once the function has taken the requests (it answers a
# refusal with one row and no lock id). The function holds the txns FOR SHARE, so none of them
# commits before its components are in. (Most requests name none, and keep the plain statement.)
ENQUEUE_WITH_WRITES = f"""
WITH l AS MATERIALIZED (SELECT * FROM {_ENQUEUE_CALL}),
components AS (
    INSERT INTO txn_components (txn_id, db_name, tbl_name, part_name, operation)
    SELECT w.txn_id, w.db_name, w.tbl_name, w.part_name, w.operation
    FROM unnest($16::bigint[], $17::text[], $18::text[], $19::text[], $20::text[])
        AS w(txn_id, db_name, tbl_name, part_name, operation)
    WHERE EXISTS (SELECT 1 FROM l WHERE l.lock_ext_id IS NOT NULL)
)
SELECT * FROM l
"""

# Locks one request's rows (CheckLock, Unlock): its state cannot change under the caller.
SELECT_REQUEST_FOR_UPDATE = """
SELECT int_id, txn_id, state, db_name, tbl_name, part_name, lock_type
FROM hive_locks WHERE ext_id = $1 ORDER BY int_id FOR UPDATE
"""

TXN_OF_REQUEST = "SELECT txn_id FROM hive_locks WHERE ext_id = $1 LIMIT 1"

# The first earlier component blocking any component of request $1 (keys: $2), and the component it
# blocks (store/schema/0037's first_blocker_of_request).
FIRST_BLOCKER = "SELECT int_id, b_ext, b_int FROM first_blocker_of_request($1, $2::text[])"

MARK_WAITING = """
UPDATE hive_locks SET blocked_by_ext_id = CASE WHEN int_id = $2 THEN $3::bigint END,
                      blocked_by_int_id = CASE WHEN int_id = $2 THEN $4::int END,
                      last_heartbeat = CASE WHEN txn_id = 0 THEN statement_timestamp() END
WHERE ext_id = $1
"""

MARK_ACQUIRED = """
UPDATE hive_locks SET state = 'a', acquired_at = statement_timestamp(),
                      blocked_by_ext_id = NULL, blocked_by_int_id = NULL,
                      last_heartbeat = CASE WHEN txn_id = 0 THEN statement_timestamp() END
WHERE ext_id = $1
"""

DELETE_REQUEST = "DELETE FROM hive_locks WHERE ext_id = $1"

# Commit/abort: every lock of the txns, rows locked in key order (index: hive_locks_by_txn); the
# function (store/schema/0007_txn_functions.sql) is the commit function's too.
RELEASE_TXN_LOCKS = "SELECT release_txn_locks($1::bigint[])"

# -- heartbeat and time-out (standalone locks only; txn locks live and die with their txn) ------
HEARTBEAT_LOCKS = """
UPDATE hive_locks SET last_heartbeat = statement_timestamp()
WHERE ext_id = ANY($1::bigint[]) AND txn_id = 0
RETURNING ext_id
"""

EXISTING_REQUESTS = "SELECT DISTINCT ext_id FROM hive_locks WHERE ext_id = ANY($1::bigint[])"

# Hive's timeOutLocks. Every statement here stamps all rows of a request with one
# statement_timestamp(), and the heartbeat is re-checked on each row once locked, so a request is
# deleted whole or not at all.
# Index: hive_locks_standalone_heartbeat.
TIME_OUT_LOCKS = """
DELETE FROM hive_locks WHERE (ext_id, int_id) IN (
    SELECT ext_id, int_id FROM hive_locks
    WHERE txn_id = 0 AND last_heartbeat < statement_timestamp() - make_interval(secs => $1)
    ORDER BY ext_id, int_id FOR UPDATE)
RETURNING ext_id, int_id, db_name, tbl_name, part_name, user_name, host
"""

# -- SHOW LOCKS -----------------------------------------------------------------------------------
_SHOW_COLUMNS = """
SELECT ext_id, int_id, txn_id, db_name, tbl_name, part_name, state, lock_type, operation,
       coalesce((extract(epoch FROM last_heartbeat) * 1000)::bigint, 0) AS heartbeat_ms,
       coalesce((extract(epoch FROM acquired_at) * 1000)::bigint, 0) AS acquired_ms,
       user_name, host, agent_info, blocked_by_ext_id, blocked_by_int_id
FROM hive_locks
"""

# Hive's showLocks: exact matches on what is given ($1 db, $2 table, $3 partition, $4 txn; NULL/0: any).
SHOW_LOCKS = _SHOW_COLUMNS + """
WHERE ($1::text IS NULL OR db_name = $1) AND ($2::text IS NULL OR tbl_name = $2)
  AND ($3::text IS NULL OR part_name = $3) AND ($4::bigint = 0 OR txn_id = $4)
ORDER BY ext_id, int_id
LIMIT $5
"""

# EXTENDED: every lock whose scope overlaps the named one (what could block, or be blocked by, a lock on it).
SHOW_LOCKS_OVERLAPPING = _SHOW_COLUMNS + """
WHERE ($1::text IS NULL OR db_name = $1)
  AND ($2::text IS NULL OR tbl_name IS NULL OR (tbl_name = $2 AND (
        $3::text IS NULL OR part_name IS NULL OR part_name = $3
        OR starts_with(part_name, $3 || '/') OR starts_with($3, part_name || '/'))))
  AND ($4::bigint = 0 OR txn_id = $4)
ORDER BY ext_id, int_id
LIMIT $5
"""

# -- the DDL guard ---------------------------------------------------------------------------------
# FOR SHARE on the counter: no request is enqueued (and granted) until the DDL commits; drops do
# not block each other.
BLOCK_ENQUEUES = "SELECT next FROM next_lock_id WHERE id = 1 FOR SHARE"

# The locks on a table's scope ($2) or a whole database's ($2 NULL), FOR SHARE so none of them is
# granted or released until the DDL commits.
LOCKS_IN_SCOPE_FOR_SHARE = """
SELECT ext_id, int_id, txn_id, db_name, tbl_name, part_name, state, lock_type, user_name, host, agent_info
FROM hive_locks
WHERE db_name = $1 AND ($2::text IS NULL OR tbl_name IS NULL OR tbl_name = $2)
ORDER BY ext_id, int_id
FOR SHARE
"""

# Lock components by state ('a' acquired, 'w' waiting), for metrics and the gateway's database probe;
# a scan of hive_locks, which holds only live locks.
COUNT_LOCKS_BY_STATE = "SELECT state, count(*) AS count FROM hive_locks GROUP BY state"

# Who took each lock request (the authorization of check, heartbeat and unlock: gateway/auth.py).
LOCK_OWNERS = "SELECT DISTINCT ext_id, user_name FROM hive_locks WHERE ext_id = ANY($1::bigint[])"
