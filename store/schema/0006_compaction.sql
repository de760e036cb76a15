-- 0006: the compactor's queue and history (Hive's COMPACTION_QUEUE and COMPLETED_COMPACTIONS,
-- hive-reference §7), keyed by names as Hive's are (SHOW COMPACTIONS outlives a dropped table), plus
-- what the Initiator remembers between rounds.
--
-- States: 'i' initiated, 'w' working, 'r' ready for cleaning (queue); 's' succeeded, 'f' failed,
-- 'a' did not initiate, 'c' refused, 'x' aborted (history). Types: 'a' major, 'i' minor.

CREATE TABLE compaction_queue (
    cq_id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    cq_database          text NOT NULL,
    cq_table             text NOT NULL,
    cq_partition         text,                          -- NULL for an unpartitioned table
    cq_table_id          bigint NOT NULL,               -- the stable id: a rename does not orphan the entry
    cq_state             char(1) NOT NULL CHECK (cq_state IN ('i', 'w', 'r')),
    cq_type              char(1) NOT NULL CHECK (cq_type IN ('a', 'i')),
    cq_tblproperties     jsonb NOT NULL DEFAULT '{}',   -- ALTER TABLE ... COMPACT ... WITH OVERWRITE TBLPROPERTIES
    cq_worker_id         text,
    cq_enqueue_time      timestamptz NOT NULL DEFAULT clock_timestamp(),
    cq_start             timestamptz,
    -- Beyond Hive (which times a worker out by CQ_START alone): the worker's last heartbeat, so a
    -- dead worker's entry is retried after hive.compactor.worker.timeout without a beat.
    cq_last_heartbeat    timestamptz,
    cq_run_as            text NOT NULL DEFAULT '',
    cq_highest_write_id  bigint,
    cq_error_message     text,
    cq_next_txn_id       bigint,
    cq_txn_id            bigint,
    cq_commit_time       timestamptz,
    cq_initiator_id      text NOT NULL DEFAULT '',
    cq_initiator_version text NOT NULL DEFAULT '',
    cq_worker_version    text,
    cq_manual            boolean NOT NULL DEFAULT false, -- ALTER TABLE ... COMPACT, not the Initiator
    cq_pool_name         text NOT NULL DEFAULT 'default'
);
-- Claims take the oldest initiated entry; the Cleaner walks ready ones; one active entry per partition.
CREATE INDEX compaction_queue_state ON compaction_queue (cq_state, cq_id);
CREATE UNIQUE INDEX compaction_queue_one_active ON compaction_queue (cq_table_id, coalesce(cq_partition, ''))
    WHERE cq_state IN ('i', 'w');

CREATE TABLE completed_compactions (
    cc_id                bigint PRIMARY KEY,            -- the queue's cq_id (a did-not-initiate row takes a new one)
    cc_database          text NOT NULL,
    cc_table             text NOT NULL,
    cc_partition         text,
    cc_table_id          bigint NOT NULL,
    cc_state             char(1) NOT NULL CHECK (cc_state IN ('s', 'f', 'a', 'c', 'x')),
    cc_type              char(1) NOT NULL CHECK (cc_type IN ('a', 'i')),
    cc_tblproperties     jsonb NOT NULL DEFAULT '{}',
    cc_worker_id         text,
    cc_enqueue_time      timestamptz,
    cc_start             timestamptz,
    cc_end               timestamptz NOT NULL DEFAULT clock_timestamp(),
    cc_run_as            text NOT NULL DEFAULT '',
    cc_highest_write_id  bigint,
    cc_error_message     text,
    cc_next_txn_id       bigint,
    cc_txn_id            bigint,
    cc_commit_time       timestamptz,
    cc_initiator_id      text NOT NULL DEFAULT '',
    cc_initiator_version text NOT NULL DEFAULT '',
    cc_worker_version    text,
    cc_manual            boolean NOT NULL DEFAULT false,
    cc_pool_name         text NOT NULL DEFAULT 'default'
);
-- The failed-compactions check and the history purge read one partition's newest rows.
CREATE INDEX completed_compactions_entity ON completed_compactions (cc_table_id, coalesce(cc_partition, ''), cc_id);

-- The Initiator looks again at a table only when its write-id counter moved since its last look
-- (or it has aborted write ids): what it saw last time, per table.
CREATE TABLE compaction_checked (
    table_id           bigint PRIMARY KEY,
    next_write_id      bigint NOT NULL,
    checked_at         timestamptz NOT NULL DEFAULT clock_timestamp()
);
