"""A transactional table keeps its files readable after the import: its write ids are seeded from the source.

The directories of a transactional table are named by the ids that wrote them: `delta_<w>_<w>` and `base_<w>`
by write ids in Hive 3 and 4, by txn ids in Hive 2.3 (which has no write ids), and Hive 3+'s compactions
add `_v<txn id>`. The gateway counts a table's write ids 1..seed as committed once the table is seeded
(store/txns.py seed_write_id), so seeding it, after the table is created and before any partition is added
under a write id of the gateway's own, makes every existing directory committed and keeps new ones above:

- a Hive 4 source: the table's largest allocated write id (get_max_allocated_table_write_id);
- a Hive 3 source, which lacks that call: the write-id high-water mark of the table's ValidWriteIdList under
  a txn list counting every txn up to the high-water mark (get_valid_write_ids), the same number;
- a Hive 2.3 source: the source's txn high-water mark (get_open_txns().txn_high_water_mark), as Hive 3's
  upgrade seeds NEXT_WRITE_ID from NEXT_TXN_ID, since its directories carry txn ids.

Then the gateway's txn ids are raised past the source's high-water mark (seed_txn_id), once, so no new
txn of the gateway's has an id some directory already names.

A table that open txns of the source are writing (a write lock of a txn on it, SHOW LOCKS) is refused: its
files are still changing and its largest id is not known yet; import it once the writers have stopped.
A read lock does not stop it. The check reads the locks once, before the table is created: stop writers
before importing, as the README says.
"""

from __future__ import annotations

from typing import Any, TextIO

from gateway.hms_import.endpoint import ThriftEndpoint
from gateway.hms_import.report import Summary
from gateway.thrift.idl import hms

KIND = "write ids"
# Hive's LockType: SHARED_READ 1, SHARED_WRITE 2, EXCLUSIVE 3, EXCL_WRITE 4 (Hive 4).
_WRITE_LOCKS = frozenset({2, 3, 4})


def is_transactional(table: Any) -> bool:
    return str((table.parameters or {}).get("transactional", "")).lower() == "true"


class WriteIdSeeder:
    """Seeds the gateway's copy of each transactional table (the module's docstring). One per import."""

    def __init__(self, source: ThriftEndpoint, gateway: ThriftEndpoint, summary: Summary, *, dry_run: bool,
                 out: TextIO) -> None:
        self._source = source
        self._gateway = gateway
        self._summary = summary
        self._dry_run = dry_run
        self._out = out
        self._source_hwm: int | None = None
        self._write_id_call: str | None = None  # the source's way to its tables' largest write id; "" none
        self._txn_ids_raised = False

    def source_txn_high_water_mark(self) -> int:
        if self._source_hwm is None:
            self._source_hwm = int(self._source.call("get_open_txns").txn_high_water_mark or 0)
        return self._source_hwm

    def writers(self, db: str, table: str) -> str | None:
        """Why the table cannot be imported now (open txns of the source write it), or None."""
        answer = self._source.call("show_locks", hms.ShowLocksRequest(dbname=db, tablename=table))
        txns = sorted({lock.txnid for lock in (answer.locks or [])
                       if lock.txnid and lock.type in _WRITE_LOCKS and (lock.tablename or "").lower() == table.lower()})
        if not txns:
            return None
        shown = ", ".join(map(str, txns[:10])) + (" ..." if len(txns) > 10 else "")
        return (f"open txns of the source write it (txn {shown}, holding or waiting for write locks on it); its files "
                "are still changing: import it again once they have ended (stop the writers first)")

    def expected_seed(self, db: str, table: str) -> int:
        """The write id the gateway's copy must have allocated at least (0: none needed)."""
        if self._write_id_call in (None, "get_max_allocated_table_write_id"):
            served, answer = self._source.has_method(
                "get_max_allocated_table_write_id", hms.MaxAllocatedTableWriteIdRequest(dbName=db, tableName=table))
            if served:
                self._write_id_call = "get_max_allocated_table_write_id"
                return int(answer.maxWriteId or 0)
            self._write_id_call = "get_valid_write_ids"
        if self._write_id_call == "get_valid_write_ids":
            every_txn = f"{self.source_txn_high_water_mark()}:{2**63 - 1}::"
            served, answer = self._source.has_method("get_valid_write_ids", hms.GetValidWriteIdsRequest(
                fullTableNames=[f"{db}.{table}"], validTxnList=every_txn))
            if served:
                return max((int(t.writeIdHighWaterMark or 0) for t in answer.tblValidWriteIds or []), default=0)
            self._write_id_call = ""  # Hive 2.3: no write ids; its directories carry txn ids
        return self.source_txn_high_water_mark()

    def gateway_max(self, db: str, table: str) -> int:
        answer = self._gateway.call("get_max_allocated_table_write_id",
                                    hms.MaxAllocatedTableWriteIdRequest(dbName=db, tableName=table))
        return int(answer.maxWriteId or 0)

    def seed(self, db: str, table: str, *, table_is_new: bool) -> bool:
        """Seed the gateway's `db.table`; False when it cannot be (then its partitions must not be added: they
        would take write ids the source's files already name). `table_is_new` in a dry run: nothing to read."""
        name = f"{db}.{table}"
        want = self.expected_seed(db, table)
        if want <= 0:
            return True
        have = 0 if (self._dry_run and table_is_new) else self.gateway_max(db, table)
        if have >= want:
            self._summary.add(KIND, "identical")
            return self.raise_txn_ids()  # also after a run that seeded the table and stopped before this
        if have > 0:
            self._summary.add(KIND, "failed", name=name, reason=(
                f"the gateway's table has write ids up to {have} of its own, below the source's {want} (was the "
                "source written after an earlier import?): it cannot be seeded any more, and the files of the "
                "ids between would read as uncommitted. Drop it on the gateway and import it again"))
            return False
        if self._dry_run:
            self._summary.would_copy[KIND] += 1
            self._out.write(f"would seed the write ids of {name} with {want}\n")
            return True
        try:
            self._gateway.call("seed_write_id", hms.SeedTableWriteIdsRequest(dbName=db, tableName=table,
                                                                           seedWriteId=want))
        except hms.MetaException as exc:  # a retry of a seed that did arrive: then it is seeded
            if self.gateway_max(db, table) < want:
                self._summary.add(KIND, "failed", name=name, reason=f"seed_write_id {want}: {exc.message}")
                return False
        self._summary.add(KIND, "copied")
        return self.raise_txn_ids()

    def raise_txn_ids(self) -> bool:
        """The gateway's next txn id above the source's high-water mark (checked once per import, not in a dry
        run); False when the gateway refuses it (then no partition is added: its own txn would take an id
        below)."""
        if self._dry_run or self._txn_ids_raised:
            return True
        hwm = self.source_txn_high_water_mark()
        try:
            if int(self._gateway.call("get_open_txns").txn_high_water_mark or 0) < hwm:
                self._gateway.call("seed_txn_id", hms.SeedTxnIdRequest(seedTxnId=hwm + 1))
        except hms.MetaException as exc:  # a retry of a seed that did arrive, or another import's: then it is past
            if int(self._gateway.call("get_open_txns").txn_high_water_mark or 0) < hwm:
                self._summary.add(KIND, "failed", name="(the gateway's txn ids)",
                                  reason=f"seed_txn_id {hwm + 1}: {exc.message}")
                return False
        self._txn_ids_raised = True
        return True
