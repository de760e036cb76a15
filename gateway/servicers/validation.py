"""Request checks that need the gateway's settings (the store checks names and values)."""

from __future__ import annotations

from typing import Literal, NoReturn, Sequence, TypeVar

from google.protobuf.message import Message

from gateway import convert
from protos.metastore.v1 import catalog_pb2 as pb
from store.errors import InvalidArgument, ResourceExhausted
from store.models import Partition

M = TypeVar("M", bound=Message)
REPLY_BUDGET = 3 * 1024 * 1024
"""The most a list reply carries, under a default client's 4 MB receive limit."""
REPLY_ENVELOPE = 1024
"""What a list reply's other fields (a flag, a count) take at most, beside its rows."""


def reply_budget(max_message_bytes: int) -> int:
    """The most a list reply carries: REPLY_BUDGET, or less when hive.metastore.server.max.message.size
    (`max_message_bytes`, at least config.MIN_MESSAGE_BYTES) is smaller, the reply's other fields aside."""
    return min(REPLY_BUDGET, max_message_bytes - REPLY_ENVELOPE)


def require(value: str, what: str) -> str:
    if not value:
        raise InvalidArgument(f"{what} is required")
    return value


def check_batch(count: int, what: str, limit: int, *, allow_empty: bool = False,
                setting: str = "metastore.gateway.max.batch.size") -> None:
    """At most `limit` items in one request (the `setting`); none only where the API allows it (Hive's
    Thrift calls do)."""
    if count == 0 and not allow_empty:
        raise InvalidArgument(f"{what}: the batch is empty")
    if count > limit:
        raise ResourceExhausted(f"{what}: {count} items in one request, more than {setting} ({limit}); "
                                "split the request into batches")


def within_reply_budget(rows: Sequence[M], max_rows: int, budget: int = REPLY_BUDGET) -> tuple[list[M], bool]:
    """The leading rows that fit `max_rows` and `budget` bytes, and whether any were left out."""
    kept: list[M] = []
    size = 0
    for row in rows[:max_rows]:
        size += row.ByteSize() + 8  # the field's tag and length
        if size > budget:
            break
        kept.append(row)
    return kept, len(kept) < len(rows)


def check_names_fit(names: Sequence[str], what: str, call: str, budget: int = REPLY_BUDGET) -> None:
    """A list of names has no paging (Hive's get_all_tables has none either): refuse one that would not
    fit a reply (`budget`: reply_budget of the message size) rather than send what the client cannot
    receive, or what gRPC would refuse to send with a message that names neither the call nor the fix."""
    size = sum(len(n.encode()) + 3 for n in names)
    if size > budget:
        raise ResourceExhausted(f"{call}: the {len(names)} {what} take {size} bytes, more than one reply holds "
                                f"({budget}); narrow the request with a pattern")


EVENT_ID_FIELD_BYTES = 11
"""The most a reply's `event_id` takes: its tag and a 10-byte varint (the id is not known before commit)."""


def field_bytes(size: int) -> int:
    """What an element of `size` bytes of a repeated message field (numbered under 16) takes in its
    message: its tag, its length as a varint, and itself."""
    return 1 + max(1, (size.bit_length() + 6) // 7) + size


_PAST = {"add": "added", "alter": "altered"}


class PartitionsAnswer:
    """A write's answer of partitions, encoded inside the write's transaction (store/catalog.py
    CheckAnswer) so that one larger than `max_message_bytes` (hive.metastore.server.max.message.size,
    the server's grpc.max_send_message_length) refuses the write instead: gRPC checks a reply's size only
    once the handler has returned it, and would fail the call of a write that is committed. `verb` is
    the write's ("add": AddPartitions, "alter": AlterPartitions); both replies are the partitions and
    an event id."""

    def __init__(self, call: str, max_message_bytes: int, verb: Literal["add", "alter"] = "add") -> None:
        self._call = call
        self._limit = max_message_bytes
        self._verb = verb
        self.partitions: list[pb.Partition] = []

    def __call__(self, written: Sequence[Partition]) -> None:
        encoded = [convert.partition_to_pb(p) for p in written]
        size = EVENT_ID_FIELD_BYTES + sum(field_bytes(p.ByteSize()) for p in encoded)
        if size > self._limit:
            done = _PAST[self._verb]
            what = (f"the partition {written[0].name} {done}" if len(written) == 1
                    else f"the {len(written)} partitions {done}")
            fewer = "" if len(written) == 1 else f" or {self._verb} fewer partitions per call"
            raise ResourceExhausted(
                f"{self._call}: its answer would take {size} bytes for {what}, more than "
                f"hive.metastore.server.max.message.size ({self._limit}), the largest message this gateway sends; "
                f"nothing was {done}. Set need_result false (the answer then holds no partitions: read them with "
                f"GetPartitionsByNames){fewer}")
        self.partitions = encoded  # a retried transaction encodes its own


def refuse_partitions_reply(call: str, reply: bytes, max_message_bytes: int, table: str, fewer: str) -> NoReturn:
    """Refuse a read's serialized answer of partitions (field 1 of GetPartitionsByNamesResponse and
    GetPartitionsByFilterResponse) larger than `max_message_bytes` (hive.metastore.server.max.message.size):
    ResourceExhausted saying so, with `fewer` (how to ask for less), or, when one partition alone would
    not fit any answer, naming it: only a larger setting lets any call read it. gRPC's own refusal
    ("Sent message larger than max") names neither. The caller compares the size first (a hit's only
    cost), so only an answer that is over is decoded here."""
    parts = pb.GetPartitionsByNamesResponse.FromString(reply).partitions
    largest = max(parts, key=lambda p: p.ByteSize())
    alone = field_bytes(largest.ByteSize())
    if alone > max_message_bytes:
        raise ResourceExhausted(
            f"{call}: partition {largest.name} of {table} alone takes {alone} bytes in an answer, more than "
            f"hive.metastore.server.max.message.size ({max_message_bytes}), the largest message this gateway "
            "sends, so no call can read it: raise that setting (and the client's receive limit)")
    raise ResourceExhausted(
        f"{call}: the answer of {len(parts)} partitions of {table} would take {len(reply)} bytes, more than "
        f"hive.metastore.server.max.message.size ({max_message_bytes}), the largest message this gateway "
        f"sends; {fewer}")


def page_token_bytes(name_bytes: int) -> int:
    """What a reply's next_page_token takes for a last name of `name_bytes` UTF-8 bytes (its base64)."""
    return field_bytes(4 * -(-name_bytes // 3))


def frames_that_fit(frames: Sequence[bytes], names: Sequence[str], max_message_bytes: int) -> int:
    """How many of a page's leading partitions (pre-framed elements, and their names) one reply of at
    most `max_message_bytes` carries together with the next page's token (base64 of the last name
    kept; counted for the last page too); 0 when not even the first does."""
    size = 0
    for kept, (frame, name) in enumerate(zip(frames, names)):
        size += len(frame)
        if size + page_token_bytes(len(name.encode())) > max_message_bytes:
            return kept
    return len(frames)


def names_that_fit(names: Sequence[str], max_message_bytes: int) -> int:
    """How many of a page's leading names one reply of at most `max_message_bytes` carries together
    with the next page's token (base64 of the last name kept; counted for the last page too): at
    least one."""
    # An upper bound first: a character takes at most 4 bytes, a name's element 4 more than its bytes,
    # the token at most 16/3 bytes per character of the last name kept and 8.
    if 4 * len(names) + 10 * sum(map(len, names)) + 8 <= max_message_bytes:
        return len(names)  # the common case, without a loop in Python
    size = 0
    for kept, name in enumerate(names):
        length = len(name.encode())
        size += field_bytes(length)
        if size + page_token_bytes(length) > max_message_bytes:
            return max(kept, 1)
    return len(names)
