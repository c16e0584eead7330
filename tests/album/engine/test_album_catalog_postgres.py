"""What only the Postgres catalog has: URL handling, errors that name the URL and the fix (server down,
no database, no pgvector, no catalog, newer schema), indexes the filters use, vectors stored bit for bit,
the ``--catalog URL`` path through the CLI."""

from __future__ import annotations

import numpy as np
import pytest

from finegrain.album.engine.catalog import catalog_target, describe, is_postgres_url, open_catalog, postgres_schema
from finegrain.album.engine.catalog.postgres import PostgresCatalog
from finegrain.album.engine.catalog.schema import SCHEMA_VERSION
from finegrain.album.engine.records import Photo
from finegrain.cli.main import main
from finegrain.errors import FinegrainError


def test_urls_are_told_from_paths_and_passwords_never_printed(tmp_path) -> None:
    assert is_postgres_url("postgresql://u@h/db") and is_postgres_url(" postgres://u@h/db")
    assert not is_postgres_url("postgresql.sqlite") and not is_postgres_url(tmp_path / "postgresql:")
    assert catalog_target("postgresql://u@h/db") == "postgresql://u@h/db"
    assert catalog_target(str(tmp_path / "c.sqlite")) == tmp_path / "c.sqlite"
    assert describe("postgresql://me:s3cret@db.example:5433/album") == "postgresql://me:***@db.example:5433/album"
    assert describe("postgresql://me@h/album?sslmode=require") == "postgresql://me@h/album?sslmode=require"


def test_an_unreachable_server_is_an_error_naming_the_url_without_its_password() -> None:
    url = "postgresql://me:s3cret@127.0.0.1:1/album"  # port 1: nothing listens
    with pytest.raises(FinegrainError) as err:
        open_catalog(url)
    assert "postgresql://me:***@127.0.0.1:1/album" in err.value.message and "s3cret" not in str(err.value)
    assert "start the server or fix the URL" in err.value.hint


def test_a_missing_database_and_a_database_without_a_catalog(postgres_server, postgres_url) -> None:
    missing = postgres_url.replace("/t_", "/nope_")
    with pytest.raises(FinegrainError, match="does not exist") as err:
        open_catalog(missing)
    assert "createdb" in err.value.hint
    with pytest.raises(FinegrainError, match="no catalog in the database") as err:
        open_catalog(postgres_url, create=False)
    assert "album migrate" in err.value.hint
    with open_catalog(postgres_url) as s:  # create=True makes the tables
        s.set_meta("schema_version", SCHEMA_VERSION + 1)
    with pytest.raises(FinegrainError, match="newer"):
        open_catalog(postgres_url)


def _database_without_vector(server, name: str) -> str:  # noqa: ANN001
    with server.connect("postgres") as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        conn.execute(f'GRANT ALL ON DATABASE "{name}" TO PUBLIC')
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname='lowly'").fetchone():
            conn.execute("CREATE ROLE lowly LOGIN")
    with server.connect(name) as conn:
        conn.execute("GRANT ALL ON SCHEMA public TO PUBLIC")
    return server.url(name)


def test_pgvector_missing_or_not_allowed_says_what_to_do(postgres_server, monkeypatch) -> None:
    url = _database_without_vector(postgres_server, "novector")
    try:
        lowly = url.replace("postgres@", "lowly@")
        with pytest.raises(FinegrainError, match="no pgvector extension") as err:
            open_catalog(lowly)  # a user who may not create the extension
        assert "superuser" in err.value.hint and "CREATE EXTENSION vector" in err.value.hint
        assert "novector" in err.value.message
        monkeypatch.setattr(postgres_schema, "EXTENSION", "vector_not_installed_here")
        with pytest.raises(FinegrainError, match="no pgvector extension") as err:
            open_catalog(url)  # a server without pgvector at all
        assert "install pgvector" in err.value.hint
        monkeypatch.undo()
        with open_catalog(url) as s:  # a superuser creates it on first use
            s.put_embedding("a", "m", np.ones(3, np.float32))
        with pytest.raises(FinegrainError, match="permission denied for table meta") as err:
            open_catalog(lowly, create=False)  # the extension is there now; the tables are not lowly's
        assert "GRANT" in err.value.hint
    finally:
        postgres_server.drop_database(url)


def test_vectors_are_stored_bit_for_bit_and_bad_ones_refused(postgres_url) -> None:
    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((5, 512)).astype(np.float32)
    vecs[0, :4] = [1e-45, -0.0, 3.4028235e38, 1 / 3]  # subnormal, negative zero, max float32
    with open_catalog(postgres_url) as s:
        for i, v in enumerate(vecs):
            s.put_embedding(f"p{i}", "clip", v)
        ids, matrix = s.get_embeddings("clip")
        assert ids == [f"p{i}" for i in range(5)] and matrix.tobytes() == vecs.tobytes()
        kinds = dict(s._all("SELECT column_name, udt_name FROM information_schema.columns WHERE table_name='embeddings'"))
        assert kinds["vector"] == "vector"
        nearest = s._one("SELECT photo_id FROM embeddings WHERE model_id='clip' ORDER BY vector <=> %b LIMIT 1",
                         (postgres_schema.PgVector(vecs[3]),))
        assert nearest == ("p3",)  # the column is a real pgvector column
        for bad, why in ((np.array([np.nan, 1.0]), "NaN"), (np.zeros(0), "0 dimensions")):
            with pytest.raises(FinegrainError, match=why):
                s.put_embedding("p9", "clip", bad)
        assert s.get_embeddings("clip")[0] == ids  # nothing half-written


def test_filters_use_indexes(postgres_url) -> None:
    """With sequential scans discouraged (the test tables are tiny), every filter has an index to use."""
    with open_catalog(postgres_url) as s:
        s.put_photo(Photo("a", "/a"))
        plans = {
            "time": "SELECT id FROM photos WHERE taken_local >= '2023' AND taken_local < '2024'",
            "place": "SELECT id FROM photos WHERE place_id IN (SELECT place_id FROM place_names WHERE name='x')",
            "person": "SELECT photo_id FROM faces WHERE person_id='p1'",
            "tag": "SELECT photo_id FROM time_tags WHERE tag='season:summer'",
            "path": "SELECT id FROM photos WHERE path='/a'",
        }
        with s.snapshot():
            s._execute("SET LOCAL enable_seqscan = off")
            for name, sql in plans.items():
                plan = " ".join(r[0] for r in s._all("EXPLAIN " + sql))
                assert "Index" in plan and "Seq Scan on photos" not in plan, (name, plan)


def test_the_cli_takes_a_url_for_every_catalog_command(album_dir, postgres_url, capsys, monkeypatch) -> None:
    assert main(["album", "import-photobench", str(album_dir), "--catalog", postgres_url, "--lang", "en", "-q"]) == 0
    out = capsys.readouterr().out
    assert "1069 photos" in out and "catalog: postgresql://" in out
    assert main(["album", "people", "-c", postgres_url, "--name", "2=彤彤"]) == 0
    assert "彤彤" in capsys.readouterr().out
    assert main(["album", "search", "-c", postgres_url, "photos in Yantian District"]) == 0
    assert "yantian" in capsys.readouterr().out.lower()
    served = []  # album serve builds the page over the URL (the server itself is not started here)
    monkeypatch.setattr("finegrain.album.engine.web.server.serve", lambda app, *a, **k: served.append(app))
    assert main(["album", "serve", "-c", postgres_url, "--search-processes", "0"]) == 0
    from fastapi.testclient import TestClient

    with TestClient(served[0], base_url="http://127.0.0.1:8765") as client:  # a loopback Host: the CLI allows only those
        people = client.get("/api/people").json()["people"]
    assert "彤彤" in next(p["names"] for p in people if p["id"] == "2")
    with PostgresCatalog(postgres_url, create=False) as s:
        assert s.count_photos() == 1069 and "彤彤" in s.get_person("2").names
