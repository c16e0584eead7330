"""The album catalog: the storage protocol, its SQLite and Postgres implementations and the one opener."""

from finegrain.album.engine.catalog.opener import catalog_target, describe, open_catalog
from finegrain.album.engine.catalog.postgres_schema import is_postgres_url
from finegrain.album.engine.catalog.schema import SCHEMA_VERSION
from finegrain.album.engine.catalog.sqlite import SqliteCatalog
from finegrain.album.engine.catalog.store import CatalogStore, PhotoFilter

__all__ = ["SCHEMA_VERSION", "CatalogStore", "PhotoFilter", "SqliteCatalog", "catalog_target", "describe",
           "is_postgres_url", "open_catalog"]
