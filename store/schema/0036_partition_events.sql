-- 0036: Hive's PARTITION_EVENTS: partitions marked for an event (markPartitionForEvent, LOAD_DONE: Paimon's
-- mark-done action, Hive's HCatalog), asked by isPartitionMarkedForEvent. One row per table, partition (by its
-- name; the partition need not exist) and event type, the time of its latest mark. Keyed by the table's id:
-- the marks follow a rename and go with a drop.
CREATE TABLE partition_events (
    table_id    bigint NOT NULL,
    part_name   text NOT NULL COLLATE "C",
    event_type  integer NOT NULL,
    marked_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (table_id, part_name, event_type)
);
