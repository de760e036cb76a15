"""Query text for column statistics (store/column_stats.py). Rows are keyed by (table id, partition
name, column); the table's own statistics have partition name '' (index: the primary key)."""

from store.sql.catalog import VISIBLE

_COLUMNS = "part_name, column_name, column_type, kind, data, last_analyzed"

# $2: one JSON array of {"part_name", "column_name", "column_type", "kind", "data"}; a column's row is replaced.
UPSERT = """
INSERT INTO column_stats (table_id, part_name, column_name, column_type, kind, data, last_analyzed)
SELECT $1, s.part_name, s.column_name, s.column_type, s.kind, s.data, $3
FROM jsonb_to_recordset($2::jsonb) AS s(part_name text, column_name text, column_type text, kind text, data jsonb)
ON CONFLICT (table_id, part_name, column_name) DO UPDATE
SET column_type = EXCLUDED.column_type, kind = EXCLUDED.kind, data = EXCLUDED.data,
    last_analyzed = EXCLUDED.last_analyzed
"""

# A txn's write ($4 the txn): waits in column_stats_by_txn for its commit (store/schema/0023); the txn's
# own row of a column is replaced, keeping a drop's mark (store/schema/0025).
UPSERT_BY_TXN = """
INSERT INTO column_stats_by_txn (txn_id, table_id, part_name, column_name, column_type, kind, data, last_analyzed)
SELECT $4, $1, s.part_name, s.column_name, s.column_type, s.kind, s.data, $3
FROM jsonb_to_recordset($2::jsonb) AS s(part_name text, column_name text, column_type text, kind text, data jsonb)
ON CONFLICT (txn_id, table_id, part_name, column_name) DO UPDATE
SET column_type = EXCLUDED.column_type, kind = EXCLUDED.kind, data = EXCLUDED.data,
    last_analyzed = EXCLUDED.last_analyzed
"""
# The open txn whose drop or column change marked some of table $1's rows of partition $2 ('' its own), if
# any: the latest version of what they describe is that txn's, so a write without a txn waits for its
# commit (store/column_stats.py). Its txns row locked FOR SHARE: it neither commits nor aborts before the
# write is in; one that ended meanwhile is not open on the recheck. Indexes: the primary keys.
MARKING_OPEN_TXN = """
SELECT t.txn_id FROM column_stats s JOIN txns t ON t.txn_id = s.deleted_by_txn
WHERE s.table_id = $1 AND s.part_name = $2 AND t.state = 'o'
LIMIT 1
FOR SHARE OF t
"""
# The open txn that dropped partition $2 (table $1) and added it again: the writer of its latest version
# when that version began a new incarnation (store/schema/0028) and its write id ended a version written
# before it. Whether or not the old one had statistics (then they are marked, above).
REPLACING_OPEN_TXN = """
SELECT x.txn_id
FROM partitions p
JOIN txn_to_write_id tw ON tw.table_id = p.table_id AND tw.write_id = p.created_wid
CROSS JOIN LATERAL (SELECT txn_id, state FROM txns WHERE txn_id = tw.txn_id LIMIT 1 FOR SHARE) AS x
WHERE p.table_id = $1 AND p.part_name = $2 AND p.dropped_wid IS NULL AND p.born_wid = p.created_wid
  AND x.state = 'o'
  AND EXISTS (SELECT 1 FROM partitions q WHERE q.table_id = p.table_id AND q.part_name = p.part_name
              AND q.dropped_wid = p.created_wid AND q.created_wid < p.created_wid)
LIMIT 1
"""
# What a write under txn $4 merges into or overlays: the txn's own rows, else the committed ones but those
# its own drop or column change marked (they describe what the txn replaced).
SELECT_FOR_MERGE_BY_TXN = f"""
SELECT DISTINCT ON (column_name) {_COLUMNS} FROM (
    SELECT 0 AS pick, {_COLUMNS} FROM column_stats_by_txn
    WHERE txn_id = $4 AND table_id = $1 AND part_name = ANY($2::text[]) AND column_name = ANY($3::text[])
    UNION ALL
    SELECT 1, {_COLUMNS} FROM column_stats
    WHERE table_id = $1 AND part_name = ANY($2::text[]) AND column_name = ANY($3::text[])
      AND deleted_by_txn IS DISTINCT FROM $4
) AS rows
ORDER BY column_name, pick
"""
DELETE_ABORTED_BY_TXN = "DELETE FROM column_stats_by_txn WHERE txn_id = ANY($1::bigint[])"
# A drop under txn $3 of table $1's partitions $2 (store/schema/0025): the statistics other txns wrote for
# them go at its commit, its own at once (index: column_stats_by_txn_by_partition, the primary key).
MARK_WAITING_FOR_PARTITIONS = """
UPDATE column_stats_by_txn SET deleted_by_txn = $3
WHERE table_id = $1 AND part_name = ANY($2::text[]) AND txn_id <> $3
"""
DELETE_OWN_WAITING_FOR_PARTITIONS = """
DELETE FROM column_stats_by_txn WHERE txn_id = $3 AND table_id = $1 AND part_name = ANY($2::text[])
"""
# Every txn's, of partitions that exist nowhere (dropped without a txn, or by the txn that added them).
DELETE_WAITING_FOR_PARTITIONS = "DELETE FROM column_stats_by_txn WHERE table_id = $1 AND part_name = ANY($2::text[])"
UNMARK_WAITING_ABORTED = """
UPDATE column_stats_by_txn SET deleted_by_txn = NULL WHERE deleted_by_txn = ANY($1::bigint[])
"""
# Partitions a txn added, also again over ones it dropped, that exist nowhere now (its abort discarded them, or
# it dropped them again; $1 table ids, $2 names, $3 the write ids that added them, paired): the statistics
# waiting for any txn's commit that describe them, all but those the adding txn's drop marked (they describe
# the partition it dropped, which its abort brings back).
DELETE_WAITING_FOR_ADDS_GONE = """
DELETE FROM column_stats_by_txn s
USING unnest($1::bigint[], $2::text[], $3::bigint[]) AS g(table_id, part_name, write_id)
JOIN txn_to_write_id tw ON tw.table_id = g.table_id AND tw.write_id = g.write_id
WHERE s.table_id = g.table_id AND s.part_name = g.part_name AND s.deleted_by_txn IS DISTINCT FROM tw.txn_id
"""
# As DELETE_FOR_VANISHED_PARTITIONS below, of the statistics waiting for any txn's commit.
DELETE_WAITING_FOR_VANISHED_PARTITIONS = """
DELETE FROM column_stats_by_txn s USING unnest($1::bigint[], $2::text[]) AS g(table_id, part_name)
WHERE s.table_id = g.table_id AND s.part_name = g.part_name
  AND NOT EXISTS (SELECT 1 FROM partitions p
                  WHERE p.table_id = g.table_id AND p.part_name = g.part_name AND p.dropped_wid IS NULL)
"""

SELECT = f"""
SELECT {_COLUMNS} FROM column_stats
WHERE table_id = $1 AND part_name = ANY($2::text[]) AND column_name = ANY($3::text[])
"""

# What a reader with a ValidWriteIdList sees of table $1's statistics of partitions $2 ('' its own) and
# columns $3 ($4 high-water mark, $5 exceptions, $6 own write id: store/snapshot.py `sql_params`). Each row is
# a version (store/snapshot.py `STATISTICS`): a committed one created by write id 0, one waiting for its txn's
# commit by that txn's write id of the table; a row marked by a txn's drop ends at that txn's write id. Of a
# column's visible versions the newest (a waiting one over the committed one) is the answer. Indexes: the
# primary keys, txn_to_write_id's (txn_id, table_id); column_stats_by_txn_by_partition.
SELECT_IN_SNAPSHOT = f"""
SELECT DISTINCT ON (part_name, column_name) {_COLUMNS} FROM (
    SELECT s.part_name, s.column_name, s.column_type, s.kind, s.data, s.last_analyzed,
           0::bigint AS created_wid, d.write_id AS dropped_wid
    FROM column_stats s
    LEFT JOIN txn_to_write_id d ON d.txn_id = s.deleted_by_txn AND d.table_id = s.table_id
    WHERE s.table_id = $1 AND s.part_name = ANY($2::text[]) AND s.column_name = ANY($3::text[])
    UNION ALL
    SELECT s.part_name, s.column_name, s.column_type, s.kind, s.data, s.last_analyzed,
           w.write_id AS created_wid, d.write_id AS dropped_wid
    FROM column_stats_by_txn s
    JOIN txn_to_write_id w ON w.txn_id = s.txn_id AND w.table_id = s.table_id
    LEFT JOIN txn_to_write_id d ON d.txn_id = s.deleted_by_txn AND d.table_id = s.table_id
    WHERE s.table_id = $1 AND s.part_name = ANY($2::text[]) AND s.column_name = ANY($3::text[])
) AS versions
WHERE {VISIBLE.format(h="$4", x="$5", o="$6")}
ORDER BY part_name, column_name, created_wid DESC
"""

# A write reads the rows it merges into or overlays; the lock keeps a concurrent write from reading them meanwhile.
SELECT_FOR_UPDATE = SELECT + "FOR UPDATE\n"

# $3 NULL: every column's.
DELETE = """
DELETE FROM column_stats WHERE table_id = $1 AND part_name = $2 AND ($3::text IS NULL OR column_name = $3)
"""
# Hive 4's delete_column_statistics_req: of the partitions named $2 ('' the table's own; NULL every partition's),
# of the columns named $3 (NULL every column's); the columns whose statistics went.
DELETE_MANY = """
DELETE FROM column_stats
WHERE table_id = $1 AND ($2::text[] IS NULL AND part_name <> '' OR part_name = ANY($2::text[]))
  AND ($3::text[] IS NULL OR column_name = ANY($3::text[]))
RETURNING column_name
"""

# What goes with the objects they describe (store/catalog.py): a table, some of its partitions, columns
# its ALTER removed or retyped. Under a txn the rows are marked instead (store/schema/0022): its commit
# deletes them, its abort unmarks them.
DELETE_FOR_TABLE = "DELETE FROM column_stats WHERE table_id = $1"
DELETE_FOR_PARTITIONS = "DELETE FROM column_stats WHERE table_id = $1 AND part_name = ANY($2::text[])"
MARK_FOR_PARTITIONS = """
UPDATE column_stats SET deleted_by_txn = $3 WHERE table_id = $1 AND part_name = ANY($2::text[])
"""
UNMARK_ABORTED = "UPDATE column_stats SET deleted_by_txn = NULL WHERE deleted_by_txn = ANY($1::bigint[])"
# A renamed partition's statistics ($2 its old name, $3 its new one) of the columns it still has with the
# same type ($4 names, $5 lower-case types, pairwise); the others stay under the old name, to be deleted.
MOVE_TO_RENAMED_PARTITION = """
UPDATE column_stats SET part_name = $3
WHERE table_id = $1 AND part_name = $2
  AND (column_name, lower(column_type)) IN (SELECT * FROM unnest($4::text[], $5::text[]))
"""
# After an abort discarded the partitions its txn added ($1 table ids, $2 names, paired): the statistics of
# those that no longer exist.
DELETE_FOR_VANISHED_PARTITIONS = """
DELETE FROM column_stats s USING unnest($1::bigint[], $2::text[]) AS g(table_id, part_name)
WHERE s.table_id = g.table_id AND s.part_name = g.part_name
  AND NOT EXISTS (SELECT 1 FROM partitions p
                  WHERE p.table_id = g.table_id AND p.part_name = g.part_name AND p.dropped_wid IS NULL)
"""
# The columns with statistics of table $1's partitions named $2 ('' its own).
COLUMNS_WITH_STATS = """
SELECT part_name, column_name FROM column_stats WHERE table_id = $1 AND part_name = ANY($2::text[])
ORDER BY part_name, column_name
"""
# The statistics of table $1's partitions $2 ('' its own) of columns $3 (paired); marked for txn $4.
DELETE_FOR_PARTITION_COLUMNS = """
DELETE FROM column_stats s USING unnest($2::text[], $3::text[]) AS g(part_name, column_name)
WHERE s.table_id = $1 AND s.part_name = g.part_name AND s.column_name = g.column_name
"""
MARK_FOR_PARTITION_COLUMNS = """
UPDATE column_stats s SET deleted_by_txn = $4 FROM unnest($2::text[], $3::text[]) AS g(part_name, column_name)
WHERE s.table_id = $1 AND s.part_name = g.part_name AND s.column_name = g.column_name
"""
# The same of the statistics waiting for txns' commits (store/schema/0025): other txns' are marked by the
# altering txn $4, its own go at once (they describe what it dropped or retyped); without a txn all go.
MARK_WAITING_FOR_PARTITION_COLUMNS = """
UPDATE column_stats_by_txn s SET deleted_by_txn = $4
FROM unnest($2::text[], $3::text[]) AS g(part_name, column_name)
WHERE s.table_id = $1 AND s.part_name = g.part_name AND s.column_name = g.column_name AND s.txn_id <> $4
"""
DELETE_OWN_WAITING_FOR_PARTITION_COLUMNS = """
DELETE FROM column_stats_by_txn s USING unnest($2::text[], $3::text[]) AS g(part_name, column_name)
WHERE s.txn_id = $4 AND s.table_id = $1 AND s.part_name = g.part_name AND s.column_name = g.column_name
"""
DELETE_WAITING_FOR_PARTITION_COLUMNS = """
DELETE FROM column_stats_by_txn s USING unnest($2::text[], $3::text[]) AS g(part_name, column_name)
WHERE s.table_id = $1 AND s.part_name = g.part_name AND s.column_name = g.column_name
"""
