-- 0019: each event records the size of its message as readers get it (the text of the jsonb, in
-- bytes), so that a read of the log stops at a byte budget (hive.metastore.server.max.message.size,
-- store/events.py) from the log's rows alone, without rendering the messages it leaves out. Events
-- written before this migration have none: a read measures their message.

ALTER TABLE notification_log ADD COLUMN message_bytes integer;

-- As 0015's, and each event's message_bytes.
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
                                  last_of_write, message_bytes)
    SELECT first_id + e.ord - 1, e.event_type, e.db_name, e.tbl_name, e.table_id, e.txn_id, e.write_id, e.message,
           first_id + n - 1, octet_length(e.message::text)
    FROM unnest(event_types, db_names, tbl_names, table_ids, txn_ids, write_ids, messages)
         WITH ORDINALITY AS e(event_type, db_name, tbl_name, table_id, txn_id, write_id, message, ord);
    PERFORM pg_notify('metastore_events', (first_id + n - 1)::text);
    RETURN first_id;
END
$$;
