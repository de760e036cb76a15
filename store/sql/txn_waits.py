"""Query text of the wait graph between txns (store/txn_waits.py, store/schema/0020)."""

# Registrations take this advisory lock ("msgw" + 0x0501) until they commit, so that of two waits
# closing one cycle between them, the second sees the first.
LOCK_WAIT_GRAPH = "SELECT pg_advisory_xact_lock(120342424519937)"

DELETE_EXPIRED_WAITS = "DELETE FROM txn_waits WHERE expires_at <= now()"

# Does holder $1 wait, directly or through other waiters, for txn $2?
WAITS_FOR = """
WITH RECURSIVE reach(txn_id) AS (
    SELECT $1::bigint
    UNION
    SELECT w.holder FROM txn_waits w JOIN reach r ON w.waiter = r.txn_id WHERE w.expires_at > now()
)
SELECT EXISTS (SELECT 1 FROM reach WHERE txn_id = $2)
"""

INSERT_WAIT = "INSERT INTO txn_waits (waiter, holder, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))"

DELETE_WAIT = "DELETE FROM txn_waits WHERE waiter = $1 AND holder = $2"
