"""store/cache/_frames.c against the rules it implements in C: FrameMap behaves as a dict of name to
frame under any sequence of changes (growth, and deletion that closes the gap behind it); its join
answers what the Python rule answers (`_from_live`: every name present in its stored spelling, each
answered once where first named, else None); EncodedNames reads the names protobuf reads."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protos.metastore.v1 import catalog_pb2 as pb
from store.cache._frames import EncodedNames, FrameMap

NAMES_FIELD = 3  # GetPartitionsByNamesRequest.names

# Names drawn from a pool repeat, fill the table's clusters and leave gaps when removed; non-ASCII
# letters check that keys are UTF-8.
# Names past 40 bytes are held outside the table's slots: some of each.
POOL = [f"k={i}" for i in range(40)] + ["", "é", "€/x", "𝄞=1", "k=1é"] + [f"{'x' * 40}={i}" for i in range(8)]
names_st = st.one_of(st.sampled_from(POOL), st.text(alphabet="ab=/1é€𝄞", max_size=6))
frames_st = st.binary(max_size=12)
ops_st = st.lists(st.tuples(st.sampled_from(["set", "set", "pop", "del", "pop_default"]), names_st, frames_st),
                  max_size=300)


def python_join(model: dict[str, bytes], names: Sequence[str]) -> bytes | None:
    """The rule of store/cache/sharded.py's live path, in Python."""
    requested = dict.fromkeys(names)
    if any(name not in model for name in requested):
        return None
    return b"".join(model[name] for name in requested)


def apply(ops: list[tuple[str, str, bytes]]) -> tuple[FrameMap, dict[str, bytes]]:
    frames, model = FrameMap(), {}
    for op, name, frame in ops:
        if op == "set":
            frames[name] = frame
            model[name] = frame
        elif op == "pop":
            if name in model:
                assert frames.pop(name) == model.pop(name)
            else:
                with pytest.raises(KeyError):
                    frames.pop(name)
        elif op == "del":
            if name in model:
                del frames[name]
                del model[name]
            else:
                with pytest.raises(KeyError):
                    del frames[name]
        else:
            assert frames.pop(name, None) == model.pop(name, None)
        assert len(frames) == len(model)
    return frames, model


@settings(max_examples=300, deadline=None)
@given(ops=ops_st, probes=st.lists(names_st, max_size=20))
def test_a_frame_map_is_a_dict_of_names_to_frames(ops: list[tuple[str, str, bytes]], probes: list[str]) -> None:
    frames, model = apply(ops)
    assert frames == model and dict(frames.items()) == model
    for name in list(model) + probes:
        assert (name in frames) == (name in model)
        assert frames.get(name) == model.get(name)
        assert frames.get(name, b"?") == model.get(name, b"?")
        if name in model:
            assert frames[name] == model[name]
        else:
            with pytest.raises(KeyError):
                frames[name]


@settings(max_examples=300, deadline=None)
@given(ops=ops_st, requested=st.lists(names_st, max_size=40))
def test_join_answers_the_python_rule_from_str_names_and_from_a_serialized_request(
        ops: list[tuple[str, str, bytes]], requested: list[str]) -> None:
    frames, model = apply(ops)
    # Mostly names that are there, so that whole hits are drawn too.
    present = [name for name in requested if name in model] or requested
    for names in (requested, present, present + present[:3]):
        expected = python_join(model, names)
        assert frames.join(names) == expected
        assert frames.join(tuple(names)) == expected
        request = pb.GetPartitionsByNamesRequest(db_name="db", table_name="t", names=names,
                                                 read=pb.ReadContext(valid_write_id_list="db.t:5:5::", txn_id=7))
        assert frames.join(EncodedNames(request.SerializeToString(), NAMES_FIELD)) == expected


def _name(i: int) -> str:
    return f"ds=2024-01-01/hour={i}/{'long' * 12}" if i % 7 == 0 else f"p={i}"


def test_a_join_of_many_names_and_of_none() -> None:
    frames = FrameMap()
    for i in range(5000):  # past the join's stack of 256 slots, and many growths; every 7th name a long one
        frames[_name(i)] = str(i).encode()
    names = [_name(i) for i in reversed(range(5000))]
    assert frames.join(names) == b"".join(str(i).encode() for i in reversed(range(5000)))
    assert frames.join([]) == b""
    assert frames.join(names + [_name(5000)]) is None
    for i in range(0, 5000, 2):
        del frames[_name(i)]
    assert len(frames) == 2500
    assert frames.join([_name(i) for i in range(1, 5000, 2)]) == b"".join(
        str(i).encode() for i in range(1, 5000, 2))


def test_join_refuses_what_is_not_a_name() -> None:
    frames = FrameMap()
    frames["p=1"] = b"x"
    with pytest.raises(TypeError):
        frames.join([b"p=1"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        frames[1] = b"x"  # type: ignore[index]
    with pytest.raises(TypeError):
        frames["p=2"] = "x"  # type: ignore[assignment]
    assert frames.join(["p=1", "p=1"]) == b"x"  # a failed join leaves no mark behind


def _field(number: int, wire_type: int, payload: bytes) -> bytes:
    return bytes([number << 3 | wire_type]) + payload


@settings(max_examples=300, deadline=None)
@given(names=st.lists(st.text(max_size=8), max_size=30),
       unknown=st.lists(st.sampled_from(["varint", "fixed64", "fixed32", "bytes"]), max_size=4))
def test_encoded_names_are_the_names_protobuf_reads(names: list[str], unknown: list[str]) -> None:
    serialized = pb.GetPartitionsByNamesRequest(db_name="db", table_name="t", names=names).SerializeToString()
    extra = {"varint": _field(9, 0, b"\x96\x01"), "fixed64": _field(10, 1, bytes(8)),
             "fixed32": _field(11, 5, bytes(4)), "bytes": _field(12, 2, b"\x03abc")}
    serialized += b"".join(extra[kind] for kind in unknown)  # fields this side does not know
    parsed = list(pb.GetPartitionsByNamesRequest.FromString(serialized).names)
    encoded = EncodedNames(serialized, NAMES_FIELD)
    assert list(encoded) == parsed and len(encoded) == len(parsed)
    assert isinstance(encoded, Sequence)
    if parsed:
        assert encoded[-1] == parsed[-1] and encoded[::2] == parsed[::2]
    with pytest.raises(IndexError):
        encoded[len(parsed)]


@pytest.mark.parametrize("serialized", [
    b"\x1a\x05ab",  # a name that runs past the message's end
    b"\x1a",  # a length that is not there
    b"\x08\xff\xff",  # a varint cut short
    b"\x0b\x0c",  # a group (proto2's), which proto3 has not
    b"\x09\x00\x00",  # a fixed64 cut short
])
def test_a_message_cut_short_is_refused(serialized: bytes) -> None:
    with pytest.raises(ValueError, match="not a serialized protobuf message"):
        EncodedNames(serialized, NAMES_FIELD)


@settings(max_examples=500, deadline=None)
@given(serialized=st.one_of(st.binary(max_size=64), st.lists(
    st.sampled_from([b"\x1a\x03p=1", b"\x1a\x00", b"\x08\x01", b"\x0a\x02db", b"\x22\x00", b"\x1a\x05ab", b"\xff",
                     b"\x80", b"\x1a\x80\x80\x80\x80\x10", b"\x0d\x00\x00\x00\x00"]), max_size=8).map(b"".join)))
def test_encoded_names_of_any_bytes_agree_with_protobuf_or_refuse(serialized: bytes) -> None:
    """Any bytes: EncodedNames reads what protobuf reads, or refuses with ValueError (never reads past the
    end). Protobuf may refuse what it reads too (a name that is not UTF-8: its error, when iterated)."""
    try:
        encoded = EncodedNames(serialized, NAMES_FIELD)
    except ValueError:
        return
    try:
        parsed = list(pb.GetPartitionsByNamesRequest.FromString(serialized).names)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError: a field of the wrong type or bad UTF-8
        return
    assert list(encoded) == parsed
