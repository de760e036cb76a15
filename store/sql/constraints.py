"""Query text for table constraints (store/constraints.py; the table: store/schema/0039). A constraint's
rows are keyed by (database, constraint name, position); reads find a table's by the index on
(table_id, kind), the foreign keys that refer to a table by the partial index on parent_table_id. Tables are
named by their latest version (tbls' rows with dropped_wid NULL), so a renamed table answers its new name."""

_ROW = """c.constraint_name, c.position, c.kind, c.column_name, c.key_seq, c.update_rule, c.delete_rule, c.value,
c.enable_cstr, c.validate_cstr, c.rely_cstr, c.table_id, t.db_name AS table_db, t.tbl_name AS table_name"""

# A table's constraints of the kinds $2 (all six: Hive 4's get_all_table_constraints), in name and position order.
OF_TABLE = f"""
SELECT {_ROW}
FROM table_constraints c JOIN tbls t ON t.table_id = c.table_id AND t.dropped_wid IS NULL
WHERE c.table_id = $1 AND c.kind = ANY($2::text[]) AND c.kind <> 'foreign_key'
ORDER BY c.constraint_name, c.position
"""

# Foreign keys: of the child table $1 (NULL: any), referring to the parent table $2 (NULL: any). A row is
# answered with the name of the parent's primary key holding its parent column, else of a unique constraint
# holding it; a row whose parent column is in neither (the key was dropped since) is left out until one
# holds it again, as Hive's reads join the parent's primary key (Hive 2.3.10 answers so).
FOREIGN_KEYS = f"""
SELECT {_ROW}, c.parent_column, p.db_name AS parent_db, p.tbl_name AS parent_name, k.constraint_name AS key_name
FROM table_constraints c
JOIN tbls t ON t.table_id = c.table_id AND t.dropped_wid IS NULL
JOIN tbls p ON p.table_id = c.parent_table_id AND p.dropped_wid IS NULL
JOIN LATERAL (
    SELECT k.constraint_name FROM table_constraints k
    WHERE k.table_id = c.parent_table_id AND k.column_name = c.parent_column AND k.kind IN ('primary_key', 'unique')
    ORDER BY k.kind = 'unique', k.constraint_name LIMIT 1
) k ON true
WHERE c.kind = 'foreign_key' AND ($1::bigint IS NULL OR c.table_id = $1)
  AND ($2::bigint IS NULL OR c.parent_table_id = $2)
ORDER BY c.constraint_name, c.position
"""

# The keys a foreign key may refer to: the parent table $1's primary key and unique constraints, by name.
KEYS_OF_TABLE = """
SELECT constraint_name, kind, column_name, key_seq FROM table_constraints
WHERE table_id = $1 AND kind IN ('primary_key', 'unique')
ORDER BY constraint_name, key_seq, position
"""

PRIMARY_KEY_NAME = "SELECT constraint_name FROM table_constraints WHERE table_id = $1 AND kind = 'primary_key' LIMIT 1"

# $1 the database, $2 the names: those taken (by any kind, in any table of the database).
NAMES_TAKEN = """
SELECT DISTINCT constraint_name FROM table_constraints WHERE db_name = $1 AND constraint_name = ANY($2::text[])
"""

# $1: one JSON array of rows. Nothing inserted for a name a concurrent add took meanwhile (the caller
# compares the count and refuses the add; its transaction is rolled back).
INSERT = """
INSERT INTO table_constraints (db_name, constraint_name, position, kind, table_id, column_name, key_seq,
                               parent_table_id, parent_column, update_rule, delete_rule, value, enable_cstr,
                               validate_cstr, rely_cstr)
SELECT r.db_name, r.constraint_name, r.position, r.kind, r.table_id, r.column_name, r.key_seq, r.parent_table_id,
       r.parent_column, r.update_rule, r.delete_rule, r.value, r.enable_cstr, r.validate_cstr, r.rely_cstr
FROM jsonb_to_recordset($1::jsonb) AS r(db_name text, constraint_name text, position int, kind text, table_id bigint,
    column_name text, key_seq int, parent_table_id bigint, parent_column text, update_rule int, delete_rule int,
    value text, enable_cstr boolean, validate_cstr boolean, rely_cstr boolean)
ON CONFLICT (db_name, constraint_name, position) DO NOTHING
"""

# drop_constraint: the constraint $2 whose table, or (a foreign key, maybe of another database) whose parent, is
# table $1 (Hive drops a foreign key named with either table, every one of the name it finds so). Returns its
# kind and the child table's id.
DROP = """
DELETE FROM table_constraints
WHERE constraint_name = $2 AND (table_id = $1 OR parent_table_id = $1)
RETURNING kind, table_id
"""

# A table's drop (store/catalog.py, under the table's row lock): its constraints, and the foreign keys of
# other tables that refer to it, go with it (Hive 2.3's dropTable deletes both; no event for either).
DELETE_FOR_TABLE = "DELETE FROM table_constraints WHERE table_id = $1 OR parent_table_id = $1"

# An alter that drops or renames columns ($2, the old names): the constraints that name one, as their own
# column or (a foreign key to the table) as the parent column.
NAMING_COLUMNS = """
SELECT DISTINCT constraint_name, CASE WHEN table_id = $1 AND column_name = ANY($2::text[]) THEN column_name
                                      ELSE parent_column END AS column_name
FROM table_constraints
WHERE (table_id = $1 AND column_name = ANY($2::text[])) OR (parent_table_id = $1 AND parent_column = ANY($2::text[]))
ORDER BY 1
"""

# A table moved to another database ($2): its constraints' names are now unique in that one. Returns the
# names that collide (the move is then refused).
MOVE_TO_DATABASE = "UPDATE table_constraints SET db_name = $2 WHERE table_id = $1 AND db_name <> $2"
NAMES_IN_DATABASE_OF = """
SELECT DISTINCT c.constraint_name FROM table_constraints c
WHERE c.table_id = $1 AND EXISTS (SELECT 1 FROM table_constraints o
                                  WHERE o.db_name = $2 AND o.constraint_name = c.constraint_name AND o.table_id <> $1)
"""
