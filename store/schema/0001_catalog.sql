-- 0001: the catalog (databases, tables, partitions) and the notification log.
--
-- Tables and partitions are stored as versions: created_wid is the write id that created the
-- version (0 for writes outside a transaction) and dropped_wid the write id that replaced or
-- dropped it (NULL while it is the latest). Non-transactional writes replace rows in place; the
-- columns exist from the start so transactional (snapshot-versioned) writes need no table rewrite.

CREATE TABLE dbs (
    db_id        bigserial PRIMARY KEY,
    name         text NOT NULL UNIQUE,
    description  text NOT NULL DEFAULT '',
    location     text NOT NULL DEFAULT '',
    owner        text NOT NULL DEFAULT '',
    parameters   jsonb NOT NULL DEFAULT '{}',
    create_time  bigint NOT NULL
);

CREATE SEQUENCE table_id_seq;

CREATE TABLE tbls (
    version_id     bigserial PRIMARY KEY,
    table_id       bigint NOT NULL,
    db_name        text NOT NULL REFERENCES dbs (name),
    tbl_name       text NOT NULL,
    table_type     text NOT NULL CHECK (table_type IN ('MANAGED_TABLE', 'EXTERNAL_TABLE')),
    transactional  boolean NOT NULL,
    body           jsonb NOT NULL,   -- owner, columns, partition keys, storage descriptor, parameters
    create_time    bigint NOT NULL,
    created_wid    bigint NOT NULL DEFAULT 0,
    dropped_wid    bigint
);
-- At most one latest version per name and per id.
CREATE UNIQUE INDEX tbls_latest_name ON tbls (db_name, tbl_name) WHERE dropped_wid IS NULL;
CREATE UNIQUE INDEX tbls_latest_id ON tbls (table_id) WHERE dropped_wid IS NULL;
CREATE INDEX tbls_versions ON tbls (table_id, created_wid);

CREATE TABLE partitions (
    version_id   bigserial PRIMARY KEY,
    table_id     bigint NOT NULL,
    part_name    text NOT NULL COLLATE "C",
    part_values  text[] NOT NULL,
    body         jsonb NOT NULL,     -- storage descriptor, parameters
    create_time  bigint NOT NULL,
    created_wid  bigint NOT NULL DEFAULT 0,
    dropped_wid  bigint
);
CREATE UNIQUE INDEX partitions_latest ON partitions (table_id, part_name) WHERE dropped_wid IS NULL;
CREATE INDEX partitions_versions ON partitions (table_id, part_name, created_wid);

-- Hive's NOTIFICATION_SEQUENCE: one row, locked by every writer until its commit, so event ids
-- are dense and become visible in id order (hive-reference §5.8).
CREATE TABLE notification_sequence (
    id             integer PRIMARY KEY CHECK (id = 1),
    next_event_id  bigint NOT NULL
);
INSERT INTO notification_sequence VALUES (1, 1);

CREATE TABLE notification_log (
    event_id    bigint PRIMARY KEY,
    event_time  timestamptz NOT NULL DEFAULT clock_timestamp(),
    event_type  text NOT NULL,
    db_name     text NOT NULL DEFAULT '',
    tbl_name    text NOT NULL DEFAULT '',
    table_id    bigint NOT NULL DEFAULT 0,
    txn_id      bigint NOT NULL DEFAULT 0,
    write_id    bigint NOT NULL DEFAULT 0,
    message     jsonb NOT NULL
);
CREATE INDEX notification_log_by_table ON notification_log (db_name, tbl_name, event_id);
