"""Apache Thrift's TJSONProtocol encoding of a thriftpy2 struct, as Java's
`new TSerializer(new TJSONProtocol.Factory()).toString(obj, "UTF-8")` writes it: what Hive's JSON
notification messages carry as `tableObjJson`, `partitionListJson`, `functionObjJson`, `dbJson`...

thriftpy2's own JSON protocol is a different format (field names as keys); Hive's TDeserializer reads
only this one: a struct is `{"<id>":{"<type>":value},...}` in the IDL's field order, unset fields left
out; a list or set `["<type>",size,items...]`; a map `["<key type>","<value type>",size,{key:value,...}]`
with keys in a JSON object (numbers quoted, as Java's pair context writes them); a bool `1`/`0` under
"tf"; strings JSON-escaped with non-ASCII characters as UTF-8 (Java's TJSONProtocol escapes only `"`,
`\\` and control characters, as `json.dumps(..., ensure_ascii=False)` does); binary as base64.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from thriftpy2.thrift import TType

_NAMES = {TType.BOOL: "tf", TType.BYTE: "i8", TType.I16: "i16", TType.I32: "i32", TType.I64: "i64",
          TType.DOUBLE: "dbl", TType.STRING: "str", TType.BINARY: "str", TType.STRUCT: "rec", TType.MAP: "map",
          TType.SET: "set", TType.LIST: "lst"}


def tjson(obj: Any) -> str:
    """`obj` (a thriftpy2 struct) in TJSONProtocol's text."""
    out: list[str] = []
    _struct(obj, out)
    return "".join(out)


def _struct(obj: Any, out: list[str]) -> None:
    out.append("{")
    first = True
    for fid, spec in obj.thrift_spec.items():
        value = getattr(obj, spec[1])
        if value is None:
            continue
        if not first:
            out.append(",")
        first = False
        ttype = spec[0]
        args = spec[2] if len(spec) == 4 else None
        out.append(f'"{fid}":{{"{_NAMES[ttype]}":')
        _value(ttype, args, value, out, key=False)
        out.append("}")
    out.append("}")


def _split(spec: Any) -> tuple[int, Any]:
    """An element spec (a TType, or (TType, its arguments)) as (TType, arguments)."""
    return (spec[0], spec[1]) if isinstance(spec, tuple) else (spec, None)


def _value(ttype: int, args: Any, value: Any, out: list[str], *, key: bool) -> None:
    if ttype == TType.BOOL:
        out.append('"1"' if key and value else '"0"' if key else "1" if value else "0")
    elif ttype in (TType.BYTE, TType.I16, TType.I32, TType.I64):
        out.append(f'"{int(value)}"' if key else str(int(value)))
    elif ttype == TType.DOUBLE:
        out.append(_double(float(value), key))
    elif ttype == TType.STRING:
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        out.append(json.dumps(value, ensure_ascii=False))
    elif ttype == TType.BINARY:
        out.append('"' + base64.b64encode(value).decode("ascii").rstrip("=") + '"')
    elif ttype == TType.STRUCT:
        _struct(value, out)
    elif ttype in (TType.LIST, TType.SET):
        etype, eargs = _split(args)
        items = list(value)
        out.append(f'["{_NAMES[etype]}",{len(items)}')
        for item in items:
            out.append(",")
            _value(etype, eargs, item, out, key=False)
        out.append("]")
    elif ttype == TType.MAP:
        (ktype, kargs), (vtype, vargs) = _split(args[0]), _split(args[1])
        out.append(f'["{_NAMES[ktype]}","{_NAMES[vtype]}",{len(value)},{{')
        for i, (k, v) in enumerate(value.items()):
            if i:
                out.append(",")
            _value(ktype, kargs, k, out, key=True)
            out.append(":")
            _value(vtype, vargs, v, out, key=False)
        out.append("}]")
    else:
        raise TypeError(f"TJSONProtocol: no encoding for Thrift type {ttype}")


def _double(value: float, key: bool) -> str:
    """Java's Double.toString for the usual values; NaN and infinities quoted, as TJSONProtocol writes them."""
    if math.isnan(value):
        return '"NaN"'
    if math.isinf(value):
        return '"Infinity"' if value > 0 else '"-Infinity"'
    text = repr(value)
    return f'"{text}"' if key else text
