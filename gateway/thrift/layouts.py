"""Calls whose Hive 2.3 argument layout differs from the one the gateway's IDL declares (Hive 3's and 4's),
read again in 2.3's when the message is in it (protos/hive/hive23_layouts.thrift).

fire_listener_event: Hive 3 put `replace` (a bool) at field 1 of InsertEventRequestData, where Hive 2.3
has `filesAdded` (a list), and moved `filesAdded` to field 2, where 2.3 has the checksums. Read in the
newer layout, a 2.3 request loses its files (field 1 skipped as a bool of the wrong type) and offers its
checksums as the files. Which layout a message is in is decided by that field's wire type, the one thing
that tells them apart: a list at field 1 is 2.3's (the newer clients send a bool there or nothing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import thriftpy2
from thriftpy2.protocol.cybin import TCyBinaryProtocol
from thriftpy2.transport import TCyMemoryBuffer

from gateway.thrift.idl import IDL_PATH, hms

hive23: Any = thriftpy2.load(str(Path(IDL_PATH).with_name("hive23_layouts.thrift")),
                             module_name="hive23_layouts_thrift")


def _read_hive23(name: str, message: bytes) -> Any:
    proto = TCyBinaryProtocol(TCyMemoryBuffer(message))
    proto.read_message_begin()
    args = getattr(hive23.ThriftHiveMetastore, f"{name}_args")()
    proto.read_struct(args)
    return args


def _fire_listener_event(message: bytes, args: Any) -> Any:
    old = _read_hive23("fire_listener_event", message).rqst
    insert = old.data.insertData if old is not None and old.data is not None else None
    if insert is None or insert.filesAdded is None:
        return args  # the newer layout
    args.rqst = hms.FireEventRequest(
        successful=old.successful, dbName=old.dbName, tableName=old.tableName, partitionVals=old.partitionVals,
        data=hms.FireEventRequestData(insertData=hms.InsertEventRequestData(
            filesAdded=insert.filesAdded, filesAddedChecksum=insert.filesAddedChecksum)))
    return args


# Method -> a function of the message and its arguments as the IDL read them, answering the arguments to call with.
REREAD: dict[str, Callable[[bytes, Any], Any]] = {"fire_listener_event": _fire_listener_event}
