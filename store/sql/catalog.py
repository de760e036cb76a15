"""Query text for databases, tables and partitions. Values are always $n parameters.

Row locks: table writes lock the table's latest version row (FOR UPDATE for DDL on the table,
FOR SHARE for partition writes so they run side by side but never beside a drop or rename).
A table row's foreign key to dbs takes KEY SHARE on the database row, so DROP DATABASE and
CREATE TABLE in that database serialise. A locking read that waited may find its row replaced
(store/catalog.py `_lock_latest`): the `CURRENT_*` queries look again in a new statement.
"""

# -- databases (index: dbs.name unique) ------------------------------------------------------
INSERT_DATABASE = """
INSERT INTO dbs (name, description, location, owner, parameters, create_time, owner_type)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (name) DO NOTHING
RETURNING db_id
"""

SELECT_DATABASE = """
SELECT name, description, location, owner, parameters, create_time, owner_type FROM dbs WHERE name = $1
"""

# Locks the database row: alter/drop serialise with each other and with CREATE TABLE (FK).
SELECT_DATABASE_FOR_UPDATE = SELECT_DATABASE + " FOR UPDATE"

# A create of a table in the database, or a rename into it, takes its row in KEY SHARE before writing
# the table row: it waits for a DROP DATABASE that holds the row, then finds none (a clean NotFound, not
# the foreign key's failure at the insert); such writes do not block one another.
SELECT_DATABASE_FOR_KEY_SHARE = SELECT_DATABASE + " FOR KEY SHARE"

LIST_DATABASES = "SELECT name FROM dbs ORDER BY name"

UPDATE_DATABASE = """
UPDATE dbs SET description = $2, location = $3, owner = $4, parameters = $5, owner_type = $6 WHERE name = $1
"""

DELETE_DATABASE = "DELETE FROM dbs WHERE name = $1"

# -- tables (index: tbls_latest_name, tbls_latest_id) -----------------------------------------
_TABLE_COLUMNS = "version_id, table_id, db_name, tbl_name, table_type, transactional, body, create_time, created_wid"

INSERT_TABLE = """
INSERT INTO tbls (table_id, db_name, tbl_name, table_type, transactional, body, create_time)
VALUES (nextval('table_id_seq'), $1, $2, $3, $4, $5, $6)
ON CONFLICT (db_name, tbl_name) WHERE dropped_wid IS NULL DO NOTHING
RETURNING table_id
"""

SELECT_LATEST_TABLE = f"""
SELECT {_TABLE_COLUMNS} FROM tbls WHERE db_name = $1 AND tbl_name = $2 AND dropped_wid IS NULL
"""

SELECT_LATEST_TABLE_FOR_UPDATE = SELECT_LATEST_TABLE + " FOR UPDATE"
SELECT_LATEST_TABLE_FOR_SHARE = SELECT_LATEST_TABLE + " FOR SHARE"

# By id (a commit's keyValue names its table so: store/catalog.py commit_with_table_parameter).
SELECT_LATEST_TABLE_BY_ID_FOR_UPDATE = f"""
SELECT {_TABLE_COLUMNS} FROM tbls WHERE table_id = $1 AND dropped_wid IS NULL FOR UPDATE
"""

# $2: one table type (Hive's get_tables_by_type), or NULL for every type.
LIST_TABLES = """
SELECT tbl_name FROM tbls WHERE db_name = $1 AND dropped_wid IS NULL AND ($2::text IS NULL OR table_type = $2)
ORDER BY tbl_name
"""

# Hive's get_table_meta: every latest table of every database, without its definition; $1 the table
# types to list, or NULL for every type. The name patterns are matched by the caller.
LIST_TABLE_SUMMARIES = """
SELECT db_name, tbl_name, table_type, body->'parameters'->>'comment' AS comment
FROM tbls WHERE dropped_wid IS NULL AND ($1::text[] IS NULL OR table_type = ANY($1::text[]))
ORDER BY db_name, tbl_name
"""

# Hive's get_table_names_by_filter: {filter} is hive/table_filter.py's predicate over `fields` (the
# owner, the last access time, then the table parameters named in $2, in that order); its parameters
# start at $4. Name order; LIMIT $3 (NULL: every table).
SELECT_TABLE_NAMES_BY_FILTER = """
SELECT tbl_name FROM (
    SELECT tbl_name,
           ARRAY[body->>'owner', coalesce(body->>'last_access_time', '0')]
           || ARRAY(SELECT body->'parameters'->>key FROM unnest($2::text[]) WITH ORDINALITY AS named(key, i) ORDER BY i)
           AS fields
    FROM tbls WHERE db_name = $1 AND dropped_wid IS NULL
) AS t
WHERE {filter}
ORDER BY tbl_name
LIMIT $3
"""

LIST_LATEST_TABLES_FOR_UPDATE = f"""
SELECT {_TABLE_COLUMNS} FROM tbls WHERE db_name = $1 AND dropped_wid IS NULL ORDER BY tbl_name FOR UPDATE
"""

# The latest versions as a new statement sees them, to compare with what a waiting lock returned.
CURRENT_TABLE_VERSION = "SELECT version_id FROM tbls WHERE db_name = $1 AND tbl_name = $2 AND dropped_wid IS NULL"
CURRENT_TABLE_VERSIONS_OF_DATABASE = "SELECT version_id FROM tbls WHERE db_name = $1 AND dropped_wid IS NULL"

# Whether a table has this id (its latest version; a drop deletes every version). Index: tbls_latest_id.
TABLE_ID_EXISTS = "SELECT 1 FROM tbls WHERE table_id = $1 AND dropped_wid IS NULL"

UPDATE_LATEST_TABLE_IN_PLACE = """
UPDATE tbls SET db_name = $2, tbl_name = $3, table_type = $4, transactional = $5, body = $6
WHERE table_id = $1 AND dropped_wid IS NULL
"""

DELETE_TABLE_VERSIONS = "DELETE FROM tbls WHERE table_id = $1"
# Every version of the table's partitions goes; answered: where its latest partitions lived outside the
# table's directory $2 (neither it nor below it), what a drop's deleteData deletes besides that directory.
DELETE_TABLE_PARTITIONS = """
WITH gone AS (
    DELETE FROM partitions WHERE table_id = $1 RETURNING dropped_wid, body->'sd'->>'location' AS location
)
SELECT DISTINCT location FROM gone
WHERE dropped_wid IS NULL AND location <> ''
  AND NOT ($2 <> '' AND (location = $2 OR starts_with(location, rtrim($2, '/') || '/')))
ORDER BY location
"""

# -- partitions (index: partitions_latest on (table_id, part_name) of latest versions) ---------
_PARTITION_COLUMNS = "part_name, part_values, body, create_time, created_wid"

# $2: jsonb array of {part_name, part_values, body}. Existing names are skipped (the caller
# compares the returned names with what it asked for to decide all-or-nothing). Each begins a new
# incarnation of its name (born_wid: store/schema/0028).
_INSERT_PARTITIONS = """
INSERT INTO partitions (table_id, part_name, part_values, body, create_time, created_wid, born_wid)
SELECT $1, x.part_name, x.part_values, x.body, coalesce(x.create_time, $3), $4, {born}
FROM jsonb_to_recordset($2::jsonb) AS x(part_name text, part_values text[], body jsonb, create_time bigint)
ON CONFLICT (table_id, part_name) WHERE dropped_wid IS NULL DO NOTHING
RETURNING part_name
"""
INSERT_PARTITIONS = _INSERT_PARTITIONS.format(born="$4")
# An altered partition's new versions, under write id $4: each continues the incarnation of the version
# the write ended (END_LATEST_PARTITION_VERSIONS, just before).
INSERT_ALTERED_PARTITION_VERSIONS = _INSERT_PARTITIONS.format(born="""(
    SELECT o.born_wid FROM partitions o
    WHERE o.table_id = $1 AND o.part_name = x.part_name AND o.dropped_wid = $4
    ORDER BY o.version_id DESC LIMIT 1)""")

SELECT_LATEST_PARTITIONS_BY_NAMES = f"""
SELECT {_PARTITION_COLUMNS} FROM partitions
WHERE table_id = $1 AND part_name = ANY($2::text[]) AND dropped_wid IS NULL
"""

# Keyset pagination in byte order of names (part_name is COLLATE "C"): stable across pages.
LIST_LATEST_PARTITION_NAMES = """
SELECT part_name FROM partitions
WHERE table_id = $1 AND dropped_wid IS NULL AND part_name > $2
ORDER BY part_name
LIMIT $3
"""

UPDATE_PARTITIONS_IN_PLACE = """
UPDATE partitions AS p SET body = x.body
FROM jsonb_to_recordset($2::jsonb) AS x(part_name text, body jsonb)
WHERE p.table_id = $1 AND p.part_name = x.part_name AND p.dropped_wid IS NULL
RETURNING p.part_name
"""

DELETE_LATEST_PARTITIONS = """
DELETE FROM partitions WHERE table_id = $1 AND part_name = ANY($2::text[]) AND dropped_wid IS NULL
RETURNING part_name, body->'sd'->>'location' AS location
"""

# DELETE_LATEST_PARTITIONS for a drop that answers the partitions whole, as it found them (Thrift's
# drop_partitions_req); the other only what a drop needs (its directories).
DELETE_LATEST_PARTITIONS_WHOLE = f"""
DELETE FROM partitions WHERE table_id = $1 AND part_name = ANY($2::text[]) AND dropped_wid IS NULL
RETURNING {_PARTITION_COLUMNS}, body->'sd'->>'location' AS location
"""

COUNT_LATEST_PARTITIONS = "SELECT count(*) FROM partitions WHERE table_id = $1 AND dropped_wid IS NULL"

# -- versions of transactional tables (created_wid / dropped_wid stamped with write ids) -------
SELECT_TABLE_VERSIONS_BY_NAME = f"""
SELECT {_TABLE_COLUMNS}, dropped_wid FROM tbls WHERE db_name = $1 AND tbl_name = $2 ORDER BY version_id DESC
"""

INSERT_TABLE_VERSION = """
INSERT INTO tbls (table_id, db_name, tbl_name, table_type, transactional, body, create_time, created_wid)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
"""

# The latest version gets its end stamped with the writer's write id ($2); it stays for older snapshots.
END_LATEST_TABLE_VERSION = "UPDATE tbls SET dropped_wid = $2 WHERE table_id = $1 AND dropped_wid IS NULL"

SELECT_LATEST_PARTITIONS_BY_NAMES_FOR_UPDATE = f"""
SELECT version_id, {_PARTITION_COLUMNS} FROM partitions
WHERE table_id = $1 AND part_name = ANY($2::text[]) AND dropped_wid IS NULL
FOR UPDATE
"""
# A table's current partition at or under a name's leading part (an exchange's specification of the first
# keys: `ds=1` is over `ds=1/hr=2`), if it has one; escaped names hold no bare '/' or '=' of a value.
FIRST_PARTITION_UNDER = """
SELECT part_name FROM partitions
WHERE table_id = $1 AND dropped_wid IS NULL AND (part_name = $2 OR starts_with(part_name, $2 || '/'))
ORDER BY part_name LIMIT 1
"""
CURRENT_PARTITION_VERSIONS = """
SELECT version_id FROM partitions WHERE table_id = $1 AND part_name = ANY($2::text[]) AND dropped_wid IS NULL
"""

# Of the named partitions, those with a version write id $3 ended (a drop or an alter of a version it did
# not create): its txn's abort brings them back (index: partitions_dropped_wid).
PARTITIONS_ENDED_BY_WRITE = """
SELECT DISTINCT part_name FROM partitions WHERE table_id = $1 AND part_name = ANY($2::text[]) AND dropped_wid = $3
"""

END_LATEST_PARTITION_VERSIONS = """
UPDATE partitions SET dropped_wid = $3
WHERE table_id = $1 AND part_name = ANY($2::text[]) AND dropped_wid IS NULL AND created_wid <> $3
RETURNING part_name, body->'sd'->>'location' AS location
"""

DELETE_OWN_PARTITION_VERSIONS = """
DELETE FROM partitions
WHERE table_id = $1 AND part_name = ANY($2::text[]) AND dropped_wid IS NULL AND created_wid = $3
RETURNING part_name, body->'sd'->>'location' AS location, born_wid IS NOT DISTINCT FROM created_wid AS added
"""

UPDATE_OWN_PARTITION_VERSIONS = """
UPDATE partitions AS p SET body = x.body
FROM jsonb_to_recordset($2::jsonb) AS x(part_name text, body jsonb)
WHERE p.table_id = $1 AND p.part_name = x.part_name AND p.dropped_wid IS NULL AND p.created_wid = $3
RETURNING p.part_name
"""

# Visible to a snapshot (hwm $h, open/aborted exceptions $x, the reader's own write id $o): created
# by a write id committed in it, and not dropped by one. Write id 0 (non-transactional) is committed.
# The rule is owned by store/snapshot.py (`is_visible`, whose `sql_params` fill $h, $x, $o); this is its
# SQL form, kept equal to it by tests/e2e/test_visibility_rule.py. Change both or neither.
VISIBLE = """
(created_wid = {o} OR (created_wid <= {h} AND created_wid <> ALL({x}::bigint[])))
AND (dropped_wid IS NULL OR NOT (dropped_wid = {o} OR (dropped_wid <= {h} AND dropped_wid <> ALL({x}::bigint[]))))
"""

SELECT_VISIBLE_PARTITIONS_BY_NAMES = f"""
SELECT {_PARTITION_COLUMNS} FROM partitions
WHERE table_id = $1 AND part_name = ANY($2::text[]) AND {VISIBLE.format(h="$3", x="$4", o="$5")}
"""

LIST_VISIBLE_PARTITION_NAMES = f"""
SELECT part_name FROM partitions
WHERE table_id = $1 AND part_name > $2 AND {VISIBLE.format(h="$4", x="$5", o="$6")}
ORDER BY part_name
LIMIT $3
"""

# Partitions by filter: {filter} is the parameterised predicate of hive/partition_filter.py over
# part_values (its parameters start at $7 / $4). Name order, after the name $6 / $3 ('' from the
# first, a page token's otherwise); LIMIT $2 (one more than wanted, to detect "too many" or a next page).
SELECT_VISIBLE_PARTITIONS_BY_FILTER = f"""
SELECT {_PARTITION_COLUMNS} FROM partitions
WHERE table_id = $1 AND {VISIBLE.format(h="$3", x="$4", o="$5")} AND part_name > $6 AND ({{filter}})
ORDER BY part_name
LIMIT $2
"""

SELECT_LATEST_PARTITIONS_BY_FILTER = f"""
SELECT {_PARTITION_COLUMNS} FROM partitions
WHERE table_id = $1 AND dropped_wid IS NULL AND part_name > $3 AND ({{filter}})
ORDER BY part_name
LIMIT $2
"""

# Every partition a read sees, in name order, after $6 / $3, LIMIT $2 (one more than wanted).
SELECT_VISIBLE_PARTITIONS = SELECT_VISIBLE_PARTITIONS_BY_FILTER.format(filter="TRUE")
SELECT_LATEST_PARTITIONS = SELECT_LATEST_PARTITIONS_BY_FILTER.format(filter="TRUE")

# -- a large write's transaction (store/catalog.py allow_idle_for) ---------------------------
# Its idle limit raised by $1 ms for this transaction only (SET LOCAL); nothing when there is none (0).
EXTEND_IDLE_IN_TRANSACTION = """
SELECT set_config('idle_in_transaction_session_timeout', (setting::bigint + $1::bigint)::text, true)
FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout' AND setting <> '0'
"""
