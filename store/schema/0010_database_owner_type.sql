-- 0010: a database's owner type (Hive's PrincipalType name: USER, ROLE or GROUP), which the Thrift
-- API carries (Database.ownerType) and Hive's default database has as ROLE (owner 'public').
ALTER TABLE dbs ADD COLUMN owner_type text NOT NULL DEFAULT 'USER'
    CHECK (owner_type IN ('USER', 'ROLE', 'GROUP'));

-- The default database this gateway created (before it kept owner types) is Hive's: owned by the role.
UPDATE dbs SET owner_type = 'ROLE'
WHERE name = 'default' AND owner = 'public' AND description = 'Default Hive database';
