"""Album indexing throughput and catalog size; and the synthetic 100,000-photo catalog.

Two modes:

* default — copies ``--n`` real JPEGs (COCO-mini images, cycled) into a temp
  folder, writes EXIF into each with piexif (capture time with an offset, GPS
  around Chinese cities, camera), then times ``index_folder`` with
  ``faces=False`` (metadata only: identity + hash, EXIF, places, time tags,
  events) and, with ``--faces``, with face detection; then a second,
  incremental run (everything unchanged). Prints photos/s and the catalog
  size on disk.
* ``--synthetic N --out FILE`` — builds the synthetic catalog of N photos
  (:func:`finegrain.album.bench.synthetic.build_synthetic_catalog`) used by the
  query-latency benchmark, and prints the build time and size on disk.

Usage::

    .venv/bin/python benchmarks/album_index.py --n 500 [--faces]
    .venv/bin/python benchmarks/album_index.py --synthetic 100000 --out /tmp/synthetic100k.sqlite [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from datetime import datetime
from fractions import Fraction
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("FINEGRAIN_DATA", REPO.parent / "shared" / "data"))
CITIES = ((30.274, 120.155), (30.030, 120.580), (31.230, 121.473), (39.904, 116.407), (22.543, 114.058))


def _dms(v: float) -> tuple[tuple[int, int], ...]:
    v = abs(v)
    d = int(v)
    m = int((v - d) * 60)
    s = Fraction(round((v - d - m / 60) * 3600, 4)).limit_denominator(1_000_000)
    return ((d, 1), (m, 1), (s.numerator, s.denominator))


def make_album(folder: Path, n: int, seed: int) -> None:
    """``n`` COCO-mini JPEGs with EXIF time (+08:00), GPS and camera, in sessions of a few photos."""
    import piexif

    images = sorted((DATA / "coco_mini" / "images").rglob("*.jpg"))
    if not images:
        sys.exit(f"no COCO-mini images under {DATA / 'coco_mini' / 'images'} (set FINEGRAIN_DATA)")
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    t = 1_600_000_000.0
    lat, lon = CITIES[0]
    for i in range(n):
        if i % 5 == 0:  # a new session
            t += rng.uniform(3600 * 6, 3600 * 24 * 10)
            lat, lon = rng.choice(CITIES)
        t += rng.uniform(30, 900)
        when = time.strftime("%Y:%m:%d %H:%M:%S", time.gmtime(t + 8 * 3600)).encode()
        la, lo = lat + rng.gauss(0, 0.01), lon + rng.gauss(0, 0.01)
        exif = {
            "0th": {piexif.ImageIFD.Make: b"Apple", piexif.ImageIFD.Model: b"iPhone 13"},
            "Exif": {piexif.ExifIFD.DateTimeOriginal: when, piexif.ExifIFD.OffsetTimeOriginal: b"+08:00"},
            "GPS": {piexif.GPSIFD.GPSLatitudeRef: b"N", piexif.GPSIFD.GPSLatitude: _dms(la),
                    piexif.GPSIFD.GPSLongitudeRef: b"E", piexif.GPSIFD.GPSLongitude: _dms(lo)},
            "1st": {},
        }
        out = folder / f"IMG_{i:05d}.jpg"
        shutil.copyfile(images[i % len(images)], out)
        piexif.insert(piexif.dump(exif), str(out))


def bench_index(n: int, faces: bool, seed: int) -> None:
    from finegrain.album.engine.catalog import open_catalog
    from finegrain.album.engine.indexer import Profiler, index_folder

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "photos"
        make_album(folder, n, seed)
        prof = Profiler.load(faces=faces)
        # warm the gazetteers and holiday tables once, as a long index run amortises them
        t0 = time.perf_counter()
        prof.place(*CITIES[0])
        prof.tags(datetime(2024, 1, 1))
        warm = time.perf_counter() - t0
        catalog = Path(tmp) / "catalog.sqlite"
        rows = []
        for label in ("first run", "re-run (unchanged)"):
            with open_catalog(catalog) as store:
                t0 = time.perf_counter()
                report = index_folder(folder, store, faces=faces, show_progress=False, profiler=prof)
                dt = time.perf_counter() - t0
                size = store.size_on_disk()
            rows.append((label, report, dt, size))
        mb = sum(f.stat().st_size for f in folder.iterdir()) / 1e6
        print(f"# album index throughput ({'with faces' if faces else 'metadata only'}), {n} COCO-mini JPEGs ({mb:.1f} MB)")
        print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
              f"profile warm-up {warm:.2f}s (not counted); notes: {prof.notes or 'none'}")
        print("| run | added | unchanged | seconds | photos/s | catalog size |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, report, dt, size in rows:
            print(f"| {label} | {report.added} | {report.unchanged} | {dt:.2f} | {n / dt:.1f} | {size / 1e6:.2f} MB |")
        print(f"# {rows[0][1].events} events, {rows[0][1].faces_found} faces, {rows[0][1].people} people")


def bench_synthetic(n: int, out: Path, seed: int) -> None:
    from finegrain.album.bench.synthetic import build_synthetic_catalog
    from finegrain.album.engine.catalog import open_catalog

    summary = build_synthetic_catalog(out, n, seed)
    with open_catalog(out, create=False) as store:
        size = store.size_on_disk()
        faces = len(store.faces())
    print(f"# synthetic catalog: {summary.photos} photos, {summary.people} people, {summary.events} events, "
          f"{summary.photos_with_faces} photos with faces ({faces} faces)")
    print(f"# built in {summary.seconds:.1f}s ({summary.photos / summary.seconds:.0f} photos/s); "
          f"size on disk {size / 1e6:.1f} MB ({size / summary.photos:.0f} B/photo): {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=300, help="number of real JPEGs to index (default 300)")
    ap.add_argument("--faces", action="store_true", help="also detect and cluster faces (dlib)")
    ap.add_argument("--synthetic", type=int, metavar="N", help="build a synthetic catalog of N photos instead")
    ap.add_argument("--out", type=Path, help="catalog file for --synthetic (must not exist)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.synthetic:
        if args.out is None:
            ap.error("--synthetic needs --out FILE")
        bench_synthetic(args.synthetic, args.out, args.seed)
    else:
        bench_index(args.n, args.faces, args.seed)


if __name__ == "__main__":
    main()
