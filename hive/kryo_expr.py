"""Hive 2.3's partition expressions as its client sends them: Kryo bytes of an ExprNodeGenericFuncDesc.

Design note. Hive 2.3's `get_partitions_by_expr` (its DROP PARTITION and its planner's partition
pruning) and `drop_partitions_req` by expression carry `SerializationUtilities.serializeExpressionToKryo`:
`kryo.writeObject(expr)` with Hive's Kryo (references on, unregistered classes written by name, fields
in the order of their names, ints and longs as zig-zag varints). This module reads exactly the objects
Hive 2.3's DDLSemanticAnalyzer and PartitionPruner put there (the function classes of comparisons,
AND, OR, NOT, IN, BETWEEN, IS [NOT] NULL; column and constant descriptions; primitive type infos) and
nothing else: every class is known with its fields, every byte is read, and anything else (another
class, a field set that Hive 2.3 leaves unset, bytes left over, a Hive 3 or 4 layout) is refused with
the reason (`NotHive23Expression`), never read as something it is not. Pure: no I/O.

Kryo's wire rules used here (Kryo 3, as shaded in hive-exec 2.3): a class is a varint, 0 null, 1 a
name (a varint name id, then the name the first time that id is seen), n >= 2 the class registered
as n - 2 (Kryo's int, String, float, boolean, byte, char, short, long, double, void, then Hive's
java.sql.Date at 10 and java.sql.Timestamp at 11). An object of a class that uses references is
preceded by a varint: 0 null, 1 a new object (numbered in the order they are met), n >= 2 the object
numbered n - 2 again; the boxed primitives use none. A field of a final class (String, an enum) is
written without its class.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable, NoReturn, Union

from hive.errors import InvalidArgument

MAX_EXPRESSION_BYTES = 1 << 20
MAX_DEPTH = 64  # nesting of objects; Hive's expressions for a drop or a pruning nest a few levels


class NotHive23Expression(InvalidArgument):
    """Bytes that are not an expression this module reads (another client's layout, another function,
    a truncated or padded message): the reason says which byte and why."""


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type_name: str  # Hive's type name without parameters: string, int, date, varchar, decimal, ...


@dataclass(frozen=True, slots=True)
class Constant:
    type_name: str
    value: "ConstantValue"


@dataclass(frozen=True, slots=True)
class Call:
    function: str  # one of FUNCTIONS' values
    args: tuple["Expr", ...]


ConstantValue = Union[str, int, bool, Decimal, _dt.date, _dt.datetime, None]
Expr = Union[Column, Constant, Call]

_PLAN = "org.apache.hadoop.hive.ql.plan."
_UDF = "org.apache.hadoop.hive.ql.udf.generic."
_TYPEINFO = "org.apache.hadoop.hive.serde2.typeinfo."
_BOOLEAN_WRITABLE = "org.apache.hadoop.io.BooleanWritable"
_COMPARISONS = {"GenericUDFOPEqual": "=", "GenericUDFOPNotEqual": "<>", "GenericUDFOPLessThan": "<",
                "GenericUDFOPEqualOrLessThan": "<=", "GenericUDFOPGreaterThan": ">",
                "GenericUDFOPEqualOrGreaterThan": ">="}
FUNCTIONS = {**_COMPARISONS, "GenericUDFOPAnd": "and", "GenericUDFOPOr": "or", "GenericUDFOPNot": "not",
             "GenericUDFOPNull": "isnull", "GenericUDFOPNotNull": "isnotnull", "GenericUDFIn": "in",
             "GenericUDFBetween": "between"}

# Kryo's default registrations, then the one of Hive 2.3's SerializationUtilities a constant can hold.
_INT, _STRING, _BOOLEAN, _BYTE, _SHORT, _LONG, _SQL_DATE, _SQL_TIMESTAMP = 0, 1, 3, 4, 6, 7, 10, 11
_NULL, _NOT_NULL = 0, 1  # a reference varint (and a class varint's 0)
_NAME = 1  # a class varint: the class follows by name

_PENDING = object()  # an object whose reading has begun (a reference to it would be a cycle)


def decode_expression(data: bytes, *, day_of: Callable[[int], _dt.date] | None = None,
                      time_of: Callable[[int], _dt.datetime] | None = None) -> Expr:
    """The expression Hive 2.3's client serialized into `data`. `day_of` turns a java.sql.Date's
    milliseconds into its day, `time_of` a java.sql.Timestamp's whole seconds since 1970 into its
    (naive) date and time; by default in this process's time zone, as Hive's metastore reads them in its
    JVM's (Hive's client made the milliseconds from the date, or the date and time, in its own)."""
    if len(data) > MAX_EXPRESSION_BYTES:
        raise NotHive23Expression(f"the expression has {len(data)} bytes, more than {MAX_EXPRESSION_BYTES}")
    reader = _Reader(bytes(data), day_of or _local_day, time_of or _local_time)
    root = reader.root()
    if reader.pos != len(data):
        reader.fail(f"{len(data) - reader.pos} byte(s) after the expression")
    return root


def _local_day(millis: int) -> _dt.date:
    try:
        return _dt.datetime.fromtimestamp(millis / 1000).date()
    except (OverflowError, OSError, ValueError):
        raise NotHive23Expression(f"a date of {millis} ms since 1970 is out of range") from None


def _local_time(seconds: int) -> _dt.datetime:
    try:
        return _dt.datetime.fromtimestamp(seconds)
    except (OverflowError, OSError, ValueError):
        raise NotHive23Expression(f"a timestamp of {seconds} s since 1970 is out of range") from None


class _Reader:
    def __init__(self, data: bytes, day_of: Callable[[int], _dt.date],
                 time_of: Callable[[int], _dt.datetime]) -> None:
        self.data, self.pos, self._day_of, self._time_of = data, 0, day_of, time_of
        self._names: dict[int, str] = {}
        self._refs: list[object] = []
        self._depth = 0

    def fail(self, why: str) -> NoReturn:
        raise NotHive23Expression(f"not an expression of Hive 2.3's client at byte {self.pos}: {why}")

    # -- Kryo's primitives ------------------------------------------------------------------------

    def byte(self) -> int:
        if self.pos >= len(self.data):
            self.fail("the bytes end inside the expression")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        """An unsigned varint of at most 5 bytes (a Java int's 32 bits)."""
        result = 0
        for shift in range(0, 35, 7):
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                if result >= 1 << 32:
                    self.fail("a varint beyond 32 bits")
                return result
        self.fail("a varint longer than 5 bytes")

    def zigzag_int(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def zigzag_long(self) -> int:
        result = 0
        for i in range(9):
            b = self.byte()
            if i == 8:
                result |= b << 56
                break
            result |= (b & 0x7F) << (7 * i)
            if not b & 0x80:
                break
        return (result >> 1) ^ -(result & 1)

    def fixed(self, size: int) -> int:
        """A big-endian signed integer of `size` bytes (Kryo's writeLong, writeShort)."""
        return int.from_bytes(bytes(self.byte() for _ in range(size)), "big", signed=True)

    def boolean(self) -> bool:
        b = self.byte()
        if b > 1:
            self.fail(f"a boolean byte {b}")
        return b == 1

    def string(self) -> str | None:
        """Kryo's writeString: ASCII with the last byte's high bit set, or a length (chars + 1; 0 is
        null) and Kryo's UTF-8 of each UTF-16 unit."""
        start = self.pos
        first = self.byte()
        if not first & 0x80:
            while not self.byte() & 0x80:
                pass
            text = bytearray(self.data[start:self.pos])
            text[-1] &= 0x7F
            return text.decode("ascii")
        count = first & 0x3F
        if first & 0x40:
            for shift in (6, 13, 20, 27):
                b = self.byte()
                count |= (b & 0x7F) << shift
                if not b & 0x80:
                    break
            else:
                self.fail("a string length longer than 5 bytes")
        if count <= 1:
            return None if count == 0 else ""
        if count - 1 > len(self.data) - self.pos:
            self.fail(f"a string of {count - 1} characters in {len(self.data) - self.pos} bytes")
        units = []
        for _ in range(count - 1):
            b = self.byte()
            if b < 0x80:
                units.append(b)
            elif b >> 5 == 0b110:
                units.append((b & 0x1F) << 6 | self._continuation())
            elif b >> 4 == 0b1110:
                units.append((b & 0x0F) << 12 | self._continuation() << 6 | self._continuation())
            else:
                self.fail(f"a string byte {b:#x} that Kryo does not write")
        raw = b"".join(u.to_bytes(2, "little") for u in units)
        try:
            return raw.decode("utf-16-le")
        except UnicodeDecodeError:
            self.fail("a string with half of a surrogate pair")

    def _continuation(self) -> int:
        b = self.byte()
        if b >> 6 != 0b10:
            self.fail(f"a string byte {b:#x} where a continuation byte belongs")
        return b & 0x3F

    # -- classes and references -------------------------------------------------------------------

    def class_of(self) -> int | str | None:
        """None, a registered id (int) or a class name (str)."""
        n = self.varint()
        if n == _NULL:
            return None
        if n != _NAME:
            return n - 2
        name_id = self.varint()
        if name_id not in self._names:
            if name_id != len(self._names):
                self.fail(f"class name id {name_id} before {len(self._names)}")
            name = self.string()
            if not name:
                self.fail("an empty class name")
            self._names[name_id] = name
        return self._names[name_id]

    def referenced(self, read: Callable[[], object]) -> object:
        """An object of a class that uses references: null, a new one read by `read`, or one seen before."""
        n = self.varint()
        if n == _NULL:
            return None
        if n != _NOT_NULL:
            if n - 2 >= len(self._refs):
                self.fail(f"a reference to object {n - 2} of {len(self._refs)}")
            seen = self._refs[n - 2]
            if seen is _PENDING:
                self.fail("a reference to an object that contains it")
            return seen
        index = len(self._refs)
        self._refs.append(_PENDING)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            self.fail(f"objects nested deeper than {MAX_DEPTH}")
        value = read()
        self._depth -= 1
        self._refs[index] = value
        return value

    def any_object(self) -> object:
        """Kryo's writeClassAndObject: a class, then the object."""
        cls = self.class_of()
        if cls is None:
            return None
        if cls == _INT:
            return self.zigzag_int()
        if cls == _LONG:
            return self.zigzag_long()
        if cls == _SHORT:
            return self.fixed(2)
        if cls == _BYTE:
            return self.fixed(1)
        if cls == _BOOLEAN:
            return self.boolean()
        if cls == _STRING:
            return self.referenced(self._string_value)
        if cls == _SQL_DATE:
            return self.referenced(lambda: self._day_of(self.fixed(8)))
        if cls == _SQL_TIMESTAMP:
            return self.referenced(self._timestamp)
        if isinstance(cls, int):
            self.fail(f"a value of registered class {cls}, which Hive 2.3's expressions do not hold")
        reader = self._objects.get(cls)
        if reader is None:
            self.fail(f"class {cls}, which Hive 2.3's partition expressions do not hold")
        return self.referenced(lambda: reader(self))

    def _timestamp(self) -> _dt.datetime:
        """java.sql.Timestamp (Hive's TimestampSerializer): getTime()'s milliseconds (writeLong), then
        getNanos() (writeInt), which replaces the milliseconds' fraction of the second (the seconds are
        the milliseconds' floor, as Timestamp(long) makes them)."""
        millis, nanos = self.fixed(8), self.fixed(4)
        if not 0 <= nanos < 10**9:
            self.fail(f"a timestamp of {nanos} nanoseconds")
        if nanos % 1000:  # not a Python datetime: refused, never rounded
            raise NotHive23Expression(f"a timestamp constant of {nanos} nanoseconds past the second, finer than "
                                      "the microseconds this gateway compares")
        return self._time_of(millis // 1000).replace(microsecond=nanos // 1000)

    def _string_value(self) -> str:
        text = self.string()
        if text is None:
            self.fail("a null string where an object was announced")
        return text

    def string_field(self) -> str | None:
        """A field of type String (final: no class; a reference varint)."""
        value = self.referenced(self._string_value)
        assert value is None or isinstance(value, str)
        return value

    def null_field(self, what: str) -> None:
        """A field Hive 2.3's client leaves null in these expressions (set only once a UDF is initialized)."""
        if self.varint() != _NULL:
            self.fail(f"{what} is set, as only an initialized function's is (not what Hive 2.3's client sends)")

    # -- Hive's classes, their fields in Kryo's order (by name) ---------------------------------------

    def root(self) -> Expr:
        value = self.referenced(self._func)
        if not isinstance(value, Call):
            self.fail("the expression is null")
        return value

    def _func(self) -> Call:
        """ExprNodeGenericFuncDesc: chidren, genericUDF, isSortedExpr, typeInfo (funcText is transient)."""
        children = self.any_object()
        if not isinstance(children, tuple):
            self.fail("a function's children are not a list")
        udf = self.any_object()
        if not isinstance(udf, _Udf):
            self.fail("a function without its GenericUDF")
        self.boolean()  # isSortedExpr
        if self._type_name() != "boolean":
            self.fail(f"a {udf.function} whose type is not boolean")
        args: list[Expr] = []
        for child in children:
            if not isinstance(child, (Column, Constant, Call)):
                self.fail(f"an argument of {udf.function} that is not an expression")
            args.append(child)
        return Call(udf.function, tuple(args))

    def _type_name(self) -> str:
        info = self.any_object()
        if not isinstance(info, _TypeInfo):
            self.fail("an expression without its type")
        return info.name

    def _column(self) -> Column:
        """ExprNodeColumnDesc: column, isPartitionColOrVirtualCol, isSkewedCol, tabAlias, typeInfo."""
        name = self.string_field()
        self.boolean()
        self.boolean()
        self.string_field()
        if not name:
            self.fail("a column without a name")
        return Column(name, self._type_name())

    def _constant(self) -> Constant:
        """ExprNodeConstantDesc: typeInfo, value."""
        type_name = self._type_name()
        value = self.any_object()
        if value is not None and not isinstance(value, (str, int, bool, Decimal, _dt.date)):
            self.fail(f"a constant of type {type_name} holding another object")
        return Constant(type_name, value)

    def _list(self) -> tuple[object, ...]:
        """java.util.ArrayList (Kryo's CollectionSerializer): a size, then each element with its class."""
        size = self.varint()
        if size > len(self.data) - self.pos:
            self.fail(f"a list of {size} elements in {len(self.data) - self.pos} bytes")
        return tuple(self.any_object() for _ in range(size))

    def _primitive_type(self) -> _TypeInfo:
        """PrimitiveTypeInfo: typeName."""
        name = self.string_field()
        if not name:
            self.fail("a type without a name")
        return _TypeInfo(name)

    def _sized_type(self) -> _TypeInfo:
        """VarcharTypeInfo and CharTypeInfo: length, typeName (varchar or char)."""
        self.zigzag_int()
        return self._primitive_type()

    def _decimal_type(self) -> _TypeInfo:
        """DecimalTypeInfo: precision, scale, typeName."""
        self.zigzag_int()
        self.zigzag_int()
        return self._primitive_type()

    def _decimal(self) -> Decimal:
        """HiveDecimal (storage-api's FastHiveDecimal): fast0, fast1, fast2 (16 digits each, lowest first),
        fastIntegerDigitCount, fastScale, fastSerializationScale, fastSignum."""
        fast0, fast1, fast2 = self.zigzag_long(), self.zigzag_long(), self.zigzag_long()
        self.zigzag_int()
        scale = self.zigzag_int()
        self.zigzag_int()
        signum = self.zigzag_int()
        if signum not in (-1, 0, 1) or not 0 <= scale <= 38 or min(fast0, fast1, fast2) < 0:
            self.fail("a HiveDecimal that is not well formed")
        digits = (fast2 * 10**16 + fast1) * 10**16 + fast0
        return Decimal(signum * digits).scaleb(-scale)

    def _varchar(self) -> str:
        """HiveVarchar (a varchar key's constant, as Hive's converter makes it): value."""
        value = self.string_field()
        if value is None:
            self.fail("a HiveVarchar without its value")
        return value

    def _boolean_writable(self) -> _Writable:
        """BooleanWritable: value."""
        self.boolean()
        return _Writable()

    def _udf(self, cls: str) -> _Udf:
        """The function classes: their non-transient fields, which a function not yet initialized (what
        Hive 2.3's DDLSemanticAnalyzer makes and PartitionPruner clones) holds as constructed."""
        short = cls[len(_UDF):]
        function = FUNCTIONS[short]
        if short in _COMPARISONS:  # compareOI, compareType, opDisplayName, opName, result
            self._comparison_fields(short)
        elif short == "GenericUDFIn":  # bw, isInSetConstant
            self._writable()
            self.boolean()
        elif short == "GenericUDFBetween":  # argumentOIs, egt, elt, result
            self.null_field("BETWEEN's argumentOIs")
            for part in ("GenericUDFOPEqualOrGreaterThan", "GenericUDFOPEqualOrLessThan"):
                udf = self.any_object()
                if not isinstance(udf, _Udf) or udf.function != _COMPARISONS[part]:
                    self.fail(f"BETWEEN without its {part}")
            self._writable()
        else:  # AND, OR, NOT, IS [NOT] NULL: result
            self._writable()
        return _Udf(function)

    def _comparison_fields(self, short: str) -> None:
        self.null_field(f"{short}'s compareOI")
        self.null_field(f"{short}'s compareType")
        self.string_field()
        self.string_field()
        self._writable()

    def _writable(self) -> None:
        if not isinstance(self.any_object(), _Writable):
            self.fail("a function's result that is not a BooleanWritable")

    _objects: dict[str, Callable[[_Reader], object]] = {
        _PLAN + "ExprNodeGenericFuncDesc": lambda r: r._func(),
        _PLAN + "ExprNodeColumnDesc": lambda r: r._column(),
        _PLAN + "ExprNodeConstantDesc": lambda r: r._constant(),
        "java.util.ArrayList": lambda r: r._list(),
        _TYPEINFO + "PrimitiveTypeInfo": lambda r: r._primitive_type(),
        _TYPEINFO + "VarcharTypeInfo": lambda r: r._sized_type(),
        _TYPEINFO + "CharTypeInfo": lambda r: r._sized_type(),
        _TYPEINFO + "DecimalTypeInfo": lambda r: r._decimal_type(),
        "org.apache.hadoop.hive.common.type.HiveDecimal": lambda r: r._decimal(),
        "org.apache.hadoop.hive.common.type.HiveVarchar": lambda r: r._varchar(),
        _BOOLEAN_WRITABLE: lambda r: r._boolean_writable(),
        **{_UDF + short: (lambda r, cls=_UDF + short: r._udf(cls)) for short in FUNCTIONS},  # type: ignore[misc]
    }


@dataclass(frozen=True, slots=True)
class _TypeInfo:
    name: str


@dataclass(frozen=True, slots=True)
class _Udf:
    function: str


@dataclass(frozen=True, slots=True)
class _Writable:
    pass
