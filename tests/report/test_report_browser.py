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
from finegrain.compare.systems import LabelledResults, load_labelled
from finegrain.report.html import render_report
from finegrain.results.files import read_saved_run
from finegrain.results.saved import SavedResults

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
        # bm25-okapi also sweeps a threshold (eval --sweep): the report draws its curve; bm25 gets a note
        sweep = ["--sweep", "threshold=0:10:0.5,folds=3"] if retriever == "bm25-okapi" else []
        assert main(["eval", "-d", "embedded/captions-zh", "-r", retriever, "-m", "ndcg@10,recall@10,pair_f1",
                     *sweep, "-o", str(d), "--quiet"]) == 0
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


def test_dom_has_the_threshold_curve_and_the_taxonomy_miss_row(rendered: tuple[Path, Path, str, str]) -> None:
    """The threshold section (curve, cross-validated threshold per metric) and the
    taxonomy_miss row of the error taxonomy, as Chromium rendered them."""
    _, _, dom, _ = rendered
    assert '<section id="threshold">' in dom and '<a href="#threshold">Threshold</a>' in dom
    assert '<table class="threshold-cv">' in dom
    rows = re.findall(r'<tr class="threshold-row" data-metric="([^"]+)"><td class="sys">([^<]+)</td>', dom)
    assert rows == [("ndcg@10", "bm25-okapi"), ("recall@10", "bm25-okapi"), ("pair_f1", "bm25-okapi")]
    assert "bm25-okapi: metric vs threshold" in dom and "threshold (raw score)" in dom
    assert "never looks at the fold it is scored on" in dom
    assert "bm25: no threshold sweep saved" in dom
    assert '<tr class="taxonomy-row" data-tag="taxonomy_miss">' in dom and "taxonomy miss" in dom


def test_page_loads_nothing_from_the_network(rendered: tuple[Path, Path, str, str]) -> None:
    _, _, dom, source = rendered
    for html in (source, dom):
        low = html.lower()
        assert not re.search(r"""\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", low)
        assert "<link" not in low and "url(" not in low
        # the only scripts: the drill-down's data block and its inline code, nothing loaded
        assert re.findall(r"<script[^>]*>", low) == ['<script type="application/json" id="drill-data">', "<script>"]
        for call in ("fetch(", "xmlhttprequest", "import(", "websocket", "eventsource", "sendbeacon"):
            assert call not in low, call


# --------------------------------------------------------------------------- the drill-down, clicked


def _expected_lists(folder: Path, qid: str) -> list[tuple[str, str]]:
    """(doc id, grade text) of the top 10 of ``qid`` in a results folder, from its run file and saved grades."""
    judged = SavedResults.load(folder).judged
    assert judged is not None, "finegrain eval saved no grades"
    run = read_saved_run(folder)
    out = []
    for d in run.ranked(qid, 10):
        g = judged.grade(qid, d)
        out.append((d, "unjudged" if g is None else f"grade {g}"))
    return out


def test_clicking_a_query_shows_each_systems_ranked_list_with_grades(rendered: tuple[Path, Path, str, str]) -> None:
    from chromium import DevToolsPage

    page, _, _, _ = rendered
    folders = [page.parent / "bm25-okapi", page.parent / "bm25"]
    shot = page.parent / "drilldown.png"
    with DevToolsPage(_chromium(), page.parent / "profile-cdp", width=WIDTH, height=1100) as b:
        b.goto(page.resolve().as_uri())
        assert b.eval("document.querySelectorAll('tr.drill-row').length") == 0
        # a query where the two systems differ, clicked with the mouse
        qid = b.eval("document.querySelector('tr.q-row td.up, tr.q-row td.down').parentElement.dataset.qid")
        assert isinstance(qid, str) and qid
        b.click(f'tr.q-row[data-qid="{qid}"]')
        assert b.eval(f"document.querySelector('tr.q-row[data-qid=\"{qid}\"]').getAttribute('aria-expanded')") == "true"
        shown = b.eval("""(() => Array.from(document.querySelectorAll('tr.drill-row .drill-sys')).map(col => ({
            system: col.dataset.system,
            items: Array.from(col.querySelectorAll('ol.ranked li')).map(li =>
                [li.querySelector('.doc').textContent, li.querySelector('.grade').textContent]),
            text: col.textContent})))()""")
        assert isinstance(shown, list) and [c["system"] for c in shown] == ["bm25-okapi", "bm25"]
        for col, folder in zip(shown, folders):
            expected = _expected_lists(folder, qid)
            assert expected, "the run retrieved nothing for the clicked query"
            assert [tuple(x) for x in col["items"]] == expected, col["system"]
            assert any(g.startswith("grade ") for _, g in expected)  # grades, not only "unjudged"
        b.screenshot(shot)
        # a second click on the row closes the drill-down
        b.click(f'tr.q-row[data-qid="{qid}"]')
        assert b.eval("document.querySelectorAll('tr.drill-row').length") == 0
    assert shot.is_file() and _png_size(shot) == (WIDTH, 1100)
    if os.environ.get("FINEGRAIN_SCREENSHOT_DIR"):  # keep a copy for a person to look at
        import shutil

        shutil.copy(shot, Path(os.environ["FINEGRAIN_SCREENSHOT_DIR"]) / "report-drilldown.png")


def test_a_query_text_with_a_closing_script_tag_neither_breaks_nor_injects(
        rendered: tuple[Path, Path, str, str], tmp_path: Path) -> None:
    from chromium import DevToolsPage

    page, _, _, _ = rendered
    evil = "</script><script>window.pwned = 1</script><!-- 猫"
    systems = []
    for s in load_labelled([page.parent / "bm25-okapi", page.parent / "bm25"]):
        r = s.results.to_json()
        for q in r["queries"].values():
            q["text"] = evil + q["text"]
        systems.append(LabelledResults(s.label, r, s.path))
    html = render_report(systems)
    assert "</script><script>window.pwned" not in html
    out = tmp_path / "evil.html"
    out.write_text(html, encoding="utf-8")
    with DevToolsPage(_chromium(), tmp_path / "profile", width=WIDTH, height=900) as b:
        b.goto(out.resolve().as_uri())
        assert b.eval("typeof window.pwned") == "undefined"
        b.click("tr.q-row")
        assert b.eval("document.querySelectorAll('tr.drill-row .drill-sys').length") == 2  # the script ran
        text = b.eval("document.querySelector('tr.q-row td.qtext').textContent")
        assert isinstance(text, str) and text.startswith(evil)  # shown as written
        assert b.eval("typeof window.pwned") == "undefined"
