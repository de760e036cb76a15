"""The partition expressions of Hive's MSCK REPAIR TABLE ... DROP / SYNC PARTITIONS, read as Hive's
MsckPartitionExpressionProxy reads them. Pure: no I/O.

Hive's Msck does not serialize an expression tree for the partitions it drops (that would need Hive's
query compiler in the metastore): it writes their names as text, `(k1='v1' AND k2='v2') OR (...)`, each
key and value escaped as in a partition name (FileUtils.escapePathName, so a value holds no `'`, `=` or
`/`), and first sets its connection's `metastore.expression.proxy` to MsckPartitionExpressionProxy
(setMetaConf), whose filterPartitionsByExpr selects exactly the partitions of those names: each term is
turned back into a name `k1=v1/k2=v2`, unescaped, and compared with each partition's name, unescaped.
Nothing is undecided. A text that is not in that form is refused with the reason, where Hive's parser
would fail on it or read something else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from hive.errors import InvalidArgument
from hive.limits import preview
from hive.names import unescape_path_name
from hive.partition_expr import Pruned
from hive.schema import FieldSchema

# The connection setting (setMetaConf) under which a partition expression is read this way.
MSCK_EXPRESSION_PROXY = "org.apache.hadoop.hive.metastore.MsckPartitionExpressionProxy"

_TERM = re.compile(r"([^=' ]+)='([^']*)'")
_MAX_BYTES = 16 * 1024 * 1024


class NotMsckExpression(InvalidArgument):
    """Bytes that are not an MSCK expression: the reason says what was found."""


@dataclass(frozen=True, slots=True)
class MsckExpression:
    """The partitions an MSCK expression names, each as `k1=v1/k2=v2` unescaped."""

    names: frozenset[str]

    def prune(self, keys: Sequence[FieldSchema], partitions: Sequence[Sequence[str]]) -> Pruned:
        """The partitions (their values, in key order) whose names the expression lists."""
        key_names = [k.name for k in keys]
        selected = tuple(i for i, values in enumerate(partitions)
                         if "/".join(f"{k}={v}" for k, v in zip(key_names, values)) in self.names)
        return Pruned(selected, False)


def read_msck_expression(data: bytes) -> MsckExpression:
    """An MSCK expression's partition names; NotMsckExpression for bytes in another form."""
    if len(data) > _MAX_BYTES:
        raise NotMsckExpression(f"the expression has {len(data)} bytes, more than {_MAX_BYTES}")
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotMsckExpression(f"the expression is not UTF-8 text (byte {exc.start}): not MSCK's "
                                "(k='v' AND ...) OR (...)") from None
    names: set[str] = set()
    for alternative in text.split(" OR "):
        if len(alternative) < 2 or alternative[0] != "(" or alternative[-1] != ")":
            raise NotMsckExpression(f"{preview(alternative)} is not one of MSCK's (k='v' AND ...) terms")
        pairs = []
        for term in alternative[1:-1].split(" AND "):
            found = _TERM.fullmatch(term)
            if found is None:
                raise NotMsckExpression(f"{preview(term)} is not one of MSCK's k='v' comparisons")
            pairs.append(f"{unescape_path_name(found[1])}={unescape_path_name(found[2])}")
        names.add("/".join(pairs))
    return MsckExpression(frozenset(names))
