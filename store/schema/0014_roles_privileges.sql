-- 0014: Hive's roles and privileges (ROLES, ROLE_MAP and the six *_PRIVS tables): what SQL-standard
-- authorization in Hive (GRANT, REVOKE, CREATE ROLE, SHOW GRANT) and Trino's `sql-standard`
-- security store in the metastore. The metastore only keeps them; the engines enforce them.
-- Not versioned and not cached, as in Hive: every read is PostgreSQL's.

-- Role names are kept as sent (Hive's metastore is case-sensitive here; its clients lower-case them).
CREATE TABLE roles (
    role_name    text PRIMARY KEY COLLATE "C",
    owner_name   text,
    create_time  bigint NOT NULL
);

-- Who holds a role: a user, a group or another role (Hive's ROLE_MAP). A dropped role's memberships go
-- with it; the rows where it is the member are deleted by drop_role (store/privileges.py).
CREATE TABLE role_grants (
    role_name       text NOT NULL COLLATE "C" REFERENCES roles (role_name) ON DELETE CASCADE,
    principal_name  text NOT NULL COLLATE "C",
    principal_type  text NOT NULL CHECK (principal_type IN ('USER', 'ROLE', 'GROUP')),
    grant_option    boolean NOT NULL,
    grant_time      bigint NOT NULL,
    grantor         text,
    grantor_type    text CHECK (grantor_type IN ('USER', 'ROLE', 'GROUP')),
    PRIMARY KEY (role_name, principal_name, principal_type)
);
CREATE INDEX role_grants_by_principal ON role_grants (principal_name, principal_type);

-- One privilege of one principal on one object. The object: GLOBAL (nothing else set), a DATABASE
-- (db_name), or a TABLE, PARTITION or COLUMN of a table, by the table's stable id so that a rename
-- keeps them (Hive moves its rows on a rename); part_name is Hive's partition name, '' for the whole
-- table, column_name '' but for COLUMN. A table's rows go when it is dropped, a partition's with it
-- (store/catalog.py); a database's when it is dropped (the foreign key).
CREATE TABLE privileges (
    object_type     text NOT NULL CHECK (object_type IN ('GLOBAL', 'DATABASE', 'TABLE', 'PARTITION', 'COLUMN')),
    db_name         text COLLATE "C" REFERENCES dbs (name) ON DELETE CASCADE,   -- DATABASE only
    table_id        bigint NOT NULL DEFAULT 0,                                   -- TABLE, PARTITION, COLUMN
    part_name       text NOT NULL DEFAULT '' COLLATE "C",
    column_name     text NOT NULL DEFAULT '' COLLATE "C",
    principal_name  text NOT NULL COLLATE "C",
    principal_type  text NOT NULL CHECK (principal_type IN ('USER', 'ROLE', 'GROUP')),
    privilege       text NOT NULL COLLATE "C",
    grant_option    boolean NOT NULL,
    create_time     bigint NOT NULL,
    grantor         text,
    grantor_type    text CHECK (grantor_type IN ('USER', 'ROLE', 'GROUP')),
    CHECK ((object_type = 'DATABASE') = (db_name IS NOT NULL)),
    CHECK ((object_type IN ('GLOBAL', 'DATABASE')) = (table_id = 0))
);
-- A principal holds a privilege on an object once, whoever granted it (Hive refuses a second grant).
CREATE UNIQUE INDEX privileges_key ON privileges (object_type, coalesce(db_name, ''), table_id, part_name,
                                                  column_name, principal_name, principal_type, privilege);
CREATE INDEX privileges_by_table ON privileges (table_id) WHERE table_id <> 0;
CREATE INDEX privileges_by_principal ON privileges (principal_name, principal_type);

-- Hive's two built-in roles, as its metastore creates them at its first start: `admin`, which holds
-- every privilege on everything with the grant option, and `public`, which every user holds without a
-- row. The users named in hive.users.in.admin.role are granted `admin` by each gateway as it starts.
INSERT INTO roles (role_name, owner_name, create_time)
VALUES ('admin', 'admin', extract(epoch FROM now())::bigint), ('public', 'public', 0);
INSERT INTO privileges (object_type, principal_name, principal_type, privilege, grant_option, create_time,
                        grantor, grantor_type)
VALUES ('GLOBAL', 'admin', 'ROLE', 'All', true, extract(epoch FROM now())::bigint, 'admin', 'ROLE');
