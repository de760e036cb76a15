"""Query text for the notification log.

Ordering: an appender takes the row lock on notification_sequence (UPDATE ... RETURNING) as the
last step of its transaction and holds it until commit. Ids are therefore dense and become
visible in id order, so a reader of `event_id > last` never skips one (Hive's rule, §5.8).
"""

# Locks the single sequence row until commit; $1 ids are allocated, the first is returned.
ALLOCATE_EVENT_IDS = """
UPDATE notification_sequence SET next_event_id = next_event_id + $1 WHERE id = 1
RETURNING next_event_id - $1
"""

INSERT_EVENT = """
INSERT INTO notification_log (event_id, event_type, db_name, tbl_name, table_id, txn_id, write_id, message)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
"""

# Delivered at commit to every LISTENer (pollers wake up without waiting for their timer).
NOTIFY_EVENT = "SELECT pg_notify('metastore_events', $1::text)"
EVENT_CHANNEL = "metastore_events"

CURRENT_EVENT_ID = "SELECT next_event_id - 1 FROM notification_sequence WHERE id = 1"

# Index: primary key on event_id; with a table filter, notification_log_by_table.
NEXT_EVENTS = """
SELECT event_id, (extract(epoch FROM event_time) * 1000)::bigint AS event_time_ms, event_type,
       db_name, tbl_name, table_id, txn_id, write_id, message::text AS message
FROM notification_log
WHERE event_id > $1 AND ($3 = '' OR db_name = $3) AND ($4 = '' OR tbl_name = $4)
ORDER BY event_id
LIMIT $2
"""

# Hive's get_notification_events_count: events after $1 in database $2, up to $3 when it is not 0.
COUNT_EVENTS = """
SELECT count(*) FROM notification_log
WHERE event_id > $1 AND db_name = $2 AND ($3 = 0 OR event_id <= $3)
"""

OLDEST_EVENT_ID = "SELECT coalesce(min(event_id), 0) FROM notification_log"
