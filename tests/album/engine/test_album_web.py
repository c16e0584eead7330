"""The album web app through FastAPI's TestClient: search JSON, abstaining, thumbnails, and
the one rule that matters most: nothing outside the catalog's roots is ever served.

The album is real: JPEGs written by Pillow with EXIF by piexif, indexed by
``index_folder``. The search engine is a small test double passed as ``engine=`` (the web
layer's contract with the engine is ``search(store, query, *, lang=None) -> SearchResult``).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
piexif = pytest.importorskip("piexif")
from fastapi.testclient import TestClient  # noqa: E402
from PIL import Image  # noqa: E402

from finegrain.album.engine.catalog import open_catalog  # noqa: E402
from finegrain.album.engine.catalog.migrate import migrate_catalog  # noqa: E402
from finegrain.album.engine.indexer import index_folder  # noqa: E402
from finegrain.album.engine.plan import PlaceKey, PlaceMatch, Plan, TimeRange  # noqa: E402
from finegrain.album.engine.records import FaceOccurrence, Person
from finegrain.album.engine.web import server  # noqa: E402
from finegrain.album.engine.web.app import PhotoRefused, create_app, resolve_photo_file  # noqa: E402
from finegrain.cli.main import main
from finegrain.cli.serving import is_loopback
from finegrain.errors import FinegrainError  # noqa: E402


@dataclass(frozen=True)
class StandInResult:
    plan: Any
    photo_ids: set[str]
    ranked: list[tuple[str, float]]
    abstained: bool
    reason: str


def stand_in_search(store: Any, query: str, *, lang: str | None = None, **_: Any) -> StandInResult:
    """"hangzhou" -> every photo (ranked by id, descending); "may" -> a time chip; anything else abstains."""
    from datetime import date

    ids = sorted(store.photo_ids())
    if "hangzhou" in query.lower():
        plan = Plan(query=query, lang="en", source="VM", places=(PlaceMatch("Hangzhou", PlaceKey("city", "杭州市")),),
                    visual_text="street")
        ranked = [(pid, 1.0 - i / 10) for i, pid in enumerate(reversed(ids))]
        return StandInResult(plan, set(ids), ranked, False, "")
    if "may" in query.lower():
        t = TimeRange(date(2023, 5, 1), date(2023, 5, 31), "May 2023", "month-year")
        plan = Plan(query=query, lang="en", source="M", time_ranges=(t,))
        return StandInResult(plan, {ids[0]}, [], False, "")
    plan = Plan(query=query, lang="en", source="V", visual_text=query)
    return StandInResult(plan, set(), [], True, "the best visual match (0.12) is below the threshold (0.30)")


def _jpeg(path: Path, color: tuple[int, int, int], when: str, size: tuple[int, int] = (640, 480)) -> None:
    def dms(x: float) -> tuple[tuple[int, int], ...]:
        d = int(x)
        m = int((x - d) * 60)
        s = round(((x - d) * 60 - m) * 60 * 100)
        return ((d, 1), (m, 1), (s, 100))

    exif = {
        "0th": {piexif.ImageIFD.Make: b"Test", piexif.ImageIFD.Model: b"Cam"},
        "Exif": {piexif.ExifIFD.DateTimeOriginal: when.encode()},
        "GPS": {
            piexif.GPSIFD.GPSLatitudeRef: b"N", piexif.GPSIFD.GPSLatitude: dms(30.2590),
            piexif.GPSIFD.GPSLongitudeRef: b"E", piexif.GPSIFD.GPSLongitude: dms(120.1300),
        },
        "1st": {},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path, "JPEG", exif=piexif.dump(exif))


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def album(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Any, Path]]:
    """(photo root, catalog: a SQLite file or the same catalog migrated into a Postgres database
    (a URL), a secret file outside the root)."""
    base = tmp_path_factory.mktemp("web")
    root = base / "photos"
    _jpeg(root / "a.jpg", (200, 40, 40), "2023:05:01 10:00:00")
    _jpeg(root / "b.jpg", (40, 200, 40), "2023:05:02 11:00:00", size=(480, 900))
    _jpeg(root / "trip" / "c d#1.jpg", (40, 40, 200), "2023:06:03 12:00:00")
    secret = base / "secret.txt"
    secret.write_text("top secret\n")
    catalog = base / "catalog.sqlite"
    with open_catalog(catalog) as store:
        index_folder(root, store, faces=False, show_progress=False)
    if request.param == "sqlite":
        yield root, catalog, secret
        return
    server = request.getfixturevalue("postgres_server")
    _PG_SERVER[:] = [server]
    url = server.new_database("web")
    migrate_catalog(catalog, url)
    yield root, url, secret
    pg_drop(server, url)


_PG_SERVER: list[Any] = []  # the test server of the Postgres catalogs, for copies


@pytest.fixture(autouse=True)
def _thumbs_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Thumbnails of a Postgres catalog go to finegrain's cache: here, a temporary folder."""
    monkeypatch.setenv("FINEGRAIN_CACHE", str(tmp_path / "cache"))


def pg_drop(server: Any, url: str) -> None:
    with server.connect("postgres") as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{urlsplit(url).path.lstrip("/")}" WITH (FORCE)')


@pytest.fixture
def client(album: tuple[Path, Path, Path]) -> TestClient:
    _, catalog, _ = album
    with TestClient(create_app(catalog, engine=stand_in_search)) as c:
        yield c


def test_page_has_search_box_grid_and_no_cdn(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    html = r.text
    for needle in ('id="q"', 'id="search-form"', 'id="grid"', 'id="plan"', "No matching photos"):
        assert needle in html
    # self-contained: no CDN, no tile server; the one URL is the SVG namespace (an identifier, never fetched)
    urls = set(re.findall(r"https?://[^\s\"'<>]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls
    assert "<script src" not in html and "<link" not in html


def test_search_returns_plan_chips_and_ranked_results(client: TestClient) -> None:
    r = client.get("/api/search", params={"q": "street in Hangzhou"})
    assert r.status_code == 200
    body = r.json()
    assert body["abstained"] is False
    assert body["source"] == "VM"
    assert [(c["kind"], c["label"]) for c in body["chips"]] == [("place", "Hangzhou"), ("visual", "street")]
    ids = [x["id"] for x in body["results"]]
    assert ids == ["trip/c d#1.jpg", "b.jpg", "a.jpg"]  # the engine's ranking order
    assert body["total"] == 3
    first = body["results"][0]
    assert first["thumb"] == "/thumb/trip/c%20d%231.jpg"
    assert first["photo"] == "/photo/trip/c%20d%231.jpg"
    assert first["taken_at"] == "2023-06-03 12:00"
    assert body["plan"]["places"][0]["name"] == "杭州市"


def test_unranked_set_members_follow_and_limit_applies(client: TestClient) -> None:
    body = client.get("/api/search", params={"q": "May 2023"}).json()
    assert [c["kind"] for c in body["chips"]] == ["time"]
    assert body["chips"][0]["title"].startswith("2023-05-01..2023-05-31")
    assert [x["id"] for x in body["results"]] == ["a.jpg"]
    assert [x["score"] for x in body["results"]] == [None]
    limited = client.get("/api/search", params={"q": "Hangzhou", "limit": 2}).json()
    assert len(limited["results"]) == 2 and limited["total"] == 3


def test_abstain_gives_no_results_and_the_reason(client: TestClient) -> None:
    body = client.get("/api/search", params={"q": "a purple elephant"}).json()
    assert body["abstained"] is True
    assert body["results"] == [] and body["total"] == 0
    assert "below the threshold" in body["reason"]
    assert body["chips"] == [{"kind": "visual", "label": "a purple elephant", "title": "matched against captions and images"}]


def test_bad_queries_are_client_errors(client: TestClient) -> None:
    assert client.get("/api/search", params={"q": "   "}).status_code == 400
    assert client.get("/api/search").status_code == 422
    assert client.get("/api/search", params={"q": "x", "limit": 0}).status_code == 422
    assert client.get("/api/search", params={"q": "x", "lang": "fr"}).status_code == 422


def test_thumbnails_are_real_small_jpegs(client: TestClient) -> None:
    for pid, expect in [("a.jpg", (320, 240)), ("b.jpg", (171, 320)), ("trip/c%20d%231.jpg", (320, 240))]:
        r = client.get(f"/thumb/{pid}")
        assert r.status_code == 200, pid
        assert r.headers["content-type"] == "image/jpeg"
        assert r.content[:3] == b"\xff\xd8\xff"
        with Image.open(io.BytesIO(r.content)) as im:
            assert im.format == "JPEG"
            assert im.size == expect
    again = client.get("/thumb/a.jpg")  # from the cache: same bytes
    assert again.content == client.get("/thumb/a.jpg").content


def test_photo_serves_the_original_file(client: TestClient, album: tuple[Path, Path, Path]) -> None:
    root, _, _ = album
    r = client.get("/photo/b.jpg")
    assert r.status_code == 200
    assert r.content == (root / "b.jpg").read_bytes()


@pytest.mark.parametrize(
    "url",
    [
        "/photo/..%2F..%2Fetc%2Fpasswd",
        "/photo/../../etc/passwd",
        "/photo/%2Fetc%2Fpasswd",
        "/photo//etc/passwd",
        "/photo/..%2Fsecret.txt",
        "/thumb/..%2Fsecret.txt",
        "/photo/trip/..%2F..%2Fsecret.txt",
        "/photo/%2e%2e/secret.txt",
        "/photo/c.jpg",
        "/photo/",
        "/thumb/nope.jpg",
    ],
)
def test_paths_that_are_not_catalog_ids_are_refused(client: TestClient, url: str) -> None:
    r = client.get(url)
    assert r.status_code in (403, 404), (url, r.status_code)
    assert b"top secret" not in r.content
    assert b"root:" not in r.content


def _tampered(album: tuple[Path, Path, Path], tmp_path: Path, edit: Any) -> Path:
    """A copy of the catalog with one row changed by ``edit(store)``."""
    import shutil

    _, catalog, _ = album
    if isinstance(catalog, str):  # a Postgres catalog: a new database holding a copy (dropped with the server)
        copy: Any = _PG_SERVER[0].new_database("tampered")
        migrate_catalog(catalog, copy)
    else:
        copy = tmp_path / "catalog.sqlite"
        shutil.copy(catalog, copy)
    with open_catalog(copy) as store:
        edit(store)
    return copy


def test_a_row_pointing_outside_the_roots_is_refused(album: tuple[Path, Path, Path], tmp_path: Path) -> None:
    root, _, secret = album

    def edit(store: Any) -> None:
        store.put_photo(replace(store.get_photo("a.jpg"), id="evil.jpg", path=str(secret)))
        store.put_photo(replace(store.get_photo("a.jpg"), id="rel.jpg", path="../secret.txt"))
        store.put_photo(replace(store.get_photo("a.jpg"), id="../secret.txt", path="../secret.txt"))

    with TestClient(create_app(_tampered(album, tmp_path, edit), engine=stand_in_search)) as c:
        for url in ["/photo/evil.jpg", "/thumb/evil.jpg", "/photo/rel.jpg", "/photo/..%2Fsecret.txt"]:
            r = c.get(url)
            assert r.status_code == 403, url
            assert b"top secret" not in r.content
        assert c.get("/photo/a.jpg").status_code == 200


def test_a_symlink_escaping_the_root_is_refused(album: tuple[Path, Path, Path], tmp_path: Path) -> None:
    root, _, secret = album
    link = root / "link.jpg"
    try:
        os.symlink(secret, link)
    except OSError:
        pytest.skip("symlinks are not supported here")
    try:
        def edit(store: Any) -> None:
            store.put_photo(replace(store.get_photo("a.jpg"), id="link.jpg", path=str(link)))

        with TestClient(create_app(_tampered(album, tmp_path, edit), engine=stand_in_search)) as c:
            r = c.get("/photo/link.jpg")
            assert r.status_code == 403
            assert b"top secret" not in r.content
            assert c.get("/thumb/link.jpg").status_code == 403
    finally:
        link.unlink()


def test_a_symlink_inside_the_root_is_served(album: tuple[Path, Path, Path], tmp_path: Path) -> None:
    root, _, _ = album
    link = root / "alias.jpg"
    try:
        os.symlink(root / "a.jpg", link)
    except OSError:
        pytest.skip("symlinks are not supported here")
    try:
        def edit(store: Any) -> None:
            store.put_photo(replace(store.get_photo("a.jpg"), id="alias.jpg", path=str(link)))

        with TestClient(create_app(_tampered(album, tmp_path, edit), engine=stand_in_search)) as c:
            assert c.get("/photo/alias.jpg").content == (root / "a.jpg").read_bytes()
    finally:
        link.unlink()


def test_resolve_photo_file_contract(album: tuple[Path, Path, Path]) -> None:
    root, catalog, _ = album
    with open_catalog(catalog, create=False) as store:
        assert resolve_photo_file(store, "trip/c d#1.jpg") == (root / "trip" / "c d#1.jpg").resolve()
        with pytest.raises(PhotoRefused) as e:
            resolve_photo_file(store, "/etc/passwd")
        assert e.value.status == 404


def test_a_missing_catalog_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match="no catalog"):
        create_app(tmp_path / "nope.sqlite", engine=stand_in_search)
    assert not (tmp_path / "nope.sqlite").exists()


def test_allowed_hosts_blocks_foreign_host_headers(album: tuple[Path, Path, Path]) -> None:
    _, catalog, _ = album
    app = create_app(catalog, engine=stand_in_search, allowed_hosts=["127.0.0.1", "localhost"])
    with TestClient(app, base_url="http://localhost") as c:
        assert c.get("/").status_code == 200
        assert c.get("/", headers={"host": "evil.example"}).status_code == 400


def test_serve_refuses_a_non_loopback_host(album: tuple[Path, Path, Path]) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1") and is_loopback("127.0.0.2")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2") and not is_loopback("example.com")
    _, catalog, _ = album
    assert main(["album", "serve", "-c", str(catalog), "--host", "0.0.0.0"]) == 2


def test_the_default_engine_answers_and_abstains(album: tuple[Path, Path, Path]) -> None:
    pytest.importorskip("finegrain.album.engine.search")
    _, catalog, _ = album
    with TestClient(create_app(catalog)) as c:
        body = c.get("/api/search", params={"q": "photos in Hangzhou in May 2023"}).json()
        assert body["abstained"] is False
        assert sorted(x["id"] for x in body["results"]) == ["a.jpg", "b.jpg"]
        assert {ch["kind"] for ch in body["chips"]} == {"time", "place"}
        assert body["results"][0]["place"] == "Xihu District, Hangzhou"
        zh = c.get("/api/search", params={"q": "杭州"}).json()
        assert len(zh["results"]) == 3 and zh["results"][0]["place"] == "杭州市西湖区"
        none = c.get("/api/search", params={"q": "photos from 1999"}).json()
        assert none["abstained"] is True and none["results"] == []
        assert "1999" in none["reason"]


def test_a_search_process_answers_as_the_server_does_and_sees_renames(album: tuple[Path, Path, Path]) -> None:
    """``search_processes=1`` (what ``album serve`` uses): the worker process gives the same bytes as a
    search in the server, and a commit (a new data_version) reaches it."""
    pytest.importorskip("finegrain.album.engine.search")
    _, catalog, _ = album
    queries = ["photos in Hangzhou in May 2023", "杭州", "photos from 1999"]
    with TestClient(create_app(catalog)) as c:
        here = [c.get("/api/search", params={"q": q}).content for q in queries]
    with TestClient(create_app(catalog, search_processes=1)) as c:
        there = [c.get("/api/search", params={"q": q}).content for q in queries]
        assert c.get("/api/search", params={"q": "photos", "lang": "fr"}).status_code == 422
        with open_catalog(catalog) as store:
            store.set_meta("touched", "yes")  # a commit by another connection: a new data_version
        again = c.get("/api/search", params={"q": queries[0]})
        assert again.headers["X-Finegrain-Cache"] == "miss" and again.content == here[0]
    assert there == here
    with pytest.raises(FinegrainError, match="custom engine"):
        create_app(catalog, engine=stand_in_search, search_processes=1)
    with pytest.raises(FinegrainError, match="search worker could not start.*no-such-encoder"):
        create_app(catalog, search_processes=1, encoder_name="no-such-encoder")


def test_thumbnails_are_cached_on_disk_beside_the_catalog(tmp_path: Path) -> None:
    root = tmp_path / "photos"
    _jpeg(root / "x.jpg", (10, 120, 200), "2023:05:01 10:00:00")
    catalog = tmp_path / "catalog.sqlite"
    with open_catalog(catalog) as store:
        index_folder(root, store, faces=False, show_progress=False)
    folder = tmp_path / "catalog.sqlite.thumbs"
    app = create_app(catalog, engine=stand_in_search)
    with TestClient(app) as c:
        first = c.get("/thumb/x.jpg").content
        assert c.get("/thumb/x.jpg").content == first
    assert app.state.thumbs.stats["made"] == 1 and app.state.thumbs.stats["memory"] == 1
    files = sorted(folder.rglob("*"))
    jpegs = [f for f in files if f.is_file()]
    assert len(jpegs) == 1 and jpegs[0].read_bytes() == first
    assert not [f for f in files if f.name.startswith(".tmp-")]  # written atomically, nothing left over
    again = create_app(catalog, engine=stand_in_search)  # a restarted server: memory empty, disk kept
    with TestClient(again) as c:
        assert c.get("/thumb/x.jpg").content == first
    assert again.state.thumbs.stats == {"memory": 0, "disk": 1, "made": 0, "disk_errors": 0}
    # the file changes (new content, new mtime): a new key, a new thumbnail; the old entry is never served
    _jpeg(root / "x.jpg", (200, 40, 10), "2023:05:01 10:00:00")
    os.utime(root / "x.jpg", ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    changed = create_app(catalog, engine=stand_in_search)
    with TestClient(changed) as c:
        new = c.get("/thumb/x.jpg").content
    assert new != first and changed.state.thumbs.stats["made"] == 1
    assert len([f for f in folder.rglob("*.jpg")]) == 2


def test_an_unwritable_thumbnail_folder_still_serves(tmp_path: Path, album: tuple[Path, Path, Path]) -> None:
    _, catalog, _ = album
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be\n")
    app = create_app(catalog, engine=stand_in_search, thumb_cache=blocker / "thumbs")
    with TestClient(app) as c:
        r = c.get("/thumb/a.jpg")
    assert r.status_code == 200 and r.content[:3] == b"\xff\xd8\xff"
    assert app.state.thumbs.stats["disk_errors"] == 1


def test_a_known_photo_without_its_file_gets_a_placeholder(album: tuple[Path, Path, Path], tmp_path: Path) -> None:
    def edit(store: Any) -> None:
        store.put_photo(replace(store.get_photo("a.jpg"), id="gone.jpg", path="gone.jpg"))

    with TestClient(create_app(_tampered(album, tmp_path, edit), engine=stand_in_search)) as c:
        r = c.get("/thumb/gone.jpg")
        assert r.status_code == 200 and r.headers["content-type"] == "image/svg+xml"
        assert r.headers["x-finegrain-placeholder"] == "missing" and b"file missing" in r.content
        assert c.get("/photo/gone.jpg").status_code == 404  # the original is not faked
        assert c.get("/api/photo/gone.jpg").json()["file"] == "missing"
        assert c.get("/thumb/never-indexed.jpg").status_code == 404


def test_the_server_keeps_idle_connections_longer_than_clients(album: tuple[Path, Path, Path], monkeypatch: Any) -> None:
    """The keep-alive race: a server closing idle connections when httpx's pool also
    expires them (both 5 s) breaks the reuse; the album server keeps them longer."""
    import httpx

    _, catalog, _ = album
    app = create_app(catalog, engine=stand_in_search)
    config = server.uvicorn_config(app, "127.0.0.1", 0)
    assert config.timeout_keep_alive == server.KEEP_ALIVE_S == 75
    assert config.timeout_keep_alive > httpx.Limits().keepalive_expiry
    with pytest.raises(Exception, match="keep-alive must be a positive"):
        server.uvicorn_config(app, "127.0.0.1", 0, keep_alive=0)
    seen: dict[str, Any] = {}
    monkeypatch.setattr(server, "serve", lambda app, host, port, keep_alive: seen.update(host=host, port=port, ka=keep_alive))
    assert main(["album", "serve", "-c", str(catalog), "--port", "8123"]) == 0
    assert seen == {"host": "127.0.0.1", "port": 8123, "ka": 75}
    assert main(["album", "serve", "-c", str(catalog), "--keep-alive", "5"]) == 0 and seen["ka"] == 5
    assert main(["album", "serve", "-c", str(catalog), "--keep-alive", "0"]) == 2


def test_a_person_s_cover_is_their_face_cropped_from_the_photo(tmp_path: Path) -> None:
    """People covers are face crops (``/face/ID?i=N``) of the newest photo with a face box; a face the
    catalog has no box for falls back to the thumbnail; unknown faces are 404, a missing file a placeholder."""
    root = tmp_path / "photos"
    _jpeg(root / "old.jpg", (200, 40, 40), "2023:05:01 10:00:00")
    _jpeg(root / "new.jpg", (40, 40, 200), "2023:06:01 10:00:00")
    catalog = tmp_path / "catalog.sqlite"
    with open_catalog(catalog) as store:
        index_folder(root, store, faces=False, show_progress=False)
        img = Image.open(root / "new.jpg").convert("RGB")
        img.paste((250, 250, 0), (300, 100, 400, 200))  # the "face": a yellow square at left 300, top 100
        img.save(root / "new.jpg", "JPEG", exif=Image.open(root / "old.jpg").info.get("exif", b""))
        store.set_faces("old.jpg", [FaceOccurrence("old.jpg", "p1", (10, 60, 60, 10), 0)])
        store.set_faces("new.jpg", [FaceOccurrence("new.jpg", "p1", (100, 400, 200, 300), 0),
                                    FaceOccurrence("new.jpg", "p2", None, 1)])
        store.put_person(Person("p1", ("Mum",)))
        store.put_person(Person("p2", ("Dad",)))
        store.assign_faces({("old.jpg", 0): "p1", ("new.jpg", 0): "p1", ("new.jpg", 1): "p2"})
    with TestClient(create_app(catalog, engine=stand_in_search)) as c:
        people = {p["id"]: p for p in c.get("/api/people").json()["people"]}
        assert people["p1"]["cover"] == "/face/new.jpg?i=0"
        assert people["p2"]["cover"] == "/thumb/new.jpg"  # no box: the photo
        r = c.get(people["p1"]["cover"])
        assert r.status_code == 200 and r.headers["content-type"] == "image/jpeg"
        face = Image.open(io.BytesIO(r.content)).convert("RGB")
        assert max(face.size) <= 160 and abs(face.width - face.height) <= 2
        centre = face.getpixel((face.width // 2, face.height // 2))
        assert centre[0] > 200 and centre[1] > 200 and centre[2] < 80  # the yellow face is in the middle
        assert c.get("/face/new.jpg", params={"i": 1}).status_code == 404  # a face without a box
        assert c.get("/face/new.jpg", params={"i": 7}).status_code == 404
        assert c.get("/face/new.jpg", params={"i": -1}).status_code == 422
        (root / "new.jpg").unlink()
        missing = c.get("/face/new.jpg", params={"i": 0})
        assert missing.status_code == 200 and missing.headers["X-Finegrain-Placeholder"] == "missing"
