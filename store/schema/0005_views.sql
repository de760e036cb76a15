-- 0005: views (Hive's VIRTUAL_VIEW). Their text and the other Hive fields that are not columns of
-- their own (sort columns, skew, owner type, per-partition columns) live in the body documents.
ALTER TABLE tbls DROP CONSTRAINT tbls_table_type_check;
ALTER TABLE tbls ADD CONSTRAINT tbls_table_type_check
    CHECK (table_type IN ('MANAGED_TABLE', 'EXTERNAL_TABLE', 'VIRTUAL_VIEW'));
