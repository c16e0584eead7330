"""A seeded mutational fuzz test of the album photo reader.

Seeds are real images (JPEG and PNG, written by Pillow with EXIF holding time, offset, GPS,
camera and orientation). Two kinds of mutants, from a fixed seed and in a bounded count:

* byte mutants: bit flips, inserted, deleted, duplicated and overwritten runs, splices of
  two seeds, truncations (half of them aimed at the EXIF segment at the start of the file);
* field mutants: EXIF entries rewritten byte for byte with wrong TIFF types, wrong counts,
  huge and negative values, zero denominators and impossible dates.

The contract of :func:`finegrain.album.engine.files.read_photo`: an :class:`ImageInfo` (some fields
None, the reasons in ``problems``) or a :class:`FinegrainError`, never another exception.
A field mutant keeps its pixels intact, so it must always give a record.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from datetime import datetime

import pytest

from album_photo_fixtures import (
    ASCII,
    BYTE,
    DATETIME,
    DATETIME_ORIGINAL,
    GPS_LAT,
    GPS_LAT_REF,
    GPS_LON,
    GPS_LON_REF,
    LONG,
    MAKE,
    MODEL,
    OFFSET_TIME_ORIGINAL,
    ORIENTATION,
    RATIONAL,
    SHORT,
    SLONG,
    SRATIONAL,
    UNDEFINED,
    good_raw,
    jpeg_raw,
)
from finegrain.album.engine.files import ImageInfo, read_photo
from finegrain.errors import FinegrainError

SEED = 20240610
N_BYTE_MUTANTS = 300
N_FIELD_MUTANTS = 200
FIELDS = {"exif", "time", "time zone", "GPS", "camera", "orientation"}


def _seeds() -> list[bytes]:
    ifd0, exif, gps = good_raw()
    return [
        jpeg_raw(ifd0, exif, gps),
        jpeg_raw(ifd0, exif, gps, size=(40, 120)),
        jpeg_raw(ifd0, [], gps, fmt="PNG"),
        jpeg_raw([], exif, []),
    ]


def mutate_bytes(rng: random.Random, data: bytes, others: list[bytes]) -> bytes:
    """One to four byte-level edits of ``data``; half aimed at the first 400 bytes (the EXIF)."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not b:
            b = bytearray(rng.choice(others)[: rng.randint(0, 64)])
            continue
        hi = min(len(b), 400) if rng.random() < 0.5 else len(b)
        i = rng.randrange(hi)
        op = rng.choice(("flip", "flip", "insert", "delete", "dup", "overwrite", "splice", "truncate", "int"))
        if op == "flip":
            b[i] ^= 1 << rng.randrange(8)
        elif op == "insert":
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif op == "delete":
            del b[i:i + rng.randint(1, 32)]
        elif op == "dup":
            b[i:i] = b[i:i + rng.randint(1, 64)]
        elif op == "overwrite":
            n = rng.randint(1, 8)
            b[i:i + n] = bytes([rng.choice((0x00, 0xFF, 0x7F, 0x80))]) * n
        elif op == "splice":
            other = rng.choice(others)
            j = rng.randrange(len(other))
            b = b[:i] + other[j:j + rng.randint(1, 512)] + b[i:]
        elif op == "truncate":
            b = b[:i]
        else:  # a 16/32-bit count or offset set to an extreme
            v = rng.choice((0, 1, 0xFFFF, 0xFFFFFFFF, 0x7FFFFFFF, 3, 1000))
            b[i:i + 4] = v.to_bytes(4, rng.choice(("little", "big")))
    return bytes(b)


_TEXTS = [b"2023:13:45 99:99:99\0", b"0000:00:00 00:00:00\0", b"9999:12:31 23:59:59\0", b"2023:02:29 10:00:00\0",
          b"\0", b"", b"\xff\xfe\xfd\0", b"+99:99\0", b"-00:00\0", b"N\0", b"Q\0", "北京\0".encode(), b"x" * 300]
_NUMBERS = [0, 1, 8, 9, 0xFFFF, 0xFFFFFFFF, 2**31 - 1]


def _value(rng: random.Random, typ: int):  # noqa: ANN202
    if typ in (ASCII, BYTE, UNDEFINED):
        return rng.choice(_TEXTS)
    n = rng.choice((1, 1, 2, 3, 3, 3, 4, 7))
    if typ in (RATIONAL, SRATIONAL):
        pool = [0, 1, 60, 3600, 10**9, 0xFFFFFFFF] if typ == RATIONAL else [0, 1, -1, -(2**31), 2**31 - 1]
        return [(rng.choice(pool), rng.choice(pool)) for _ in range(n)]
    if typ == SLONG:
        return [rng.choice((0, -1, -(2**31), 2**31 - 1)) for _ in range(n)]
    return [rng.choice(_NUMBERS) & (0xFFFF if typ == SHORT else 0xFFFFFFFF) for _ in range(n)]


_WHERE = {MAKE: 0, MODEL: 0, ORIENTATION: 0, DATETIME: 0, DATETIME_ORIGINAL: 1, OFFSET_TIME_ORIGINAL: 1,
          GPS_LAT_REF: 2, GPS_LAT: 2, GPS_LON_REF: 2, GPS_LON: 2}
_TYPES = (BYTE, ASCII, SHORT, LONG, RATIONAL, UNDEFINED, SLONG, SRATIONAL)


def mutate_fields(rng: random.Random) -> bytes:
    """A JPEG whose EXIF has one to four entries rewritten (type, count, value) or dropped."""
    blocks = [list(b) for b in good_raw()]
    for tag in rng.sample(sorted(_WHERE), rng.randint(1, 4)):
        block = blocks[_WHERE[tag]]
        block[:] = [e for e in block if e[0] != tag]
        if rng.random() < 0.9:
            typ = rng.choice(_TYPES)
            block.append((tag, typ, _value(rng, typ)))
    return jpeg_raw(*blocks, size=rng.choice(((96, 64), (8, 8), (1, 1))))


def _check_record(info: ImageInfo) -> None:
    assert isinstance(info, ImageInfo)
    assert isinstance(info.width, int) and isinstance(info.height, int) and info.width > 0 and info.height > 0
    assert all(p.field in FIELDS and isinstance(p.reason, str) and p.reason for p in info.problems)
    if info.lat is not None or info.lon is not None:
        assert -90 <= info.lat <= 90 and -180 <= info.lon <= 180 and math.isfinite(info.lat + info.lon)
    assert info.taken_at is None or isinstance(info.taken_at, datetime)
    assert info.orientation is None or 1 <= info.orientation <= 8
    assert info.camera is None or isinstance(info.camera, str)


def _read(data: bytes, tmp_path, name: str) -> str:
    """Read ``data`` both as bytes and from a file; the outcome kind ('record', 'problems', 'error')."""
    path = tmp_path / name
    path.write_bytes(data)
    outcomes = []
    for source in (data, path):
        try:
            info = read_photo(source)
        except FinegrainError as e:
            assert "not a readable image" in str(e)
            outcomes.append("error")
            continue
        _check_record(info)
        outcomes.append("problems" if info.problems else "record")
    assert outcomes[0] == outcomes[1], "bytes and file gave different outcomes"
    return outcomes[0]


def test_byte_mutants_give_a_record_or_a_finegrain_error(tmp_path) -> None:
    rng = random.Random(SEED)
    seeds = _seeds()
    for s in seeds:
        _check_record(read_photo(s))
    kinds: Counter[str] = Counter()
    for i in range(N_BYTE_MUTANTS):
        data = mutate_bytes(rng, rng.choice(seeds), seeds)
        try:
            kinds[_read(data, tmp_path, f"b{i % 8}.jpg")] += 1
        except AssertionError:
            raise
        except Exception as e:  # the contract is broken: say which input
            pytest.fail(f"byte mutant {i} (seed {SEED}) raised {type(e).__name__}: {e}")
    # the mutants reach all three outcomes (a fuzzer that only makes garbage tests nothing)
    assert kinds["error"] > 0 and kinds["record"] + kinds["problems"] > N_BYTE_MUTANTS // 10, kinds


def test_field_mutants_always_give_a_record(tmp_path) -> None:
    rng = random.Random(SEED + 1)
    kinds: Counter[str] = Counter()
    fields: Counter[str] = Counter()
    for i in range(N_FIELD_MUTANTS):
        data = mutate_fields(rng)
        try:
            info = read_photo(data)
        except Exception as e:  # intact pixels: even FinegrainError breaks the contract here
            pytest.fail(f"field mutant {i} (seed {SEED + 1}) raised {type(e).__name__}: {e}")
        _check_record(info)
        kinds["problems" if info.problems else "record"] += 1
        fields.update(info.unreadable_fields)
    assert kinds["problems"] > N_FIELD_MUTANTS // 4, kinds
    assert {"time", "GPS", "orientation"} <= set(fields), fields
