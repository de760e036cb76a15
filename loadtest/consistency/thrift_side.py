"""The Thrift side of the consistency run: each gateway's Hive Thrift endpoint (a small pool of
asyncio thriftpy2 connections), the Hive 4 requests that carry a reader's snapshot (`validWriteIdList`
and the table `id`, as gRPC's ReadContext), a Thrift answer (`ThriftOutcome`: the parsed struct, or the
exception's type and message), and the projections that put a Thrift answer and a gRPC answer side by
side (partition names, values, locations, parameters) or a Thrift answer beside an external table's
history (model.ext_projection's shapes)."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Any, Sequence

import thriftpy2.rpc
from thriftpy2.thrift import TApplicationException, TException
from thriftpy2.transport import TTransportException

from gateway.thrift.idl import SERVICE, hms
from loadtest.consistency.model import DB, DS_VALUES, HOURS, NOT_IN_SNAPSHOT, part_name
from loadtest.harness import CALL_TIMEOUT_S, Endpoint
from protos.metastore.v1 import catalog_pb2 as pb

# Hive 4's request shapes with a snapshot, and the gRPC read each one mirrors (get_partitions_req: every
# partition, up to maxParts; over gRPC GetPartitionsByFilter with no filter).
THRIFT_METHODS = ("get_table_req", "get_partitions_by_names_req", "get_partition_names_ps_req", "get_partitions_req")
# More of them, compared with the oracle's Thrift answer only: the partitions of a partial specification.
# (Not get_partition_req: it reads the table, for the keys that make the name of its values, and then the
# partition, two decisions of the cache, or one when the first refuses, which the driver's count of reads
# sent against the caches' lookups could not follow.)
THRIFT_ONLY_METHODS = ("get_partitions_ps_with_auth_req",)
# Hive 2.3's (and Trino's) calls, which carry no snapshot: a transactional table answers its latest
# committed state. Requests are their argument tuples.
HIVE2_METHODS = ("get_table", "get_partitions_by_names", "get_partition_names")
EVERY_PARTITION = "hr >= 0"  # GetPartitionsByFilter's filter matching every partition of the run's tables
GRPC_TWIN = {"get_table_req": "GetTable", "get_partitions_by_names_req": "GetPartitionsByNames",
             "get_partition_names_ps_req": "ListPartitionNames", "get_partitions_req": "GetPartitionsByFilter"}


@dataclass(frozen=True)
class ThriftOutcome:
    """A Thrift read's answer: the parsed result struct, or the exception's type name and message (a
    declared exception keeps the connection; anything else, transport errors included, closes it)."""

    reply: Any = None
    error: str = ""
    details: str = ""

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def too_old(self) -> bool:
        return not self.ok and "snapshot too old" in self.details

    @property
    def of_the_snapshot(self) -> bool:
        """As Outcome.of_the_snapshot."""
        return self.ok or (self.error == "NoSuchObjectException" and NOT_IN_SNAPSHOT in self.details)

    def same(self, other: "ThriftOutcome") -> bool:
        if self.ok != other.ok:
            return False
        return self.reply == other.reply if self.ok else (self.error, self.details) == (other.error, other.details)

    def render(self, limit: int = 1500) -> str:
        text = repr(self.reply) if self.ok else f"{self.error}: {self.details}"
        return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


class ThriftEndpoint:
    """One gateway's Hive Thrift API. A thriftpy2 connection carries one call at a time, so each call
    takes an idle connection (or opens one) and gives it back; reads are counted in the gateway's
    `Endpoint.reads_sent`, as its cache decides them like gRPC reads."""

    def __init__(self, endpoint: Endpoint, address: str) -> None:
        self.endpoint = endpoint
        self.name = endpoint.name
        self.address = address
        host, port = address.rsplit(":", 1)
        self._host, self._port = host, int(port)
        self._idle: list[Any] = []

    async def call(self, method: str, request: Any) -> ThriftOutcome:
        self.endpoint.reads_sent += 1
        client = self._idle.pop() if self._idle else await thriftpy2.rpc.make_aio_client(
            SERVICE, self._host, self._port, timeout=int(CALL_TIMEOUT_S * 1000))
        keep = False  # a connection left mid-call (an error, a cancellation) may still get its reply: closed
        try:
            call = getattr(client, method)
            outcome = ThriftOutcome(await (call(*request) if isinstance(request, tuple) else call(request)))
            keep = True
            return outcome
        except (TTransportException, TApplicationException, OSError, asyncio.TimeoutError) as exc:
            return ThriftOutcome(error=type(exc).__name__, details=str(exc))
        except TException as exc:  # an exception the method declares: the connection stays usable
            keep = True
            return ThriftOutcome(error=type(exc).__name__, details=str(getattr(exc, "message", exc)))
        finally:
            if keep:
                self._idle.append(client)
            else:
                client.close()

    def close(self) -> None:
        for client in self._idle:
            client.close()
        self._idle.clear()


# -- requests -----------------------------------------------------------------------------------------


def snapshot_fields(ctx: pb.ReadContext) -> dict[str, Any]:
    """A gRPC ReadContext as Hive 4 sends it: the write-id list and the table id (-1: no id guard). Hive's
    requests carry no txn id; a reader's txn has written nothing, so it changes nothing it sees."""
    return {"validWriteIdList": ctx.valid_write_id_list, "id": ctx.table_id or -1}


def thrift_request(method: str, table: str, ctx: pb.ReadContext | None, *, names: list[str] | None = None,
                   max_parts: int = -1, part_values: Sequence[str] = ()) -> Any:
    """The Hive 4 request `method` on `DB.table`, with `ctx`'s snapshot (None: none, the latest state):
    `names` for get_partitions_by_names_req; Hive's partial specification `part_values` (a value per
    leading key, '' for any) and `max_parts` for the others. A HIVE2_METHODS call (no snapshot: `ctx`
    must be None) is its tuple of arguments."""
    assert ctx is None or method not in HIVE2_METHODS, f"{method} carries no snapshot"
    if method == "get_table":
        return (DB, table)
    if method == "get_partitions_by_names":
        return (DB, table, list(names or []))
    if method == "get_partition_names":
        return (DB, table, max_parts)
    snap = snapshot_fields(ctx) if ctx is not None else {}
    if method == "get_table_req":
        return hms.GetTableRequest(dbName=DB, tblName=table, **snap)
    if method == "get_partitions_by_names_req":
        return hms.GetPartitionsByNamesRequest(db_name=DB, tbl_name=table, names=list(names or []), **snap)
    if method == "get_partitions_req":
        return hms.PartitionsRequest(dbName=DB, tblName=table, maxParts=max_parts, **snap)
    if method == "get_partitions_ps_with_auth_req":
        return hms.GetPartitionsPsWithAuthRequest(dbName=DB, tblName=table, partVals=list(part_values),
                                                  maxParts=max_parts, **snap)
    return hms.GetPartitionNamesPsRequest(dbName=DB, tblName=table, partValues=list(part_values), maxParts=max_parts,
                                          **snap)


def random_partial(rng: random.Random) -> list[str]:
    """A partial specification of (ds, hr): none, a day, an hour of any day, or both (the day may be
    one that needs escaping in a name, or one no partition has)."""
    ds = rng.choice((*DS_VALUES, "2030-01-01"))
    hr = str(rng.randrange(HOURS))
    return rng.choice(([], [ds], ["", hr], [ds, hr]))


def grpc_twin(method: str, request: Any, ctx: pb.ReadContext | None) -> Any:
    """The gRPC read that describes the same objects as the Thrift `request` (every name, one page),
    with `ctx` (None: no read context, as the Thrift request without a snapshot)."""
    twin: Any
    if method == "get_table_req":
        twin = pb.GetTableRequest(db_name=DB, table_name=request.tblName)
    elif method == "get_partitions_by_names_req":
        twin = pb.GetPartitionsByNamesRequest(db_name=DB, table_name=request.tbl_name, names=request.names)
    elif method == "get_partitions_req":
        # (gRPC's max_parts 0 is no limit, Hive's maxParts 0 none: a twin is drawn with -1 or a positive one;
        # gRPC refuses an empty filter, and every partition of these tables has an hour, 0 or more)
        assert request.maxParts != 0, "maxParts 0 has no gRPC twin"
        twin = pb.GetPartitionsByFilterRequest(db_name=DB, table_name=request.tblName, filter=EVERY_PARTITION,
                                               max_parts=request.maxParts)
    else:
        twin = pb.ListPartitionNamesRequest(db_name=DB, table_name=request.tblName)
    if ctx is not None:
        twin.read.CopyFrom(ctx)
    return twin


def render_request(method: str, request: Any) -> str:
    return f"{method}{request!r}" if isinstance(request, tuple) else f"{method}({request!r})"


# -- projections ------------------------------------------------------------------------------------------


def _params(parameters: Any) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((parameters or {}).items()))


def thrift_view(method: str, reply: Any) -> tuple[Any, ...]:
    """What a Thrift answer says of the objects, in the terms both protocols share: a table's names, id,
    location, parameters, columns and keys; each partition's name, values, location and parameters (its
    columns are left out: over gRPC a partition without columns of its own carries none); the names."""
    if method == "get_table_req":
        t = reply.table
        return ("table", t.dbName, t.tableName, t.id, t.sd.location if t.sd else "", _params(t.parameters),
                tuple((c.name, c.type) for c in (t.sd.cols if t.sd else None) or ()),
                tuple((k.name, k.type) for k in t.partitionKeys or ()))
    if method in ("get_partitions_by_names_req", "get_partitions_req"):
        return ("parts", tuple((part_name(p.values), tuple(p.values), p.sd.location if p.sd else "",
                                _params(p.parameters)) for p in reply.partitions or ()))
    return ("names", tuple(reply.names or ()))


def grpc_view(method: str, reply: Any) -> tuple[Any, ...]:
    """thrift_view's terms for the gRPC twin's answer."""
    if method == "get_table_req":
        t = reply.table
        return ("table", t.db_name, t.name, t.table_id, t.sd.location, _params(t.parameters),
                tuple((c.name, c.type) for c in t.columns), tuple((k.name, k.type) for k in t.partition_keys))
    if method in ("get_partitions_by_names_req", "get_partitions_req"):
        # Thrift answers a read by names in name order, as Hive does; gRPC in the request's order.
        found = sorted(reply.partitions, key=lambda p: p.name) if method == "get_partitions_by_names_req" \
            else reply.partitions
        return ("parts", tuple((p.name, tuple(p.values), p.sd.location, _params(p.parameters)) for p in found))
    return ("names", tuple(reply.names))


def latest_projection(method: str, request: Any, reply: Any) -> tuple[Any, ...]:
    """model.state_matches' shape for a Thrift read without a snapshot (a table's latest state, or an
    ACID table's latest committed one): the table's tag and columns; each partition's name, tag and
    columns (a partition without columns of its own shows the table's); the names."""
    def cols(sd: Any) -> tuple[tuple[str, str], ...]:
        return tuple((c.name, c.type) for c in (sd.cols if sd else None) or ())

    def parts(found: Any) -> tuple[Any, ...]:
        return tuple((part_name(p.values), (p.parameters or {}).get("tag", ""), cols(p.sd)) for p in found or ())

    if method in ("get_table", "get_table_req"):
        table = reply if method == "get_table" else reply.table
        return ("table", (table.parameters or {}).get("tag", ""), cols(table.sd))
    # A read by names is answered in name order (as Hive answers it), each partition once.
    if method == "get_partitions_by_names":
        return ("parts", tuple(sorted(dict.fromkeys(request[2]))), parts(reply))
    if method == "get_partitions_by_names_req":
        return ("parts", tuple(sorted(dict.fromkeys(request.names))), parts(reply.partitions))
    if method == "get_partition_names":
        return ("ps", (), request[2] if request[2] > 0 else -1, tuple(reply or ()))  # 0: every name (Hive 2.3)
    if method == "get_partition_names_ps_req":
        return ("ps", tuple(request.partValues or ()), request.maxParts, tuple(reply.names or ()))
    partial = request.partVals if method == "get_partitions_ps_with_auth_req" else ()
    return ("ps", tuple(partial or ()), request.maxParts, parts(reply.partitions))
