"""Query text for the notification log.

Ordering: an appender takes the row lock on notification_sequence (UPDATE ... RETURNING, in the
append_events function) as the last step of its transaction and holds it until commit. Ids are
therefore dense and become visible in id order, so a reader of `event_id > last` never skips one
(Hive's rule, §5.8).
"""

# Append events $1..$7 (parallel arrays, in order; the messages as JSON text, already written once to
# size them: store/events.py): one statement, one round trip. The function (store/schema/0007, now
# 0019's) locks the sequence row, takes the ids, inserts the events and queues the NOTIFY that wakes
# every poller at commit. Returns the first id.
APPEND_EVENTS = """
SELECT append_events($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[]::jsonb[])
"""


def append_one_event(event_type: str, message: str, *, db_name: str = "''", tbl_name: str = "''",
                     table_id: str = "0", txn_id: str = "0", write_id: str = "0") -> str:
    """An SQL expression that appends one event and is its id (NULL, appending nothing, when the
    message is NULL): the tail of a one-statement write whose state function returned the message.
    Every argument is an SQL expression (a parameter such as `$6`, or a column of the function)."""
    return (f"CASE WHEN {message} IS NOT NULL THEN append_events("
            f"ARRAY[{event_type}]::text[], ARRAY[{db_name}]::text[], ARRAY[{tbl_name}]::text[], "
            f"ARRAY[{table_id}]::bigint[], ARRAY[{txn_id}]::bigint[], ARRAY[{write_id}]::bigint[], "
            f"ARRAY[{message}]::jsonb[]) END")


def append_row_events(rows: str, event_type: str, message: str, *, db_name: str = "''", tbl_name: str = "''",
                      table_id: str = "0", txn_id: str = "0", write_id: str = "0") -> str:
    """A scalar subquery that appends one event for each row of `rows` (a CTE of a batch, in the
    order of its `ord` column) whose message is not NULL, and is the first id (NULL: none): the tail
    of a one-statement batch (store/group_commit.py). Each row's id is the first id plus the number
    of logged rows before it. Arguments are SQL expressions over the CTE's columns."""
    def column(expr: str) -> str:
        return f"array_agg({expr} ORDER BY ord) FILTER (WHERE {message} IS NOT NULL)"

    return (f"(SELECT append_events({column(event_type + '::text')}, {column(db_name + '::text')}, "
            f"{column(tbl_name + '::text')}, {column(table_id + '::bigint')}, {column(txn_id + '::bigint')}, "
            f"{column(write_id + '::bigint')}, {column(message + '::jsonb')}) FROM {rows})")


EVENT_CHANNEL = "metastore_events"

CURRENT_EVENT_ID = "SELECT next_event_id - 1 FROM notification_sequence WHERE id = 1"

_EVENT_COLUMNS = """event_id, (extract(epoch FROM event_time) * 1000)::bigint AS event_time_ms, event_type,
       db_name, tbl_name, table_id, txn_id, write_id, message::text AS message"""

# The first $2 events after $1 (of database $3 when not '', of the tables $4 when not empty, of no type in
# $7, of a type in $8 when not NULL: Hive 4's NotificationEventRequest filters), cut where their size passes
# $5 bytes, the first always kept: each costs its message (message_bytes, store/schema/0019; measured
# when an older event has none) and $6 bytes besides. The sizes come from the rows, so only the events
# kept have their messages read and rendered.
# Index: primary key on event_id; with a table filter, notification_log_by_table.
NEXT_EVENTS = f"""
SELECT {_EVENT_COLUMNS}
FROM (
    SELECT event_id, event_time, event_type, db_name, tbl_name, table_id, txn_id, write_id, message,
           row_number() OVER (ORDER BY event_id) AS nth,
           sum(coalesce(message_bytes, octet_length(message::text)) + $6) OVER (ORDER BY event_id) AS read_bytes
    FROM notification_log
    WHERE event_id > $1 AND ($3 = '' OR db_name = $3) AND (cardinality($4::text[]) = 0 OR tbl_name = ANY($4))
      AND NOT event_type = ANY($7::text[]) AND ($8::text[] IS NULL OR event_type = ANY($8))
    ORDER BY event_id
    LIMIT $2
) AS e
WHERE nth = 1 OR read_bytes <= $5
ORDER BY event_id
"""

# The poller's read, one round trip: the events after $1 (no filter) with the newest committed id
# beside each, in one statement and so one snapshot: a row with a NULL event_id when there is none.
# Each carries the last event of its write (last_of_write, store/schema/0015; NULL before it). Beside
# them, the time of event $1 itself (NULL once trimmed): the reader checks it is the event it applied.
NEXT_EVENTS_AND_HEAD = f"""
SELECT h.head, h.cursor_time_ms, e.*
FROM (SELECT next_event_id - 1 AS head,
             (SELECT (extract(epoch FROM event_time) * 1000)::bigint FROM notification_log
              WHERE event_id = $1) AS cursor_time_ms
      FROM notification_sequence WHERE id = 1) AS h
LEFT JOIN LATERAL (
    SELECT {_EVENT_COLUMNS}, last_of_write
    FROM notification_log WHERE event_id > $1 ORDER BY event_id LIMIT $2
) AS e ON true
ORDER BY e.event_id
"""

# The rest of a write a batch would have ended inside: its events after $1 up to $2, its last. They
# are committed (the write's first one is), so any snapshot from now on reads them.
REST_OF_WRITE = f"""
SELECT {_EVENT_COLUMNS} FROM notification_log WHERE event_id > $1 AND event_id <= $2 ORDER BY event_id
"""

# Hive's get_notification_events_count: events after $1 in database $2 and of no database (the txns'
# events: Hive's "dbName could be NULL in case of transaction related events, which also need to be
# counted"), or of every database when $2 is '*'; up to $3 when it is not NULL.
COUNT_EVENTS = """
SELECT count(*) FROM notification_log
WHERE event_id > $1 AND ($2 = '*' OR db_name = $2 OR db_name = '') AND ($3::bigint IS NULL OR event_id <= $3)
"""

OLDEST_EVENT_ID = "SELECT coalesce(min(event_id), 0) FROM notification_log"
