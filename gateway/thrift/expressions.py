"""How a Thrift connection's partition expressions are read (get_partitions_by_expr, SHOW PARTITIONS'
WHERE, DROP PARTITION by expressions): by the expression proxy the connection set (gateway/thrift/
meta_conf.py), as Hive's metastore reads them. Hive's own (the default) is a Kryo-serialized expression
tree (hive/kryo_expr.py, Hive 2.3's layout), pruned by PartitionPruner's rule (hive/partition_expr.py);
MSCK's is the text of the partition names it drops (hive/msck_expr.py)."""

from __future__ import annotations

import functools
from typing import Callable, Sequence

from gateway.thrift import meta_conf
from gateway.thrift.errors import bounded
from hive.kryo_expr import NotHive23Expression, decode_expression
from hive.msck_expr import NotMsckExpression, read_msck_expression
from hive.names import DEFAULT_PARTITION_NAME
from hive.partition_expr import NotServable, Pruned, prune
from hive.schema import FieldSchema

# The partitions (their values, in key order, over the table's partition keys) an expression selects.
Pruning = Callable[[Sequence[FieldSchema], Sequence[Sequence[str]]], Pruned]


def read_expression(data: bytes, default_partition_name: str | None) -> Pruning:
    """A partition expression's bytes read as this connection reads them, or NotServable saying why
    not: a text that is not MSCK's, a layout other than Hive 2.3's, or a default partition name other
    than this metastore's. Evaluating it may raise NotServable too (hive/partition_expr.py)."""
    if meta_conf.reads_msck_expressions():
        try:
            return read_msck_expression(data).prune
        except NotMsckExpression as exc:
            raise NotServable(f"{exc} (this connection set {meta_conf.EXPRESSION_PROXY} to MSCK's)") from None
    if default_partition_name not in (None, "", DEFAULT_PARTITION_NAME):
        raise NotServable(f"the default partition name {bounded(default_partition_name)} is not this "
                          f"metastore's ({DEFAULT_PARTITION_NAME})")
    try:
        return functools.partial(prune, decode_expression(data))
    except NotHive23Expression as exc:
        raise NotServable(str(exc)) from None
