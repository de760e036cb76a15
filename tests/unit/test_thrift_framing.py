"""MessageScanner finds where a Thrift binary message ends however its bytes are split into reads,
and refuses hostile input before anything is allocated for it."""

from __future__ import annotations

import random
import struct

import pytest
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TMessageType
from thriftpy2.transport import TMemoryBuffer

from gateway.thrift.framing import MAX_DEPTH, MAX_ELEMENTS, FramingError, MessageScanner
from gateway.thrift.idl import hms

SERVICE = hms.ThriftHiveMetastore


def _message(method: str, strict: bool = True, **args: object) -> bytes:
    buf = TMemoryBuffer()
    proto = TBinaryProtocol(buf, strict_write=strict)
    proto.write_message_begin(method, TMessageType.CALL, 7)
    proto.write_struct(getattr(SERVICE, f"{method}_args")(**args))
    proto.write_message_end()
    return buf.getvalue()


def _partition(i: int) -> object:
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name=f"c{k}", type="bigint", comment="") for k in range(3)],
                               location=f"/w/t/ds={i}", numBuckets=-1, compressed=False,
                               serdeInfo=hms.SerDeInfo(serializationLib="s", parameters={"a": "b"}),
                               bucketCols=[], sortCols=[hms.Order(col="c0", order=1)], parameters={"k": "v" * i},
                               skewedInfo=hms.SkewedInfo(skewedColNames=["c0"], skewedColValues=[["1"], ["2"]],
                                                         skewedColValueLocationMaps={}))
    return hms.Partition(values=[str(i)], dbName="db", tableName="t", createTime=i, sd=sd,
                         parameters={"numRows": str(i), "x": ""})


MESSAGES = {
    "by names": _message("get_partitions_by_names", db_name="db", tbl_name="t",
                         names=[f"ds=2024-01-{i:02d}" for i in range(100)]),
    "add partitions": _message("add_partitions_req", request=hms.AddPartitionsRequest(
        dbName="db", tblName="t", parts=[_partition(i) for i in range(20)], ifNotExists=True, needResult=False)),
    "heartbeat range": _message("heartbeat_txn_range", txns=hms.HeartbeatTxnRangeRequest(min=1, max=9)),
    "no arguments": _message("get_all_databases"),
    "old header": _message("get_database", strict=False, name="default"),
    "oneway": _message("shutdown"),
}


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_each_split_of_a_message_ends_where_it_ends(name: str) -> None:
    message = MESSAGES[name]
    following = MESSAGES["no arguments"]
    rng = random.Random(name)
    splits = [list(range(1, len(message) + 1))] if len(message) < 4000 else []
    splits += [sorted(rng.sample(range(1, len(message)), k=min(len(message) - 1, 7))) + [len(message)]
               for _ in range(20)]
    for cuts in splits:
        scanner = MessageScanner(1 << 20)
        for cut in cuts[:-1]:
            assert scanner.scan(message[:cut]) is None, cut
        assert scanner.scan(message + following) == len(message)
        assert scanner.scan(following) == len(following), "the scanner starts afresh after a message"


def _header(method: str = "get_table") -> bytes:
    name = method.encode()
    return struct.pack("!iI", -0x7FFEFFFF, len(name)) + name + struct.pack("!i", 1)


@pytest.mark.parametrize("body, error", [
    (b"\x0f\x00\x01\x0b" + struct.pack("!i", 2**31 - 1), "would exceed"),        # a list of 2^31 strings
    (b"\x0b\x00\x01" + struct.pack("!i", -5), "negative"),                           # a negative string length
    (b"\x0d\x00\x01\x0b\x0b" + struct.pack("!i", 10**8), "would exceed"),          # a map too large
    (b"\x63\x00\x01", "unknown Thrift type code 99"),
    (b"\x0f\x00\x01\x63" + struct.pack("!i", 1), "unknown Thrift type code 99"),
    (b"\x0c\x00\x01" * (MAX_DEPTH + 2), "nested deeper"),
])
def test_hostile_bodies_are_refused_before_they_arrive(body: bytes, error: str) -> None:
    with pytest.raises(FramingError, match=error):
        MessageScanner(1 << 20).scan(_header() + body)


def test_more_elements_than_a_message_may_hold_are_refused_before_they_arrive() -> None:
    """20 million empty names fit in 100 MB; decoding them held the event loop for seconds (a security audit)."""
    names = b"\x0f\x00\x03\x0b" + struct.pack("!i", MAX_ELEMENTS + 1)
    with pytest.raises(FramingError, match="list, set or map elements in one message"):
        MessageScanner(1 << 30).scan(_header("get_partitions_by_names") + names)
    # In all, across containers: two lists of half as many and one more.
    half = b"\x0f\x00\x03\x03" + struct.pack("!i", MAX_ELEMENTS // 2) + b"\x00" * (MAX_ELEMENTS // 2)
    with pytest.raises(FramingError, match="list, set or map elements in one message"):
        MessageScanner(1 << 30).scan(_header() + half + half + b"\x0f\x00\x04\x03" + struct.pack("!i", 1))
    ok = b"\x0f\x00\x03\x03" + struct.pack("!i", MAX_ELEMENTS) + b"\x00" * MAX_ELEMENTS + b"\x00"
    assert MessageScanner(1 << 30).scan(_header() + ok) == len(_header() + ok)


def test_bad_headers_are_refused() -> None:
    with pytest.raises(FramingError, match="bad Thrift version"):
        MessageScanner(1 << 20).scan(struct.pack("!I", 0x80020001) + b"\0" * 8)
    with pytest.raises(FramingError, match="would exceed"):
        MessageScanner(1 << 10).scan(struct.pack("!i", 5000) + b"x")
    with pytest.raises(FramingError, match="would exceed"):
        MessageScanner(1 << 20).scan(struct.pack("!iI", -0x7FFEFFFF, 2**30))


def test_a_message_over_the_limit_is_refused() -> None:
    message = MESSAGES["by names"]
    with pytest.raises(FramingError, match="would exceed"):
        MessageScanner(len(message) // 2).scan(message)
    assert MessageScanner(len(message)).scan(message) == len(message)
