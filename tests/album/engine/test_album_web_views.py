"""The album page's JSON views through FastAPI's TestClient: timeline paging, people (naming and
merging), places, the map, photo lists, one photo's detail, and chips removed from a search.

The catalog is the synthetic album of :mod:`finegrain.album.bench.synthetic` (600 photos, 40 people
with English and Chinese names, places, a few photos without time or position); it has no
image files, so thumbnails are the missing-file placeholder. Expected values are computed
from the store itself (``iter_photos``, ``ids_with_person``, ``ids_at_place``), not copied
from the answers.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
from fastapi.testclient import TestClient  # noqa: E402

from finegrain.album.bench.synthetic import build_synthetic_catalog  # noqa: E402
from finegrain.album.engine.catalog import open_catalog  # noqa: E402
from finegrain.album.engine.catalog.migrate import migrate_catalog  # noqa: E402
from finegrain.album.engine.plan import PlaceKey, PlaceMatch, Plan, TimeRange  # noqa: E402
from finegrain.album.engine.web.app import create_app, drop_constraint, plan_chips  # noqa: E402
from finegrain.errors import FinegrainError  # noqa: E402

N = 600


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("views") / "synthetic.sqlite"
    build_synthetic_catalog(path, N, seed=3)
    return path


@pytest.fixture(scope="module")
def synthetic_pg(synthetic: Path, postgres_server: Any) -> Iterator[str]:
    """The same catalog migrated into a Postgres database (verified equal by the migration), the
    template of each test's copy."""
    url = postgres_server.new_database("views")
    migrate_catalog(synthetic, url)
    yield url
    pg_drop(postgres_server, url)


@pytest.fixture(params=["sqlite", "postgres"])
def catalog(request: pytest.FixtureRequest, synthetic: Path, tmp_path: Path) -> Iterator[Path | str]:
    """A private copy (the people tests write to it): a SQLite file, or a Postgres database."""
    if request.param == "postgres":
        server = request.getfixturevalue("postgres_server")
        template = request.getfixturevalue("synthetic_pg")
        url = pg_copy(server, template)
        yield url
        pg_drop(server, url)
        return
    copy = tmp_path / "catalog.sqlite"
    shutil.copy(synthetic, copy)
    yield copy


def _db_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def pg_copy(server: Any, template_url: str) -> str:
    """A new database copied from the one at ``template_url`` (a file copy: fast); its URL."""
    name = f"{_db_name(template_url)}_{next(_COPIES)}"
    with server.connect("postgres") as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{_db_name(template_url)}" STRATEGY FILE_COPY')
    return server.url(name)


def pg_drop(server: Any, url: str) -> None:
    with server.connect("postgres") as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{_db_name(url)}" WITH (FORCE)')


_COPIES = itertools.count()


@pytest.fixture
def client(catalog: Path) -> Iterator[TestClient]:
    with TestClient(create_app(catalog)) as c:
        yield c


def _expected_order(catalog: Path) -> list[str]:
    with open_catalog(catalog, create=False) as store:
        photos = list(store.iter_photos())
    dated = sorted((p for p in photos if p.taken_at), key=lambda p: (p.local_time, p.id), reverse=True)
    undated = sorted((p.id for p in photos if not p.taken_at), reverse=True)
    return [p.id for p in dated] + undated


# ---------------------------------------------------------------- timeline


def test_timeline_pages_cover_every_photo_once_newest_first(client: TestClient, catalog: Path) -> None:
    expected = _expected_order(catalog)
    assert len(expected) == N and any(True for _ in expected)
    first = client.get("/api/timeline", params={"limit": 97}).json()
    assert sum(m["count"] for m in first["months"]) == N == first["total"]
    months = [m["month"] for m in first["months"]]
    assert months[-1] is None  # the synthetic album has undated photos: listed last
    assert months[:-1] == sorted(months[:-1], reverse=True)
    seen, page, pages = [], first, 0
    while True:
        seen += [p["id"] for p in page["photos"]]
        for p in page["photos"]:
            assert p["month"] == (p["taken_at"][:7] if p["taken_at"] else None)
            assert p["thumb"].startswith("/thumb/")
        pages += 1
        if page["next"] is None:
            break
        assert "months" not in client.get("/api/timeline", params={"limit": 97, "before": page["next"]}).json()
        page = client.get("/api/timeline", params={"limit": 97, "before": page["next"]}).json()
    assert seen == expected
    assert pages == -(-N // 97)


def test_timeline_before_a_date_and_bad_cursors(client: TestClient) -> None:
    body = client.get("/api/timeline", params={"before": "2023-05", "limit": 5}).json()
    assert body["photos"] and all(p["taken_at"] < "2023-05-01" for p in body["photos"])
    day = client.get("/api/timeline", params={"before": "2023-05-01T00:00:00", "limit": 5}).json()
    assert [p["id"] for p in day["photos"]] == [p["id"] for p in body["photos"]]
    for bad in ["yesterday", "2023-13", "2023-05-01T00:00:00|", "x|IMG_1.jpg"]:
        r = client.get("/api/timeline", params={"before": bad})
        assert r.status_code == 400, bad
        assert repr(bad) in r.json()["detail"] or "cursor" in r.json()["detail"], r.json()
    assert client.get("/api/timeline", params={"limit": 0}).status_code == 422
    assert client.get("/api/timeline", params={"limit": 501}).status_code == 422
    assert client.get("/api/timeline", params={"lang": "fr"}).status_code == 422


# ---------------------------------------------------------------- people


def test_people_have_counts_covers_and_names_by_language(client: TestClient, catalog: Path) -> None:
    body = client.get("/api/people").json()
    with open_catalog(catalog, create=False) as store:
        counts = store.person_photo_counts()
        covers = {p["id"]: p["cover"] for p in body["people"]}
        for pid, cover in covers.items():
            if cover:
                assert cover.removeprefix("/thumb/") in store.ids_with_person(pid)
    assert body["total"] == 40
    assert {p["id"]: p["count"] for p in body["people"]} == {pid: counts.get(pid, 0) for pid in covers}
    assert [p["count"] for p in body["people"]] == sorted((p["count"] for p in body["people"]), reverse=True)
    someone = next(p for p in body["people"] if p["id"] == "2")
    assert someone["names_zh"] and someone["names_en"]
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in n) for n in someone["names_zh"])
    assert someone["display"] == someone["names"][0]


def test_a_person_page_lists_their_photos(client: TestClient, catalog: Path) -> None:
    body = client.get("/api/people/2", params={"limit": 7}).json()
    with open_catalog(catalog, create=False) as store:
        theirs = store.ids_with_person("2")
    assert body["person"]["id"] == "2" and body["total"] == len(theirs) == body["person"]["count"]
    assert {p["id"] for p in body["photos"]} <= theirs and len(body["photos"]) == min(7, len(theirs))
    r = client.get("/api/people/nobody")
    assert r.status_code == 404 and "nobody" in r.json()["detail"]


def test_naming_adds_aliases_rename_replaces_merge_moves_faces(client: TestClient, catalog: Path) -> None:
    before = client.get("/api/people/2").json()["person"]
    r = client.post("/api/people/2", json={"add_names": ["薇薇", before["names"][0]]})
    assert r.status_code == 200, r.text
    after = r.json()["person"]
    assert after["names"] == [*before["names"], "薇薇"]  # kept, added once, the duplicate ignored
    assert "薇薇" in after["names_zh"]
    r = client.post("/api/people/2", json={"rename": ["Vivi", "薇薇"]})
    assert r.json()["person"]["names"] == ["Vivi", "薇薇"]
    with open_catalog(catalog, create=False) as store:
        union = store.ids_with_person("2") | store.ids_with_person("3")
        names3 = store.get_person("3").names
    r = client.post("/api/people/2", json={"merge": ["3"]})
    assert r.status_code == 200, r.text
    merged = r.json()["person"]
    assert merged["count"] == len(union) and set(names3) <= set(merged["names"])
    assert client.get("/api/people/3").status_code == 404
    assert client.get("/api/people").json()["total"] == 39


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({}, 400, "exactly one of"),
        ({"add_names": ["a"], "merge": ["3"]}, 400, "exactly one of"),
        ({"nickname": ["a"]}, 400, "exactly one of"),
        ({"add_names": []}, 400, "non-empty list"),
        ({"add_names": ["  "]}, 400, "non-empty list"),
        ({"add_names": [3]}, 400, "non-empty list"),
        ({"rename": ["x" * 201]}, 400, "200 characters"),
        ({"merge": ["2"]}, 400, "nothing to merge"),
        ({"merge": ["nobody"]}, 404, "nobody"),
    ],
)
def test_bad_person_edits_are_client_errors(client: TestClient, body: dict[str, Any], status: int, needle: str) -> None:
    r = client.post("/api/people/2", json=body)
    assert r.status_code == status, r.text
    assert needle in r.json()["detail"]


def test_editing_an_unknown_person_or_sending_no_json(client: TestClient) -> None:
    r = client.post("/api/people/nobody", json={"add_names": ["x"]})
    assert r.status_code == 404 and "nobody" in r.json()["detail"]
    assert client.post("/api/people/2", content=b"not json", headers={"content-type": "application/json"}).status_code == 422
    assert client.post("/api/people/2", json=["add_names"]).status_code == 422


# ---------------------------------------------------------------- places, map, photo lists


def test_places_by_city_in_both_languages(client: TestClient, catalog: Path) -> None:
    en = client.get("/api/places", params={"lang": "en"}).json()
    zh = client.get("/api/places", params={"lang": "zh"}).json()
    with open_catalog(catalog, create=False) as store:
        located = len(store.places())
        hangzhou = len(store.ids_at_place("Hangzhou", "city"))
    assert en["total"] == zh["total"] == located
    assert en["places"][0]["name"] == "Hangzhou" and zh["places"][0]["name"] == "杭州市"
    assert en["places"][0]["other_name"] == "杭州市" and zh["places"][0]["other_name"] == "Hangzhou"
    assert en["places"][0]["count"] == hangzhou
    for city in en["places"]:
        assert sum(d["count"] for d in city["districts"]) <= city["count"]
    assert [c["count"] for c in en["places"]] == sorted((c["count"] for c in en["places"]), reverse=True)


def test_photos_of_a_place_person_or_box(client: TestClient, catalog: Path) -> None:
    city = client.get("/api/places").json()["places"][0]
    body = client.get("/api/photos", params={"place": city["key"], "level": city["level"], "limit": 3}).json()
    with open_catalog(catalog, create=False) as store:
        there = store.ids_at_place(city["key"], city["level"])
        located = [p for p in store.iter_photos() if p.lat is not None]
    assert body["total"] == len(there) == city["count"] and body["next_offset"] == 3
    assert {p["id"] for p in body["photos"]} <= there
    if city["districts"]:
        d = city["districts"][0]
        assert client.get("/api/photos", params={"place": d["key"], "level": "district"}).json()["total"] == d["count"]
    box = {"bbox": "29,119,31,121"}
    inside = {p.id for p in located if 29 <= p.lat <= 31 and 119 <= p.lon <= 121}
    assert client.get("/api/photos", params={**box, "limit": 500}).json()["total"] == len(inside)
    for params, needle in [({}, "pass person="), ({"level": "city"}, "pass person="), ({"place": "x", "level": "town"}, None),
                           ({"person": "2", "level": "city"}, "needs place"), ({"bbox": "1,2,3"}, "four numbers"),
                           ({"bbox": "31,119,29,121"}, "not a box"), ({"bbox": "a,b,c,d"}, "four numbers")]:
        r = client.get("/api/photos", params=params)
        assert r.status_code in (400, 422), params
        if needle:
            assert needle in r.json()["detail"], (params, r.json())


def test_the_map_bins_every_located_photo(client: TestClient, catalog: Path) -> None:
    with open_catalog(catalog, create=False) as store:
        photos = list(store.iter_photos())
    located = sum(1 for p in photos if p.lat is not None and p.lon is not None)
    body = client.get("/api/map", params={"cell": 0.05}).json()
    assert body["located"] == located and body["unlocated"] == N - located
    assert sum(n for *_, n in body["points"]) == located
    b = body["bounds"]
    assert all(b["south"] <= lat <= b["north"] and b["west"] <= lon <= b["east"] for lat, lon, _ in body["points"])
    assert client.get("/api/map", params={"cell": 0}).status_code == 422
    assert client.get("/api/map", params={"cell": "wide"}).status_code == 422


def test_photo_detail_and_its_missing_file(client: TestClient, catalog: Path) -> None:
    with open_catalog(catalog, create=False) as store:
        pid = next(iter(sorted(store.ids_with_person("2"))))
        photo = store.get_photo(pid)
        place = store.get_place(pid)
    body = client.get(f"/api/photo/{pid}").json()
    assert body["id"] == pid and body["camera"] == photo.camera
    assert body["taken_at"] == (photo.local_time.isoformat(sep=" ") if photo.taken_at else None)
    assert "2" in [p["id"] for p in body["people"]]
    if place is not None:
        assert place.city_en in body["place"]["en"] and place.city_zh in body["place"]["zh"]
    assert body["file"] == "missing" and "path" not in body
    r = client.get(f"/thumb/{pid}")
    assert r.status_code == 200 and r.headers["content-type"] == "image/svg+xml"
    assert r.headers["x-finegrain-placeholder"] == "missing" and r.content.startswith(b"<svg")
    assert client.get("/api/photo/nope.jpg").status_code == 404
    assert client.get("/thumb/nope.jpg").status_code == 404


def test_the_page_is_served(client: TestClient) -> None:
    html = client.get("/").text
    for needle in ('id="view-timeline"', 'id="view-people"', 'id="view-places"', 'id="view-map"', 'id="detail"'):
        assert needle in html


# ---------------------------------------------------------------- chips


@pytest.mark.parametrize(
    ("query", "label", "expected"),
    [
        ("photos in Hangzhou in 2024", "2024", "photos in Hangzhou"),
        ("photos from 2023 in Hangzhou", "2023", "photos in Hangzhou"),
        ("me and Mum at the beach", "Mum", "me at the beach"),
        ("photos in Hangzhou", "Hangzhou", ""),
        ("winter photos from 2023", "2023 winter", ""),  # a chip read from two spans loses both
        ("去年夏天和薇薇", "薇薇", "去年夏天"),
        ("薇薇的照片", "薇薇", ""),
        ("cat on the SOFA", "sofa", "cat"),
    ],
)
def test_drop_constraint(query: str, label: str, expected: str) -> None:
    assert drop_constraint(query, label) == expected


def test_drop_constraint_refuses_a_label_not_in_the_query() -> None:
    with pytest.raises(FinegrainError, match="not part of the query"):
        drop_constraint("photos in Hangzhou", "Paris")
    with pytest.raises(FinegrainError, match="empty"):
        drop_constraint("photos in Hangzhou", " ")


def test_a_constraint_held_twice_is_one_chip() -> None:
    from datetime import date

    a = TimeRange(date(2023, 1, 1), date(2023, 2, 28), "2023 winter", "season-year")
    b = TimeRange(date(2023, 12, 1), date(2023, 12, 31), "2023 winter", "season-year")
    plan = Plan(query="winter photos from 2023", lang="en", source="M", time_ranges=(a, b),
                places=(PlaceMatch("Hangzhou", PlaceKey("city", "杭州市")),))
    chips = plan_chips(plan)
    assert [(c["kind"], c["label"]) for c in chips] == [("time", "2023 winter"), ("place", "Hangzhou")]
    assert chips[0]["title"].startswith("2023-01-01..2023-02-28") and " or 2023-12-01..2023-12-31" in chips[0]["title"]


def test_search_without_a_chip_runs_the_shorter_query(client: TestClient) -> None:
    full = client.get("/api/search", params={"q": "photos in Hangzhou in 2024"}).json()
    assert {c["kind"] for c in full["chips"]} >= {"time", "place"}
    time_chip = next(c["label"] for c in full["chips"] if c["kind"] == "time")
    fewer = client.get("/api/search", params={"q": full["query"], "without": time_chip}).json()
    assert fewer["query"] == "photos in Hangzhou" and fewer["removed"] == [time_chip]
    assert [c["kind"] for c in fewer["chips"]] == ["place"] and fewer["total"] > full["total"]
    gone = client.get("/api/search", params={"q": full["query"], "without": [time_chip, "Hangzhou"]}).json()
    assert gone["cleared"] is True and gone["query"] == "" and gone["results"] == []
    r = client.get("/api/search", params={"q": "photos in Hangzhou", "without": "Paris"})
    assert r.status_code == 400 and "Paris" in r.json()["detail"]


# ---------------------------------------------------------------- answers cached per state of the catalog


def test_search_answers_are_cached_until_the_catalog_changes(client: TestClient, catalog: Path) -> None:
    q = {"q": "photos with Vivi"}
    first = client.get("/api/search", params=q)
    assert first.headers["x-finegrain-cache"] == "miss" and first.json()["abstained"] is True  # no such name yet
    again = client.get("/api/search", params=q)
    assert again.headers["x-finegrain-cache"] == "hit" and again.content == first.content
    # another connection commits (an index run, the CLI): the cache and the search context are dropped
    with open_catalog(catalog, create=False) as store:
        store.add_person_names("2", ["Vivi"])
    fresh = client.get("/api/search", params=q)
    assert fresh.headers["x-finegrain-cache"] == "miss"
    with open_catalog(catalog, create=False) as store:
        theirs = store.ids_with_person("2")
    assert fresh.json()["abstained"] is False and fresh.json()["total"] == len(theirs)
    names = {p["id"]: p["names"] for p in client.get("/api/people").json()["people"]}
    assert "Vivi" in names["2"]  # the cached people list was dropped too
