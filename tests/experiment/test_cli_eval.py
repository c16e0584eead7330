"""``finegrain eval`` end to end: the embedded default and the published CapRetrieval BM25 row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.io.trec import read_run
from finegrain.registry import Entry
from finegrain.retrieve import registry
from finegrain.types import Run


def _eval(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "out"
    code = main(["eval", *args, "--out", str(out), "--quiet"])
    assert code == 0
    assert (out / "run.trec").is_file()
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_embedded_default_runs_without_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lang: str) -> None:
    monkeypatch.setenv("FINEGRAIN_DATA", str(tmp_path / "nowhere"))
    res = _eval(tmp_path, "--dataset", f"embedded/captions-{lang}", "--retriever", "bm25-okapi",
                "--metrics", "ndcg@10,recall@10,reject_f1")
    agg = res["aggregate"]
    assert set(agg) == {"ndcg@10", "recall@10", "reject_f1"}
    assert 0.0 < agg["ndcg@10"] <= 1.0
    assert res["by_type"], "embedded queries carry types"
    prov = res["provenance"]
    assert prov["dataset"]["name"] == f"embedded/captions-{lang}"
    assert prov["retriever"]["name"] == "bm25-okapi"
    assert prov["finegrain_version"]
    # the saved run is what was scored: re-reading it gives the same queries
    run = read_run(tmp_path / "out" / "run.trec")
    assert set(run) <= set(res["queries"])


def test_capretrieval_zh_reproduces_published_bm25_row(tmp_path: Path, with_data_root: Path) -> None:
    res = _eval(tmp_path, "--dataset", "capretrieval/zh", "--retriever", "bm25-okapi",
                "--metrics", "ndcg@1,ndcg@5,ndcg@10")
    published = {"ndcg@1": 0.7440, "ndcg@5": 0.6930, "ndcg@10": 0.6654}
    for key, want in published.items():
        assert res["aggregate"][key] == pytest.approx(want, abs=0.0005), key
    den = res["denominators"]["ndcg@10"]
    assert den["n_scored"] == 377
    assert den["n_excluded_no_relevant"] == 27


def test_capretrieval_en_close_to_published(tmp_path: Path, with_data_root: Path) -> None:
    res = _eval(tmp_path, "--dataset", "capretrieval/en", "--retriever", "bm25-okapi", "--metrics", "ndcg@10")
    assert res["aggregate"]["ndcg@10"] == pytest.approx(0.6956, abs=0.01)


def test_unknown_retriever_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--dataset", "embedded/captions-en", "--retriever", "bm25-okpi", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) == 1 and "did you mean" in err[0] and "bm25-okapi" in err[0]


def test_missing_data_root_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FINEGRAIN_DATA", str(tmp_path / "missing"))
    code = main(["eval", "--dataset", "capretrieval/zh", "--retriever", "bm25-okapi", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) == 1 and "FINEGRAIN_DATA" in err[0] and "missing" in err[0]


def test_terminal_summarises_the_saved_diagnosis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FINEGRAIN_DATA", str(tmp_path / "nowhere"))
    res = _eval(tmp_path, "--dataset", "embedded/captions-zh", "--retriever", "bm25-okapi")
    out = capsys.readouterr().out
    tax = res["taxonomy"]
    line = next(x for x in out.splitlines() if x.startswith("error types of"))
    assert line.startswith(f"error types of {tax['n_failures']} failed queries: ")
    assert {p.rsplit(" ", 1)[0]: int(p.rsplit(" ", 1)[1]) for p in line.split(": ", 1)[1].split(" · ")} == \
        {t: n for t, n in tax["counts"].items() if n}
    errors = next(x for x in out.splitlines() if x.startswith("errors in the top"))
    assert all(f"{tag} {c['items']}" in errors for tag, c in res["errors"]["counts"].items() if c["items"])


def test_eval_warns_when_no_document_has_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "blank"
    folder.mkdir()
    (folder / "candidates.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i}", "text": ""}) + "\n" for i in range(3)), encoding="utf-8")
    (folder / "queries.jsonl").write_text(
        json.dumps({"id": "q1", "query": "cat", "positives": [{"id": "c1", "score": 1}]}) + "\n", encoding="utf-8")
    assert main(["eval", "-d", str(folder), "-r", "bm25-okapi", "-m", "ndcg@10", "-o", str(tmp_path / "out"), "-q"]) == 0
    err = capsys.readouterr().err
    assert "warning: no document" in err and "has text" in err
    saved = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert saved["provenance"]["warnings"] and saved["aggregate"]["ndcg@10"] == 0.0


def test_eval_refuses_a_retriever_whose_scores_are_not_finite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    class Overflowing:  # what BM25 with k1=1e308 used to return: inf and NaN scores, ranked and saved
        name = "overflowing"

        def config(self) -> dict:
            return {}

        def retrieve(self, corpus, queries, *, lang, top_k, show_progress=True) -> Run:
            ids = list(corpus.ids)[:2]
            return Run.from_dict({q: {ids[0]: 1.0, ids[1]: float("inf")} for q in queries.ids}, name=self.name)

    monkeypatch.setitem(registry.RETRIEVERS._entries, "overflowing", Entry("overflowing", lambda **kw: Overflowing()))
    code = main(["eval", "-d", "embedded/captions-en", "-r", "overflowing", "-o", str(tmp_path / "o"), "-q"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("error: retriever 'overflowing' scored document ") and " inf, which cannot be ranked" in err
    assert not (tmp_path / "o" / "results.json").exists() and not (tmp_path / "o" / "run.trec").exists()
