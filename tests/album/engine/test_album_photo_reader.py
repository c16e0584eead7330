"""The photo reader and the indexer at the edges.

A readable photo with malformed metadata is catalogued without the bad fields, each field on
its own, and the index summary names the file and the field; only a file whose container or
pixels cannot be decoded is "not a readable image". A catalogued photo whose file becomes
unreadable is removed with everything derived from it, and the run says so.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from album_photo_fixtures import (
    ASCII,
    DATETIME,
    DATETIME_ORIGINAL,
    GPS_LAT,
    ORIENTATION,
    RATIONAL,
    SHORT,
    R,
    dms,
    good_fields,
    good_raw,
    jpeg_raw,
    jpeg_with,
)
from finegrain.album.engine.catalog.sqlite import SqliteCatalog
from finegrain.album.engine.files import FieldProblem, ImageInfo, UnreadableImageError, read_photo
from finegrain.album.engine.indexer import Profiler, index_folder
from finegrain.album.engine.records import FaceOccurrence, PhotoPlace
from finegrain.album.engine.search import search
from finegrain.cli.main import main
from finegrain.errors import FinegrainError


def _with(**changes):
    f = good_fields()
    f.update(changes)
    return {k: v for k, v in f.items() if v is not None}


def test_a_well_formed_photo_has_every_field() -> None:
    info = read_photo(jpeg_with(good_fields()))
    assert (info.width, info.height, info.has_exif) == (96, 64, True)
    assert info.taken_at is not None and info.taken_at.replace(tzinfo=None) == datetime(2023, 5, 1, 10)
    assert info.tz == "+08:00" and info.camera == "Test Cam 1" and info.orientation == 1
    assert info.lat == pytest.approx(30.259, abs=1e-4) and info.lon == pytest.approx(120.13, abs=1e-4)
    assert info.problems == ()


# (changed fields, the field reported, what is lost, what is kept)
BAD = [
    ({"lat": R(30, 1)}, "GPS", ("lat", "lon"), ("taken_at", "camera", "orientation")),  # the reported example
    ({"lon": (R(1, 1), R(2, 1))}, "GPS", ("lat", "lon"), ("taken_at", "camera")),
    ({"lat": (R(1, 0), R(0, 0), R(1, 1))}, "GPS", ("lat", "lon"), ("taken_at", "camera")),
    ({"lat": (R(10**9, 1), R(0, 1), R(0, 1))}, "GPS", ("lat", "lon"), ("taken_at",)),
    ({"lat_ref": "Q"}, "GPS", ("lat", "lon"), ("taken_at",)),
    ({"time": "2023:13:45 99:99:99"}, "time", ("taken_at", "tz"), ("lat", "camera", "orientation")),
    ({"time": "yesterday"}, "time", ("taken_at",), ("lat", "camera")),
    ({"offset": "+99:99"}, "time zone", ("tz",), ("taken_at", "lat", "camera")),
    ({"orientation": 77}, "orientation", ("orientation",), ("taken_at", "lat", "camera")),
]


@pytest.mark.parametrize(("changes", "field", "lost", "kept"), BAD)
def test_a_bad_field_is_dropped_alone_and_reported(changes, field, lost, kept) -> None:
    info = read_photo(jpeg_with(_with(**changes)))
    assert isinstance(info, ImageInfo)
    assert field in info.unreadable_fields
    assert all(isinstance(p, FieldProblem) and p.reason for p in info.problems)
    for name in lost:
        assert getattr(info, name) is None, name
    for name in kept:
        assert getattr(info, name) is not None, name


def _replace(entries, tag, typ, value):
    return [e for e in entries if e[0] != tag] + [(tag, typ, value)]


# wrong TIFF types and counts, written byte for byte: (block, tag, type, value, field reported)
WRONG_TYPES = [
    ("gps", GPS_LAT, ASCII, b"30.25\0", "GPS"),
    ("gps", GPS_LAT, SHORT, [30, 15, 32], "GPS"),  # numbers, but not rationals: still 3 values -> read
    ("gps", GPS_LAT, RATIONAL, [(30, 1)], "GPS"),
    ("gps", GPS_LAT, RATIONAL, [(30, 1), (1, 1), (1, 1), (1, 1)], "GPS"),
    ("ifd0", ORIENTATION, ASCII, b"up\0", "orientation"),
    ("ifd0", ORIENTATION, SHORT, [0], "orientation"),
    ("ifd0", DATETIME, SHORT, [5], None),  # DateTimeOriginal still gives the time
    ("exif", DATETIME_ORIGINAL, RATIONAL, [(1, 0)], None),  # DateTime still gives the time
]


@pytest.mark.parametrize(("where", "tag", "typ", "value", "field"), WRONG_TYPES)
def test_wrong_types_and_counts_stay_in_their_field(where, tag, typ, value, field) -> None:
    ifd0, exif, gps = good_raw()
    blocks = {"ifd0": ifd0, "exif": exif, "gps": gps}
    blocks[where] = _replace(blocks[where], tag, typ, value)
    info = read_photo(jpeg_raw(blocks["ifd0"], blocks["exif"], blocks["gps"]))
    if tag == GPS_LAT and typ == SHORT:
        assert info.lat == pytest.approx(30 + 15 / 60 + 32 / 3600) and info.problems == ()
        return
    assert info.unreadable_fields == (() if field is None else (field,))
    assert info.taken_at is not None and info.camera == "Test Cam 1"
    if field != "GPS":
        assert info.lat is not None


def test_absent_fields_and_unset_times_are_not_problems() -> None:
    info = read_photo(jpeg_with({"time": "0000:00:00 00:00:00", "make": "Test"}))
    assert info.taken_at is None and info.lat is None and info.problems == ()
    info = read_photo(jpeg_with({}))
    assert info.problems == ()


def test_datetime_is_the_fallback_of_a_bad_original() -> None:
    info = read_photo(jpeg_with({"time_original": "garbage", "time": "2022:01:02 03:04:05"}))
    assert info.taken_at == datetime(2022, 1, 2, 3, 4, 5) and info.problems == ()


@pytest.mark.parametrize("data", [b"", b"not an image", jpeg_with(good_fields())[:300], b"\xff\xd8\xff" + b"\x00" * 64])
def test_only_an_undecodable_file_is_unreadable(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "x.jpg"
    path.write_bytes(data)
    with pytest.raises(UnreadableImageError, match="not a readable image") as e:
        read_photo(path)
    assert isinstance(e.value, FinegrainError) and str(path) in str(e.value)


# --------------------------------------------------------------------------- indexer


def _profiler() -> Profiler:
    place = PhotoPlace(country_en="China", country_zh="中国", city_en="Hangzhou", city_zh="杭州市", country_code="CN")
    return Profiler(reverse_geocode=lambda lat, lon: place, time_tags=lambda t, **_: [f"year:{t.year}"])


def test_index_catalogs_photos_with_bad_fields_and_names_them(tmp_path: Path, capsys) -> None:
    root = tmp_path / "photos"
    root.mkdir()
    (root / "good.jpg").write_bytes(jpeg_with(good_fields()))
    (root / "a.jpg").write_bytes(jpeg_with(_with(lat=R(30, 1))))
    (root / "b.jpg").write_bytes(jpeg_with(_with(time="2023:13:45 99:99:99", lon=(R(1, 1),))))
    (root / "broken.jpg").write_bytes(b"\xff\xd8\xff garbage")
    with SqliteCatalog(tmp_path / "c.sqlite") as store:
        report = index_folder(root, store, faces=False, show_progress=False, profiler=_profiler())
        assert sorted(store.photo_ids()) == ["a.jpg", "b.jpg", "good.jpg"]
        a, b = store.get_photo("a.jpg"), store.get_photo("b.jpg")
        assert a.lat is None and a.taken_at is not None and a.camera == "Test Cam 1"
        assert b.taken_at is None and b.lat is None and b.camera == "Test Cam 1"
        assert store.get_place("a.jpg") is None and store.get_place("good.jpg") is not None
    assert [p for p, _ in report.skipped] == ["broken.jpg"]
    assert {(p, f) for p, f, _ in report.metadata_problems} == {("a.jpg", "GPS"), ("b.jpg", "time"), ("b.jpg", "GPS")}
    text = report.summary()
    assert "2 photos had unreadable metadata fields (catalogued without them): a.jpg (GPS), b.jpg (time, GPS)" in text
    assert "  metadata a.jpg: GPS: latitude is one IFDRational" in text
    assert main(["album", "index", str(root), "--catalog", str(tmp_path / "cli.sqlite"), "--no-faces", "-q"]) == 0
    assert "2 photos had unreadable metadata fields" in capsys.readouterr().out


def test_a_photo_replaced_by_an_unreadable_file_leaves_the_catalog(tmp_path: Path, capsys) -> None:
    root = tmp_path / "photos"
    root.mkdir()
    (root / "keep.jpg").write_bytes(jpeg_with(good_fields()))
    (root / "gone.jpg").write_bytes(jpeg_with(_with(lat=dms(31.23), lon=dms(121.47)), color=(10, 200, 10)))
    with SqliteCatalog(tmp_path / "c.sqlite") as store:
        index_folder(root, store, faces=False, show_progress=False, profiler=_profiler())
        store.set_faces("gone.jpg", [FaceOccurrence("gone.jpg", None, (1, 2, 3, 4), 0)], [np.ones(128, np.float32)])
        store.put_embedding("gone.jpg", "m", np.ones(4, np.float32))
        assert store.get_place("gone.jpg") is not None and store.get_time_tags("gone.jpg")
        assert "gone.jpg" in search(store, "photos in Hangzhou").photo_ids

        (root / "gone.jpg").write_bytes(b"\xff\xd8\xff\xe0 this is no longer a photo, and longer than it was " * 40)
        report = index_folder(root, store, faces=False, show_progress=False, profiler=_profiler())
        assert store.photo_ids() == ["keep.jpg"]
        assert store.get_photo("gone.jpg") is None and store.get_place("gone.jpg") is None
        assert store.get_time_tags("gone.jpg") == () and store.faces("gone.jpg") == []
        assert store.get_embeddings("m")[0] == [] and "gone.jpg" not in store.places()
        assert "gone.jpg" not in search(store, "photos in Hangzhou").photo_ids
    assert report.removed == 1 and [p for p, _ in report.unreadable_removed] == ["gone.jpg"]
    assert [p for p, _ in report.skipped] == ["gone.jpg"]
    assert "removed gone.jpg: its file is no longer a readable image" in report.summary()


def test_a_photo_that_cannot_be_read_right_now_stays_in_the_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An I/O error (permissions, a placeholder being synced) says nothing about the content:
    # the photo is skipped this time and keeps its row, faces and embeddings.
    root = tmp_path / "photos"
    root.mkdir()
    (root / "a.jpg").write_bytes(jpeg_with(good_fields()))
    with SqliteCatalog(tmp_path / "c.sqlite") as store:
        index_folder(root, store, faces=False, show_progress=False, profiler=_profiler())
        store.put_embedding("a.jpg", "m", np.ones(4, np.float32))
        (root / "a.jpg").write_bytes(jpeg_with(good_fields(), color=(1, 2, 3)))  # changed: must be re-read
        real = Path.read_bytes

        def failing(self: Path) -> bytes:
            if self.name == "a.jpg":
                raise PermissionError(13, "Permission denied")
            return real(self)

        monkeypatch.setattr(Path, "read_bytes", failing)
        with pytest.raises(FinegrainError, match="could not be read"):
            read_photo(root / "a.jpg")
        report = index_folder(root, store, faces=False, show_progress=False, profiler=_profiler())
        assert [p for p, _ in report.skipped] == ["a.jpg"] and not report.unreadable_removed
        assert store.photo_ids() == ["a.jpg"] and store.get_embeddings("m")[0] == ["a.jpg"]


@pytest.mark.parametrize("unset", [b"    :  :     :  :  ", b"0000:00:00 00:00:00", b"    -  -     :  :  "])
def test_blank_exif_dates_are_absent_not_problems(unset: bytes) -> None:
    info = read_photo(jpeg_raw([], [(36867, 2, unset)]))
    assert info.taken_at is None and "time" not in info.unreadable_fields


def test_a_dashed_exif_date_is_read() -> None:
    info = read_photo(jpeg_raw([], [(36867, 2, b"2020-05-01 10:00:00")]))
    assert info.taken_at == datetime(2020, 5, 1, 10, 0, 0) and not info.problems
