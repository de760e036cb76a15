"""The Hive metastore Thrift IDL the gateway serves (protos/hive/hive_metastore.thrift), loaded once.

thriftpy2 builds the struct and service classes from the IDL at import; the C codec (cybin) encodes
and decodes them. `hms` is that module: `hms.Table`, `hms.ThriftHiveMetastore`, ...
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import thriftpy2

IDL_PATH = Path(__file__).resolve().parents[2] / "protos" / "hive" / "hive_metastore.thrift"

hms: Any = thriftpy2.load(str(IDL_PATH), module_name="hive_metastore_thrift")
SERVICE: Any = hms.ThriftHiveMetastore
