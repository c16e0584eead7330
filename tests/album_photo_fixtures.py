"""JPEGs with EXIF for the photo-reader tests: well-formed ones (Pillow + piexif) and ones whose
fields carry wrong types, wrong counts, huge values, zero denominators and impossible dates
(Pillow's own EXIF writer, which stores whatever value it is given)."""

from __future__ import annotations

import io
from typing import Any

from PIL import Image, TiffImagePlugin

R = TiffImagePlugin.IFDRational
EXIF_IFD, GPS_IFD = 0x8769, 0x8825
DATETIME, MAKE, MODEL, ORIENTATION = 306, 271, 272, 274
DATETIME_ORIGINAL, OFFSET_TIME_ORIGINAL = 36867, 36881
GPS_LAT_REF, GPS_LAT, GPS_LON_REF, GPS_LON = 1, 2, 3, 4


def dms(x: float) -> tuple[R, R, R]:
    d = int(x)
    m = int((x - d) * 60)
    s = round(((x - d) * 60 - m) * 60 * 100)
    return (R(d, 1), R(m, 1), R(s, 100))


def good_fields(lat: float = 30.259, lon: float = 120.13) -> dict[str, Any]:
    """A complete, well-formed set of fields, by name (see :func:`jpeg_with`)."""
    return {
        "time": "2023:05:01 10:00:00", "offset": "+08:00", "make": "Test", "model": "Cam 1", "orientation": 1,
        "lat_ref": "N", "lat": dms(lat), "lon_ref": "E", "lon": dms(lon),
    }


def jpeg_with(fields: dict[str, Any], *, size: tuple[int, int] = (96, 64), color: tuple[int, int, int] = (90, 140, 200),
              fmt: str = "JPEG") -> bytes:
    """An image whose EXIF holds ``fields`` as given (any Python value Pillow can store)."""
    exif = Image.Exif()
    main = {"time": DATETIME, "make": MAKE, "model": MODEL, "orientation": ORIENTATION}
    sub = {"time_original": DATETIME_ORIGINAL, "offset": OFFSET_TIME_ORIGINAL}
    gps = {"lat_ref": GPS_LAT_REF, "lat": GPS_LAT, "lon_ref": GPS_LON_REF, "lon": GPS_LON}
    for name, value in fields.items():
        if name in main:
            exif[main[name]] = value
    sub_ifd = {sub[n]: v for n, v in fields.items() if n in sub}
    if "time" in fields and "time_original" not in fields and isinstance(fields["time"], str):
        sub_ifd[DATETIME_ORIGINAL] = fields["time"]
    if sub_ifd:
        exif[EXIF_IFD] = sub_ifd
    gps_ifd = {gps[n]: v for n, v in fields.items() if n in gps}
    if gps_ifd:
        exif[GPS_IFD] = gps_ifd
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, fmt, exif=exif.tobytes())
    return buf.getvalue()


# --------------------------------------------------------------------------- raw EXIF, any type and count

BYTE, ASCII, SHORT, LONG, RATIONAL, UNDEFINED, SLONG, SRATIONAL = 1, 2, 3, 4, 5, 7, 9, 10
_SIZE = {BYTE: 1, ASCII: 1, SHORT: 2, LONG: 4, RATIONAL: 8, UNDEFINED: 1, SLONG: 4, SRATIONAL: 8}
Entry = tuple[int, int, Any]  # (tag, TIFF type, value: bytes for BYTE/ASCII/UNDEFINED, else a list of numbers/pairs)


def _payload(typ: int, value: Any) -> tuple[int, bytes]:
    import struct

    if typ in (BYTE, ASCII, UNDEFINED):
        data = value if isinstance(value, bytes) else str(value).encode()
        return len(data), data
    values = list(value) if isinstance(value, (list, tuple)) and not (
        typ in (RATIONAL, SRATIONAL) and len(value) == 2 and all(isinstance(v, int) for v in value)) else [value]
    if typ in (RATIONAL, SRATIONAL):
        f = "<II" if typ == RATIONAL else "<ii"
        mask = 0xFFFFFFFF
        data = b"".join(struct.pack(f, *((n & mask, d & mask) if typ == RATIONAL else (n, d))) for n, d in values)
    else:
        f = {SHORT: "<H", LONG: "<I", SLONG: "<i"}[typ]
        mask = {SHORT: 0xFFFF, LONG: 0xFFFFFFFF, SLONG: None}[typ]
        data = b"".join(struct.pack(f, v & mask if mask else v) for v in values)
    return len(values), data


def raw_exif(ifd0: list[Entry], exif: list[Entry] = (), gps: list[Entry] = ()) -> bytes:
    """EXIF bytes (``Exif\\0\\0`` + little-endian TIFF) with the entries exactly as given."""
    import struct

    def block(entries: list[Entry], start: int, links: dict[int, int]) -> tuple[bytes, int]:
        entries = sorted([*entries, *((t, LONG, [0]) for t in links)], key=lambda e: e[0])
        head = struct.pack("<H", len(entries))
        extra = b""
        data_at = start + 2 + 12 * len(entries) + 4
        body = b""
        for tag, typ, value in entries:
            count, payload = _payload(typ, [links[tag]] if tag in links else value)
            if len(payload) <= 4:
                body += struct.pack("<HHI", tag, typ, count) + payload.ljust(4, b"\0")
            else:
                body += struct.pack("<HHII", tag, typ, count, data_at + len(extra))
                extra += payload + (b"\0" if len(payload) % 2 else b"")
        return head + body + b"\0\0\0\0" + extra, start + len(head + body) + 4 + len(extra)

    # lay out IFD0, then the Exif and GPS sub-IFDs after it (offsets are from the TIFF header)
    sizes = {}
    for _ in range(2):  # the second pass knows where the sub-IFDs start
        links = {}
        end0 = block(list(ifd0), 8, {0x8769: sizes.get("exif", 0), 0x8825: sizes.get("gps", 0)})[1]
        sizes["exif"] = end0
        end1 = block(list(exif), end0, {})[1]
        sizes["gps"] = end1
        links = {0x8769: sizes["exif"], 0x8825: sizes["gps"]}
    b0, end0 = block(list(ifd0), 8, links)
    b1, end1 = block(list(exif), end0, {})
    b2, _ = block(list(gps), end1, {})
    return b"Exif\0\0" + b"II*\0" + struct.pack("<I", 8) + b0 + b1 + b2


def jpeg_raw(ifd0: list[Entry], exif: list[Entry] = (), gps: list[Entry] = (), *, size: tuple[int, int] = (96, 64),
             fmt: str = "JPEG") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (120, 80, 40)).save(buf, fmt, exif=raw_exif(ifd0, exif, gps))
    return buf.getvalue()


def good_raw() -> tuple[list[Entry], list[Entry], list[Entry]]:
    """Well-formed entries: camera, orientation, times, offset, GPS (Hangzhou)."""
    ifd0 = [(MAKE, ASCII, b"Test\0"), (MODEL, ASCII, b"Cam 1\0"), (ORIENTATION, SHORT, [6]),
            (DATETIME, ASCII, b"2023:05:01 10:00:00\0")]
    exif = [(DATETIME_ORIGINAL, ASCII, b"2023:05:01 10:00:00\0"), (OFFSET_TIME_ORIGINAL, ASCII, b"+08:00\0")]
    gps = [(GPS_LAT_REF, ASCII, b"N\0"), (GPS_LAT, RATIONAL, [(30, 1), (15, 1), (3240, 100)]),
           (GPS_LON_REF, ASCII, b"E\0"), (GPS_LON, RATIONAL, [(120, 1), (7, 1), (4800, 100)])]
    return ifd0, exif, gps
