"""The album page in a real browser: headless Chromium, driven over the DevTools protocol,
types queries into the search box of ``finegrain album serve`` and reads the page (the shared
helpers of ``tests/chromium.py``: :class:`DevToolsPage`, :func:`serve_app`).

Two albums. The first is real: COCO-mini JPEGs copied into ``tmp_path`` with EXIF times and GPS written
by piexif (four in Hangzhou in May 2023, two in Beijing in August 2022) and JSON caption
sidecars, indexed by ``index_folder`` and searched by the real engine. The server is uvicorn
on a free loopback port in a thread. The second is PhotoBench album1 imported without its
images (so every thumbnail is the missing-file placeholder) and drives every view: timeline,
search with a chip clicked away, people (adding a Chinese alias, merging), places, map, photo
detail and the keyboard; each view is screenshotted (``$FINEGRAIN_SCREENSHOTS`` keeps them).

Chromium: ``$FINEGRAIN_CHROMIUM``, else ``chromium``/``chromium-browser``/``google-chrome``
on PATH. Missing, the test is skipped locally and FAILS in CI (``CI=true``).
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chromium import DevToolsPage, find_chromium, missing, serve_app


def _need(module: str) -> Any:
    """Import ``module``; missing, skip locally and fail in CI (the web page test must run there)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        missing(f"the album browser test needs {module!r}: pip install -e '.[test]'", module_level=True)


_need("fastapi")
_need("uvicorn")
piexif = _need("piexif")
_need("websockets.sync.client")

from finegrain.album.engine.catalog import open_catalog  # noqa: E402
from finegrain.album.engine.indexer import index_folder  # noqa: E402
from finegrain.album.engine.photobench import import_photobench  # noqa: E402
from finegrain.album.engine.web.app import create_app  # noqa: E402

HANGZHOU = (30.2590, 120.1300)
BEIJING = (39.9042, 116.4074)


def _chromium() -> str:
    return find_chromium("the album web page test")


# ---------------------------------------------------------------- a real album


def _dms(x: float) -> tuple[tuple[int, int], ...]:
    d = int(x)
    m = int((x - d) * 60)
    s = round(((x - d) * 60 - m) * 60 * 100)
    return ((d, 1), (m, 1), (s, 100))


def _write_exif(path: Path, when: str, latlon: tuple[float, float]) -> None:
    lat, lon = latlon
    exif = {
        "0th": {piexif.ImageIFD.Make: b"Finegrain", piexif.ImageIFD.Model: b"TestCam"},
        "Exif": {piexif.ExifIFD.DateTimeOriginal: when.encode(), piexif.ExifIFD.OffsetTimeOriginal: b"+08:00"},
        "GPS": {
            piexif.GPSIFD.GPSLatitudeRef: b"N", piexif.GPSIFD.GPSLatitude: _dms(lat),
            piexif.GPSIFD.GPSLongitudeRef: b"E", piexif.GPSIFD.GPSLongitude: _dms(lon),
        },
        "1st": {},
    }
    piexif.insert(piexif.dump(exif), str(path))


def _coco_images(data_root: Path, n: int) -> list[tuple[Path, str]]:
    """The first ``n`` COCO-mini images (sorted by name) that exist, with their first caption."""
    joined = data_root / "coco_mini" / "coco_mini_joined.jsonl"
    out: list[tuple[Path, str]] = []
    with joined.open(encoding="utf-8") as f:
        rows = sorted((json.loads(line) for line in f if line.strip()), key=lambda r: r["file_name"])
    for row in rows:
        path = data_root / "coco_mini" / row["image_path"]
        if path.is_file():
            out.append((path, row["captions"][0].strip()))
        if len(out) == n:
            break
    if len(out) < n:
        pytest.skip(f"COCO-mini has fewer than {n} images under {data_root / 'coco_mini'}")
    return out


SHOTS = [  # (EXIF local time, GPS, tag) of the six photos
    ("2023:05:01 10:30:00", HANGZHOU, "hangzhou"),
    ("2023:05:02 14:30:00", HANGZHOU, "hangzhou"),
    ("2023:05:03 16:30:00", HANGZHOU, "hangzhou"),
    ("2023:05:04 09:30:00", HANGZHOU, "hangzhou"),
    ("2022:08:11 08:15:00", BEIJING, "beijing"),
    ("2022:08:12 18:15:00", BEIJING, "beijing"),
]


@pytest.fixture(scope="module")
def album(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> tuple[Path, Path, dict[str, str]]:
    """(photo root, catalog, photo id -> where) of six real photos."""
    if not (data_root / "coco_mini").is_dir():
        pytest.skip(f"COCO-mini not found under {data_root}")
    base = tmp_path_factory.mktemp("browser")
    root = base / "photos"
    root.mkdir()
    where: dict[str, str] = {}
    for i, ((src, caption), (when, latlon, tag)) in enumerate(zip(_coco_images(data_root, 6), SHOTS, strict=True)):
        dst = root / f"IMG_{i:04d}.jpg"
        shutil.copy(src, dst)
        _write_exif(dst, when, latlon)
        dst.with_suffix(".json").write_text(json.dumps({"caption": caption, "keywords": [tag]}), encoding="utf-8")
        where[dst.name] = tag
    catalog = base / "catalog.sqlite"
    with open_catalog(catalog) as store:
        report = index_folder(root, store, faces=False, show_progress=False)
        assert report.added == 6 and not report.skipped, report.summary()
        assert store.get_place("IMG_0000.jpg").city_en == "Hangzhou"
    return root, catalog, where


# ---------------------------------------------------------------- server and browser


@pytest.fixture(scope="module")
def server(album: tuple[Path, Path, dict[str, str]]) -> Iterator[str]:
    _, catalog, _ = album
    with serve_app(create_app(catalog, allowed_hosts=["127.0.0.1", "localhost"])) as url:
        yield url


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevToolsPage]:
    with DevToolsPage(_chromium(), tmp_path_factory.mktemp("chromium") / "profile", width=1280, height=900) as b:
        yield b


def _open(b: DevToolsPage, url: str) -> None:
    b.goto(url)
    b.wait_for("document.readyState === 'complete' && !!document.getElementById('q')")


def _search(b: DevToolsPage, query: str) -> str:
    """Clear the box, type ``query``, press Enter; the page state once the answer is shown."""
    b.eval("(() => { const q = document.getElementById('q'); q.value = ''; q.focus(); return true; })()")
    b.type(query)
    assert b.eval("document.getElementById('q').value") == query
    b.eval("document.body.removeAttribute('data-state')")
    b.press_enter()
    return b.wait_for("['results', 'abstained', 'error'].includes(document.body.dataset.state) && document.body.dataset.state")


# ---------------------------------------------------------------- the test


def test_typed_queries_show_results_chips_and_abstention(
    browser: DevToolsPage, server: str, album: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    _, _, where = album
    _open(browser, server + "/")
    assert browser.eval("document.title") == "finegrain album"

    state = _search(browser, "photos in Hangzhou in May 2023")
    assert state == "results", browser.eval("document.getElementById('status').textContent")
    shown = browser.eval("[...document.querySelectorAll('#grid .result')].map(f => f.dataset.id)")
    assert sorted(shown) == sorted(pid for pid, tag in where.items() if tag == "hangzhou")
    chips = browser.eval("[...document.querySelectorAll('#plan .chip')].map(c => [c.dataset.kind, c.textContent])")
    kinds = {kind for kind, _ in chips}
    assert {"time", "place"} <= kinds, chips
    assert any(kind == "place" and "Hangzhou" in text for kind, text in chips), chips
    # every thumbnail is a decoded JPEG from /thumb/, not a broken image
    browser.wait_for(
        "[...document.querySelectorAll('#grid img')].every(i => i.complete && i.naturalWidth > 0)", timeout=20
    )
    thumbs = browser.eval("[...document.querySelectorAll('#grid img')].map(i => [i.getAttribute('src'), i.naturalWidth, i.naturalHeight])")
    assert len(thumbs) == 4
    assert all(src.startswith("/thumb/") and max(w, h) == 320 for src, w, h in thumbs), thumbs
    assert not browser.eval("getComputedStyle(document.getElementById('empty')).display !== 'none'")
    assert browser.eval("location.search") == "?q=photos%20in%20Hangzhou%20in%20May%202023"
    shot = tmp_path / "album_results.png"
    browser.screenshot(shot)
    assert shot.stat().st_size > 10_000

    state = _search(browser, "photos from 1999")
    assert state == "abstained"
    assert browser.eval("document.querySelectorAll('#grid .result').length") == 0
    assert browser.eval("getComputedStyle(document.getElementById('empty')).display") == "block"
    assert browser.eval("document.getElementById('empty').innerText").startswith("No matching photos")
    reason = browser.eval("document.getElementById('reason').textContent")
    assert "1999" in reason, reason
    assert ["time", "1999"] in browser.eval(
        "[...document.querySelectorAll('#plan .chip')].map(c => [c.dataset.kind, c.dataset.label])"
    )
    browser.screenshot(tmp_path / "album_abstained.png")
    keep = os.environ.get("FINEGRAIN_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        for name in ("album_results.png", "album_abstained.png"):
            shutil.copy(tmp_path / name, Path(keep) / name)


def test_the_browser_cannot_fetch_a_file_outside_the_roots(browser: DevToolsPage, server: str) -> None:
    _open(browser, server + "/")
    statuses = browser.eval(
        "Promise.all(['/photo/..%2F..%2Fetc%2Fpasswd', '/photo/%2Fetc%2Fpasswd', '/thumb/..%2Fcatalog.sqlite', "
        "'/photo/IMG_0000.jpg'].map(u => fetch(u).then(r => r.status)))"
    )
    assert statuses[:3] == [404, 404, 404]
    assert statuses[3] == 200


# ---------------------------------------------------------------- every view, on PhotoBench album1 (no image files)


@pytest.fixture(scope="module")
def album1_server(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> Iterator[str]:
    src = data_root / "photobench" / "album1"
    if not (src / "metadata.json").is_file():
        pytest.skip(f"PhotoBench album1 not found under {src}")
    catalog = tmp_path_factory.mktemp("album1") / "catalog.sqlite"
    with open_catalog(catalog) as store:
        import_photobench(src, store, lang="en")
    with serve_app(create_app(catalog, allowed_hosts=["127.0.0.1", "localhost"])) as url:
        yield url


def _shot(b: DevToolsPage, tmp_path: Path, name: str) -> Path:
    """Screenshot ``name``.png; asserts it shows something (many colours, not a blank page)."""
    from PIL import Image

    path = tmp_path / f"{name}.png"
    b.screenshot(path)
    with Image.open(path) as im:
        colours = im.convert("RGB").getcolors(maxcolors=1_000_000) or []
    assert len(colours) > 40, (name, len(colours))
    keep = os.environ.get("FINEGRAIN_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return path


def _count(b: DevToolsPage, selector: str) -> int:
    return int(b.eval(f"document.querySelectorAll({json.dumps(selector)}).length"))  # type: ignore[arg-type]


def test_timeline_pages_by_month_with_placeholders_and_keyboard(
    browser: DevToolsPage, album1_server: str, tmp_path: Path
) -> None:
    browser.goto(album1_server + "/")
    browser.wait_for("document.querySelectorAll('#timeline .result').length >= 60")
    assert browser.eval("document.body.dataset.view") == "timeline"
    months = browser.eval("[...document.querySelectorAll('#timeline section.month')].map(s => s.dataset.month)")
    assert months[0] == "2025-12" and months == sorted(months, reverse=True), months
    assert browser.eval("document.querySelector('#timeline h2').textContent").startswith("December 2025")
    assert _count(browser, "#months button") > 12
    # no image files: every tile shows the server's placeholder, decoded (not a broken image)
    browser.wait_for("[...document.querySelectorAll('#timeline img')].slice(0, 8).every(i => i.complete && i.naturalWidth > 0)")
    _shot(browser, tmp_path, "view_timeline")
    # lazy loading: scrolling to the end fetches the next page
    browser.eval("window.scrollTo(0, document.body.scrollHeight); true")
    browser.wait_for("document.querySelectorAll('#timeline .result').length > 60")
    browser.eval("window.scrollTo(0, 0); true")

    # keyboard: arrows move across the grid, Enter opens the detail, Esc closes it, / focuses search
    browser.eval("document.activeElement.blur(); true")
    browser.press("ArrowRight")
    first = browser.eval("document.activeElement.dataset.id")
    assert first == browser.eval("document.querySelector('#timeline .result').dataset.id")
    browser.press("ArrowRight")
    second = browser.eval("document.activeElement.dataset.id")
    assert second != first
    top = browser.eval("document.activeElement.getBoundingClientRect().top")
    browser.press("ArrowDown")
    assert browser.eval("document.activeElement.getBoundingClientRect().top") > top
    browser.press("ArrowUp")
    assert browser.eval("document.activeElement.dataset.id") == second
    browser.press("Enter")
    browser.wait_for(f"document.body.dataset.detail === {json.dumps(second)}")
    text = browser.eval("document.getElementById('detail-dl').innerText")
    assert "2025-12" in text and "Shaoxing" in text, text
    assert "missing on this machine" in text
    browser.wait_for("document.getElementById('detail-img').complete && document.getElementById('detail-img').naturalWidth > 0")
    _shot(browser, tmp_path, "view_detail")
    browser.press("Escape")
    browser.wait_for("!document.body.dataset.detail")
    assert not browser.eval("document.getElementById('detail').classList.contains('open')")
    browser.press("/")
    assert browser.eval("document.activeElement.id") == "q"


def test_search_chip_removed_re_runs_the_query(browser: DevToolsPage, album1_server: str, tmp_path: Path) -> None:
    _open(browser, album1_server + "/")
    assert _search(browser, "photos in Hangzhou in 2024") == "results"
    chips = browser.eval("[...document.querySelectorAll('#plan .chip')].map(c => [c.dataset.kind, c.dataset.label])")
    assert {k for k, _ in chips} >= {"time", "place"}, chips
    before = browser.eval("document.querySelectorAll('#grid .result').length")
    total_before = browser.eval("document.getElementById('status').textContent")
    _shot(browser, tmp_path, "view_search")
    # the detail of a search hit shows the plan that found it
    browser.click("#grid .result")
    browser.wait_for("!!document.body.dataset.detail && !!document.getElementById('detail-chips')")
    found = browser.eval("[...document.querySelectorAll('#detail-chips .chip')].map(c => c.textContent)")
    assert any("Hangzhou" in c for c in found), found
    browser.press("Escape")
    # click the time chip away: the query loses "in 2024" and runs again
    browser.eval("document.body.removeAttribute('data-state')")
    browser.click("#plan .chip[data-kind='time'] .x")
    browser.wait_for("document.body.dataset.state === 'results'")
    assert browser.eval("document.getElementById('q').value") == "photos in Hangzhou"
    assert browser.eval("location.search") == "?q=photos%20in%20Hangzhou"
    kinds = browser.eval("[...document.querySelectorAll('#plan .chip')].map(c => c.dataset.kind)")
    assert kinds == ["place"], kinds
    after_total = browser.eval("document.getElementById('status').textContent")
    assert int(after_total.split()[0]) > int(total_before.split()[0]), (total_before, after_total)
    assert browser.eval("document.querySelectorAll('#grid .result').length") >= before
    # the last chip away: back to the timeline
    browser.eval("document.body.removeAttribute('data-state')")
    browser.click("#plan .chip[data-kind='place'] .x")
    browser.wait_for("document.body.dataset.state === 'cleared' && document.body.dataset.view === 'timeline'")


def test_people_add_an_alias_merge_and_find_by_it(browser: DevToolsPage, album1_server: str, tmp_path: Path) -> None:
    _open(browser, album1_server + "/")
    browser.click("nav button[data-nav='people']")
    browser.wait_for("document.body.dataset.view === 'people' && document.querySelectorAll('#people .person').length >= 10")
    assert _count(browser, "#people .person") == 10
    _shot(browser, tmp_path, "view_people")
    # the arrow keys move across the people cards too; Enter opens the focused person
    browser.eval("document.activeElement.blur(); true")
    browser.press("ArrowRight")
    browser.press("ArrowRight")
    second = browser.eval("document.activeElement.dataset.id")
    assert second == browser.eval("document.querySelectorAll('#people .person')[1].dataset.id")
    browser.press("Enter")
    browser.wait_for(f"document.body.dataset.person === {json.dumps(second)}")
    browser.click("nav button[data-nav='people']")
    browser.wait_for("document.body.dataset.view === 'people'")
    browser.click("#people .person[data-id='10']")
    browser.wait_for("document.body.dataset.person === '10' && document.getElementById('person-title').textContent.length > 0")
    assert browser.eval("document.getElementById('person-title').textContent") == "Xiaowei"
    assert _count(browser, "#person-grid .result") > 0
    browser.eval("(() => { const i = document.getElementById('name-input'); i.value = ''; i.focus(); return true; })()")
    browser.type("薇薇")
    browser.click("#add-name")
    browser.wait_for("document.getElementById('person-names').textContent.includes('薇薇')")
    names = browser.eval("document.getElementById('person-names').textContent")
    assert "Weiwei" in names and "中文: 薇薇" in names, names  # added, English names kept
    # merge person 11 into 10: one cluster fewer, its names kept
    browser.eval("document.getElementById('merge-select').value = '11'; true")
    browser.click("#merge")
    browser.wait_for("document.getElementById('person-names').textContent.includes('Haoyu')")
    _shot(browser, tmp_path, "view_person")
    browser.click("nav button[data-nav='people']")
    browser.wait_for("document.querySelectorAll('#people .person').length === 9")
    # the new alias finds her photos in a search
    state = _search(browser, "薇薇的照片")
    assert state == "results", browser.eval("document.getElementById('reason').textContent")


def test_places_in_both_languages_and_the_offline_map(browser: DevToolsPage, album1_server: str, tmp_path: Path) -> None:
    _open(browser, album1_server + "/")
    browser.eval("localStorage.setItem('fg-lang', 'en'); true")
    browser.click("nav button[data-nav='places']")
    browser.wait_for("document.body.dataset.view === 'places' && document.querySelectorAll('#places .place').length > 3")
    first = browser.eval("document.querySelector('#places .place .city').textContent")
    assert first == "Hangzhou", first
    _shot(browser, tmp_path, "view_places")
    browser.click("#lang")
    browser.wait_for("document.body.dataset.lang === 'zh' && document.querySelector('#places .place .city').textContent === '杭州市'")
    assert browser.eval("document.querySelector('nav button[data-nav=places]').textContent") == "地点"
    _shot(browser, tmp_path, "view_places_zh")
    browser.click("#lang")
    browser.wait_for("document.body.dataset.lang === 'en' && document.querySelector('#places .place .city').textContent === 'Hangzhou'")
    # a district's photos
    browser.click("#places .place .districts button")
    browser.wait_for("document.body.dataset.view === 'photos' && document.querySelectorAll('#photos-grid .result').length > 0")
    n = int(browser.eval("document.body.dataset.photos"))
    label = browser.eval("document.querySelector('#places .place .districts button').textContent")
    assert label.endswith(str(n)), (label, n)

    browser.click("nav button[data-nav='map']")
    browser.wait_for("document.body.dataset.view === 'map' && document.querySelectorAll('#map-svg circle').length > 5")
    axes = browser.eval("[...document.querySelectorAll('#map-svg text.axis')].map(t => t.textContent)")
    assert any(a.endswith("°N") for a in axes) and any(a.endswith("°E") for a in axes), axes
    labels = browser.eval("[...document.querySelectorAll('#map-svg text.lbl')].map(t => t.textContent)")
    assert "Hangzhou" in labels, labels
    assert not browser.eval("[...document.querySelectorAll('img, image')].some(i => /tile|openstreetmap/.test(i.src || ''))")
    _shot(browser, tmp_path, "view_map")
    browser.click("#map-svg circle:last-of-type")
    browser.wait_for("document.body.dataset.view === 'photos' && document.querySelectorAll('#photos-grid .result').length > 0")
