"""The HTML report in a real browser: headless Chromium opens the page from disk, takes a
screenshot and dumps the DOM it rendered.

Two real results folders are made with ``finegrain eval`` on the embedded caption set
(bm25-okapi and Lucene bm25), then ``finegrain report`` writes the page. Chromium runs with
networking features off and a throwaway profile; the page must render from the file alone.
The screenshot stays under the test's temp dir (``report.png``) for a person to look at.

Chromium: ``$FINEGRAIN_CHROMIUM``, else ``/usr/bin/chromium`` (Debian package ``chromium``;
``bash scripts/install-system-deps.sh`` installs it), ``chromium-browser`` or ``google-chrome``
on PATH. Missing, the test is skipped locally and FAILS in CI (``CI=true``).
"""

from __future__ import annotations

import os
import re
import signal
import struct
import subprocess
from pathlib import Path

import pytest

from chromium import find_chromium, missing
from finegrain.cli.main import main

WIDTH, HEIGHT = 1280, 2000
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--mute-audio", "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}",
]
TIMEOUT_S = 120
# Okabe-Ito colours of the first two systems (finegrain.report.charts.PALETTE)
BLUE, ORANGE = (0x00, 0x72, 0xB2), (0xE6, 0x9F, 0x00)


def _chromium() -> str:
    return find_chromium("the report browser test")


def _run_chromium(binary: str, profile: Path, args: list[str], url: str) -> str:
    """Run one headless Chromium command; returns its stdout. Kills its whole process group on timeout."""
    profile.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", *args, url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"Chromium did not finish within {TIMEOUT_S} s: {' '.join(args)}", pytrace=False)
    if proc.returncode != 0:
        pytest.fail(f"Chromium exited {proc.returncode} for {' '.join(args)}:\n"
                    f"{err.decode(errors='replace')[-2000:]}", pytrace=False)
    return out.decode("utf-8", errors="replace")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, str]:
    """(report.html, report.png, dumped DOM, page source) of a bm25-okapi vs bm25 report."""
    binary = _chromium()
    base = tmp_path_factory.mktemp("report_browser")
    folders = []
    for retriever in ("bm25-okapi", "bm25"):
        d = base / retriever
        assert main(["eval", "-d", "embedded/captions-zh", "-r", retriever, "-m", "ndcg@10,recall@10",
                     "-o", str(d), "--quiet"]) == 0
        folders.append(str(d))
    page = base / "report.html"
    assert main(["report", *folders, "--out", str(page)]) == 0
    url = page.resolve().as_uri()
    shot = base / "report.png"
    _run_chromium(binary, base / "profile-shot", [f"--screenshot={shot}"], url)
    dom = _run_chromium(binary, base / "profile-dom", ["--dump-dom", "--virtual-time-budget=2000"], url)
    return page, shot, dom, page.read_text(encoding="utf-8")


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", head[16:24])


def test_screenshot_shows_a_page_with_charts(rendered: tuple[Path, Path, str, str]) -> None:
    _, shot, _, _ = rendered
    assert shot.is_file(), "Chromium wrote no screenshot"
    assert _png_size(shot) == (WIDTH, HEIGHT)
    assert shot.stat().st_size > 30_000, "the screenshot is nearly empty"
    try:
        from PIL import Image
    except ImportError:
        missing("the report browser test reads the screenshot with Pillow: pip install -e '.[test]'")
    img = Image.open(shot).convert("RGB")
    colours = img.getcolors(maxcolors=1 << 20) or []
    count = {rgb: n for n, rgb in colours}
    assert len(colours) > 50, "the screenshot has almost no distinct colours"
    dark = sum(n for rgb, n in count.items() if max(rgb) < 90)
    assert dark > 5_000, "little dark (text) ink in the screenshot"
    # chart bars and legend swatches of both systems are painted
    assert count.get(BLUE, 0) > 2_000 and count.get(ORANGE, 0) > 2_000, (count.get(BLUE), count.get(ORANGE))


def test_dom_has_the_tables_charts_and_text(rendered: tuple[Path, Path, str, str]) -> None:
    _, _, dom, _ = rendered
    assert "<title>finegrain report — embedded/captions-zh</title>" in dom
    # the per-type table with one row per query type, as readable words
    rows = re.findall(r'<tr class="type-row" data-type="([^"]+)"><td>([^<]+)</td>', dom)
    assert {name for _, name in rows} == {"entity", "event", "conjunction", "condition"}
    for table in ("headline", "versus", "by-type", "wtl", "error-tags", "denominators"):
        assert f'<table class="{table}">' in dom, table
    # inline SVG charts: per type, win/tie/loss, three metric-vs-k curves, error tags
    assert dom.count("<svg") >= 6
    for title in ("ndcg@10 by query type", "bm25 vs bm25-okapi on ndcg@10", "ndcg@k", "recall@k", "hit_rate@k",
                  "Error items per tag"):
        assert title in dom, title
    for text in ("Headline", "By query type", "Win / tie / loss", "Metric vs k", "Error tags", "Denominators",
                 "Provenance", "literal miss", "semantic miss", "excluded no relevant"):
        assert text in dom, text


def test_page_loads_nothing_from_the_network(rendered: tuple[Path, Path, str, str]) -> None:
    _, _, dom, source = rendered
    for html in (source, dom):
        low = html.lower()
        assert not re.search(r"""\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", low)
        assert "<script" not in low and "<link" not in low and "url(" not in low
