-- 0003: the lock manager (Hive's HIVE_LOCKS and NEXT_LOCK_ID, hive-reference §6).
--
-- A lock request has one external id (ext_id) and one row per component (int_id 1..n, in the
-- lexicographic order of the components). Ext ids come from one counter row that the enqueuer
-- locks until its transaction commits, so requests become visible in ext-id order: a request is
-- always checked against every earlier one (store/locks.py explains why that suffices).

CREATE TABLE next_lock_id (
    id    integer PRIMARY KEY CHECK (id = 1),
    next  bigint NOT NULL
);
INSERT INTO next_lock_id VALUES (1, 1);

CREATE TABLE hive_locks (
    ext_id             bigint NOT NULL,
    int_id             integer NOT NULL,
    txn_id             bigint NOT NULL DEFAULT 0,           -- 0: a standalone lock
    db_name            text NOT NULL,
    tbl_name           text,                                -- NULL: the whole database
    part_name          text COLLATE "C",                    -- NULL: the whole table; else a name or a prefix of one
    lock_level         char(1) GENERATED ALWAYS AS (
                           CASE WHEN tbl_name IS NULL THEN 'd' WHEN part_name IS NULL THEN 't' ELSE 'p' END
                       ) STORED,
    state              char(1) NOT NULL CHECK (state IN ('a', 'w')),                 -- acquired, waiting
    lock_type          char(1) NOT NULL CHECK (lock_type IN ('r', 'w', 'x', 'e')),  -- Hive's HL_LOCK_TYPE
    operation          text NOT NULL,                       -- Hive's DataOperationType name
    -- Standalone locks only: refreshed by Heartbeat and CheckLock, timed out after hive.txn.timeout.
    -- Txn locks have none (the txn heartbeats and they end with it), as Hive's HL_LAST_HEARTBEAT = 0.
    last_heartbeat     timestamptz,
    acquired_at        timestamptz,
    user_name          text NOT NULL DEFAULT '',
    host               text NOT NULL DEFAULT '',
    agent_info         text NOT NULL DEFAULT '',
    blocked_by_ext_id  bigint,
    blocked_by_int_id  integer,
    PRIMARY KEY (ext_id, int_id),
    CHECK (part_name IS NULL OR tbl_name IS NOT NULL),
    CHECK ((txn_id = 0) = (last_heartbeat IS NOT NULL)),
    CHECK ((state = 'a') = (acquired_at IS NOT NULL))
);
-- The conflict check joins earlier requests on the same database.
CREATE INDEX hive_locks_by_db ON hive_locks (db_name, ext_id);
-- Commit and abort release a txn's locks.
CREATE INDEX hive_locks_by_txn ON hive_locks (txn_id) WHERE txn_id <> 0;
-- The time-out reaper finds standalone locks by heartbeat.
CREATE INDEX hive_locks_standalone_heartbeat ON hive_locks (last_heartbeat) WHERE txn_id = 0;
