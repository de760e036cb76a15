"""What "the same object" means between a Hive metastore and the gateway: both read as plain data, without
what differs between two metastores by nature, then compared field by field.

Left out of the comparison (as tests/e2e/test_thrift_differential.py's `_normal` leaves them out):
- create, access, analyze and grant times: each metastore stamps its own;
- the parameters `transient_lastDdlTime`, `numFiles` and `totalSize`: the DDL time is the metastore's, and
  Hive's metastore reads the file statistics from the file system when it creates a table or partition;
- a column comment None against '' (the gateway stores no comment as '', Hive keeps null);
- an unset skewedInfo against an empty one;
- fields the source leaves unset (None): an older Hive does not know them (Hive 2.3 has no catName, writeId,
  ownerType of a table, ...), so the gateway's value of them says nothing about the copy;
- the privileges a Database, Table or Partition carries (Hive fills them in for one caller only, and the
  grants are compared on their own: grants.py);
- what each metastore numbers or names for itself: a table's id, write id and txn id (their IDL default, -1,
  when a source leaves them unset), the catalog name (this gateway has the one catalog `hive`), and whether
  statistics are compliant with a snapshot (computed per read);
- the `default` database's location: each metastore roots it at its own warehouse.
"""

from __future__ import annotations

from typing import Any, Iterator

TIMES = frozenset({"createTime", "lastAccessTime", "lastAnalyzed", "grantTime"})
VOLATILE_PARAMETERS = frozenset({"transient_lastDdlTime", "numFiles", "totalSize"})
NOT_COPIED = frozenset({"privileges", "colStats"})
OWN_NUMBERS = frozenset({"id", "writeId", "txnId", "catName", "catalogName", "isStatsCompliant"})
# A few differences worth saying in full; anything longer is cut (a differing view text, say).
_SHOWN = 200


def plain(obj: Any) -> Any:
    """A thriftpy2 answer as dicts, lists and scalars, without what differs by nature (the module's
    docstring); a struct's type is kept under "type"."""
    if isinstance(obj, (list, tuple)):
        return [plain(x) for x in obj]
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items() if k not in VOLATILE_PARAMETERS}
    if hasattr(obj, "thrift_spec"):
        fields = {name: plain(getattr(obj, name)) for name in _field_names(obj)
                  if name not in TIMES and name not in NOT_COPIED and name not in OWN_NUMBERS}
        kind = type(obj).__name__
        if kind == "FieldSchema" and fields.get("comment") is None:
            fields["comment"] = ""
        if kind == "StorageDescriptor" and fields.get("skewedInfo") is None:
            fields["skewedInfo"] = {"type": "SkewedInfo", "skewedColNames": [], "skewedColValues": [],
                                    "skewedColValueLocationMaps": {}}
        if kind == "Database" and fields.get("name") == "default":
            fields.pop("locationUri", None)
        return {"type": kind, **fields}
    return obj


def _field_names(obj: Any) -> Iterator[str]:
    for spec in obj.thrift_spec.values():
        yield spec[1]


def differences(source: Any, gateway: Any, path: str = "") -> list[str]:
    """Each difference of the gateway's `plain` copy from the source's, as 'path: source X, gateway Y'; none
    when they are the same. A field the source leaves unset is not compared (the module's docstring)."""
    out: list[str] = []
    _diff(source, gateway, path, out)
    return out


def _diff(a: Any, b: Any, path: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        struct = "type" in a
        for key in sorted(set(a) | set(b), key=str):
            if struct and a.get(key) is None:
                continue  # the source does not know the field
            sub = f"{path}.{key}" if path else str(key)
            if key not in b:
                out.append(f"{sub}: source {_show(a[key])}, gateway has none")
            elif key not in a:
                out.append(f"{sub}: source has none, gateway {_show(b[key])}")
            else:
                _diff(a[key], b[key], sub, out)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{path}[{i}]", out)
        return
    if a != b:
        out.append(f"{path or 'value'}: source {_show(a)}, gateway {_show(b)}")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"... ({len(text)} characters)"
