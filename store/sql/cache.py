"""Query text for loading tables into the cache. Run inside one REPEATABLE READ transaction, so
the rows, the write-id state and the log position all describe the same instant."""

ALL_TABLE_IDS = "SELECT table_id, db_name, tbl_name FROM tbls WHERE dropped_wid IS NULL ORDER BY table_id"

LATEST_TABLE_ID = "SELECT table_id FROM tbls WHERE db_name = $1 AND tbl_name = $2 AND dropped_wid IS NULL"

TABLE_VERSIONS = """
SELECT version_id, table_id, db_name, tbl_name, table_type, transactional, body, create_time, created_wid, dropped_wid
FROM tbls WHERE table_id = $1 ORDER BY version_id DESC
"""

# Newest version first per name (index partitions_versions).
PARTITION_VERSIONS = """
SELECT part_name, part_values, body, create_time, created_wid, dropped_wid
FROM partitions WHERE table_id = $1 ORDER BY part_name, version_id DESC
"""

OPEN_WRITERS = """
SELECT tw.txn_id, tw.write_id FROM txn_to_write_id tw JOIN txns t ON t.txn_id = tw.txn_id AND t.state = 'o'
WHERE tw.table_id = $1
"""

ALL_DATABASES = "SELECT name, description, location, owner, parameters, create_time, owner_type FROM dbs"
