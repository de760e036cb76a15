-- 0002: transactions and per-table write ids (Hive's TXNS, NEXT_TXN_ID, NEXT_WRITE_ID,
-- TXN_TO_WRITE_ID, MIN_HISTORY_LEVEL), keyed by the stable table_id so renames need no fix-up.

CREATE TABLE next_txn_id (
    id    integer PRIMARY KEY CHECK (id = 1),
    next  bigint NOT NULL
);
INSERT INTO next_txn_id VALUES (1, 1);

-- state: 'o' open, 'c' committed, 'a' aborted. Committed rows are kept (idempotent commit,
-- SHOW TRANSACTIONS) until housekeeping deletes those below the low-water mark.
CREATE TABLE txns (
    txn_id           bigint PRIMARY KEY,
    state            char(1) NOT NULL CHECK (state IN ('o', 'c', 'a')),
    txn_type         smallint NOT NULL DEFAULT 0,
    started_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    last_heartbeat   timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at      timestamptz,
    heartbeat_count  bigint NOT NULL DEFAULT 0,
    user_name        text NOT NULL DEFAULT '',
    host             text NOT NULL DEFAULT '',
    agent_info       text NOT NULL DEFAULT ''
);
CREATE INDEX txns_not_committed ON txns (txn_id) WHERE state <> 'c';
CREATE INDEX txns_open_heartbeat ON txns (last_heartbeat) WHERE state = 'o';

CREATE TABLE next_write_id (
    table_id      bigint PRIMARY KEY,
    next          bigint NOT NULL,
    -- Highest write id whose txn_to_write_id row the cleaner deleted: every such id is committed
    -- in every snapshot that can still be used, so the write-id high-water mark never drops below it.
    cleaned_hwm   bigint NOT NULL DEFAULT 0,
    -- Versions dropped by write ids <= gc_watermark were garbage-collected: a snapshot that does
    -- not see all of them as committed is too old to be answered.
    gc_watermark  bigint NOT NULL DEFAULT 0
);

CREATE TABLE txn_to_write_id (
    txn_id    bigint NOT NULL,
    table_id  bigint NOT NULL,
    write_id  bigint NOT NULL,
    PRIMARY KEY (table_id, write_id),
    UNIQUE (txn_id, table_id)
);

CREATE TABLE min_history_level (
    txn_id           bigint PRIMARY KEY,
    min_open_txn_id  bigint NOT NULL
);

-- Process-wide housekeeping state: the txn low-water mark below which txn_to_write_id rows were
-- deleted. A ValidTxnList with an open txn below it can no longer be mapped to write ids.
CREATE TABLE txn_housekeeping (
    id                   integer PRIMARY KEY CHECK (id = 1),
    t2w_cleaned_below    bigint NOT NULL DEFAULT 0
);
INSERT INTO txn_housekeeping VALUES (1, 0);

-- Version discard on abort and version GC look rows up by write id.
CREATE INDEX partitions_created_wid ON partitions (table_id, created_wid) WHERE created_wid <> 0;
CREATE INDEX partitions_dropped_wid ON partitions (table_id, dropped_wid) WHERE dropped_wid IS NOT NULL;
CREATE INDEX tbls_dropped_wid ON tbls (table_id, dropped_wid) WHERE dropped_wid IS NOT NULL;
CREATE INDEX tbls_by_name ON tbls (db_name, tbl_name);

-- Event log retention deletes by time.
CREATE INDEX notification_log_time ON notification_log (event_time);
