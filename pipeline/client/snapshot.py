"""A pinned snapshot: the ValidTxnList and, per table, its ValidWriteIdList and table id.

Plain strings and ints, so it pickles into Spark tasks unchanged and every executor reads exactly
what the driver pinned. `read_context` builds the `ReadContext` each read carries; with `txn_id`
set the reader sees its own txn's uncommitted writes (the gateway's read-your-own-writes rule).
"""

from __future__ import annotations

from dataclasses import dataclass

from protos.metastore.v1 import catalog_pb2 as pb
from hive.writeids import ValidTxnList, ValidWriteIdList


def full_table_name(db: str, table: str) -> str:
    return f"{db}.{table}".lower()


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    full_name: str             # db.table, lower-case
    valid_write_id_list: str   # Hive's string: db.t:hwm:minOpen:open,...:aborted,...
    table_id: int
    txn_id: int = 0            # the reading txn (0: none)

    def read_context(self) -> pb.ReadContext:
        return pb.ReadContext(valid_write_id_list=self.valid_write_id_list, table_id=self.table_id, txn_id=self.txn_id)

    def write_ids(self) -> ValidWriteIdList:
        return ValidWriteIdList.parse(self.valid_write_id_list)

    @property
    def db_name(self) -> str:
        return self.full_name.split(".", 1)[0]

    @property
    def table_name(self) -> str:
        return self.full_name.split(".", 1)[1]


@dataclass(frozen=True, slots=True)
class Snapshot:
    valid_txn_list: str        # Hive's string: hwm:minOpen:open,...:aborted,...
    txn_id: int
    tables: tuple[TableSnapshot, ...]

    def table(self, db_or_full_name: str, table: str | None = None) -> TableSnapshot:
        name = full_table_name(db_or_full_name, table) if table is not None else db_or_full_name.lower()
        for t in self.tables:
            if t.full_name == name:
                return t
        raise KeyError(f"table {name} is not in this snapshot (it has {', '.join(t.full_name for t in self.tables)})")

    def read_context(self, db_or_full_name: str, table: str | None = None) -> pb.ReadContext:
        return self.table(db_or_full_name, table).read_context()

    def txn_list(self) -> ValidTxnList:
        return ValidTxnList.parse(self.valid_txn_list)
