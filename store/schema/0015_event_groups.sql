-- 0015: each event names the last event its transaction appended, so that a reader of the log can
-- take a writer's events whole. The poller reads the log in batches of a bounded size; a batch that
-- ended inside one write's events (an exchange's drop on the source before its add on the
-- destination, a rename's drop before its add) published a state no snapshot of the database ever
-- had (the partition in neither table) until the next batch. All of a write's events are appended
-- by one call of append_events, last in its transaction (store/events.py), so they are the ids
-- first_id .. first_id + n - 1 of that call. Events written before this migration have none: each
-- reads as a write of its own.

ALTER TABLE notification_log ADD COLUMN last_of_write bigint;

CREATE OR REPLACE FUNCTION append_events(event_types text[], db_names text[], tbl_names text[], table_ids bigint[],
                                         txn_ids bigint[], write_ids bigint[], messages jsonb[]) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n integer := coalesce(cardinality(event_types), 0);
    first_id bigint;
BEGIN
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    UPDATE notification_sequence SET next_event_id = next_event_id + n WHERE id = 1
    RETURNING next_event_id - n INTO first_id;
    INSERT INTO notification_log (event_id, event_type, db_name, tbl_name, table_id, txn_id, write_id, message,
                                  last_of_write)
    SELECT first_id + e.ord - 1, e.event_type, e.db_name, e.tbl_name, e.table_id, e.txn_id, e.write_id, e.message,
           first_id + n - 1
    FROM unnest(event_types, db_names, tbl_names, table_ids, txn_ids, write_ids, messages)
         WITH ORDINALITY AS e(event_type, db_name, tbl_name, table_id, txn_id, write_id, message, ord);
    PERFORM pg_notify('metastore_events', (first_id + n - 1)::text);
    RETURN first_id;
END
$$;
