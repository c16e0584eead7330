"""The album catalog: the storage protocol and its embedded SQLite implementation."""

from finegrain.album.catalog.schema import SCHEMA_VERSION
from finegrain.album.catalog.sqlite import SqliteCatalog, open_catalog
from finegrain.album.catalog.store import CatalogStore, PhotoFilter

__all__ = ["SCHEMA_VERSION", "CatalogStore", "PhotoFilter", "SqliteCatalog", "open_catalog"]
