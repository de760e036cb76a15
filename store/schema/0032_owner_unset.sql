-- 0032: a database's or function's owner may be unset (NULL). Hive's metastore keeps one created or
-- altered without an owner as null, one sent as '' as '', and answers each as kept. Rows written before
-- kept '' for both and answered null over Thrift: they become NULL, so they read as before. (A table's
-- owner is in tbls.body, whose JSON already tells null from ''.)
ALTER TABLE dbs ALTER COLUMN owner DROP NOT NULL, ALTER COLUMN owner DROP DEFAULT;
UPDATE dbs SET owner = NULL WHERE owner = '';
ALTER TABLE funcs ALTER COLUMN owner DROP NOT NULL, ALTER COLUMN owner DROP DEFAULT;
UPDATE funcs SET owner = NULL WHERE owner = '';
