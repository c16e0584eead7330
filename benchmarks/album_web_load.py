"""The album web server under load: ``finegrain album serve`` on a 100,000-photo synthetic album.

Builds (or reuses) in ``--workdir``:

* ``catalog.sqlite`` — :func:`finegrain.album.bench.synthetic.build_synthetic_catalog` (``--n`` photos,
  ``--seed``), with ``photos/`` added as its root;
* ``photos/IMG_*.jpg`` — one small real JPEG per photo (``--image-size``, written by Pillow from
  32 pre-encoded variants, so the thumbnails are made by decoding and encoding real files);
* ``catalog.sqlite.thumbs/`` — the server's disk cache of thumbnails (kept between runs;
  ``--cold`` empties it first, so every thumbnail is made during the run).

Then starts the server as a subprocess exactly as a user would (``python -m finegrain album
serve CATALOG --port P``, loopback only; ``--serve-arg`` passes extra options, e.g.
``--serve-arg=--keep-alive=5`` for the old keep-alive timeout), warms the search context up
with one query (the time is printed), and sends ``--requests`` requests (default 10,000) with
``--concurrency`` clients (default 50, each one keep-alive connection, closed loop: a client
sends its next request when the last is answered), to 127.0.0.1 only, within ``--time-limit``
seconds (requests not sent by then are counted as unsent and the run fails). The default
client (``--client raw``) is a minimal asyncio HTTP/1.1 client: on a 2-core machine httpx's
own CPU (``--client httpx``) caps the request rate, so that run measures the client.

After the load, ``--idle-probe`` connections (default 400, starting over 5 s) each make a
request, stay idle for 4.9-6.0 s and reuse the connection without checking it first (httpx
checks, and then loses only the race around its own 5 s expiry): with the server's keep-alive
at uvicorn's default 5 s the reuses after 5 s fail with "Server disconnected without sending a response"
(``--serve-arg=--keep-alive=5`` shows it); see :mod:`finegrain.album.engine.web.server`.

Search answers are cached per state of the catalog (``X-Finegrain-Cache: hit|miss``); the
report splits search into hits and misses. A miss runs in the server's search worker process
(``album serve --search-processes``, default 1; ``--serve-arg=--search-processes=0`` runs it in a
thread of the server). With 50 clients in a closed loop both cores stay busy and
every request gets a share of them, so a request's latency grows with its own CPU cost: a miss
costs several times a hit (``benchmarks/album_search_miss.py`` measures a miss's CPU), and
the first miss naming a place or person reads that constraint's photos from the catalog once per
worker context (longer the more photos it has); in a short run most constraints are read
for the first time, which is what the misses' own p95 shows. The query pool (distinct queries made
from the album's places, times and people) is walked in a shuffled cycle, so a query comes back
only after all the others; the share of searches that miss follows from the pool's size and
``--requests``, each miss running the planner and the engine.

The request mix (fixed by ``--seed``): search 35 % (distinct queries made from the album's
cities in both languages, years, months, seasons and people: no two consecutive requests
reuse one), thumbnail 40 % (photo ids drawn uniformly from the whole album; the same ids on every run
with the same seed, so a second run reads them from the disk cache unless ``--cold``), photo detail 10 %,
timeline pages 10 % (random months), people/places/map 5 %.

Prints per route: count, errors, p50/p95/p99 (ms), and the total req/s; an error is any
exception of the client (e.g. a protocol error on a keep-alive connection) or a status other
than 200. Exit status 1 when there were errors, unsent requests, or (``--check``) a p95 of
search or thumbnails at or above 100 ms. The report, failed or not, goes to this script's section
of ``docs/results/album.md`` (``--markdown``; measured figures live there).

Usage::

    .venv/bin/python benchmarks/album_web_load.py [--workdir /tmp/finegrain_album_web_bench]
        [--n 100000] [--requests 10000] [--concurrency 50] [--time-limit 600] [--cold] [--check]
        [--markdown docs/results/album.md]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

from _results import Recorder, add_markdown_option

ROUTES = ("search", "thumb", "photo", "timeline", "people", "places", "map")
MIX = {"search": 35, "thumb": 40, "photo": 10, "timeline": 10, "people": 2, "places": 2, "map": 1}
HOST = "127.0.0.1"


# ------------------------------------------------------------------ the album


def ensure_album(workdir: Path, n: int, seed: int, image_size: tuple[int, int]) -> Path:
    from finegrain.album.bench.synthetic import build_synthetic_catalog
    from finegrain.album.engine.catalog.sqlite import SqliteCatalog

    workdir.mkdir(parents=True, exist_ok=True)
    catalog = workdir / "catalog.sqlite"
    stamp = workdir / "album.json"
    want = {"n": n, "seed": seed, "image_size": list(image_size)}
    if stamp.is_file() and json.loads(stamp.read_text()) == want and catalog.is_file():
        return catalog
    for stale in (catalog, workdir / "catalog.sqlite-wal", workdir / "catalog.sqlite-shm"):
        stale.unlink(missing_ok=True)
    shutil.rmtree(workdir / "catalog.sqlite.thumbs", ignore_errors=True)
    t0 = time.perf_counter()
    summary = build_synthetic_catalog(catalog, n, seed)
    print(f"built the synthetic catalog: {summary.photos} photos, {summary.people} people in {time.perf_counter() - t0:.1f} s")
    photos = workdir / "photos"
    photos.mkdir(exist_ok=True)
    variants = _jpeg_variants(image_size, seed)
    t0 = time.perf_counter()
    with sqlite3.connect(catalog) as db:
        ids = [r[0] for r in db.execute("SELECT id FROM photos ORDER BY id")]
    for i, pid in enumerate(ids):
        (photos / pid).write_bytes(variants[i % len(variants)])
    size = sum(len(variants[i % len(variants)]) for i in range(len(ids)))
    print(f"wrote {len(ids)} JPEGs of {image_size[0]}x{image_size[1]} ({size / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s")
    store = SqliteCatalog(catalog)
    try:
        store.add_root(str(photos.resolve()))
    finally:
        store.close()
    stamp.write_text(json.dumps(want))
    return catalog


def _jpeg_variants(size: tuple[int, int], seed: int, count: int = 32) -> list[bytes]:
    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    out = []
    for _ in range(count):
        im = Image.new("RGB", size, tuple(rng.randrange(256) for _ in range(3)))  # type: ignore[arg-type]
        draw = ImageDraw.Draw(im)
        for _ in range(12):
            x0, y0 = rng.randrange(size[0]), rng.randrange(size[1])
            draw.ellipse((x0, y0, x0 + rng.randrange(20, 120), y0 + rng.randrange(20, 120)),
                         fill=tuple(rng.randrange(256) for _ in range(3)))  # type: ignore[arg-type]
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=75)
        out.append(buf.getvalue())
    return out


# ------------------------------------------------------------------ the workload


def workload(catalog: Path, count: int, seed: int) -> list[tuple[str, str]]:
    """``count`` (route, path) pairs in a fixed random order."""
    rng = random.Random(seed)
    with sqlite3.connect(f"file:{catalog}?mode=ro", uri=True) as db:
        ids = [r[0] for r in db.execute("SELECT id FROM photos")]
        months = [r[0] for r in db.execute(
            "SELECT DISTINCT substr(taken_local, 1, 7) FROM photos WHERE taken_local IS NOT NULL")]
        cities = [r for r in db.execute("SELECT DISTINCT city_en, city_zh FROM places WHERE city_en IS NOT NULL")]
        districts = [r[0] for r in db.execute("SELECT DISTINCT district_en FROM places WHERE district_en IS NOT NULL")]
        people = [json.loads(r[0]) for r in db.execute("SELECT names FROM people")]
    queries = _queries(rng, cities, districts, people)
    routes = [r for r, w in MIX.items() for _ in range(w)]
    out: list[tuple[str, str]] = []
    q_order = list(range(len(queries)))
    rng.shuffle(q_order)
    qi = 0
    for _ in range(count):
        route = rng.choice(routes)
        if route == "search":
            q = queries[q_order[qi % len(q_order)]]
            qi += 1
            path = "/api/search?q=" + quote(q)
        elif route == "thumb":
            path = "/thumb/" + quote(rng.choice(ids))
        elif route == "photo":
            path = "/api/photo/" + quote(rng.choice(ids))
        elif route == "timeline":
            path = "/api/timeline?limit=60" + ("" if rng.random() < 0.2 else "&before=" + rng.choice(months))
        elif route == "people":
            path = "/api/people"
        elif route == "places":
            path = "/api/places?lang=" + rng.choice(("en", "zh"))
        else:
            path = "/api/map?cell=0.05"
        out.append((route, path))
    return out


def _queries(rng: random.Random, cities: list, districts: list[str], people: list[list[str]]) -> list[str]:
    years = list(range(2019, 2026))
    seasons = ["spring", "summer", "autumn", "winter"]
    months = ["January", "March", "May", "July", "October", "December"]
    out: set[str] = set()
    for en, zh in cities:
        out.add(f"photos in {en}")
        out.add(f"{zh}的照片")
        for y in years:
            out.add(f"photos in {en} in {y}")
            out.add(f"{y}年在{zh}的照片")
        for s in seasons:
            out.add(f"{s} in {en}")
        for m in rng.sample(months, 3):
            out.add(f"{en} in {m} {rng.choice(years)}")
    for d in districts:
        out.add(f"photos in {d}")
    for names in people[1:]:
        out.add(f"photos with {names[0]}")
        out.add(f"{names[-1]}的照片")
        out.add(f"me and {names[1]} in {rng.choice(years)}")
        en, _ = rng.choice(cities)
        out.add(f"{names[0]} in {en}")
    for y in years:
        out.add(f"photos from {y}")
        for s in seasons:
            out.add(f"{s} {y}")
    return sorted(out)


# ------------------------------------------------------------------ the server


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def start_server(catalog: Path, port: int, extra: list[str], log: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "finegrain", "album", "serve", str(catalog), "--host", HOST, "--port", str(port), *extra]
    print("server:", " ".join(cmd))
    proc = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}; see {log}")
        try:
            with socket.create_connection((HOST, port), timeout=1):
                return proc
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit("the server did not start within 120 s")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


# ------------------------------------------------------------------ the client


class RawConnection:
    """A minimal HTTP/1.1 keep-alive client on one asyncio stream (GET only; the server always
    sends Content-Length): a tenth of httpx's CPU per request, so on a 2-core machine the client
    takes less from the server it measures. Any malformed or cut-short answer raises."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None or self.writer.is_closing():
            self.reader, self.writer = await asyncio.open_connection(HOST, self.port)
        assert self.reader is not None
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: {HOST}:{self.port}\r\nAccept: */*\r\n\r\n".encode("ascii"))
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as e:
            self.close()
            raise ConnectionError(f"server disconnected without a complete response ({len(e.partial)} bytes)") from None
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
            self.close()
            raise ConnectionError(f"not an HTTP status line: {lines[0][:80]!r}")
        headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
        if "content-length" not in headers:
            self.close()
            raise ConnectionError(f"no Content-Length in the answer to {path}")
        body = await self.reader.readexactly(int(headers["content-length"]))
        if headers.get("connection", "").lower() == "close":
            self.close()
        return int(parts[1]), headers, body

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def run_load(port: int, work: list[tuple[str, str]], concurrency: int, time_limit: float, client_kind: str = "raw"
                   ) -> tuple[list[tuple[str, int, float, str]], float, int]:
    """Send ``work`` with ``concurrency`` workers over keep-alive connections; (results, seconds, unsent)."""
    if client_kind == "raw":
        return await _run_raw(port, work, concurrency, time_limit)
    import httpx

    results: list[tuple[str, int, float, str]] = []
    queue = list(reversed(work))
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    timeout = httpx.Timeout(60.0)
    started = time.perf_counter()
    stop_at = started + time_limit

    async with httpx.AsyncClient(base_url=f"http://{HOST}:{port}", limits=limits, timeout=timeout,
                                 trust_env=False) as client:
        async def worker() -> None:
            while queue and time.perf_counter() < stop_at:
                route, path = queue.pop()
                t0 = time.perf_counter()
                tag = route
                try:
                    r = await client.get(path)
                    status, err = r.status_code, "" if r.status_code == 200 else f"HTTP {r.status_code}: {r.text[:120]}"
                    if route == "search":
                        tag = f"search/{r.headers.get('x-finegrain-cache', '?')}"
                except Exception as e:  # noqa: BLE001 - every failure is counted, by type
                    status, err = 0, f"{type(e).__name__}: {e}"
                results.append((tag, status, (time.perf_counter() - t0) * 1000, err))

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return results, time.perf_counter() - started, len(queue)


async def idle_probe(port: int, connections: int, seed: int) -> list[tuple[str, int, float, str]]:
    """``connections`` keep-alive connections (starting over 5 s) each send a request, stay idle
    for 4.9-6.0 s and send a second request on the same connection, without first checking
    whether the server closed it: a server that closes idle connections at 5 s (uvicorn's
    default) answers the later ones with a closed socket, "Server disconnected without sending
    a response" (clients that check, like httpx, lose only when the close and the request
    cross, around their own 5 s expiry: a race, a few in a thousand)."""
    rng = random.Random(seed)
    plan = [(rng.uniform(0, 5.0), rng.uniform(4.9, 6.0)) for _ in range(connections)]
    results: list[tuple[str, int, float, str]] = []

    async def one(start: float, idle: float) -> None:
        await asyncio.sleep(start)
        conn = RawConnection(port)
        try:
            await conn.get("/api/people")
            await asyncio.sleep(idle)
            t0 = time.perf_counter()
            try:
                status, _, _ = await asyncio.wait_for(conn.get("/api/people"), 60)
                err = "" if status == 200 else f"HTTP {status}"
            except Exception as e:  # noqa: BLE001
                status, err = 0, f"{type(e).__name__}: {e}"
            results.append(("idle-reuse", status, (time.perf_counter() - t0) * 1000, err))
        finally:
            conn.close()

    await asyncio.gather(*(one(start, idle) for start, idle in plan))
    return results


async def _run_raw(port: int, work: list[tuple[str, str]], concurrency: int, time_limit: float
                   ) -> tuple[list[tuple[str, int, float, str]], float, int]:
    results: list[tuple[str, int, float, str]] = []
    queue = list(reversed(work))
    started = time.perf_counter()
    stop_at = started + time_limit

    async def worker() -> None:
        conn = RawConnection(port)
        try:
            while queue and time.perf_counter() < stop_at:
                route, path = queue.pop()
                tag = route
                t0 = time.perf_counter()
                try:
                    status, headers, body = await asyncio.wait_for(conn.get(path), 60)
                    err = "" if status == 200 else f"HTTP {status}: {body[:120]!r}"
                    if route == "search":
                        tag = f"search/{headers.get('x-finegrain-cache', '?')}"
                except Exception as e:  # noqa: BLE001 - every failure is counted, by type
                    conn.close()
                    status, err = 0, f"{type(e).__name__}: {e}"
                results.append((tag, status, (time.perf_counter() - t0) * 1000, err))
        finally:
            conn.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return results, time.perf_counter() - started, len(queue)


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * len(s) + 0.5)) - 1))] if s else float("nan")


def report(results: list[tuple[str, int, float, str]], seconds: float, unsent: int) -> dict:
    rows = {}
    print(f"\n{'route':<10}{'count':>7}{'errors':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for route in ("search", "search/hit", "search/miss", *ROUTES[1:], "idle-reuse", "all"):
        mine = [r for r in results if route == "all" or r[0] == route or r[0].split("/")[0] == route]
        if not mine:
            continue
        lat = [r[2] for r in mine]
        errors = sum(1 for r in mine if r[3])
        rows[route] = {"count": len(mine), "errors": errors, "p50": _pct(lat, 50), "p95": _pct(lat, 95),
                       "p99": _pct(lat, 99), "max": max(lat)}
        x = rows[route]
        print(f"{route:<10}{x['count']:>7}{errors:>8}{x['p50']:>9.1f}{x['p95']:>9.1f}{x['p99']:>9.1f}{x['max']:>9.1f}")
    loaded = [r for r in results if r[0] != "idle-reuse"]
    print(f"\n{len(loaded)} requests in {seconds:.1f} s = {len(loaded) / seconds:.0f} req/s (the idle probe not counted); "
          f"errors {rows['all']['errors']}; unsent {unsent}")
    kinds: dict[str, int] = {}
    for r in results:
        if r[3]:
            kinds[r[3][:100]] = kinds.get(r[3][:100], 0) + 1
    for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {v} x {k}")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/finegrain_album_web_bench"))
    ap.add_argument("--n", type=int, default=100_000, help="photos in the synthetic album")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--image-size", default="400x300", help="WxH of the generated JPEGs")
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds for the whole run (hard limit)")
    ap.add_argument("--cold", action="store_true", help="empty the thumbnail cache first")
    ap.add_argument("--check", action="store_true", help="exit 1 when p95 of search or thumb is >= 100 ms")
    ap.add_argument("--serve-arg", action="append", default=[], help="extra option for `album serve` (repeat)")
    ap.add_argument("--client", choices=("raw", "httpx"), default="raw",
                    help="raw: a minimal asyncio HTTP/1.1 keep-alive client (light); httpx: httpx.AsyncClient")
    ap.add_argument("--idle-probe", type=int, default=400,
                    help="connections reused after 4.9-6.0 s idle, after the load (0: none)")
    ap.add_argument("--json", type=Path, help="write the figures here")
    add_markdown_option(ap, "album.md")
    args = ap.parse_args(argv)
    if not 1 <= args.requests <= 1_000_000 or not 1 <= args.concurrency <= 1000:
        ap.error("--requests must be in 1..1,000,000 and --concurrency in 1..1000")
    with Recorder(__file__, args.markdown, argv):
        return run(args)


def run(args: argparse.Namespace) -> int:
    """Build or reuse the album, serve it, send the load and the idle probe, print the report; 1 on failure."""
    w, h = (int(x) for x in args.image_size.lower().split("x"))
    catalog = ensure_album(args.workdir, args.n, args.seed, (w, h))
    thumbs = catalog.parent / (catalog.name + ".thumbs")
    if args.cold:
        shutil.rmtree(thumbs, ignore_errors=True)
    cached = sum(1 for _ in thumbs.rglob("*.jpg")) if thumbs.is_dir() else 0
    print(f"catalog {catalog} ({args.n} photos); thumbnails already on disk: {cached}")
    work = workload(catalog, args.requests, args.seed)
    load = os.getloadavg()
    print(f"load average before the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    port = free_port()
    proc = start_server(catalog, port, args.serve_arg, args.workdir / "server.log")
    try:
        import httpx

        t0 = time.perf_counter()
        r = httpx.get(f"http://{HOST}:{port}/api/search", params={"q": "photos in Hangzhou"}, timeout=300, trust_env=False)
        r.raise_for_status()
        print(f"warm-up (first query builds the search context): {time.perf_counter() - t0:.1f} s")
        results, seconds, unsent = asyncio.run(run_load(port, work, args.concurrency, args.time_limit, args.client))
        if args.idle_probe:
            t0 = time.perf_counter()
            probe = asyncio.run(idle_probe(port, min(args.idle_probe, 2000), args.seed))
            print(f"idle probe: {len(probe)} connections reused 4.9-6.0 s after a response, "
                  f"{sum(1 for r in probe if r[3])} errors ({time.perf_counter() - t0:.1f} s)")
            results += probe
    finally:
        stop_server(proc)
    rows = report(results, seconds, unsent)
    load = os.getloadavg()
    print(f"load average after the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "seconds": seconds, "unsent": unsent,
                                         "requests": len(results), "args": vars(args) | {"workdir": str(args.workdir),
                                                                                          "json": str(args.json)}},
                                        indent=2, default=str))
    failed = rows["all"]["errors"] > 0 or unsent > 0
    if args.check:
        failed |= any(rows.get(r, {}).get("p95", 0) >= 100 for r in ("search", "thumb"))
    if failed:
        print("FAILED: errors, unsent requests" + (" or p95 >= 100 ms" if args.check else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
