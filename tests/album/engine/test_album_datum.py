"""WGS-84 <-> GCJ-02: the transform, and reading photos in either datum near Shenzhen's district borders."""

from __future__ import annotations

import json

import numpy as np
import pytest

from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.indexer import Profiler
from finegrain.album.engine.photobench import import_photobench
from finegrain.album.engine.profile.datum import (
    claim_input_datum,
    gcj02_to_wgs84,
    in_china_rectangle,
    parse_datum,
    to_wgs84,
    wgs84_to_gcj02,
)
from finegrain.album.engine.profile.places import Geocoder, km
from finegrain.album.engine.records import Photo
from finegrain.cli.main import main
from finegrain.errors import FinegrainError

# WGS-84 points a few hundred metres from a Shenzhen district border (metres to the border
# along the GCJ-02 offset, measured with geotool-cn's polygons), the district they are in, and
# the district their GCJ-02 coordinates fall in when those are mistaken for WGS-84.
BORDER_POINTS = [
    ((22.520, 113.984), 203, "南山区", "福田区"),
    ((22.568, 114.088), 173, "罗湖区", "福田区"),
    ((22.564, 114.200), 252, "罗湖区", "盐田区"),
    ((22.544, 113.884), 126, "宝安区", "南山区"),
]


def test_the_offset_in_shenzhen_is_about_600_m_and_zero_outside_china():
    lat, lon = wgs84_to_gcj02(22.5431, 114.0579)
    assert 550 < km(22.5431, 114.0579, lat, lon) * 1000 < 650
    assert wgs84_to_gcj02(48.8566, 2.3522) == (48.8566, 2.3522)  # Paris
    assert gcj02_to_wgs84(-33.8688, 151.2093) == (-33.8688, 151.2093)  # Sydney
    assert bool(in_china_rectangle(39.9, 116.4)) and not bool(in_china_rectangle(40.7, -74.0))


def test_forward_agrees_with_an_independent_implementation():
    coords = pytest.importorskip("GeoToolCN.coords")
    rng = np.random.default_rng(0)
    lat, lon = rng.uniform(18, 53, 500), rng.uniform(74, 134, 500)
    glat, glon = wgs84_to_gcj02(lat, lon)
    ref = np.array([coords.wgs84_to_gcj02(float(b), float(a)) for a, b in zip(lat, lon, strict=True)])  # (lng, lat)
    assert np.abs(glon - ref[:, 0]).max() < 1e-12 and np.abs(glat - ref[:, 1]).max() < 1e-12


def test_inverse_round_trips_to_a_tenth_of_a_millimetre_and_beats_one_step_subtraction():
    rng = np.random.default_rng(1)
    lat, lon = rng.uniform(18, 53, 2000), rng.uniform(74, 134, 2000)
    back_lat, back_lon = gcj02_to_wgs84(*wgs84_to_gcj02(lat, lon))
    assert np.abs(back_lat - lat).max() < 1e-9 and np.abs(back_lon - lon).max() < 1e-9
    coords = pytest.importorskip("GeoToolCN.coords")
    g = wgs84_to_gcj02(22.5431, 114.0579)
    one_step = coords.gcj02_to_wgs84(g[1], g[0])
    assert km(22.5431, 114.0579, one_step[1], one_step[0]) * 1000 > 0.01  # the subtraction is off by cm to m
    assert km(22.5431, 114.0579, *gcj02_to_wgs84(*g)) * 1000 < 1e-3


def test_arrays_keep_their_shape_and_bad_input_is_named():
    lat = np.array([[22.5, 30.2], [48.8, 36.6]])
    lon = np.array([[114.0, 120.1], [2.3, 117.0]])
    out = wgs84_to_gcj02(lat, lon)
    assert out[0].shape == (2, 2) and out[0][1, 0] == 48.8
    with pytest.raises(FinegrainError, match="latitude 95.0"):
        wgs84_to_gcj02(95.0, 10.0)
    with pytest.raises(FinegrainError, match="unknown coordinate datum 'bd09'"):
        parse_datum("bd09")
    assert parse_datum("GCJ-02") == "gcj02" and parse_datum("WGS-84") == "wgs84"
    assert to_wgs84(None, None, "gcj02") == (None, None)


@pytest.mark.parametrize(("point", "metres", "district", "wrong"), BORDER_POINTS)
def test_gcj02_photos_near_district_borders_land_in_the_right_district(point, metres, district, wrong):
    pytest.importorskip("GeoToolCN")
    pytest.importorskip("reverse_geocoder")
    geo = Geocoder()
    lat, lon = point
    glat, glon = wgs84_to_gcj02(lat, lon)
    assert 500 < km(lat, lon, glat, glon) * 1000 < 700 > metres  # the offset is larger than the distance to the border
    assert geo.reverse(lat, lon).district.zh == district
    assert geo.reverse(glat, glon).district.zh == wrong  # GCJ-02 mistaken for WGS-84: the neighbouring district
    assert geo.reverse(*to_wgs84(glat, glon, "gcj02")).district.zh == district


def _tiny_album(folder, points):
    folder.mkdir()
    meta = {f"IMG_{i}.JPG": {"latitude": la, "longitude": lo, "time": "2024-05-01 10:00:00"}
            for i, (la, lo) in enumerate(points)}
    (folder / "metadata.json").write_text(json.dumps(meta))
    faces = {"face_id_to_nicknames": {"1": ["me"]}, "image_to_face_ids": {}}
    (folder / "face_info_en.json").write_text(json.dumps(faces))
    (folder / "face_info_cn.json").write_text(json.dumps({**faces, "face_id_to_nicknames": {"1": ["我"]}}))
    (folder / "samples_query.json").write_text(json.dumps([]))
    return folder


def test_import_reads_gcj02_into_wgs84_and_the_catalog_keeps_its_datum(tmp_path):
    wgs = [p for p, *_ in BORDER_POINTS]
    gcj = [tuple(float(v) for v in wgs84_to_gcj02(*p)) for p in wgs]
    album = _tiny_album(tmp_path / "a", gcj)
    with open_catalog(tmp_path / "c.sqlite") as store:
        import_photobench(album, store, profiler=Profiler(), datum="gcj02")
        got = {p.id: (p.lat, p.lon) for p in store.iter_photos()}
        assert store.get_meta("input_datum") == "gcj02"
        for i, (la, lo) in enumerate(wgs):
            assert km(la, lo, *got[f"IMG_{i}.JPG"]) * 1000 < 0.01
        with pytest.raises(FinegrainError, match="read as gcj02, not wgs84"):
            import_photobench(album, store, profiler=Profiler(), datum="wgs84")


def test_a_catalog_from_before_the_option_counts_as_wgs84(tmp_path):
    with open_catalog(tmp_path / "c.sqlite") as store:
        store.put_photo(Photo("a", "/a.jpg", lat=22.5, lon=114.0))
        with pytest.raises(FinegrainError, match="--datum wgs84"):
            claim_input_datum(store, "gcj02")
        assert claim_input_datum(store, "wgs-84") == "wgs84" and store.get_meta("input_datum") == "wgs84"


def test_cli_import_takes_the_datum_and_names_a_bad_one(tmp_path, capsys):
    album = _tiny_album(tmp_path / "a", [tuple(float(v) for v in wgs84_to_gcj02(22.52, 113.984))])
    catalog = tmp_path / "c.sqlite"
    assert main(["album", "import-photobench", str(album), "--catalog", str(catalog), "--datum", "bd09", "-q"]) == 2
    assert "unknown coordinate datum 'bd09'" in capsys.readouterr().err
    assert main(["album", "import-photobench", str(album), "--catalog", str(catalog), "--datum", "gcj02", "-q"]) == 0
    with open_catalog(catalog, create=False) as store:
        photo = store.get_photo("IMG_0.JPG")
        assert km(22.52, 113.984, photo.lat, photo.lon) * 1000 < 0.01
