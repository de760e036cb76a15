"""Query text for permanent functions (store/functions.py), keyed by (database, function name)."""

_COLUMNS = "db_name, func_name, class_name, owner, owner_type, function_type, resource_uris, create_time"

# A create or a move takes the database's row in KEY SHARE: it waits for a DROP DATABASE that holds the
# row, then finds no row (a clean NotFound, not a foreign-key failure); two creates do not block each other.
LOCK_DATABASE = "SELECT name FROM dbs WHERE name = $1 FOR KEY SHARE"

# Nothing inserted (no row back): the name is taken, by this function or a concurrent create's.
INSERT = f"""
INSERT INTO funcs ({_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (db_name, func_name) DO NOTHING
RETURNING {_COLUMNS}
"""

SELECT = f"SELECT {_COLUMNS} FROM funcs WHERE db_name = $1 AND func_name = $2"

# An alter reads what it replaces; the lock keeps a concurrent alter or drop from changing it meanwhile.
SELECT_FOR_UPDATE = SELECT + " FOR UPDATE"

LIST_NAMES = 'SELECT func_name FROM funcs WHERE db_name = $1 ORDER BY func_name'

LIST_ALL = f'SELECT {_COLUMNS} FROM funcs ORDER BY db_name, func_name'

# An alter that keeps the key; one that renames or moves the function inserts the new row and deletes the old.
UPDATE = """
UPDATE funcs SET class_name = $3, owner = $4, owner_type = $5, function_type = $6, resource_uris = $7
WHERE db_name = $1 AND func_name = $2
"""

DELETE = f"DELETE FROM funcs WHERE db_name = $1 AND func_name = $2 RETURNING {_COLUMNS}"

# A DROP DATABASE ... CASCADE (store/catalog.py), under the database's row lock.
DELETE_OF_DATABASE = f"DELETE FROM funcs WHERE db_name = $1 RETURNING {_COLUMNS}"
