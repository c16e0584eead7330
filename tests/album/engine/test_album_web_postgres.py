"""The album page over a Postgres catalog: the same JSON as over SQLite, the map's cells where the
two databases round differently, and the change counter that drops cached answers.

* every view of the page (timeline pages, months, people, person pages, places in both
  languages, the map at several cell sizes, photo lists by place, person and box, photo detail,
  searches with the default engine) answers byte-for-byte equal JSON over a SQLite catalog and
  the same catalog migrated into Postgres (the migration verifies the copy is equal);
* map cells of points on both sides of zero and exactly half a cell off (where Postgres'
  ``round`` and ``CAST`` would round to even) equal a Python reference of SQLite's rule and
  each other;
* the Postgres change counter moves exactly once per commit that changed rows (not for reads,
  no-op writes or rolled-back ones), and a write through another connection (the CLI naming a
  person) drops the page's cached answers and the search worker's context.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("psycopg")
from fastapi.testclient import TestClient  # noqa: E402

from finegrain.album.bench.synthetic import build_synthetic_catalog  # noqa: E402
from finegrain.album.engine.catalog import open_catalog  # noqa: E402
from finegrain.album.engine.catalog.migrate import migrate_catalog  # noqa: E402
from finegrain.album.engine.records import Photo  # noqa: E402
from finegrain.album.engine.web.app import create_app  # noqa: E402
from finegrain.album.engine.web.queries import CatalogReader  # noqa: E402
from finegrain.album.engine.web.thumbs import cache_dir_for
from finegrain.cli.main import main  # noqa: E402
from finegrain.errors import FinegrainError  # noqa: E402


def _drop(server: Any, url: str) -> None:
    with server.connect("postgres") as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{urlsplit(url).path.lstrip("/")}" WITH (FORCE)')


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory, postgres_server: Any) -> Iterator[tuple[Path, str]]:
    """(a synthetic SQLite catalog, the same catalog migrated into Postgres)."""
    path = tmp_path_factory.mktemp("pair") / "synthetic.sqlite"
    build_synthetic_catalog(path, 400, seed=11)
    url = postgres_server.new_database("pair")
    migrate_catalog(path, url)
    yield path, url
    _drop(postgres_server, url)


def _views(client: TestClient) -> dict[str, Any]:
    """Every answer of the page's JSON views over one catalog, keyed by request."""
    out: dict[str, Any] = {}

    def get(path: str, **params: Any) -> Any:
        r = client.get(path, params=params)
        key = f"{path}?{sorted(params.items())}"
        out[key] = (r.status_code, r.content)
        assert r.status_code == 200, (key, r.text)
        return r.json()

    for lang in ("en", "zh"):
        page = get("/api/timeline", limit=37, lang=lang)
        while page["next"] is not None:
            page = get("/api/timeline", before=page["next"], limit=37, lang=lang)
        get("/api/timeline", before="2023-05", limit=20, lang=lang)
        places = get("/api/places", lang=lang)["places"]
        for city in places[:6]:
            get("/api/photos", place=city["key"], level=city["level"], limit=500, lang=lang)
            for d in city["districts"][:2]:
                get("/api/photos", place=d["name_en"] or d["name_zh"], limit=25, offset=3, lang=lang)
    people = get("/api/people")["people"]
    for person in people[:8]:
        get(f"/api/people/{person['id']}", limit=500)
    for cell in (0.0001, 0.01, 0.1, 1.0, 5.0):
        get("/api/map", cell=cell)
    get("/api/photos", bbox="20,100,35,125", limit=500)
    ids = [p["id"] for p in client.get("/api/timeline", params={"limit": 500}).json()["photos"]]
    for pid in ids[::17]:
        get(f"/api/photo/{pid}")
    for q in ("photos in Hangzhou", "photos with Vivi", "杭州的照片", "summer 2023", "photos of the beach"):
        for lang in (None, "zh"):
            get("/api/search", q=q, **({} if lang is None else {"lang": lang}))
    return out


def test_every_view_answers_the_same_json_over_sqlite_and_postgres(pair: tuple[Path, str]) -> None:
    path, url = pair
    with TestClient(create_app(path, thumb_cache=False)) as c:
        lite = _views(c)
    with TestClient(create_app(url, thumb_cache=False)) as c:
        pg = _views(c)
    assert lite.keys() == pg.keys() and len(lite) > 60
    for key in lite:
        assert lite[key] == pg[key], key


# ---------------------------------------------------------------- the map's cells


def _sqlite_round(x: float) -> int:
    """SQLite's ROUND(x) to an integer: add 0.5 to the magnitude, truncate (C doubles, as Python's)."""
    return int(math.copysign(math.trunc(abs(x) + 0.5), x)) if x else 0


COORDS = [(-2.5, -0.5), (2.5, 0.5), (-1.5, 1.5), (-0.015, 0.015), (-0.025, -179.995), (0.49999999999999994, -0.49999999999999994),
          (-33.8688, 151.2093), (37.7749, -122.4194), (-33.86885, 151.20935), (-90.0, 180.0), (89.99995, -180.0),
          (-0.0, 0.0), (-0.005, 0.005), (-12.345, -67.895), (-12.345, -67.895), (1e-9, -1e-9), (-0.145, 1.005)]


def _reference(cell: float) -> dict[str, Any]:
    counts = Counter((_sqlite_round(lat / cell), _sqlite_round(lon / cell)) for lat, lon in COORDS)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0], kv[0][1]))
    return {"points": [[round(a * cell, 6), round(b * cell, 6), n] for (a, b), n in rows], "located": len(COORDS)}


@pytest.fixture
def located(tmp_path: Path, postgres_url: str) -> Iterator[tuple[Path, str]]:
    path = tmp_path / "map.sqlite"
    photos = [Photo(f"p{i:02d}", f"/p{i:02d}.jpg", lat=lat, lon=lon) for i, (lat, lon) in enumerate(COORDS)]
    photos.append(Photo("nowhere", "/nowhere.jpg"))
    for target in (path, postgres_url):
        with open_catalog(target) as store:
            store.put_photos(photos)
    yield path, postgres_url


@pytest.mark.parametrize("cell", [1.0, 0.5, 0.1, 0.01, 0.001, 0.0001, 3.0])
def test_map_cells_with_negative_coordinates_and_halves_agree(located: tuple[Path, str], cell: float) -> None:
    answers = []
    for target in located:
        with TestClient(create_app(target, thumb_cache=False)) as c:
            r = c.get("/api/map", params={"cell": cell})
            assert r.status_code == 200
            answers.append(r.content)
    assert answers[0] == answers[1]
    body = json.loads(answers[0])
    ref = _reference(cell)
    assert body["points"] == ref["points"] and body["located"] == ref["located"] and body["unlocated"] == 1


def test_the_halves_are_where_postgres_would_round_to_even() -> None:
    """The reference is not Python's round (halves to even): the cases above tell them apart."""
    assert _sqlite_round(-2.5) == -3 and round(-2.5) == -2
    assert _sqlite_round(2.5) == 3 and round(2.5) == 2
    assert _sqlite_round(0.49999999999999994) == 1  # 0.49999999999999994 + 0.5 is 1.0 in doubles
    assert _sqlite_round(-0.145 / 0.01) == -14  # -14.499999999999998: the float quotient, not the decimal -14.5


# ---------------------------------------------------------------- the change counter


def test_the_change_counter_moves_once_per_commit_that_changed_rows(postgres_url: str) -> None:
    reader = CatalogReader(postgres_url)
    try:
        with open_catalog(postgres_url) as s:
            v = reader.data_version()

            def moved() -> int:
                nonlocal v
                now = reader.data_version()
                step, v = now - v, now
                return step

            s.put_photo(Photo("a", "/a.jpg"))
            assert moved() == 1
            s.mark_done("a", "exif")
            assert moved() == 1
            s.mark_done("a", "exif")  # already there: no row changed
            s.add_root("/photos")
            s.add_root("/photos")
            assert moved() == 1
            s.places(), s.people(), s.dump()  # reads and snapshots
            s.delete_embedding("a", "nothing")  # a write that matches no row
            assert moved() == 0
            with s.transaction():
                s.put_photo(Photo("b", "/b.jpg"))
                s.put_photo(Photo("c", "/c.jpg"))
                s.set_meta("k", 1)
            assert moved() == 1  # one commit
            with pytest.raises(RuntimeError), s.transaction():
                s.put_photo(Photo("d", "/d.jpg"))
                raise RuntimeError("rolled back")
            with pytest.raises(FinegrainError):
                s.name_person("nobody", ["x"])
            assert moved() == 0 and s.get_photo("d") is None
            with s.snapshot():  # a write inside a read snapshot still counts
                s.set_meta("k", 2)
            assert moved() == 1
    finally:
        reader.close()


def test_a_write_by_another_connection_drops_cached_answers_and_the_worker_context(pair: tuple[Path, str],
                                                                                   postgres_server: Any) -> None:
    url = postgres_server.new_database("write")
    try:
        migrate_catalog(pair[0], url)
        q = {"q": "photos with Zoe Quinn"}
        with TestClient(create_app(url, thumb_cache=False, search_processes=1)) as client:
            first = client.get("/api/search", params=q)
            assert first.headers["x-finegrain-cache"] == "miss" and first.json()["abstained"] is True
            again = client.get("/api/search", params=q)
            assert again.headers["x-finegrain-cache"] == "hit" and again.content == first.content
            people = client.get("/api/people").json()["people"]
            target = people[0]["id"]
            # the CLI, in this process but on its own connection, names the person
            assert main(["album", "people", "-c", url, "--name", f"{target}=Zoe Quinn"]) == 0
            fresh = client.get("/api/search", params=q)
            assert fresh.headers["x-finegrain-cache"] == "miss"
            with open_catalog(url, create=False) as store:
                theirs = store.ids_with_person(target)
            body = fresh.json()  # answered by the worker process: its context knows the new name
            assert body["abstained"] is False and body["total"] == len(theirs) > 0
            assert {r["id"] for r in body["results"]} <= theirs
            names = {p["id"]: p["names"] for p in client.get("/api/people").json()["people"]}
            assert "Zoe Quinn" in names[target]  # the cached people list was dropped too
    finally:
        _drop(postgres_server, url)


def test_album_serve_refuses_a_url_without_a_catalog(postgres_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["album", "serve", "-c", postgres_url, "--search-processes", "0"]) == 2
    err = capsys.readouterr().err
    assert "no catalog" in err and "Traceback" not in err



def test_text_postgres_cannot_hold_is_an_error_or_no_match(pair: tuple[Path, str], postgres_url: str) -> None:
    """Postgres text has no NUL character: looking one up finds nothing (as in SQLite, where no id
    holds one), storing one is a FinegrainError naming it (names are JSON, which escapes it)."""
    _, url = pair
    with TestClient(create_app(url, thumb_cache=False)) as c:
        assert c.get("/api/photo/a%00b").status_code == 404
        assert c.get("/thumb/a%00b").status_code == 404
        assert c.get("/api/timeline", params={"before": "2023-01-01|a\x00"}).status_code == 400
        assert c.get("/api/photos", params={"person": "\x00"}).json()["total"] == 0
    with open_catalog(postgres_url) as store, pytest.raises(FinegrainError, match="NUL"):
        store.put_photos([Photo("ok.jpg", "/ok.jpg"), Photo("a\x00.jpg", "/a.jpg")])


def test_thumbnails_of_a_postgres_catalog_go_to_the_cache_named_without_the_password(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FINEGRAIN_CACHE", str(tmp_path))
    one = cache_dir_for("postgresql://me:secret@db.example/album")
    assert one.parent == tmp_path / "album-thumbs" and "secret" not in str(one)
    assert cache_dir_for("postgresql://me:other@db.example/album") == one  # a new password, the same album
    assert cache_dir_for("postgresql://me@db.example/other") != one
    assert cache_dir_for(tmp_path / "c.sqlite") == tmp_path / "c.sqlite.thumbs"
