-- 0011: column statistics, Hive's TAB_COL_STATS and PART_COL_STATS in one table. A row holds one
-- column's statistics for a table (part_name '') or one of its partitions, keyed by the table's
-- stable id, so a rename keeps them. `kind` names the ColumnStatisticsData member (long, double,
-- string, ...), `data` its fields as JSON (binary fields base64). Not versioned, as in Hive 2.3:
-- a write replaces the column's row, whatever txn is open.
CREATE TABLE column_stats (
    table_id      bigint NOT NULL,
    part_name     text NOT NULL COLLATE "C",
    column_name   text NOT NULL COLLATE "C",
    column_type   text NOT NULL,
    kind          text NOT NULL
        CHECK (kind IN ('boolean', 'long', 'double', 'string', 'binary', 'decimal', 'date', 'timestamp')),
    data          jsonb NOT NULL,
    last_analyzed bigint NOT NULL,
    PRIMARY KEY (table_id, part_name, column_name)
);
