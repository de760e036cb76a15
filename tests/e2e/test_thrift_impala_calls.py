"""What Impala's catalog server (catalogd) asks of its metastore before it can load a catalog or follow the
notification log: its event processor's configuration check (EventProcessorConfigValidator: get_config_value
of three of Hive's settings, which must read as Impala needs, or event processing never starts; Kudu's HMS
integration checks the transactional listener likewise) and the data connectors it lists at every start and
every INVALIDATE METADATA (CatalogServiceCatalog.reset -> refreshDataSources: when the list fails no database
is loaded), in the calls of the Hive 4 client Impala is built with."""

from __future__ import annotations

import pytest

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient

IMPALA_DEFAULT = "DEFAULT_CONFIG_VALUE"  # what Impala passes as the default of each config it checks


async def test_impalas_event_processor_config_check_passes(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw:
        client = ThriftClient(gw.thrift_port)
        try:
            for key, wanted in (("hive.metastore.notifications.add.thrift.objects", "true"),
                                ("hive.metastore.alter.notifications.basic", "false"),
                                ("hive.metastore.dml.events", "true")):
                assert await client("get_config_value", key, IMPALA_DEFAULT) == wanted, key
            assert await client("get_config_value", "hive.metastore.transactional.event.listeners", "") == (
                "org.apache.hive.hcatalog.listener.DbNotificationListener")
            # Its parameter filter is unset here: Impala's default comes back, which filters none of its keys.
            assert await client("get_config_value", "hive.metastore.notification.parameters.exclude.patterns",
                                IMPALA_DEFAULT) == IMPALA_DEFAULT
        finally:
            client.close()


async def test_no_data_connectors_are_kept_and_none_can_be_made(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw:
        client = ThriftClient(gw.thrift_port)
        try:
            assert await client("get_dataconnectors") == []
            with pytest.raises(hms.NoSuchObjectException, match="data connector 'mysql' does not exist"):
                await client("get_dataconnector_req", hms.GetDataConnectorRequest(connectorName="mysql"))
            connector = hms.DataConnector(name="mysql", type="mysql", url="jdbc:mysql://h/db")
            for method, argument in (("create_dataconnector", connector),
                                     ("create_dataconnector_req", hms.CreateDataConnectorRequest(connector=connector))):
                with pytest.raises(hms.MetaException, match="keeps no data connectors.*'mysql' was not created"):
                    await client(method, argument)
            with pytest.raises(hms.NoSuchObjectException, match="does not exist"):
                await client("alter_dataconnector_req", hms.AlterDataConnectorRequest(connectorName="mysql",
                                                                                       newConnector=connector))
            with pytest.raises(hms.NoSuchObjectException, match="does not exist"):
                await client("drop_dataconnector_req", hms.DropDataConnectorRequest(connectorName="mysql"))
            if_exists = hms.DropDataConnectorRequest(connectorName="mysql", ifNotExists=True)
            await client("drop_dataconnector_req", if_exists)  # Hive's flag: no error when it does not exist
            assert await client("get_dataconnectors") == []
        finally:
            client.close()


async def test_the_one_catalog(pg_dsn: str) -> None:
    """Hive 3's catalogs (Doris' Iceberg catalog on HMS reads hive's location with get_catalog): one, hive,
    at the warehouse root; no other can be made, and it cannot be dropped."""
    async with running_gateway(pg_dsn) as gw:
        client = ThriftClient(gw.thrift_port)
        try:
            assert (await client("get_catalogs")).names == ["hive"]
            for name in ("hive", "HIVE"):
                catalog = (await client("get_catalog", hms.GetCatalogRequest(name=name))).catalog
                assert (catalog.name, catalog.description) == ("hive", "Default catalog for Hive")
                assert catalog.locationUri == gw.settings.warehouse_root
            with pytest.raises(hms.NoSuchObjectException, match="catalog 'spark' does not exist"):
                await client("get_catalog", hms.GetCatalogRequest(name="spark"))
            def create(name: str) -> hms.CreateCatalogRequest:
                return hms.CreateCatalogRequest(catalog=hms.Catalog(name=name, locationUri="/x"))

            with pytest.raises(hms.AlreadyExistsException, match="Catalog hive already exists"):
                await client("create_catalog", create("hive"))
            with pytest.raises(hms.MetaException, match="one catalog, hive: catalog 'spark' was not created"):
                await client("create_catalog", create("spark"))
            with pytest.raises(hms.MetaException, match="Can not drop hive catalog"):
                await client("drop_catalog", hms.DropCatalogRequest(name="hive"))
            with pytest.raises(hms.NoSuchObjectException, match="catalog 'spark' does not exist"):
                await client("drop_catalog", hms.DropCatalogRequest(name="spark"))
        finally:
            client.close()
