"""The report's drill-down shows each listed passage's text, shortened, the query's words marked, as text only."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.compare.systems import LabelledResults
from finegrain.datasets import load_dataset
from finegrain.errors import DataFormatError
from finegrain.report.html import load_systems, render_report
from finegrain.results.files import read_saved_run
from finegrain.results.passages import ELLIPSIS, PASSAGE_CHARS, PassagesSection, shorten
from finegrain.results.saved import SavedResults

pytest.importorskip("jinja2")


@pytest.fixture(scope="module", params=["en", "zh"])
def folders(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp(f"passages-{request.param}")
    out = []
    for retriever in ("bm25-okapi", "bm25"):
        d = base / retriever
        assert main(["eval", "-d", f"embedded/captions-{request.param}", "-r", retriever, "-m", "ndcg@10",
                     "-o", str(d), "-q"]) == 0
        out.append(d)
    return out


def _drill(html: str) -> dict:
    block = re.search(r'<script type="application/json" id="drill-data">(.*?)</script>', html, re.S)
    assert block
    return json.loads(block.group(1))  # type: ignore[no-any-return]


def test_eval_saves_the_text_of_the_listed_passages_only(folders: list[Path]) -> None:
    saved = SavedResults.load(folders[0])
    assert saved.passages is not None and saved.passages.chars == PASSAGE_CHARS
    ds = load_dataset(str(saved.dataset_name))
    run = read_saved_run(folders[0])
    listed = {d for q in run.qids for d in run.ranked(q, 10)}
    assert saved.errors is not None
    missed = {x.doc_id for r in saved.errors.per_query.values() for x in r.false_negatives}
    assert set(saved.passages.text) == listed | missed  # every listed passage, no other
    for doc_id, text in saved.passages.text.items():
        assert text == shorten(ds.corpus[doc_id].text)


def test_the_drill_down_shows_texts_with_the_query_words_marked(folders: list[Path]) -> None:
    data = _drill(render_report(load_systems(folders)))
    saved = SavedResults.load(folders[0])
    assert saved.passages is not None
    marked = 0
    for q in data["queries"]:
        shown = {it[0] for lst in q["lists"] for it in lst["items"]} | {m[0] for lst in q["lists"] for m in lst["missed"]}
        assert set(q["passages"]) == shown
        for doc_id, pieces in q["passages"].items():
            assert "".join(p[0] for p in pieces) == saved.passages.text.get(doc_id) or doc_id not in saved.passages.text
            marked += sum(1 for p in pieces if p[1])
            for piece, hit in pieces:
                if hit:  # a marked piece is a word of the query
                    assert piece.lower() in q["text"].lower()
    assert marked > 0


def test_a_passage_cannot_inject_markup(folders: list[Path]) -> None:
    evil = '</script><img src=x onerror="window.pwned=1"><!-- & \u2028'
    systems = []
    for s in load_systems(folders):
        body = s.results.to_json()
        body["passages"]["text"] = {d: evil + t for d, t in body["passages"]["text"].items()}
        systems.append(LabelledResults(s.label, SavedResults.from_json(body), s.path))
    html = render_report(systems)
    assert "<img" not in html and "onerror=\"window" not in html and "</script><img" not in html
    data = _drill(html)
    texts = ["".join(p[0] for p in pieces) for q in data["queries"] for pieces in q["passages"].values()]
    assert texts and all(t.startswith(evil) for t in texts)  # shown as written, by textContent
    assert "textContent" in html and ".innerHTML" not in html


def test_results_without_passages_show_ids_and_say_so(folders: list[Path]) -> None:
    older = []
    for s in load_systems(folders):
        body = s.results.to_json()
        body.pop("passages")
        older.append(LabelledResults(s.label, SavedResults.from_json(body), s.path))
    data = _drill(render_report(older))
    assert all("passage texts not saved" in s["note"] for s in data["systems"])
    assert all(q["passages"] == {} for q in data["queries"])


def test_the_passages_section_is_validated_and_shortening_keeps_its_promise(tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match=r"passages\.text\.d1"):
        PassagesSection.read({"chars": 10, "text": {"d1": 3}}, tmp_path / "results.json", "passages")
    assert shorten("a  b\n c") == "a b c"
    long = "word " * 100
    cut = shorten(long, 20)
    assert len(cut) <= 20 and cut.endswith(ELLIPSIS) and long.startswith(cut[:-1])
