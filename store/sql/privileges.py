"""Query text for roles and privileges (store/privileges.py)."""

# -- roles --------------------------------------------------------------------------------------

# Nothing inserted (no row back): the name is taken.
INSERT_ROLE = """
INSERT INTO roles (role_name, owner_name, create_time) VALUES ($1, $2, $3)
ON CONFLICT (role_name) DO NOTHING
RETURNING role_name
"""

# A grant of the role, or of a privilege to it, takes its row in KEY SHARE: it waits for a drop that
# holds the row, then finds none (a clean refusal, not a foreign-key failure).
LOCK_ROLE = "SELECT role_name FROM roles WHERE role_name = $1 FOR KEY SHARE"

ROLE_NAMES = "SELECT role_name FROM roles ORDER BY role_name"

# A dropped role's memberships go by the foreign key; where it was the member, and what it was granted,
# are deleted here.
DELETE_ROLE = "DELETE FROM roles WHERE role_name = $1"
DELETE_ROLE_AS_MEMBER = "DELETE FROM role_grants WHERE principal_name = $1 AND principal_type = 'ROLE'"
DELETE_PRIVILEGES_OF_ROLE = "DELETE FROM privileges WHERE principal_name = $1 AND principal_type = 'ROLE'"

_GRANT_COLUMNS = "role_name, principal_name, principal_type, grant_option, grant_time, grantor, grantor_type"

# Nothing inserted: the principal holds the role already.
INSERT_ROLE_GRANT = f"""
INSERT INTO role_grants ({_GRANT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (role_name, principal_name, principal_type) DO NOTHING
RETURNING role_name
"""

SELECT_ROLE_GRANT_FOR_UPDATE = f"""
SELECT {_GRANT_COLUMNS} FROM role_grants
WHERE role_name = $1 AND principal_name = $2 AND principal_type = $3
FOR UPDATE
"""

DELETE_ROLE_GRANT = "DELETE FROM role_grants WHERE role_name = $1 AND principal_name = $2 AND principal_type = $3"

DROP_ROLE_GRANT_OPTION = """
UPDATE role_grants SET grant_option = false WHERE role_name = $1 AND principal_name = $2 AND principal_type = $3
"""

# The roles a principal holds, with the role's own row (owner, create time), by role name.
ROLES_OF_PRINCIPAL = f"""
SELECT g.{_GRANT_COLUMNS.replace(', ', ', g.')}, r.owner_name, r.create_time
FROM role_grants g JOIN roles r USING (role_name)
WHERE g.principal_name = $1 AND g.principal_type = $2
ORDER BY g.role_name
"""

PRINCIPALS_IN_ROLE = f"""
SELECT {_GRANT_COLUMNS} FROM role_grants WHERE role_name = $1 ORDER BY principal_type, principal_name
"""

# Role-to-role grants take this advisory lock ("msgw" + 0x0401) until they commit, so two of them cannot
# close a cycle together, each checking the graph without the other's grant.
LOCK_ROLE_GRAPH = "SELECT pg_advisory_xact_lock(120342424519681)"

# Every role `$1` (a role) is inside of, directly or through other roles: a grant of `$1` to any of
# them (or to itself) would make a cycle.
ROLE_ANCESTORS = """
WITH RECURSIVE up (role_name) AS (
    SELECT role_name FROM role_grants WHERE principal_name = $1 AND principal_type = 'ROLE'
    UNION
    SELECT g.role_name FROM role_grants g JOIN up ON g.principal_name = up.role_name AND g.principal_type = 'ROLE'
)
SELECT role_name FROM up
"""

# The roles a user and its groups hold, directly or through other roles, with the roles in $3 (`public`,
# which every user holds without a row) and what they hold.
ROLES_IN_HIERARCHY = """
WITH RECURSIVE held (role_name) AS (
    (SELECT role_name FROM role_grants
     WHERE (principal_name = $1 AND principal_type = 'USER')
        OR (principal_name = ANY($2::text[]) AND principal_type = 'GROUP')
     UNION
     SELECT unnest($3::text[]))
    UNION
    SELECT g.role_name FROM role_grants g JOIN held ON g.principal_name = held.role_name AND g.principal_type = 'ROLE'
)
SELECT role_name FROM held
"""

# -- privileges ----------------------------------------------------------------------------------

_PRIVILEGE_COLUMNS = ("object_type, db_name, table_id, part_name, column_name, principal_name, principal_type, "
                      "privilege, grant_option, create_time, grantor, grantor_type")

# Nothing inserted: the principal holds the privilege on the object already.
INSERT_PRIVILEGE = f"""
INSERT INTO privileges ({_PRIVILEGE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT DO NOTHING
RETURNING privilege
"""



def _on_object(p: str = "") -> str:
    """The object of $1 to $5 (type, database, table id, partition name, column name), on columns prefixed `p`."""
    return (f"{p}object_type = $1 AND coalesce({p}db_name, '') = coalesce($2, '') AND {p}table_id = $3 "
            f"AND {p}part_name = $4 AND {p}column_name = $5")


_ON_OBJECT = _on_object()

SELECT_PRIVILEGE_FOR_UPDATE = f"""
SELECT grant_option FROM privileges
WHERE {_ON_OBJECT} AND principal_name = $6 AND principal_type = $7 AND privilege = $8
FOR UPDATE
"""

DELETE_PRIVILEGE = f"""
DELETE FROM privileges WHERE {_ON_OBJECT} AND principal_name = $6 AND principal_type = $7 AND privilege = $8
"""

DROP_PRIVILEGE_GRANT_OPTION = f"""
UPDATE privileges SET grant_option = false
WHERE {_ON_OBJECT} AND principal_name = $6 AND principal_type = $7 AND privilege = $8
"""

# Each row with its table's current names ('' for GLOBAL and DATABASE rows), in a stable order.
_LISTED = """
SELECT p.object_type, coalesce(p.db_name, t.db_name, '') AS db_name, coalesce(t.tbl_name, '') AS tbl_name,
       p.part_name, p.column_name, p.principal_name, p.principal_type, p.privilege, p.grant_option,
       p.create_time, p.grantor, p.grantor_type
FROM privileges p LEFT JOIN tbls t ON t.table_id = p.table_id AND p.table_id <> 0 AND t.dropped_wid IS NULL
"""
_ORDER = " ORDER BY p.object_type, 2, 3, p.part_name, p.column_name, p.principal_type, p.principal_name, p.privilege"

# On one object: every principal's ($6 NULL), or one principal's.
LIST_ON_OBJECT = (_LISTED + " WHERE " + _on_object("p.")
                  + " AND ($6::text IS NULL OR (p.principal_name = $6 AND p.principal_type = $7))" + _ORDER)

# Everything one principal holds, on any object.
LIST_OF_PRINCIPAL = _LISTED + " WHERE p.principal_name = $1 AND p.principal_type = $2" + _ORDER

# Several principals' grants on one object (a privilege set): $6 names, $7 their types, pairwise.
GRANTS_ON_OBJECT_FOR = f"""
SELECT p.principal_name, p.principal_type, p.privilege, p.grant_option, p.create_time, p.grantor, p.grantor_type
FROM privileges p JOIN unnest($6::text[], $7::text[]) AS w (name, type)
     ON p.principal_name = w.name AND p.principal_type = w.type
WHERE {_on_object("p.")}
ORDER BY p.privilege
"""

# A dropped table's, or partitions', grants (store/catalog.py), as their column statistics go.
DELETE_FOR_TABLE = "DELETE FROM privileges WHERE table_id = $1"
DELETE_FOR_PARTITIONS = "DELETE FROM privileges WHERE table_id = $1 AND part_name = ANY($2::text[])"
# Under txn $3: deleted by its commit, unmarked by its abort (store/schema/0022).
MARK_FOR_PARTITIONS = """
UPDATE privileges SET deleted_by_txn = $3 WHERE table_id = $1 AND part_name = ANY($2::text[])
"""
UNMARK_ABORTED = "UPDATE privileges SET deleted_by_txn = NULL WHERE deleted_by_txn = ANY($1::bigint[])"
# A renamed partition's grants, its columns' too ($2 its old name, $3 its new one).
MOVE_TO_RENAMED_PARTITION = "UPDATE privileges SET part_name = $3 WHERE table_id = $1 AND part_name = $2"
# Partitions only an aborted txn had added (store/txns.py), unless another version took the name meanwhile.
DELETE_FOR_VANISHED_PARTITIONS = """
DELETE FROM privileges v USING unnest($1::bigint[], $2::text[]) AS g(table_id, part_name)
WHERE v.table_id = g.table_id AND v.part_name = g.part_name AND v.part_name <> ''
  AND NOT EXISTS (SELECT 1 FROM partitions p
                  WHERE p.table_id = g.table_id AND p.part_name = g.part_name AND p.dropped_wid IS NULL)
"""

# A grant on a database takes its row in KEY SHARE: it waits for a DROP DATABASE that holds the row.
DATABASE_EXISTS = "SELECT name FROM dbs WHERE name = $1"
LOCK_DATABASE = DATABASE_EXISTS + " FOR KEY SHARE"

# The owner a grant or revoke by a non-admin is checked against (store/privileges.py _check_owner).
DATABASE_OWNER = "SELECT owner, owner_type FROM dbs WHERE name = $1"

PARTITION_EXISTS = "SELECT 1 FROM partitions WHERE table_id = $1 AND part_name = $2 AND dropped_wid IS NULL"
