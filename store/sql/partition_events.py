"""SQL of store/partition_events.py (table: store/schema/0036)."""

# A mark again moves its time.
MARK = """
INSERT INTO partition_events (table_id, part_name, event_type) VALUES ($1, $2, $3)
ON CONFLICT (table_id, part_name, event_type) DO UPDATE SET marked_at = clock_timestamp()
"""
# Index: the primary key. $4: hive.metastore.event.expiry.duration in seconds, 0 for none.
IS_MARKED = """
SELECT EXISTS (SELECT 1 FROM partition_events
               WHERE table_id = $1 AND part_name = $2 AND event_type = $3
                 AND ($4 <= 0 OR marked_at >= clock_timestamp() - make_interval(secs => $4)))
"""
DELETE_FOR_TABLE = "DELETE FROM partition_events WHERE table_id = $1"
