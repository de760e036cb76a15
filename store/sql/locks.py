"""Query text of the lock manager (Hive's HIVE_LOCKS, NEXT_LOCK_ID; hive-reference §6).

Row locks, in the one order every writer takes them, so they cannot deadlock: a txn's row (enqueue
FOR SHARE, commit/abort FOR UPDATE), then the next_lock_id row (enqueue FOR UPDATE until commit,
the DDL guard FOR SHARE), then hive_locks rows in (ext_id, int_id) order. The enqueue's hold on
next_lock_id is what makes ext ids visible in id order (see store/locks.py).
"""

# -- the conflict rule, shared by the enqueue and CheckLock ---------------------------------------
# `r` is the request's component, `ex` a component of an earlier request (same database). Scopes
# overlap when one contains the other: a database-level scope, or the same table and a table-level
# scope, or equal partition names, or one a '/'-prefix of the other. The type/level pair must be
# one of `conflict_keys()` (hive/lock_rules.py), passed as a parameter.
_BLOCKER = """
    (ex.tbl_name IS NULL OR r.tbl_name IS NULL OR (ex.tbl_name = r.tbl_name AND (
        ex.part_name IS NULL OR r.part_name IS NULL OR ex.part_name = r.part_name
        OR starts_with(r.part_name, ex.part_name || '/') OR starts_with(ex.part_name, r.part_name || '/'))))
    AND (r.lock_type || {r_level} || ex.lock_type || ex.lock_level) = ANY({keys}::text[])
"""

# $1 consecutive ext ids, the first returned. Held until commit: requests get ext ids, and become
# visible, in id order. A statement of its own: ENQUEUE, sent after it, takes its snapshot once the row
# is held and so sees every request enqueued before. Folded into ENQUEUE, a statement that waited here
# for another enqueuer's commit would check against the snapshot it started with, without that
# enqueuer's requests (READ COMMITTED), and grant conflicting locks (tests/integration/test_group_commit.py).
ALLOCATE_LOCK_IDS = "UPDATE next_lock_id SET next = next + $1 WHERE id = 1 RETURNING next - $1"

# Insert requests (one row per component, a request's rows sharing its ext id $1) checked in one
# statement against every earlier request: those already in hive_locks and the earlier ones of this
# batch. Per request: all components ACQUIRED, or all WAITING with the first blocker on the component
# it blocks. Index: hive_locks_by_db.
ENQUEUE = f"""
WITH r AS (
    SELECT ext_id, int_id, db_name, tbl_name, part_name COLLATE "C" AS part_name, lock_type, operation, txn_id,
           lock_level, user_name, host, agent_info
    FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[],
                $9::text[], $11::text[], $12::text[], $13::text[])
        AS x(ext_id, int_id, db_name, tbl_name, part_name, lock_type, operation, txn_id, lock_level, user_name,
             host, agent_info)
), blocker AS (
    -- Per component, the first conflicting earlier component in hive_locks (index order), else in the batch.
    SELECT DISTINCT ON (r.ext_id) r.ext_id, r.int_id, ex.ext_id AS b_ext, ex.int_id AS b_int
    FROM r CROSS JOIN LATERAL (
        (SELECT ex.ext_id, ex.int_id FROM hive_locks ex
         WHERE ex.db_name = r.db_name AND ex.ext_id < r.ext_id AND (r.txn_id = 0 OR ex.txn_id <> r.txn_id)
           AND {_BLOCKER.format(r_level="r.lock_level", keys="$10")}
         ORDER BY ex.ext_id, ex.int_id LIMIT 1)
        UNION ALL
        (SELECT ex.ext_id, ex.int_id FROM r AS ex
         WHERE ex.db_name = r.db_name AND ex.ext_id < r.ext_id AND (r.txn_id = 0 OR ex.txn_id <> r.txn_id)
           AND {_BLOCKER.format(r_level="r.lock_level", keys="$10")}
         ORDER BY ex.ext_id, ex.int_id LIMIT 1)
    ) ex
    ORDER BY r.ext_id, ex.ext_id, ex.int_id
)
INSERT INTO hive_locks (ext_id, int_id, txn_id, db_name, tbl_name, part_name, state, lock_type, operation,
                        last_heartbeat, acquired_at, user_name, host, agent_info, blocked_by_ext_id, blocked_by_int_id)
SELECT r.ext_id, r.int_id, r.txn_id, r.db_name, r.tbl_name, r.part_name,
       CASE WHEN b.b_ext IS NULL THEN 'a' ELSE 'w' END, r.lock_type, r.operation,
       CASE WHEN r.txn_id = 0 THEN statement_timestamp() END,
       CASE WHEN b.b_ext IS NULL THEN statement_timestamp() END,
       r.user_name, r.host, r.agent_info,
       CASE WHEN b.int_id = r.int_id THEN b.b_ext END, CASE WHEN b.int_id = r.int_id THEN b.b_int END
FROM r LEFT JOIN blocker b ON b.ext_id = r.ext_id
ORDER BY r.ext_id, r.int_id
RETURNING ext_id, int_id, state, blocked_by_ext_id, blocked_by_int_id
"""

# Locks one request's rows (CheckLock, Unlock): its state cannot change under the caller.
SELECT_REQUEST_FOR_UPDATE = """
SELECT int_id, txn_id, state, db_name, tbl_name, part_name, lock_type
FROM hive_locks WHERE ext_id = $1 ORDER BY int_id FOR UPDATE
"""

TXN_OF_REQUEST = "SELECT txn_id FROM hive_locks WHERE ext_id = $1 LIMIT 1"

# The first earlier component blocking any component of request $1 (keys: $2).
FIRST_BLOCKER = f"""
SELECT r.int_id, ex.ext_id AS b_ext, ex.int_id AS b_int
FROM hive_locks r JOIN hive_locks ex ON ex.db_name = r.db_name AND ex.ext_id < r.ext_id
WHERE r.ext_id = $1 AND (r.txn_id = 0 OR ex.txn_id <> r.txn_id)
  AND {_BLOCKER.format(r_level="r.lock_level", keys="$2")}
ORDER BY ex.ext_id, ex.int_id
LIMIT 1
"""

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

# The databases among $1 that exist (a lock must name an existing object); index: dbs.name unique.
EXISTING_DATABASES = "SELECT name FROM dbs WHERE name = ANY($1::text[])"

# Lock components by state ('a' acquired, 'w' waiting), for metrics and the gateway's database probe;
# a scan of hive_locks, which holds only live locks.
COUNT_LOCKS_BY_STATE = "SELECT state, count(*) AS count FROM hive_locks GROUP BY state"

# Who took each lock request (the authorization of check, heartbeat and unlock: gateway/auth.py).
LOCK_OWNERS = "SELECT DISTINCT ext_id, user_name FROM hive_locks WHERE ext_id = ANY($1::bigint[])"
