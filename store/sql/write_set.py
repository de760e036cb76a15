"""Query text of Hive's write-set (TXN_COMPONENTS' update and delete rows, WRITE_SET;
store/schema/0013_write_set.sql). The check itself runs in the commit function, and the Lock call's
statement adds its components (store/sql/locks.py); these are the rest."""

# add_dynamic_partitions: the table's entry the txn's dynamic-partition lock made ($1 txn, $2
# database, $3 table) gives way to the partitions named ($4, one row each, operation $5 'u'/'d').
REPLACE_TABLE_ENTRY_WITH_PARTITIONS = """
WITH gone AS (
    DELETE FROM txn_components WHERE txn_id = $1 AND db_name = $2 AND tbl_name = $3 AND part_name IS NULL
)
INSERT INTO txn_components (txn_id, db_name, tbl_name, part_name, operation)
SELECT $1, $2, $3, p.name, $5 FROM unnest($4::text[]) AS p(name)
"""

# Abort (store/txns.py): an aborted txn's components check nothing any more (its writes are invisible).
DELETE_TXN_COMPONENTS = "DELETE FROM txn_components WHERE txn_id = ANY($1::bigint[])"

# Hive's performWriteSetGC: a row can conflict only with a txn that started before its commit
# (txn id <= commit_id) and is still open; none is once the smallest open txn is above it (index:
# write_set_by_commit_id, txns_open).
GC_WRITE_SET = """
DELETE FROM write_set
WHERE commit_id < coalesce((SELECT min(txn_id) FROM txns WHERE state = 'o'),
                           (SELECT next FROM next_txn_id WHERE id = 1))
"""

# Hive 4's LatestTxnIdInConflictHandler: of the committed txns that updated or deleted a target of
# txn $1's update and delete components (the same table and partition, or any partition of a table
# it writes whole) and committed after $1 began, the largest id; NULL when none.
# Index: txn_components_by_txn, then write_set_by_target.
# Partitions are joined by equality and whole tables apart: an OR of the two would answer no index.
LATEST_TXN_IN_CONFLICT = """
WITH c AS (SELECT DISTINCT db_name, tbl_name, part_name FROM txn_components WHERE txn_id = $1)
SELECT max(t) FROM (
    SELECT w.txn_id AS t FROM c
    JOIN write_set w ON w.db_name = c.db_name AND w.tbl_name = c.tbl_name AND w.part_name = c.part_name
    WHERE c.part_name IS NOT NULL AND w.commit_id >= $1
    UNION ALL
    SELECT w.txn_id FROM c JOIN write_set w ON w.db_name = c.db_name AND w.tbl_name = c.tbl_name
    WHERE c.part_name IS NULL AND w.commit_id >= $1
) AS x
"""
