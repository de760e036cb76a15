-- 0012: permanent functions, Hive's FUNCS and FUNC_RU in one table: what CREATE FUNCTION stores.
-- A function belongs to a database (the foreign key keeps a database with functions from going away
-- under a concurrent create); its name is unique there. `resource_uris` is a JSON array of
-- {"resource_type", "uri"} in the order they were given. Not versioned: functions are not
-- transactional in Hive either.
CREATE TABLE funcs (
    db_name        text NOT NULL REFERENCES dbs (name),
    func_name      text NOT NULL COLLATE "C",
    class_name     text NOT NULL,
    owner          text NOT NULL DEFAULT '',
    owner_type     text NOT NULL CHECK (owner_type IN ('USER', 'ROLE', 'GROUP')),
    function_type  text NOT NULL CHECK (function_type IN ('JAVA')),
    resource_uris  jsonb NOT NULL DEFAULT '[]',
    create_time    bigint NOT NULL,
    PRIMARY KEY (db_name, func_name)
);
