"""Hive's permanent functions over Thrift: what Spark SQL's and Hive's CREATE FUNCTION, DROP FUNCTION,
SHOW FUNCTIONS and DESCRIBE FUNCTION send, what Hive's CLI reads when a session starts
(`get_all_functions`) and what Spark and Hive look a function up by when a query names it
(`get_function`). The rules are the store's (store/functions.py); functions are not cached, so every
gateway answers what PostgreSQL holds.
"""

from __future__ import annotations

from typing import Any

from gateway.thrift import convert
from gateway.thrift.convert import matches_none, required
from gateway.thrift.idl import hms
from store.catalog_store import CatalogStore
from store.errors import InvalidArgument


def _with_class(func: Any) -> Any:
    """`func`, or InvalidArgument when it names no class: Hive refuses a null className only (its
    validateFunctionInfo), and stores '' or ' ' as given (CREATE FUNCTION f AS '' in Spark), which the
    store cannot tell from null once converted."""
    if func.className is None:
        raise InvalidArgument("Function class name cannot be null")
    return func


class FunctionMethods:
    """Mixed into the Thrift handler; needs `_catalog`."""

    _catalog: CatalogStore

    async def create_function(self, func: Any) -> None:
        await self._catalog.create_function(convert.function_from_thrift(_with_class(required(func, "func"))))

    async def get_function(self, dbName: str | None, funcName: str | None) -> Any:  # noqa: N803 - Hive's names
        return convert.function_to_thrift(await self._catalog.get_function(required(dbName, "dbName"),
                                                                           required(funcName, "funcName")))

    async def get_functions(self, dbName: str | None, pattern: str | None) -> list[str]:  # noqa: N803
        if matches_none(pattern):
            return []
        return await self._catalog.list_function_names(required(dbName, "dbName"), pattern or "")

    async def get_all_functions(self) -> Any:
        return hms.GetAllFunctionsResponse(functions=[convert.function_to_thrift(f)
                                                      for f in await self._catalog.all_functions()])

    async def alter_function(self, dbName: str | None, funcName: str | None, newFunc: Any) -> None:  # noqa: N803
        await self._catalog.alter_function(required(dbName, "dbName"), required(funcName, "funcName"),
                                           convert.function_from_thrift(_with_class(required(newFunc, "newFunc"))))

    async def drop_function(self, dbName: str | None, funcName: str | None) -> None:  # noqa: N803
        await self._catalog.drop_function(required(dbName, "dbName"), required(funcName, "funcName"))
