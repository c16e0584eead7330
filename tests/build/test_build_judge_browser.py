"""The judging page in a real browser: two annotators grade a zh + en pool in headless Chromium,
one with the keyboard (digits, s, arrows), one with the mouse; a reload keeps the state (the
next unjudged item, the progress); the qrels exported from the database equal the clicks.

The server is the real app (uvicorn on a free loopback port in a thread) over a pool written
with ``write_pool``; Chromium is driven over the DevTools protocol by the shared helpers of
``tests/chromium.py``. Screenshots of the page (``judge_page.png``: a zh item after the reload;
``judge_page_en.png``: an en item with the annotator's grade) are kept under the test's temp
dir, and copied to ``$FINEGRAIN_SCREENSHOTS`` when that is set.

Chromium: ``$FINEGRAIN_CHROMIUM``, else ``chromium``/``chromium-browser``/``google-chrome``
on PATH (``bash scripts/install-system-deps.sh`` installs it). Missing, the test is skipped
locally and FAILS in CI (``CI=true``).
"""

from __future__ import annotations

import importlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from chromium import DevToolsPage, find_chromium, missing, serve_app

for _module in ("fastapi", "uvicorn", "websockets.sync.client"):
    try:
        importlib.import_module(_module)
    except ImportError:
        missing(f"the judging page browser test needs {_module!r}: pip install -e '.[test]'", module_level=True)

from test_build_judge import make_pool  # noqa: E402

from finegrain.build.judge.app import create_app  # noqa: E402
from finegrain.build.judge.export import export_qrels  # noqa: E402
from finegrain.build.judge.store import JudgmentStore  # noqa: E402
from finegrain.build.pool_file import write_pool  # noqa: E402

# the four items shown (q2/d4 and q3/d6 have qrels grades and are hidden), in pool order
SHOWN = [("q1", "d1"), ("q1", "d2"), ("q2", "d3"), ("q3", "d5")]


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, DevToolsPage]]:
    """(base URL, database, browser page) of one judging server."""
    base = tmp_path_factory.mktemp("judge_browser")
    pool_file = write_pool(make_pool(), base / "pool.jsonl")
    db = base / "judgments.sqlite"
    app = create_app(pool_file, db, allowed_hosts=["127.0.0.1", "localhost"])
    with serve_app(app) as url, DevToolsPage(find_chromium("the judging page test"), base / "profile",
                                             width=1280, height=900) as page:
        yield url, db, page


def _settle(b: DevToolsPage, state: str = "item", position: int | None = None, judged: int | None = None) -> None:
    """Wait until no request is pending and the page shows ``state`` (at ``position``, with ``judged`` done)."""
    cond = [f"document.body.dataset.state === '{state}'", "document.body.dataset.busy === '0'"]
    if position is not None:
        cond.append(f"document.body.dataset.position === '{position}'")
    if judged is not None:
        cond.append(f"document.body.dataset.judged === '{judged}'")
    b.wait_for(" && ".join(cond))


def _shown(b: DevToolsPage) -> tuple[str, str]:
    qid, doc = b.eval("[document.body.dataset.qid, document.body.dataset.doc]")  # type: ignore[misc]
    return qid, doc


def _log_in(b: DevToolsPage, name: str, *, mouse: bool) -> None:
    _settle(b, "login")
    b.click("#name")
    b.type(name)
    if mouse:
        b.click("#start")
    else:
        b.press("Enter")


def test_two_annotators_grade_with_keys_and_mouse_and_export_equals_the_clicks(
    judged: tuple[str, Path, DevToolsPage], tmp_path: Path
) -> None:
    url, db, b = judged
    b.goto(url + "/")
    assert b.eval("document.title") == "finegrain judge"

    # alice, with the keyboard
    _log_in(b, "alice", mouse=False)
    _settle(b, position=0, judged=0)
    assert _shown(b) == SHOWN[0]
    assert b.eval("document.getElementById('query').textContent") == "紫色的花"
    assert b.eval("[...document.querySelectorAll('#passage mark')].map(m => m.textContent)") == ["紫色", "花"]
    assert b.eval("document.getElementById('passage').textContent") == "一朵紫色的花放在花瓶里。"
    assert b.eval("[...document.querySelectorAll('#grades button')].map(x => x.textContent)") == [
        "0irrelevant", "1partial", "2relevant"]
    assert b.eval("document.getElementById('progress').textContent") == "0 judged of 4"
    b.press("2")
    _settle(b, position=1, judged=1)
    b.press("s")  # skip q1/d2
    _settle(b, position=2, judged=1)
    assert _shown(b) == SHOWN[2]
    assert b.eval("[...document.querySelectorAll('#passage mark')].map(m => m.textContent)") == [
        "red", "car", "street", "red"]  # "cars" is not "car": no stems
    b.press("1")
    _settle(b, position=3, judged=2)
    b.press("ArrowLeft")  # back to q2/d3: her grade is shown, and she changes it
    _settle(b, position=2, judged=2)
    assert b.eval("document.querySelector('#grades button.chosen').dataset.grade") == "1"
    assert b.eval("document.getElementById('mine').textContent") == "your grade: 1 partial"
    shot_en = tmp_path / "judge_page_en.png"
    b.screenshot(shot_en)
    b.press("0")
    _settle(b, position=3, judged=2)
    b.press("ArrowLeft")
    _settle(b, position=2)
    b.press("ArrowRight")
    _settle(b, position=3)
    assert b.eval("document.getElementById('progress').textContent") == "2 judged of 4 · 1 skipped"

    # a reload keeps her state: logged in, at the next unjudged item (skipped ones passed over), same progress
    b.eval("window.__before_reload = true")
    b.send("Page.reload", ignoreCache=True)
    b.wait_for("!window.__before_reload && document.readyState === 'complete'")
    _settle(b, position=3, judged=2)
    assert _shown(b) == SHOWN[3]
    assert b.eval("document.getElementById('me').textContent") == "alice"
    assert b.eval("document.getElementById('progress').textContent") == "2 judged of 4 · 1 skipped"
    assert b.eval("[...document.querySelectorAll('#passage mark')].map(m => m.textContent)") == ["猫", "狗"]
    shot = tmp_path / "judge_page.png"
    b.screenshot(shot)
    assert shot.stat().st_size > 10_000

    b.press("2")
    _settle(b, "done", judged=3)
    assert "1 skipped item(s) are left" in b.eval("document.getElementById('done-text').textContent")
    b.click("#revisit")  # the mouse, to go back to the skipped item
    _settle(b, position=1, judged=3)
    assert b.eval("document.getElementById('mine').textContent") == "you skipped this item"
    b.press("1")
    _settle(b, "done", judged=4)
    assert b.eval("document.getElementById('progress').textContent") == "4 judged of 4"

    # bob, with the mouse
    b.click("#switch")
    _log_in(b, "bob", mouse=True)
    _settle(b, position=0, judged=0)
    b.click('#grades button[data-grade="2"]')
    _settle(b, position=1, judged=1)
    b.click('#grades button[data-grade="0"]')
    _settle(b, position=2, judged=2)
    b.click("#back")
    _settle(b, position=1)
    assert b.eval("document.querySelector('#grades button.chosen').dataset.grade") == "0"
    b.click('#grades button[data-grade="1"]')  # bob changes his mind on q1/d2
    _settle(b, position=2, judged=2)
    b.click('#grades button[data-grade="2"]')
    _settle(b, position=3, judged=3)
    b.press("1")  # and one key
    _settle(b, "done", judged=4)
    b.wait_for("document.getElementById('team').textContent.includes('bob 4/4')")
    assert "alice 4/4" in b.eval("document.getElementById('team').textContent")
    browser_shots = os.environ.get("FINEGRAIN_SCREENSHOTS")
    if browser_shots:
        Path(browser_shots).mkdir(parents=True, exist_ok=True)
        for png in (shot, shot_en):
            shutil.copy(png, Path(browser_shots) / png.name)

    # every click is in the database, in order, and the exports equal the clicks
    with JudgmentStore.open(db, make_pool(), create=False) as store:
        clicks = [(j.annotator, j.qid, j.doc_id, j.grade) for j in store.history()]
        assert clicks == [
            ("alice", "q1", "d1", 2), ("alice", "q1", "d2", None), ("alice", "q2", "d3", 1),
            ("alice", "q2", "d3", 0), ("alice", "q3", "d5", 2), ("alice", "q1", "d2", 1),
            ("bob", "q1", "d1", 2), ("bob", "q1", "d2", 0), ("bob", "q1", "d2", 1), ("bob", "q2", "d3", 2),
            ("bob", "q3", "d5", 1),
        ]
        majority = export_qrels(store)
        assert majority.qrels.to_dict() == {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 0}, "q3": {"d5": 1}}
        assert [t.spelled() for t in majority.ties] == ["q2/d3 (0:1 2:1 -> 0)", "q3/d5 (1:1 2:1 -> 1)"]
        adjudicated = export_qrels(store, method="adjudicate", adjudicator="bob")
        assert adjudicated.qrels.to_dict() == {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 2}, "q3": {"d5": 1}}


def test_keys_do_nothing_while_typing_a_name(judged: tuple[str, Path, DevToolsPage]) -> None:
    url, db, b = judged
    b.goto(url + "/")
    _settle(b, "done")  # bob is still logged in, from the test before
    b.click("#switch")
    _settle(b, "login")
    b.click("#name")
    b.type("s2 carol")  # "s" and "2" are keys of the page, but here they are letters of a name
    assert b.eval("document.getElementById('name').value") == "s2 carol"
    b.press("Enter")
    _settle(b, position=0, judged=0)
    assert b.eval("document.getElementById('me').textContent") == "s2 carol"
    with JudgmentStore.open(db, create=False) as store:
        assert store.annotators() == ("alice", "bob", "s2 carol")
        assert store.history("s2 carol") == ()
