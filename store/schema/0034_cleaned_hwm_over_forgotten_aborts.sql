-- 0034: the abort clean-up now raises a table's cleaned_hwm to the write ids it forgets
-- (store/sql/compaction.py FORGET_ABORTED_WRITE_IDS), so a list's high-water mark never falls below one
-- forgotten at the top of the table's ids. Ids it forgot before: a table whose newest allocated id has no
-- row had it forgotten (an open or aborted id keeps its row; a committed one loses it only below the
-- low-water mark, and cleaned_hwm then covers it), and so had every id between it and the newest row.
UPDATE next_write_id n SET cleaned_hwm = n.next - 1
WHERE n.cleaned_hwm < n.next - 1
  AND NOT EXISTS (SELECT 1 FROM txn_to_write_id tw WHERE tw.table_id = n.table_id AND tw.write_id = n.next - 1);
