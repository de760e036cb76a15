"""Query text for a connection's session settings."""

# Set the session's settings $1 (names) to $2 (values), in one statement: a SET reaches the server as any
# statement does, where a startup parameter does not always (store/db.py set_session).
SET_SESSION = """
SELECT set_config(name, value, false) FROM unnest($1::text[], $2::text[]) AS s(name, value)
"""

# The server process serving this session: one for a session's life, unless a connection pooler in between
# lends the session's server connection to others between transactions (store/db.py sessions_kept).
BACKEND_PID = "SELECT pg_backend_pid()"
