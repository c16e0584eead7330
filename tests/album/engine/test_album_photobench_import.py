"""Building the catalog from PhotoBench album1 (metadata.json + face_info_*.json, no images), in both stores."""

from __future__ import annotations

from datetime import datetime

import pytest

from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.indexer import Profiler
from finegrain.album.engine.photobench import import_photobench
from finegrain.cli.main import main
from finegrain.errors import FinegrainError
from finegrain.io.photobench import read_album


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def imported(request, album_dir, tmp_path_factory):
    path = (tmp_path_factory.mktemp("pb") / "album1.sqlite" if request.param == "sqlite"
            else request.getfixturevalue("postgres_server").new_database("pb"))
    with open_catalog(path) as store:
        report = import_photobench(album_dir, store, lang="en")
        yield report, store.dump(), path


def test_counts_match_the_album(imported):
    report, dump, _ = imported
    assert (report.photos, report.no_gps, report.no_time) == (1069, 22, 13)
    assert (report.people, report.photos_with_faces, report.face_occurrences) == (10, 78, 110)
    photos = dump["photos"]
    assert len(photos) == 1069
    assert sum(p["lat"] is None for p in photos) == 22 and sum(p["taken_at"] is None for p in photos) == 13
    assert all(p["id"] == p["path"] and p["sha256"] is None and p["size"] is None for p in photos)
    assert len({f["photo_id"] for f in dump["faces"]}) == 78 and len(dump["faces"]) == 110
    assert all(f["box"] is None for f in dump["faces"])


def test_photos_people_and_faces_equal_the_reader(imported, album_dir):
    _, dump, path = imported
    album = read_album(album_dir)
    by_id = {p["id"]: p for p in dump["photos"]}
    for pb in album.photos.values():
        got = by_id[pb.id]
        assert (got["lat"], got["lon"]) == (pb.latitude, pb.longitude)
        assert got["taken_at"] == (pb.time.isoformat() if pb.time else None)
    faces: dict[str, list[str]] = {}
    for f in dump["faces"]:
        faces.setdefault(f["photo_id"], []).append(f["person_id"])
    assert faces == {p.id: list(p.faces) for p in album.photos.values() if p.faces}
    people = {p["id"]: p for p in dump["people"]}
    assert people["1"]["is_me"] and sum(p["is_me"] for p in people.values()) == 1
    assert all(tuple(people[fid]["names"]) == person.names_en for fid, person in album.people.items())
    with open_catalog(path) as store:
        counts = store.person_photo_counts()
        assert sum(1 for p in album.photos.values() if "1" in p.faces) == counts["1"]
        assert store.ids_with_person("2") == {p.id for p in album.photos.values() if "2" in p.faces}
        assert store.latest_time() == max(p.time for p in album.photos.values() if p.time)
        march = store.ids_taken_between(datetime(2025, 3, 1), datetime(2025, 4, 1))
        assert march == {p.id for p in album.photos.values() if p.time and (p.time.year, p.time.month) == (2025, 3)}


def test_places_and_events_when_the_profile_is_installed(imported):
    report, dump, path = imported
    prof = Profiler.load(faces=False)
    if prof.reverse_geocode is None:
        pytest.skip(f"geocoder not installed: {prof.notes}")
    assert report.places == 1047 == len(dump["places"])  # every photo with GPS has a place
    with open_catalog(path) as store:
        shaoxing = store.ids_at_place("绍兴市")
        assert shaoxing and shaoxing == store.ids_at_place("Shaoxing", level="city")
        assert store.ids_at_place("keqiao") <= shaoxing
    if prof.cluster_events is not None:
        assert report.events == len(dump["events"]) > 0
        assert all(e["n_photos"] >= 3 for e in dump["events"])
    if prof.time_tags is not None:
        assert len(dump["time_tags"]) == 1069 - 13


def test_chinese_names_and_reimport_is_idempotent(album_dir, tmp_path, catalog_target):
    path = catalog_target
    quiet = Profiler()  # no enrichment: only what the album files hold
    with open_catalog(path) as store:
        import_photobench(album_dir, store, lang="cn", profiler=quiet)
        first = store.dump()
        import_photobench(album_dir, store, lang="zh", profiler=quiet)
        assert store.dump() == first
        me = store.get_person("1")
    album = read_album(album_dir)
    assert me.is_me and me.names == album.people["1"].names_cn
    assert first["meta"]["source"] == {"kind": "photobench", "album": "album1", "lang": "cn"}
    with open_catalog(tmp_path / "x.sqlite") as store, pytest.raises(FinegrainError, match="'fr'"):
        import_photobench(album_dir, store, lang="fr")


def test_cli_import_and_name_people(album_dir, tmp_path, capsys):
    catalog = tmp_path / "c.sqlite"
    assert main(["album", "import-photobench", str(album_dir), "--catalog", str(catalog), "--lang", "en", "-q"]) == 0
    assert "1069 photos" in capsys.readouterr().out
    assert main(["album", "people", "-c", str(catalog), "--name", "2=彤彤"]) == 0  # adds an alias
    assert "Li Xiaotong, Xiaotong, Little Li, Tongtong, 彤彤" in capsys.readouterr().out
    assert main(["album", "people", "-c", str(catalog), "--name", "2=Tongtong,Xiaotong", "--replace", "--me", "1"]) == 0
    out = capsys.readouterr()
    assert "Tongtong, Xiaotong" in out.out and "(me)" in out.out and "removed the names Li Xiaotong, Little Li, 彤彤" in out.err
    assert main(["album", "people", "-c", str(catalog), "--name", "42=Nobody"]) == 2
    assert "unknown person" in capsys.readouterr().err
