"""Indexing a folder of real JPEGs: EXIF, sidecars, skips, incremental and resumable runs (the
catalog-writing tests on both stores, SQLite and Postgres: the ``catalog_target`` fixture).

The album is built in ``tmp_path`` from COCO-mini images with EXIF written by
piexif; a file of random bytes stands in for a corrupt photo.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

piexif = pytest.importorskip("piexif")
Image = pytest.importorskip("PIL.Image")

from dense_fakes import BagOfWordsEncoder  # noqa: E402
from finegrain.album.engine.catalog import open_catalog  # noqa: E402
from finegrain.album.engine.indexer import SUMMARY_LINES, IndexReport, Profiler, index_folder, read_sidecar  # noqa: E402
from finegrain.cli.main import main  # noqa: E402
from finegrain.errors import FinegrainError

# (file, local time, offset, (lat, lon), camera) — three photos within two hours form an event.
SHOTS = (
    ("IMG_0001.jpg", "2024:10:01 18:30:00", "+08:00", (30.0847, 120.4937), ("Apple", "iPhone 13")),
    ("IMG_0002.jpg", "2024:10:01 19:10:05", "+08:00", (30.0850, 120.4940), ("Apple", "iPhone 13")),
    ("IMG_0003.jpg", "2024:10:01 20:05:00", "+08:00", (30.0852, 120.4933), ("Apple", "iPhone 13")),
    ("trip/IMG_0100.jpg", "2023:07:14 11:00:00", "+02:00", (48.8584, 2.2945), ("Canon", "Canon EOS R6")),
    ("trip/IMG_0101.jpg", "2023:07:20 08:15:00", None, None, None),
)


def _rational(value: float) -> tuple[int, int]:
    f = Fraction(value).limit_denominator(1_000_000)
    return f.numerator, f.denominator


def _gps(lat: float, lon: float) -> dict[int, object]:
    def dms(v: float) -> tuple[tuple[int, int], ...]:
        v = abs(v)
        d = int(v)
        m = int((v - d) * 60)
        s = (v - d - m / 60) * 3600
        return ((d, 1), (m, 1), _rational(round(s, 4)))

    return {
        piexif.GPSIFD.GPSLatitudeRef: b"N" if lat >= 0 else b"S", piexif.GPSIFD.GPSLatitude: dms(lat),
        piexif.GPSIFD.GPSLongitudeRef: b"E" if lon >= 0 else b"W", piexif.GPSIFD.GPSLongitude: dms(lon),
    }


def write_exif(path: Path, when: str, offset: str | None, gps: tuple[float, float] | None, camera) -> None:
    exif = {"0th": {}, "Exif": {piexif.ExifIFD.DateTimeOriginal: when.encode()}, "GPS": {}, "1st": {}}
    if offset:
        exif["Exif"][piexif.ExifIFD.OffsetTimeOriginal] = offset.encode()
    if gps:
        exif["GPS"] = _gps(*gps)
    if camera:
        exif["0th"][piexif.ImageIFD.Make] = camera[0].encode()
        exif["0th"][piexif.ImageIFD.Model] = camera[1].encode()
    piexif.insert(piexif.dump(exif), str(path))


XMP = """<x:xmpmeta xmlns:x="adobe:ns:meta/">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/">
   <dc:description><rdf:Alt><rdf:li xml:lang="x-default">{caption}</rdf:li></rdf:Alt></dc:description>
   <dc:subject><rdf:Bag>{items}</rdf:Bag></dc:subject>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>"""


def xmp(caption: str, keywords: list[str]) -> str:
    return XMP.format(caption=caption, items="".join(f"<rdf:li>{k}</rdf:li>" for k in keywords))


@pytest.fixture
def album(tmp_path, data_root) -> Path:
    """A folder of 5 JPEGs with EXIF, 1 JPEG and 1 PNG without, a corrupt .jpg and sidecars."""
    images = sorted((data_root / "coco_mini" / "images").rglob("*.jpg"))
    if len(images) < 8:
        pytest.skip("COCO-mini images not found")
    root = tmp_path / "photos"
    (root / "trip").mkdir(parents=True)
    for (name, when, offset, gps, camera), src in zip(SHOTS, images):
        shutil.copyfile(src, root / name)
        write_exif(root / name, when, offset, gps, camera)
    shutil.copyfile(images[5], root / "scan.jpg")  # COCO images carry no EXIF
    with Image.open(images[6]) as im:
        im.save(root / "screenshot.png")
    (root / "broken.jpg").write_bytes(random.Random(0).randbytes(5000))
    (root / ".hidden").mkdir()
    shutil.copyfile(images[7], root / ".hidden" / "skip.jpg")
    (root / "IMG_0001.json").write_text(json.dumps({"caption": "dinner with friends", "keywords": ["dinner", "晚餐"]}))
    (root / "trip" / "IMG_0100.jpg.xmp").write_text(xmp("the Eiffel Tower at noon", ["Paris", "tower"]))
    return root


def run(root: Path, catalog: Path | str, **kw):
    with open_catalog(catalog) as store:
        report = index_folder(root, store, faces=False, show_progress=False, **kw)
        return report, store.dump()


def test_first_run_reads_exif_sidecars_and_reports_bad_files(album, catalog_target):
    report, dump = run(album, catalog_target)
    photos = {p["id"]: p for p in dump["photos"]}
    assert sorted(photos) == ["IMG_0001.jpg", "IMG_0002.jpg", "IMG_0003.jpg", "scan.jpg", "screenshot.png",
                              "trip/IMG_0100.jpg", "trip/IMG_0101.jpg"]
    assert report.added == 7 and report.unchanged == 0
    assert [p for p, _ in report.skipped] == ["broken.jpg"] and "not a readable image" in report.skipped[0][1]
    assert sorted(report.no_exif) == ["scan.jpg", "screenshot.png"]
    one = photos["IMG_0001.jpg"]
    assert one["taken_at"] == "2024-10-01T18:30:00+08:00" and one["tz"] == "+08:00"
    assert one["lat"] == pytest.approx(30.0847, abs=1e-6) and one["lon"] == pytest.approx(120.4937, abs=1e-6)
    assert one["camera"] == "Apple iPhone 13" and one["width"] > 0 and len(one["sha256"]) == 64
    assert one["caption"] == "dinner with friends" and one["keywords"] == ["dinner", "晚餐"]
    paris = photos["trip/IMG_0100.jpg"]
    assert paris["taken_at"] == "2023-07-14T11:00:00+02:00" and paris["camera"] == "Canon EOS R6"
    assert paris["caption"] == "the Eiffel Tower at noon" and paris["keywords"] == ["Paris", "tower"]
    naive = photos["trip/IMG_0101.jpg"]
    assert naive["taken_at"] == "2023-07-20T08:15:00" and naive["tz"] is None and naive["lat"] is None
    assert photos["scan.jpg"]["taken_at"] is None and photos["scan.jpg"]["size"] > 0
    assert dump["meta"]["roots"] == [str(album.resolve())]


def test_places_time_tags_and_events_come_from_the_profile(album, catalog_target):
    prof = Profiler.load(faces=False)
    if prof.reverse_geocode is None or prof.time_tags is None or prof.cluster_events is None:
        pytest.skip(f"profile functions not installed: {prof.notes}")
    _, dump = run(album, catalog_target)
    keqiao = dump["places"]["IMG_0001.jpg"]
    assert (keqiao["district_zh"], keqiao["city_en"], keqiao["country_code"]) == ("柯桥区", "Shaoxing", "CN")
    assert dump["places"]["trip/IMG_0100.jpg"]["country_code"] == "FR"
    tags = dump["time_tags"]["IMG_0001.jpg"]
    assert {"year:2024", "month:10", "season:autumn", "part_of_day:evening"} <= set(tags)
    assert any(t.startswith("festival:national_day") or t.startswith("statutory_holiday:") for t in tags)
    events = {p["id"]: p["event_id"] for p in dump["photos"]}
    assert events["IMG_0001.jpg"] is not None
    assert events["IMG_0001.jpg"] == events["IMG_0002.jpg"] == events["IMG_0003.jpg"]
    assert events["trip/IMG_0100.jpg"] is None and len(dump["events"]) == 1


def test_rerun_is_incremental(album, catalog_target):
    catalog = catalog_target
    _, first = run(album, catalog)
    report, second = run(album, catalog)
    assert (report.added, report.updated, report.unchanged, report.removed) == (0, 0, 7, 0)
    assert [p for p, _ in report.skipped] == ["broken.jpg"]  # still reported, still not fatal
    assert second == first
    # a new mtime with the same bytes: the hash says unchanged
    os.utime(album / "IMG_0002.jpg", (1_700_000_000, 1_700_000_000))
    report, _ = run(album, catalog)
    assert (report.added, report.updated, report.unchanged) == (0, 0, 7)
    # new EXIF: re-read; a changed sidecar: caption updated; a deleted file: removed
    write_exif(album / "IMG_0003.jpg", "2024:10:02 09:00:00", "+08:00", None, None)
    (album / "trip" / "IMG_0100.jpg.xmp").write_text(xmp("a tower", []))
    (album / "scan.jpg").unlink()
    report, dump = run(album, catalog)
    assert (report.added, report.updated, report.unchanged, report.removed) == (0, 2, 4, 1)
    photos = {p["id"]: p for p in dump["photos"]}
    assert photos["IMG_0003.jpg"]["taken_at"] == "2024-10-02T09:00:00+08:00" and photos["IMG_0003.jpg"]["lat"] is None
    assert photos["trip/IMG_0100.jpg"]["caption"] == "a tower" and "scan.jpg" not in photos


class Stop(Exception):
    pass


@pytest.mark.parametrize("stop_after", [1, 4])
def test_interrupted_then_resumed_equals_one_run(album, tmp_path, catalog_target, stop_after):
    """Resumed in the store under test, equal to one whole run into a SQLite file."""
    _, whole = run(album, tmp_path / "whole.sqlite")
    done: list[str] = []

    def interrupt(photo_id: str, status: str) -> None:
        done.append(photo_id)
        if len(done) == stop_after:
            raise Stop

    catalog = catalog_target
    with pytest.raises(Stop):
        run(album, catalog, on_photo=interrupt)
    with open_catalog(catalog) as store:  # every photo handed to the callback is committed
        assert store.photo_ids() == sorted(p for p in done if p != "broken.jpg")
    report, resumed = run(album, catalog)
    assert report.unchanged == len([p for p in done if p != "broken.jpg"])
    assert resumed == whole


def test_caption_embeddings_are_stored_per_model(album, catalog_target):
    enc = BagOfWordsEncoder(dim=64, model_id="fake/bow-64")
    with open_catalog(catalog_target) as store:
        index_folder(album, store, faces=False, show_progress=False, encoder=enc)
        ids, matrix = store.get_embeddings("fake/bow-64")
    assert ids == ["IMG_0001.jpg", "trip/IMG_0100.jpg"] and matrix.shape == (2, 64)


def test_a_malformed_sidecar_is_a_warning_naming_the_file(album, tmp_path):
    (album / "IMG_0002.json").write_text("{not json")
    report, dump = run(album, tmp_path / "c.sqlite")
    assert report.added == 7
    [(photo, reason)] = report.warnings
    assert photo == "IMG_0002.jpg" and "IMG_0002.json" in reason and "valid JSON" in reason


def test_read_sidecar_formats(tmp_path):
    attr = tmp_path / "a.xmp"
    attr.write_text('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
                    '<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" dc:description="cat on a sofa"/>'
                    "</rdf:RDF></x:xmpmeta>")
    assert read_sidecar(attr) == ("cat on a sofa", ())
    js = tmp_path / "b.json"
    js.write_text(json.dumps({"caption": "  ", "keywords": "solo"}))
    assert read_sidecar(js) == (None, ("solo",))


def test_missing_folder_is_an_error(tmp_path):
    with open_catalog(tmp_path / "c.sqlite") as store, pytest.raises(FinegrainError, match="nowhere"):
        index_folder(tmp_path / "nowhere", store, show_progress=False)


def test_cli_index_default_catalog_and_people(album, capsys):
    assert main(["album", "index", str(album), "--no-faces", "-q"]) == 0
    out = capsys.readouterr().out
    assert "7 added" in out and "skipped broken.jpg" in out
    catalog = album / ".finegrain" / "catalog.sqlite"
    assert catalog.is_file()
    assert main(["album", "index", str(album), "--no-faces", "-q"]) == 0
    assert "0 added, 0 updated, 7 unchanged" in capsys.readouterr().out  # the catalog folder is not indexed
    assert main(["album", "people", "-c", str(catalog)]) == 0
    assert "no people yet" in capsys.readouterr().out


def test_cli_index_into_a_postgres_catalog(album, postgres_url, capsys):
    assert main(["album", "index", str(album), "--catalog", postgres_url, "--no-faces", "-q"]) == 0
    out = capsys.readouterr().out
    assert "7 added" in out and f"catalog: {postgres_url}" in out
    assert not (album / ".finegrain").exists()  # nothing written beside the photos
    assert main(["album", "index", str(album), "--catalog", postgres_url, "--no-faces", "-q"]) == 0
    assert "0 added, 0 updated, 7 unchanged" in capsys.readouterr().out


def test_faces_are_detected_clustered_and_names_survive_reindexing(tmp_path, data_root, catalog_target):
    prof = Profiler.load(faces=True)
    if prof.detect_faces is None or prof.cluster_faces is None:
        pytest.skip(f"face module not installed: {prof.notes}")
    import warnings

    try:
        with warnings.catch_warnings():  # face_recognition_models imports the deprecated pkg_resources
            warnings.simplefilter("ignore")
            import face_recognition  # noqa: F401
    except (ImportError, SystemExit):
        pytest.skip("face_recognition (dlib) not installed: run scripts/install-faces.sh")
    from PIL import ImageOps

    src = data_root / "coco_mini" / "images"
    a, b = src / "train2017" / "000000551757.jpg", src / "val2017" / "000000368212.jpg"
    if not (a.is_file() and b.is_file()):
        pytest.skip("COCO-mini face images not found")
    root = tmp_path / "faces"
    root.mkdir()
    for name, path, flip in (("a1.jpg", a, False), ("a2.jpg", a, True), ("b1.jpg", b, False), ("b2.jpg", b, True)):
        with Image.open(path) as im:
            (ImageOps.mirror(im) if flip else im.copy()).save(root / name, quality=92)
    catalog = catalog_target
    with open_catalog(catalog) as store:
        report = index_folder(root, store, faces=True, show_progress=False)
        assert report.faces_found == 4 and report.people == 2
        faces = {f.photo_id: f.person_id for f in store.faces()}
        assert faces["a1.jpg"] == faces["a2.jpg"] != faces["b1.jpg"] == faces["b2.jpg"]
        assert all(f.box is not None for f in store.faces())
        store.name_person(faces["a1.jpg"], ["Grandpa", "爷爷"])
    with Image.open(a) as im:  # one more photo of the same person
        im.resize((im.width * 9 // 10, im.height * 9 // 10)).save(root / "a3.jpg", quality=90)
    with open_catalog(catalog) as store:
        report = index_folder(root, store, faces=True, show_progress=False)
        assert (report.added, report.unchanged) == (1, 4)
        person = store.faces("a3.jpg")[0].person_id
        assert person == faces["a1.jpg"] and store.get_person(person).names == ("Grandpa", "爷爷")
        assert store.person_photo_counts()[person] == 3


def test_one_catalog_holds_one_folder_and_follows_a_move(album, tmp_path, catalog_target):
    catalog = catalog_target
    _, before = run(album, catalog)
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(FinegrainError, match="already indexes the folder"):
        run(other, catalog)
    moved = tmp_path / "moved"
    album.rename(moved)
    report, after = run(moved, catalog)
    assert report.unchanged == 7 and report.removed == 0 and after["meta"]["roots"] == [str(moved.resolve())]
    assert all(p["path"].startswith(str(moved.resolve())) for p in after["photos"])
    assert [p["sha256"] for p in after["photos"]] == [p["sha256"] for p in before["photos"]]


def test_indexing_a_missing_folder_is_an_error_and_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such-folder"
    assert main(["album", "index", str(missing), "--no-faces", "-q"]) == 2
    assert "does not exist" in capsys.readouterr().err and not missing.exists()


def test_the_index_summary_caps_each_kind_of_detail_line() -> None:
    problems = tuple((f"p{i}.jpg", "GPS", "one rational") for i in range(SUMMARY_LINES + 5))
    report = IndexReport(root="r", metadata_problems=problems)
    lines = report.summary().splitlines()
    assert sum(line.startswith("  metadata ") for line in lines) == SUMMARY_LINES
    assert "  ... and 5 more of these" in lines and len(report.metadata_problems) == SUMMARY_LINES + 5
