"""Query text for transactions and write ids (Hive's TxnHandler tables).

Locks: opening txns locks the next_txn_id row (ids are handed out in order); commit and abort
lock the txn's row FOR UPDATE; writers and write-id allocation lock it FOR SHARE, so a txn cannot
commit or be aborted while one of its writes is half done. Allocation locks next_write_id's row.
"""

from store.sql.events import append_one_event, append_row_events

# -- open, allocate, commit: server-side functions (store/schema/0007_txn_functions.sql) ---------
# Each alone, for a caller's transaction (its events appended last by Database.transact), and as a
# *_LOGGED statement that appends the function's event in the same statement: the whole RPC in one
# round trip, committed by itself. The event's type is the last parameter.

OPEN_TXNS = "SELECT first_txn_id, last_txn_id, message FROM open_txns($1, $2::smallint, $3, $4, $5)"
OPEN_TXNS_LOGGED = f"""
SELECT o.first_txn_id, o.last_txn_id, {append_one_event("$6", "o.message")} AS first_event_id
FROM open_txns($1, $2::smallint, $3, $4, $5) AS o
"""

COMMIT_TXN = "SELECT prior_state, message, write_conflict FROM commit_txn($1)"
# The tables a commit made writes visible in (its event's write ids; '' for a table dropped since):
# the committing gateway's reads of them wait for the event (store/cache/facade.py ended_txn).
# Its JSON text, decoded by the gateway only when not empty (cheaper for PostgreSQL than arrays of it).
_WRITTEN_TABLES = "(c.message->'write_ids')::text AS written"
COMMIT_TXN_LOGGED = f"""
SELECT c.prior_state, c.write_conflict, {_WRITTEN_TABLES},
       {append_one_event("$2", "c.message", txn_id="$1")} AS first_event_id
FROM commit_txn($1) AS c
"""

ALLOCATE_WRITE_IDS = """
SELECT refused_txn, refused_state, txn_ids, write_ids, message FROM allocate_write_ids($1, $2::bigint[])
"""
# By table name: the latest version, locked FOR SHARE, then its write ids; found_table_id NULL: none.
ALLOCATE_TABLE_WRITE_IDS_LOGGED = f"""
SELECT a.found_table_id, a.table_type, a.transactional, a.relocks_exhausted, a.refused_txn, a.refused_state,
       a.txn_ids, a.write_ids,
       {append_one_event("$4", "a.message", db_name="$1", tbl_name="$2", table_id="a.found_table_id")}
           AS first_event_id
FROM allocate_table_write_ids($1, $2, $3::bigint[]) AS a
"""

# -- the same for a batch of calls (store/group_commit.py) ---------------------------------------
# One statement: the function once per call, in call order (a LATERAL call per row of the unnest),
# each seeing the ones before it, then one event per call that changed something, appended last.
# Rows come back in call order; `logged` says which took the next event id (append_row_events).

OPEN_TXNS_BATCH_LOGGED = f"""
WITH o AS MATERIALIZED (
    SELECT r.ord, f.first_txn_id, f.last_txn_id, f.message
    FROM unnest($1::integer[], $2::text[], $3::text[], $4::text[], $6::smallint[])
         WITH ORDINALITY AS r(n, who, from_host, agent, kind, ord)
    CROSS JOIN LATERAL open_txns(r.n, r.kind, r.who, r.from_host, r.agent) AS f
)
SELECT o.first_txn_id, o.last_txn_id, o.message IS NOT NULL AS logged,
       {append_row_events("o", "$5", "o.message")} AS first_event_id
FROM o ORDER BY o.ord
"""

COMMIT_TXNS_LOGGED = f"""
WITH c AS MATERIALIZED (
    SELECT r.ord, r.txn_id, f.prior_state, f.message, f.write_conflict
    FROM unnest($1::bigint[]) WITH ORDINALITY AS r(txn_id, ord)
    CROSS JOIN LATERAL commit_txn(r.txn_id) AS f
)
SELECT c.prior_state, c.write_conflict, c.message IS NOT NULL AS logged, {_WRITTEN_TABLES},
       {append_row_events("c", "$2", "c.message", txn_id="c.txn_id")} AS first_event_id
FROM c ORDER BY c.ord
"""

# Call i's txns are the elements of $3 whose $4 is i (PostgreSQL has no arrays of arrays of any length).
ALLOCATE_TABLE_WRITE_IDS_BATCH_LOGGED = f"""
WITH a AS MATERIALIZED (
    SELECT r.ord, r.db, r.tbl, f.*
    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS r(db, tbl, ord)
    CROSS JOIN LATERAL allocate_table_write_ids(
        r.db, r.tbl,
        ARRAY(SELECT w.txn_id FROM unnest($3::bigint[], $4::bigint[]) AS w(txn_id, call) WHERE w.call = r.ord
              ORDER BY w.txn_id)) AS f
)
SELECT a.found_table_id, a.table_type, a.transactional, a.relocks_exhausted, a.refused_txn, a.refused_state,
       a.txn_ids, a.write_ids, a.message IS NOT NULL AS logged,
       {append_row_events("a", "$5", "a.message", db_name="a.db", tbl_name="a.tbl", table_id="a.found_table_id")}
           AS first_event_id
FROM a ORDER BY a.ord
"""

COUNT_OPEN_TXNS = "SELECT count(*) FROM txns WHERE state = 'o'"

# -- state ------------------------------------------------------------------------------------
SELECT_TXNS_FOR_UPDATE = "SELECT txn_id, state FROM txns WHERE txn_id = ANY($1::bigint[]) ORDER BY txn_id FOR UPDATE"
SELECT_TXNS_FOR_SHARE = "SELECT txn_id, state FROM txns WHERE txn_id = ANY($1::bigint[]) ORDER BY txn_id FOR SHARE"
SELECT_TXN_STATES = "SELECT txn_id, state FROM txns WHERE txn_id = ANY($1::bigint[])"

# What each txn wrote: [{table_id, db_name, table_name, write_id}], the write_ids of its COMMIT_TXN or ABORT_TXN.
TXNS_WRITE_IDS = "SELECT t.txn_id, txn_write_ids(t.txn_id) AS write_ids FROM unnest($1::bigint[]) AS t(txn_id)"

MARK_ABORTED = "UPDATE txns SET state = 'a', finished_at = clock_timestamp() WHERE txn_id = ANY($1::bigint[])"
DELETE_MIN_HISTORY = "DELETE FROM min_history_level WHERE txn_id = ANY($1::bigint[])"

# -- discarding the versions an aborted txn wrote ($1 table ids, $2 write ids, paired) ---------
DISCARD_CREATED_PARTITIONS = """
DELETE FROM partitions p USING unnest($1::bigint[], $2::bigint[]) AS w(table_id, write_id)
WHERE p.table_id = w.table_id AND p.created_wid = w.write_id
RETURNING p.table_id, p.part_name, p.created_wid, p.born_wid IS NOT DISTINCT FROM p.created_wid AS added
"""
RESTORE_DROPPED_PARTITIONS = """
UPDATE partitions p SET dropped_wid = NULL FROM unnest($1::bigint[], $2::bigint[]) AS w(table_id, write_id)
WHERE p.table_id = w.table_id AND p.dropped_wid = w.write_id
"""
DISCARD_CREATED_TABLE_VERSIONS = """
DELETE FROM tbls t USING unnest($1::bigint[], $2::bigint[]) AS w(table_id, write_id)
WHERE t.table_id = w.table_id AND t.created_wid = w.write_id
"""
RESTORE_DROPPED_TABLE_VERSIONS = """
UPDATE tbls t SET dropped_wid = NULL FROM unnest($1::bigint[], $2::bigint[]) AS w(table_id, write_id)
WHERE t.table_id = w.table_id AND t.dropped_wid = w.write_id
"""

# -- heartbeat ---------------------------------------------------------------------------------
HEARTBEAT_TXNS = """
UPDATE txns SET last_heartbeat = clock_timestamp(), heartbeat_count = heartbeat_count + 1
WHERE txn_id = ANY($1::bigint[]) AND state = 'o'
RETURNING txn_id
"""

# -- snapshots (index: txns_not_committed) ----------------------------------------------------
TXN_HIGH_WATERMARK = "SELECT next - 1 FROM next_txn_id WHERE id = 1"
NOT_COMMITTED_TXNS = "SELECT txn_id, state, txn_type FROM txns WHERE state <> 'c' AND txn_id <= $1 ORDER BY txn_id"

_SHOW_TXN_COLUMNS = """
SELECT txn_id, state, txn_type, (extract(epoch FROM started_at) * 1000)::bigint AS started_ms,
       (extract(epoch FROM last_heartbeat) * 1000)::bigint AS heartbeat_ms, user_name, host, agent_info
"""
SHOW_TRANSACTIONS = _SHOW_TXN_COLUMNS + "FROM txns WHERE state <> 'c' ORDER BY txn_id LIMIT $1"
# The same, in one state ('o', 'a' or 'c'); a scan of txns, as above (it holds only recent txns).
SHOW_TRANSACTIONS_IN_STATE = _SHOW_TXN_COLUMNS + "FROM txns WHERE state = $1 ORDER BY txn_id LIMIT $2"

# -- write ids (index: txn_to_write_id primary key / unique (txn_id, table_id)) ---------------
WRITE_ID_OF_TXN = "SELECT write_id FROM txn_to_write_id WHERE txn_id = $1 AND table_id = $2"
# The txn a table's write id was allocated to, and its state (NULL once the txn's row is cleaned away).
TXN_OF_WRITE_ID = """
SELECT w.txn_id, t.state FROM txn_to_write_id w LEFT JOIN txns t ON t.txn_id = w.txn_id
WHERE w.table_id = $1 AND w.write_id = $2
"""

# The rows of table $1 that a snapshot of txns (high watermark $2, open and aborted txns $3) needs: every
# row of a txn it does not see as committed (above $2 or in $3: the write id exceptions), and the largest
# write id of a txn at or below $2 (the write id high watermark). Not the table's other rows, which can be
# as many as the txns since the cleaner last ran (hive-reference §3; hive.writeids.build_valid_write_id_list).
# Each part probes an index rather than scanning the table's rows, whatever the statistics say: a LATERAL
# probe with LIMIT 1 (as in 0008) per txn in $3, unique (txn_id, table_id) from $2 up for the txns above it
# (`table_id + 0` keeps the planner off the primary key, whose every row of the table it would filter),
# (table_id, write_id) backwards for the largest write id.
TABLE_WRITE_ID_ROWS = """
SELECT tw.txn_id, tw.write_id
FROM unnest($3::bigint[]) AS x(txn_id)
CROSS JOIN LATERAL (SELECT txn_id, write_id FROM txn_to_write_id
                    WHERE txn_id = x.txn_id AND table_id = $1 LIMIT 1) AS tw
UNION
SELECT txn_id, write_id FROM txn_to_write_id WHERE txn_id > $2 AND table_id + 0 = $1
UNION
(SELECT txn_id, write_id FROM txn_to_write_id WHERE table_id = $1 AND txn_id <= $2 ORDER BY write_id DESC LIMIT 1)
"""
# The txn that holds write id $3 of the table named $1.$2 (its newest version with the name first:
# Hive's TXN_TO_WRITE_ID is keyed by name). Index: tbls_by_name, then txn_to_write_id's primary key.
TXN_OF_WRITE_ID_BY_NAME = """
SELECT w.txn_id FROM tbls t JOIN txn_to_write_id w ON w.table_id = t.table_id AND w.write_id = $3
WHERE t.db_name = $1 AND t.tbl_name = $2
ORDER BY t.version_id DESC LIMIT 1
"""
TABLE_WRITE_ID_STATE = "SELECT next, cleaned_hwm, gc_watermark FROM next_write_id WHERE table_id = $1"
T2W_CLEANED_BELOW = "SELECT t2w_cleaned_below FROM txn_housekeeping WHERE id = 1"
# What housekeeping forgot: committed txns below t2w_cleaned_below, empty aborted ones up to aborted_forgotten_upto.
FORGOTTEN_MARKS = "SELECT t2w_cleaned_below, aborted_forgotten_upto FROM txn_housekeeping WHERE id = 1"

# Write-write conflicts of txn $3: a version of these partitions written by another txn that is
# still open, or that committed after $3 started (commit_id >= $3: first committer wins).
#
# Each statement starts from the versions it names (a few rows, by index) and probes the write id's
# txn, and that txn's state, by key (LATERAL ... LIMIT 1 keeps the planner from reordering). Written
# as plain joins, a plan could start from the txns instead: statistics gathered while no txn was open
# make "state = 'o'" look like a row or two, and with a thousand txns open (a streaming writer's
# batch) such a plan scanned txn_to_write_id once per open txn: 11 to 13 ms a check (auto_explain,
# docs/benchmarks.md), 2,009 buffers where the probes read 124 (tests/integration/test_txn_function_plans.py).
def _writer_of(version: str, write_id_matches: str, me: str, state: str) -> str:
    """The txn other than `me` whose write id of the version's table `write_id_matches`, if its state
    is `state` (a condition on x.state and x.commit_id): one row or none."""
    return f"""LATERAL (
    SELECT tw.txn_id, x.state
    FROM txn_to_write_id tw
    CROSS JOIN LATERAL (SELECT state, commit_id FROM txns WHERE txn_id = tw.txn_id LIMIT 1) AS x
    WHERE tw.table_id = {version}.table_id AND tw.write_id {write_id_matches} AND tw.txn_id <> {me}
      AND {state}
    LIMIT 1
) AS w"""


_CONFLICTING = "(x.state = 'o' OR (x.state = 'c' AND x.commit_id >= {me}))"

PARTITION_WRITERS_IN_FLIGHT = f"""
SELECT p.part_name, w.txn_id, w.state
FROM partitions p
CROSS JOIN {_writer_of("p", "IN (p.created_wid, p.dropped_wid)", "$3", _CONFLICTING.format(me="$3"))}
WHERE p.table_id = $1 AND p.part_name = ANY($2::text[])
LIMIT 1
"""

# Of these partitions (table $1, names $2), one whose latest version an open txn other than $3 created
# rather than replaced (no version of the name ends at its write id): it exists only if that txn commits.
PARTITION_CREATED_IN_FLIGHT = f"""
SELECT p.part_name, w.txn_id
FROM partitions p
CROSS JOIN {_writer_of("p", "= p.created_wid", "$3", "x.state = 'o'")}
WHERE p.table_id = $1 AND p.part_name = ANY($2::text[]) AND p.dropped_wid IS NULL
  AND NOT EXISTS (SELECT 1 FROM partitions q
                  WHERE q.table_id = p.table_id AND q.part_name = p.part_name AND q.dropped_wid = p.created_wid)
LIMIT 1
"""

TABLE_WRITERS_IN_FLIGHT = f"""
SELECT w.txn_id, w.state
FROM tbls t
CROSS JOIN {_writer_of("t", "IN (t.created_wid, t.dropped_wid)", "$2", _CONFLICTING.format(me="$2"))}
WHERE t.table_id = $1
LIMIT 1
"""

# A name an open txn renamed away from (or into) is reserved until that txn ends.
NAME_WRITERS_IN_FLIGHT = f"""
SELECT w.txn_id, w.state
FROM tbls t
CROSS JOIN {_writer_of("t", "IN (t.created_wid, t.dropped_wid)", "$3", _CONFLICTING.format(me="$3"))}
WHERE t.db_name = $1 AND t.tbl_name = $2
LIMIT 1
"""

# Who opened each txn (the authorization of commit, abort and heartbeat: gateway/auth.py).
TXN_OWNERS = "SELECT txn_id, user_name FROM txns WHERE txn_id = ANY($1::bigint[])"

# What aborted txns still hold for operators (Hive 4's AcidMetricService: num_aborted_transactions,
# oldest_aborted_txn_age_in_sec): aborted txns, the age of the oldest, and the write ids they keep
# listed in every snapshot of their tables until the Cleaner's abort clean-up ends them.
# Index: txns_not_committed; txn_to_write_id (txn_id, table_id) for the write ids.
ABORTED_TXN_STATS = """
SELECT count(*) AS aborted,
       coalesce(extract(epoch FROM clock_timestamp() - min(x.finished_at)), 0)::float8 AS oldest_s,
       (SELECT count(*) FROM txn_to_write_id tw JOIN txns a ON a.txn_id = tw.txn_id AND a.state = 'a') AS write_ids
FROM txns x WHERE x.state = 'a'
"""

# -- write ids of a table name no table has yet (store/schema/0029) -------------------------------

# Serialises a reservation under a name with the creation of a table of that name: the two-key form
# ("msgw", the name's hash), whose key space is not the one-key form's of the other advisory locks.
LOCK_TABLE_NAME = "SELECT pg_advisory_xact_lock(1836279671, hashtext($1 || '.' || $2))"

TXN_STATES_FOR_SHARE = """
SELECT txn_id, CASE WHEN state = 'o' AND txn_type = 2 THEN 'r' ELSE state END AS state
FROM txns WHERE txn_id = ANY($1::bigint[]) ORDER BY txn_id FOR SHARE
"""

RESERVED_WRITE_IDS = """
SELECT txn_id, write_id FROM write_id_reservations WHERE db_name = $1 AND tbl_name = $2 ORDER BY write_id
"""

INSERT_RESERVATIONS = """
INSERT INTO write_id_reservations (db_name, tbl_name, txn_id, write_id)
SELECT $1, $2, x.txn_id, $4 + x.ord - 1 FROM unnest($3::bigint[]) WITH ORDINALITY AS x(txn_id, ord)
"""

TAKE_RESERVATIONS = """
DELETE FROM write_id_reservations WHERE db_name = $1 AND tbl_name = $2 RETURNING txn_id, write_id
"""

# Index: write_id_reservations' primary key (db_name first).
DELETE_RESERVATIONS_OF_DATABASE = "DELETE FROM write_id_reservations WHERE db_name = $1"

BIND_RESERVATIONS = """
WITH bound AS (
    INSERT INTO txn_to_write_id (txn_id, table_id, write_id)
    SELECT x.txn_id, $1, x.write_id FROM unnest($2::bigint[], $3::bigint[]) AS x(txn_id, write_id)
    RETURNING write_id
)
INSERT INTO next_write_id (table_id, next) SELECT $1, max(write_id) + 1 FROM bound
"""

# -- seeding (Hive's seed_write_id and seed_txn_id, for MSCK REPAIR of a transactional table's files and
# replication's bootstrap) --------------------------------------------------------------------------
# The largest write id allocated for table $1; NULL: none. Index: next_write_id's primary key.
MAX_ALLOCATED_WRITE_ID = "SELECT next - 1 FROM next_write_id WHERE table_id = $1"
# The largest write id reserved under a name no table has yet (store/schema/0029).
MAX_RESERVED_WRITE_ID = "SELECT max(write_id) FROM write_id_reservations WHERE db_name = $1 AND tbl_name = $2"
# Table $1's first write id will be $2 + 1; no row when the table has had write ids (its row exists).
SEED_WRITE_ID = "INSERT INTO next_write_id (table_id, next) VALUES ($1, $2 + 1) ON CONFLICT DO NOTHING RETURNING next"
# The next txn id becomes $1, unless txns up to $1 were opened already: then the current next, unchanged.
# The row lock orders it with open_txns (which locks the same row).
SEED_TXN_ID = """
WITH cur AS (SELECT next FROM next_txn_id WHERE id = 1 FOR UPDATE)
UPDATE next_txn_id n SET next = GREATEST(cur.next, $1) FROM cur WHERE n.id = 1
RETURNING cur.next AS before
"""
