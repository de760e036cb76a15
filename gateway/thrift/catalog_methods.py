"""Hive 3's catalogs over Thrift: this metastore has one, `hive` (catalog_names.py), whose location is the
warehouse root, as Hive's default catalog is. Doris' Iceberg-on-HMS catalog reads it (get_catalog) for its
warehouse location and fails without it; creating another or dropping it is refused, saying so.
"""

from __future__ import annotations

from typing import Any

from gateway.config import Settings
from gateway.thrift.catalog_names import check_catalog
from gateway.thrift.convert import required
from gateway.thrift.idl import hms
from hive.limits import preview
from hive.names import DEFAULT_CATALOG_NAME
from store.errors import AlreadyExists, NeverAllowed

# Hive's schema scripts' description of its default catalog.
_DESCRIPTION = "Default catalog for Hive"


class CatalogMethods:
    """Mixed into the Thrift handler; needs `_settings`."""

    _settings: Settings

    async def get_catalog(self, catName: Any) -> Any:  # noqa: N803 - Hive's name
        """The one catalog by its name, in any case; another is NoSuchObjectException."""
        name = required(required(catName, "catName").name, "name")
        check_catalog(name)
        return hms.GetCatalogResponse(catalog=hms.Catalog(name=DEFAULT_CATALOG_NAME, description=_DESCRIPTION,
                                                          locationUri=self._settings.warehouse_root))

    async def get_catalogs(self) -> Any:
        return hms.GetCatalogsResponse(names=[DEFAULT_CATALOG_NAME])

    async def create_catalog(self, catalog: Any) -> None:
        name = str(required(required(required(catalog, "catalog").catalog, "catalog").name, "catalog.name"))
        if name.lower() == DEFAULT_CATALOG_NAME:
            raise AlreadyExists(f"Catalog {DEFAULT_CATALOG_NAME} already exists")
        raise NeverAllowed(f"this metastore has one catalog, {DEFAULT_CATALOG_NAME}: catalog {preview(name, 80)} was "
                           "not created")

    async def drop_catalog(self, catName: Any) -> None:  # noqa: N803 - Hive's name
        name = str(required(required(catName, "catName").name, "name"))
        check_catalog(name)
        raise NeverAllowed(f"Can not drop {DEFAULT_CATALOG_NAME} catalog")
