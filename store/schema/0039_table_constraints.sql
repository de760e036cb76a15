-- 0039: table constraints, Hive's KEY_CONSTRAINTS (store/constraints.py): primary and foreign keys, unique,
-- not-null, default and check constraints. One row per column of a constraint, keyed by the table's
-- database and the constraint's name (unique in its database, as in Hive 4) and the row's position in it.
-- The constraint's table (a foreign key's child) and a foreign key's parent are named by their stable table
-- ids: the rows follow a rename and go with a drop of either table (store/catalog.py), as in Hive; db_name
-- follows a move to another database. Columns are named, not numbered (Hive numbers them in its column
-- descriptor): an alter may not drop or rename a column a constraint names (store/catalog.py).
-- Not versioned and not cached: every read is PostgreSQL's, as for functions.
CREATE TABLE table_constraints (
    db_name          text NOT NULL COLLATE "C",
    constraint_name  text NOT NULL COLLATE "C",
    position         integer NOT NULL,  -- the row's place in its constraint, from 0 in the order added
    kind             text NOT NULL
        CHECK (kind IN ('primary_key', 'foreign_key', 'unique', 'not_null', 'default', 'check')),
    table_id         bigint NOT NULL,
    column_name      text NOT NULL COLLATE "C",
    key_seq          integer,           -- keys' (primary, foreign, unique) column order, from 1
    parent_table_id  bigint,            -- a foreign key's referenced table
    parent_column    text COLLATE "C",  -- and its column
    update_rule      integer,
    delete_rule      integer,
    value            text,              -- a default's value, a check's expression
    enable_cstr      boolean NOT NULL,
    validate_cstr    boolean NOT NULL,
    rely_cstr        boolean NOT NULL,
    PRIMARY KEY (db_name, constraint_name, position),
    CHECK ((kind = 'foreign_key') = (parent_table_id IS NOT NULL AND parent_column IS NOT NULL))
);
CREATE INDEX table_constraints_of_table ON table_constraints (table_id, kind);
CREATE INDEX table_constraints_of_parent ON table_constraints (parent_table_id) WHERE parent_table_id IS NOT NULL;
