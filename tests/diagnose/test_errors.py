"""finegrain.diagnose.errors: hand cases for every tag (zh and en), counts per type, end to end, pipeline guard."""

from __future__ import annotations

import json

import pytest

from finegrain.datasets import load_dataset
from finegrain.diagnose import ErrorAnalysis, analyse_errors
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.experiment.run import Experiment, error_section, run_experiment
from finegrain.report.errors_table import error_tables, print_errors
from finegrain.results.diagnosis import ErrorsSection
from finegrain.retrieve.registry import get_retriever
from finegrain.settings import Settings
from finegrain.text import normalize
from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run


def _run(ranked: dict[str, list[str]]) -> Run:
    return Run.from_dict({q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in ranked.items()})


def _item(ea: ErrorAnalysis, qid: str, doc: str):
    q = ea[qid]
    found = [i for i in q.items if i.doc_id == doc]
    assert len(found) == 1, (qid, doc, q)
    return found[0]


# --------------------------------------------------------------------------- Chinese


@pytest.fixture(scope="module")
def zh() -> ErrorAnalysis:
    corpus = Corpus([
        Document("d1", "一只小白猫睡在沙发上。"),
        Document("d2", "一只白色的小猫在草地上。"),
        Document("d3", "窗外的海景。"),
        Document("d4", "白猫牌洗衣粉的广告海报。"),
        Document("d5", "猫趴在灰色的沙发上休息。"),
        Document("d6", "一张米色沙发的商品图。"),
        Document("d7", "一辆停在路边的火车站巴士。"),
    ])
    queries = Queries([
        Query("q1", "白猫", "entity"),
        Query("q2", "沙发上的猫", "condition"),
        Query("q3", "白猫和沙发", "conjunction"),
        Query("q4", "长颈鹿", "entity"),  # no relevant item: skipped
        Query("q5", "火车票", "entity"),  # not in the run
    ])
    qrels = Qrels.from_dict({
        "q1": {"d1": 2, "d2": 1},
        "q2": {"d5": 2},
        "q3": {"d1": 0, "d5": 1},
        "q4": {},
        "q5": {"d2": 1},
    })
    run = _run({
        "q1": ["d3", "d4", "d9"],
        "q2": ["d6", "d3"],
        "q3": ["d6", "d1", "d5"],
        "q4": ["d3"],
    })
    return analyse_errors(corpus, queries, qrels, run, lang="zh", k=3, max_examples=2)


def test_zh_false_negatives_literal_and_semantic(zh: ErrorAnalysis) -> None:
    verbatim = _item(zh, "q1", "d1")  # 白猫 in 一只小白猫...
    assert (verbatim.kind, verbatim.tag, verbatim.rule) == ("fn", "literal_miss", "query text found verbatim")
    assert verbatim.rank is None and verbatim.grade == 2
    semantic = _item(zh, "q1", "d2")  # 白色的小猫: neither 白猫 nor all terms
    assert semantic.tag == "semantic_miss" and semantic.rule == "none of the 1 query terms present"
    all_terms = _item(zh, "q2", "d5")  # 沙发上的猫 -> terms 沙发, 猫 (上/的 are stop words)
    assert all_terms.tag == "literal_miss" and all_terms.rule == "all 2 query terms present"
    assert set(all_terms.matched) == {"沙发", "猫"}
    assert zh["q2"].terms == ("沙发", "猫")
    # false negatives are listed by grade, highest first
    assert [i.doc_id for i in zh["q1"].false_negatives] == ["d1", "d2"]


def test_zh_false_positives_every_tag(zh: ErrorAnalysis) -> None:
    no_overlap = _item(zh, "q1", "d3")
    assert (no_overlap.kind, no_overlap.tag, no_overlap.rule) == ("fp", "no_overlap", "shares no query term")
    assert no_overlap.rank == 1 and no_overlap.grade is None  # unjudged
    over = _item(zh, "q1", "d4")  # 白猫牌洗衣粉: the query verbatim, but not relevant
    assert over.tag == "over_generalization" and "verbatim" in over.rule
    unknown_doc = _item(zh, "q1", "d9")  # not in the corpus: an empty text
    assert unknown_doc.tag == "no_overlap"
    partial = _item(zh, "q2", "d6")  # 沙发 without 猫
    assert partial.tag == "partial_condition"
    assert partial.rule == "matches 1 of 2 parts: 沙发 (missing: 猫)"
    assert zh["q3"].parts == ("白猫", "沙发")  # split on 和
    partial3 = _item(zh, "q3", "d6")
    assert partial3.rule == "matches 1 of 2 parts: 沙发 (missing: 白猫)"
    all_parts = _item(zh, "q3", "d1")  # judged 0: both parts present, still irrelevant
    assert all_parts.tag == "over_generalization" and all_parts.grade == 0
    assert all_parts.rule == "contains all 2 query parts but is not relevant"
    assert [i.doc_id for i in zh["q3"].false_positives] == ["d6", "d1"]  # by rank; d5 is relevant


def test_zh_skipped_missing_and_counts(zh: ErrorAnalysis) -> None:
    assert zh.skipped_no_relevant == ("q4",)
    assert [q.qid for q in zh.queries] == ["q1", "q2", "q3", "q5"]
    missing = zh["q5"]  # not in the run: every relevant item is a false negative
    assert [(i.doc_id, i.tag) for i in missing.false_negatives] == [("d2", "semantic_miss")]
    counts = zh.counts()
    assert counts == {
        "literal_miss": {"items": 2, "queries": 2},
        "semantic_miss": {"items": 2, "queries": 2},
        "partial_condition": {"items": 2, "queries": 2},
        "over_generalization": {"items": 2, "queries": 2},
        "no_overlap": {"items": 3, "queries": 2},
    }
    by_type = zh.counts_by_type()
    assert list(by_type) == ["condition", "conjunction", "entity"]
    assert by_type["entity"]["n_queries"] == 2
    assert by_type["entity"]["counts"]["no_overlap"] == {"items": 2, "queries": 1}
    assert by_type["entity"]["counts"]["semantic_miss"] == {"items": 2, "queries": 2}
    assert by_type["conjunction"]["counts"]["partial_condition"]["items"] == 1
    assert by_type["condition"]["counts"]["literal_miss"] == {"items": 1, "queries": 1}


def test_zh_json_examples_and_shape(zh: ErrorAnalysis) -> None:
    body = zh.to_json_dict(max_examples_per_tag=1)
    json.dumps(body, ensure_ascii=False)
    assert body["schema"] == "finegrain.errors/1" and body["k"] == 3 and body["lang"] == "zh"
    assert body["n_queries"] == 4 and body["n_skipped_no_relevant"] == 1
    assert body["totals"] == {"false_negatives": 4, "false_positives": 7, "unjudged_false_positives": 6}
    assert all(len(v) <= 1 for v in body["examples"].values())
    ex = body["examples"]["literal_miss"][0]
    assert ex == {"qid": "q1", "query": "白猫", "type": "entity", "doc_id": "d1", "text": "一只小白猫睡在沙发上。",
                  "rule": "query text found verbatim", "matched": ["白猫"], "rank": None, "grade": 2}
    assert len(zh.to_json_dict(max_examples_per_tag=5)["examples"]["no_overlap"]) == 2  # max_examples=2 kept
    pq = body["per_query"]["q3"]
    assert pq["parts"] == ["白猫", "沙发"] and pq["n_relevant"] == 1
    assert [i["tag"] for i in pq["false_positives"]] == ["partial_condition", "over_generalization"]
    assert "per_query" not in zh.to_json_dict(per_query=False)


def test_fully_judged_makes_unlisted_items_judged_zero() -> None:
    corpus = Corpus([Document("a", "猫"), Document("b", "狗")])
    ea = analyse_errors(corpus, Queries([Query("q", "猫")]), Qrels.from_dict({"q": {"a": 1}}),
                        _run({"q": ["b", "a"]}), lang="zh", k=2, fully_judged=True)
    assert ea["q"].false_positives[0].grade == 0
    assert ea.to_json_dict()["totals"]["unjudged_false_positives"] == 0


# --------------------------------------------------------------------------- English


@pytest.fixture(scope="module")
def en() -> ErrorAnalysis:
    corpus = Corpus([
        Document("e1", "A man holding a red umbrella in the rain."),
        Document("e2", "Umbrellas in bright red colours at a market."),
        Document("e3", "A red car parked by the road."),
        Document("e4", "A hot dog stand on a busy street."),
        Document("e5", "A sunset over the sea."),
        Document("e6", "A category list of household items."),
        Document("e7", "A golden retriever playing fetch."),
        Document("e8", "A cake with coffee frosting."),
    ])
    queries = Queries([
        Query("r", "red umbrella", "condition"),
        Query("d", "dog", "entity"),
        Query("c", "cat", "entity"),
        Query("k", "coffee and cake", "conjunction"),
    ])
    qrels = Qrels.from_dict({
        "r": {"e1": 1, "e2": 1},
        "d": {"e7": 1},
        "c": {"e6": 1},  # a pretend judgement, to check word boundaries
        "k": {"e5": 1},
    })
    run = _run({"r": ["e3", "e5"], "d": ["e4"], "c": ["e5"], "k": ["e8", "e3"]})
    return analyse_errors(corpus, queries, qrels, run, lang="en", k=10)


def test_en_every_tag(en: ErrorAnalysis) -> None:
    assert _item(en, "r", "e1").rule == "query text found verbatim"
    stems = _item(en, "r", "e2")  # "Umbrellas ... red": all stems present, not verbatim
    assert stems.tag == "literal_miss" and stems.rule == "all 2 query terms present"
    assert _item(en, "d", "e7").tag == "semantic_miss"  # retriever, not dog
    assert _item(en, "c", "e6").tag == "semantic_miss"  # "category" does not contain the word "cat"
    partial = _item(en, "r", "e3")
    assert partial.tag == "partial_condition" and partial.rule == "matches 1 of 2 parts: red (missing: umbrella)"
    assert _item(en, "r", "e5").tag == "no_overlap"
    hot_dog = _item(en, "d", "e4")
    assert hot_dog.tag == "over_generalization" and "verbatim" in hot_dog.rule
    assert en["k"].parts == ("coffee", "cake")  # split on "and"
    assert _item(en, "k", "e8").rule == "contains all 2 query parts but is not relevant"
    assert _item(en, "k", "e3").rule == "shares no query term"


def test_bad_input_is_refused() -> None:
    c = Corpus([Document("a", "x")])
    q = Queries([Query("q", "x")])
    with pytest.raises(FinegrainError, match="k must be a positive integer, got 0"):
        analyse_errors(c, q, Qrels.from_dict({"q": {"a": 1}}), _run({"q": ["a"]}), lang="en", k=0)
    with pytest.raises(FinegrainError, match="run must be a finegrain Run, got dict"):
        analyse_errors(c, q, Qrels.from_dict({"q": {"a": 1}}), {"q": {"a": 1.0}}, lang="en")  # type: ignore[arg-type]
    with pytest.raises(FinegrainError, match="unknown tokenizer language 'fr'"):
        analyse_errors(c, q, Qrels.from_dict({"q": {"a": 1}}), _run({"q": ["a"]}), lang="fr")


# --------------------------------------------------------------------------- end to end


def test_end_to_end_embedded_captions_zh_with_bm25() -> None:
    ds = load_dataset("embedded/captions-zh")
    run = get_retriever("bm25-okapi").retrieve(ds.corpus, ds.queries, lang=ds.lang, top_k=None, show_progress=False)
    ea = analyse_errors(ds.corpus, ds.queries, ds.qrels, run, lang="zh", k=10)
    assert set(ea.skipped_no_relevant) == set(ds.zero_answer_qids)
    n_fn = n_fp = 0
    for q in ea.queries:
        top = run.ranked(q.qid, 10) if q.qid in run else []
        rel = ds.qrels.relevant(q.qid)
        assert {i.doc_id for i in q.false_negatives} == rel - set(top)
        assert [i.doc_id for i in q.false_positives] == [d for d in top if d not in rel]
        n_fn += len(q.false_negatives)
        n_fp += len(q.false_positives)
        for it in q.false_negatives:  # an independent check of the literal rule on the raw text
            text = "".join(normalize(ds.corpus[it.doc_id].text).split())
            literal = "".join(normalize(q.text).split()) in text or all(t in text for t in q.terms)
            assert (it.tag == "literal_miss") == literal, (q.text, it)
    body = ea.to_json_dict()
    assert body["totals"]["false_negatives"] == n_fn and body["totals"]["false_positives"] == n_fp
    assert sum(c["items"] for c in body["counts"].values()) == n_fn + n_fp
    assert sum(g["n_queries"] for g in body["by_type"].values()) == len(ea.queries)
    # BM25 with jieba misses 小白猫 for 猫: the paper's literal error
    assert _item(ea, "q01", "c01").tag == "literal_miss"
    assert body["counts"]["partial_condition"]["items"] > 0  # conjunction queries retrieve half matches


def test_pipeline_stores_errors_and_never_breaks(monkeypatch: pytest.MonkeyPatch) -> None:
    out = run_experiment(Experiment("embedded/captions-zh", "bm25-okapi", ("ndcg@10",)), Settings.from_env(),
                         show_progress=False)
    errors = out.results["errors"]
    assert errors["schema"] == "finegrain.errors/1" and errors["k"] == 10
    assert errors["n_queries"] + errors["n_skipped_no_relevant"] == len(out.results["queries"])
    ds = load_dataset("embedded/captions-zh")
    empty = Run.from_dict({})
    assert error_section(ds, empty) == {"schema": "finegrain.errors/1", "skipped": "the run is empty"}
    assert error_section(ds, {"q01": {}})["skipped"].startswith("error analysis failed: ")  # not a Run: caught

    def broken(*args: object, **kw: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("finegrain.experiment.run.analyse_errors", broken)  # where the pipeline looks it up
    bad = error_section(ds, out.run)
    assert bad == {"schema": "finegrain.errors/1", "skipped": "error analysis failed: RuntimeError: boom"}
    again = run_experiment(Experiment("embedded/captions-zh", "bm25-okapi", ("ndcg@10",)), Settings.from_env(),
                           show_progress=False)
    assert again.results["aggregate"] == out.results["aggregate"]  # the eval itself is untouched
    assert again.results["errors"]["skipped"].endswith("boom")


def test_the_saved_section_reads_back_what_the_analysis_wrote(zh: ErrorAnalysis) -> None:
    body = json.loads(json.dumps(zh.to_json_dict()))
    section = ErrorsSection.read(body, "zh")
    assert section.analysed and section.counts["literal_miss"].items == body["counts"]["literal_miss"]["items"]
    assert section.to_json() == body


def test_errors_table_renders(zh: ErrorAnalysis) -> None:
    from rich.console import Console

    console = Console(width=200, record=True)
    print_errors(ErrorsSection.read(zh.to_json_dict(), "zh"), console)
    text = console.export_text()
    for tag in ("literal_miss", "semantic_miss", "partial_condition", "over_generalization", "no_overlap"):
        assert tag in text
    assert "errors per query type" in text and "白猫" in text
    assert error_tables(ErrorsSection.read({"schema": "finegrain.errors/1", "skipped": "the run is empty"}, "x")) == []


def test_every_error_survives_pickling_with_its_type_message_and_hint() -> None:
    """Errors cross process boundaries (a search worker, a process pool): a subclass whose constructor
    takes other arguments than (message, hint) must come back as itself."""
    import pickle

    for err in (FinegrainError("bad value 3", "use 1 or 2"), UnknownNameError("metric", "ndgc@10", ["ndcg@10", "map"])):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err)
        assert (back.message, back.hint) == (err.message, err.hint)
    assert back.suggestions == ["ndcg@10"] and back.name == "ndgc@10"  # type: ignore[attr-defined]
