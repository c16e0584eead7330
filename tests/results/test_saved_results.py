"""SavedResults: one typed, validated results.json; the aggregation rule saved; in-memory compare; MTEB JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from finegrain.cli.main import main
from finegrain.compare.comparison import compare, load_comparison
from finegrain.compare.systems import resolve_baseline, unique_labels
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.evaluate.evaluate import evaluate
from finegrain.evaluate.groups import UNTYPED, order_groups
from finegrain.results.files import read_results, write_results
from finegrain.results.mteb import finegrain_key, mteb_key, to_mteb_json, write_mteb_json
from finegrain.results.saved import SavedResults, from_mteb_json, infer_aggregation
from finegrain.types import Qrels, Run

QRELS = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}, "q3": {"d4": 1}, "q4": {"d5": 1}}
RUN_A = {"q1": {"d1": 0.9, "d2": 0.8}, "q2": {"d3": 0.5, "d9": 0.7}, "q3": {"d4": 0.1}, "q4": {"d5": 0.2}}
RUN_B = {"q1": {"d2": 0.9, "d1": 0.1}, "q2": {"d9": 0.5}, "q3": {"d4": 0.3}, "q4": {"x": 0.9, "d5": 0.1}}
TYPES = {"q1": "visual", "q2": "meta", "q3": None, "q4": "meta"}
METRICS = ["ndcg@10", "recall@10", "median_rank", "pair_f1@10"]


def _ev(run: dict, name: str):  # type: ignore[no-untyped-def]
    return evaluate(Qrels.from_dict(QRELS), Run.from_dict(run, name=name), METRICS, query_types=TYPES)


def test_evaluation_converts_in_memory_with_the_aggregation_rule_of_each_metric() -> None:
    ev = _ev(RUN_A, "a")
    saved = SavedResults.from_evaluation(ev)
    assert {k: m.aggregation for k, m in saved.metrics.items()} == {
        "ndcg@10": "mean", "recall@10": "mean", "median_rank": "median", "pair_f1@10": "ratio"}
    assert saved.aggregate == {k: r.value for k, r in ev.items()}
    assert dict(saved.metrics["ndcg@10"].per_query or {}) == dict(ev["ndcg@10"].per_query)
    assert saved.retriever_name == "a" and saved.migrations == ()
    assert list(saved.by_type) == ["meta", "visual", UNTYPED]  # the one order: by name, untyped last
    back = SavedResults.from_json(json.loads(json.dumps(saved.to_json())))
    assert back.to_json() == saved.to_json()


def test_saved_results_are_frozen() -> None:
    saved = SavedResults.from_evaluation(_ev(RUN_A, "a"), provenance={"dataset": {"name": "toy", "tags": ["x"]}})
    with pytest.raises(TypeError):
        saved.metrics["ndcg@10"] = None  # type: ignore[index]
    with pytest.raises(TypeError):
        saved.provenance["dataset"]["name"] = "other"  # type: ignore[index]
    assert saved.provenance["dataset"]["tags"] == ("x",)
    assert saved.to_json()["provenance"]["dataset"]["tags"] == ["x"]


def test_compare_two_in_memory_evaluations() -> None:
    ea, eb = _ev(RUN_A, "a"), _ev(RUN_B, "b")
    cmp = compare([ea, eb], n_resamples=500)
    assert cmp.names == ("a", "b") and cmp.baseline == "a"
    assert cmp.metrics == ("ndcg@10", "recall@10")  # median and ratio metrics are skipped by their saved rule
    assert "median" in cmp.skipped["median_rank"] and "ratio" in cmp.skipped["pair_f1@10"]
    t = cmp.tests["ndcg@10"]["b"]
    assert t.mean_diff == pytest.approx(eb.aggregate()["ndcg@10"] - ea.aggregate()["ndcg@10"])
    assert [s.slice for s in t.by_type] == ["meta", "visual", UNTYPED]
    # the same numbers from a folder, a dict and a SavedResults in one call
    mixed = compare([SavedResults.from_evaluation(ea), SavedResults.from_evaluation(eb).to_json()], n_resamples=500)
    assert mixed.tests["ndcg@10"]["b"].mean_diff == t.mean_diff


def test_compare_mixes_folders_and_evaluations(tmp_path: Path) -> None:
    write_results(tmp_path / "a", SavedResults.from_evaluation(_ev(RUN_A, "a")))
    cmp = compare([tmp_path / "a", _ev(RUN_B, "b")], baseline=str(tmp_path / "a"), n_resamples=200)
    assert cmp.baseline == "a" and cmp.systems[0].folder == str(tmp_path / "a")
    write_results(tmp_path / "b", SavedResults.from_evaluation(_ev(RUN_B, "b")))
    by_folder = load_comparison([tmp_path / "a"], baseline=tmp_path / "b", n_resamples=200)  # a folder not listed joins
    assert by_folder.baseline == "b" and by_folder.tests["ndcg@10"]["a"].mean_diff == pytest.approx(
        -cmp.tests["ndcg@10"]["b"].mean_diff)


def test_old_files_are_migrated_once_and_say_so(tmp_path: Path) -> None:
    body = SavedResults.from_evaluation(_ev(RUN_A, "a")).to_json()
    del body["aggregation"]
    # a median whose value equals the mean of its per-query values: guessing with isclose would call it a mean
    body["per_query"]["median_rank"] = {"q1": 1.0, "q2": 2.0, "q3": 3.0}
    body["aggregate"]["median_rank"] = 2.0
    (tmp_path / "old").mkdir()  # a file as an older finegrain wrote it (SavedResults writes only the current form)
    (tmp_path / "old" / "results.json").write_text(json.dumps(body), encoding="utf-8")
    saved = SavedResults.load(tmp_path / "old")
    assert saved.metrics["median_rank"].aggregation == "median"
    assert saved.metrics["pair_f1@10"].aggregation == "ratio"
    assert len(saved.migrations) == 1 and "inferred" in saved.migrations[0]
    assert saved.to_json()["aggregation"]["median_rank"] == "median"
    assert read_results(tmp_path / "old") == json.loads((tmp_path / "old" / "results.json").read_text())
    other = SavedResults.from_evaluation(_ev(RUN_B, "b"))
    cmp = compare([saved, other], n_resamples=100)
    assert "median_rank" in cmp.skipped
    assert infer_aggregation("reject_f1") == "ratio" and infer_aggregation("nDCG@10") == "mean"


@pytest.mark.parametrize(("change", "section"), [
    ({"aggregation": {"ndcg@10": "average"}}, "aggregation"),
    ({"aggregation": {"map@5": "mean"}}, "aggregation rule"),
    ({"errors": {"counts": {}}}, "errors"),
    ({"taxonomy": {"schema": "finegrain.taxonomy/1", "counts": [1]}}, "taxonomy"),
    ({"aggregate": {"ndcg@10": "high"}}, "aggregate"),
    # a curve's k is a whole number the report charts by (int(k)): a BOM, an empty or a decimal k is refused
    ({"curves": {"ndcg": {"1": 0.5, "\ufeff": 0.5}}}, "curves"),
    ({"curves": {"ndcg": {"": 0.5}}}, "curves"),
    ({"curves": {"ndcg": {"2.5": 0.5}}}, "curves"),
])
def test_bad_sections_name_the_file_and_the_place(tmp_path: Path, change: dict, section: str) -> None:
    body = SavedResults.from_evaluation(_ev(RUN_A, "a")).to_json()
    body.update(change)
    with pytest.raises(DataFormatError):  # the writer checks what the reader checks: a bad body is not written
        write_results(tmp_path / "refused", body)
    assert not (tmp_path / "refused" / "results.json").exists()
    (tmp_path / "r").mkdir()  # a bad file made elsewhere (a hand edit, another tool)
    path = tmp_path / "r" / "results.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"results.json.*{section}"):
        SavedResults.load(path)
    with pytest.raises(DataFormatError, match="results.json"):
        read_results(tmp_path / "r")


def test_one_group_order_and_labels_and_baseline() -> None:
    assert order_groups(["untyped", "b", "a", "b"]) == ["a", "b", "untyped"]
    assert unique_labels(["e5", "e5", "bm25"], ["x/dense_a", "y/dense_b", "z/bm"]) == \
        ["e5 (dense_a)", "e5 (dense_b)", "bm25"]
    assert unique_labels([None, None], ["x/run", "y/run"]) == ["run (x/run)", "run (y/run)"]
    labels, paths = ["a", "b", "c"], ["d/1", "d/2", "d/3"]
    assert resolve_baseline(None, labels, paths) == 0
    assert resolve_baseline("2", labels, paths) == 2 and resolve_baseline(1, labels, paths) == 1
    assert resolve_baseline("b", labels, paths) == 1 and resolve_baseline("d/3", labels, paths) == 2
    with pytest.raises(FinegrainError, match="out of range for 3 results"):
        resolve_baseline(3, labels, paths)
    with pytest.raises(FinegrainError, match="unknown baseline 'z'"):
        resolve_baseline("z", labels, paths)


# --------------------------------------------------------------------------- MTEB result JSON


def test_mteb_keys_round_trip() -> None:
    assert mteb_key("ndcg@10") == "ndcg_at_10" and mteb_key("median_rank") == "median_rank"
    assert finegrain_key("ndcg_at_10") == "ndcg@10" and finegrain_key("map_at_100") == "map@100"
    assert finegrain_key("nauc_ndcg_at_10_max") is None


def test_mteb_json_written_and_read_back(tmp_path: Path) -> None:
    saved = SavedResults.from_evaluation(_ev(RUN_A, "a"), provenance={"dataset": {"name": "toy/zh", "lang": "zh"},
                                                 "retriever": {"name": "bm25"}, "retrieve_seconds": 0.5})
    body = to_mteb_json(saved)
    entry = body["scores"]["test"][0]
    assert body["task_name"] == "ToyZh" and body["evaluation_time"] == 0.5 and "mteb_version" in body
    assert "dataset_revision" in body
    assert entry["hf_subset"] == "default" and entry["languages"] == ["cmn-Hans"]
    assert entry["ndcg_at_10"] == saved.aggregate["ndcg@10"] == entry["main_score"]
    path = write_mteb_json(saved, tmp_path / "m" / "mteb.json")
    back = SavedResults.load(path)
    assert back.origin == "mteb" and not back.has_per_query
    assert back.aggregate["ndcg@10"] == pytest.approx(saved.aggregate["ndcg@10"])
    assert back.aggregate["recall@10"] == pytest.approx(saved.aggregate["recall@10"])
    assert back.dataset_name == "toy/zh" and back.retriever_name == "bm25"
    assert "per_query" not in back.to_json()


def test_compare_with_mteb_input_gives_aggregates_without_significance(tmp_path: Path) -> None:
    prov = {"dataset": {"name": "toy/zh", "lang": "zh"}}
    a = SavedResults.from_evaluation(_ev(RUN_A, "a"), provenance={**prov, "retriever": {"name": "a"}})
    b = SavedResults.from_evaluation(_ev(RUN_B, "b"), provenance={**prov, "retriever": {"name": "b"}})
    path = write_mteb_json(b, tmp_path / "b" / "mteb.json")
    cmp = compare([a, path])
    assert cmp.metrics == ("ndcg@10", "recall@10") and not cmp.tests["ndcg@10"]
    assert cmp.summaries["ndcg@10"]["b"].mean == pytest.approx(b.aggregate["ndcg@10"])
    assert cmp.summaries["ndcg@10"]["a"].mean == pytest.approx(a.aggregate["ndcg@10"])
    assert any("per-query values" in n for n in cmp.notes)
    assert cmp.to_json_dict()["notes"] == list(cmp.notes)


def test_an_mteb_file_as_mteb_writes_it(tmp_path: Path) -> None:
    model = tmp_path / "results" / "intfloat__e5-small" / ("0" * 40)
    model.mkdir(parents=True)
    path = model / "SciFact.json"
    path.write_text(json.dumps({
        "dataset_revision": "abc", "task_name": "SciFact", "mteb_version": "1.12.0", "evaluation_time": 3.0,
        "kg_co2_emissions": None,
        "scores": {"test": [{"ndcg_at_10": 0.7, "recall_at_100": 0.9, "nauc_ndcg_at_10_max": 0.1,
                             "main_score": 0.7, "hf_subset": "default", "languages": ["eng-Latn"]}]},
    }))
    saved = SavedResults.load(path)
    assert saved.aggregate == {"ndcg@10": 0.7, "recall@100": 0.9}
    assert saved.retriever_name == "intfloat/e5-small" and saved.dataset_name == "SciFact"
    two = {"task_name": "T", "scores": {"dev": [{"ndcg_at_10": 1.0}], "train": [{"ndcg_at_10": 0.5}]}}
    with pytest.raises(DataFormatError, match="split"):
        from_mteb_json(two, source=path)


def test_eval_format_mteb_and_compare_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for r in ("bm25-okapi", "bm25"):
        args = ["eval", "-d", "embedded/captions-zh", "-r", r, "-m", "ndcg@10,recall@10", "-o", str(tmp_path / r), "-q"]
        assert main([*args, "--format", "mteb"] if r == "bm25" else args) == 0
    assert not (tmp_path / "bm25-okapi" / "mteb.json").exists()
    mteb = json.loads((tmp_path / "bm25" / "mteb.json").read_text())
    saved = SavedResults.load(tmp_path / "bm25")
    assert mteb["scores"]["test"][0]["ndcg_at_10"] == saved.aggregate["ndcg@10"]
    assert saved.metrics["ndcg@10"].aggregation == "mean" and saved.migrations == ()
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "bm25-okapi"), str(tmp_path / "bm25" / "mteb.json")]) == 0
    out = capsys.readouterr().out
    assert "per-query values" in out and "aggregates" in out


@pytest.mark.parametrize("damage", [
    {"counts": {"literal_miss": "many"}},
    {"per_query": {"q1": "broken"}},
    {"per_query": {"q1": {"false_positives": [1, 2]}}},
    {"tags": {"literal_miss": "a string"}},
    {"examples": {"literal_miss": "not a list"}},
    {"n_queries": "3"},
    {"k": 10.0},
    {"counts": {"literal_miss": {"items": "3", "queries": 1}}},
    {"counts": {"literal_miss": {"items": -1, "queries": 1}}},
    {"counts": {"literal_miss": {"items": True, "queries": 1}}},
    {"examples": {"literal_miss": [{"doc_id": "d", "rank": "1"}]}},
    {"by_type": {"color": {"n_queries": "twelve"}}},
    {"totals": {"false_negatives": None}},
])
def test_a_damaged_diagnosis_section_is_refused_on_load(damage: dict) -> None:
    body = SavedResults.from_evaluation(_ev(RUN_A, "a")).to_json()
    body["errors"] = {"schema": "finegrain.errors/1", **damage}
    with pytest.raises(DataFormatError, match="errors"):
        SavedResults.from_json(body, source="results.json")


@pytest.mark.parametrize("damage", [
    {"proportions": {"typo": 83.6}},
    {"proportions": {"typo": "0.1"}},
    {"n_failures": "3"},
    {"counts": {"typo": 1.5}},
    {"per_query": {"q1": {"tag": "typo", "relevant_rank": "2"}}},
    {"tags": {"typo": {"description": "x", "dureader_share": 1.6}}},
    {"order": "typo"},
])
def test_a_damaged_taxonomy_section_is_refused_on_load(damage: dict) -> None:
    body = SavedResults.from_evaluation(_ev(RUN_A, "a")).to_json()
    body["taxonomy"] = {"schema": "finegrain.taxonomy/1", **damage}
    with pytest.raises(DataFormatError, match=r"results.json: expected taxonomy\."):
        SavedResults.from_json(body, source="results.json")


def test_numbers_past_the_double_range_are_refused() -> None:
    body = SavedResults.from_evaluation(_ev(RUN_A, "a")).to_json()
    body["aggregate"]["ndcg@10"] = 10**400
    with pytest.raises(DataFormatError, match="aggregate"):
        SavedResults.from_json(body, source="results.json")


def test_mteb_scores_past_the_double_range_and_odd_languages(tmp_path: Path) -> None:
    body = {"task_name": "t", "mteb_version": "2.0.0",
            "scores": {"test": [{"hf_subset": "default", "languages": 3, "ndcg_at_10": 0.5, "recall_at_10": 10**400}]}}
    p = tmp_path / "m.json"
    p.write_text(json.dumps(body), encoding="utf-8")
    back = SavedResults.load(p)
    assert back.aggregate == {"ndcg@10": 0.5}


@pytest.mark.parametrize(("section", "edit"), [
    ("aggregate", lambda b: b["aggregate"].__setitem__("ndcg@10", 1.5)),
    ("per_query", lambda b: b["per_query"]["ndcg@10"].__setitem__(next(iter(b["per_query"]["ndcg@10"])), -0.2)),
    ("by_type", lambda b: [row.__setitem__("ndcg@10", {"value": 83.6, "n": 1}) for row in b["by_type"].values()]),
])
def test_a_bounded_metric_outside_its_range_is_refused(section: str, edit: Any) -> None:
    body = SavedResults.from_evaluation(_ev(RUN_A, "a"), queries={"q1": "x", "q2": "y"}).to_json()
    edit(body)
    with pytest.raises(DataFormatError, match=rf"expected {section}\..*in \[0, 1\]"):
        SavedResults.from_json(body, source="results.json")


def test_a_percent_scale_mteb_score_is_refused_with_the_fix(tmp_path: Path) -> None:
    body = {"task_name": "t", "mteb_version": "2.0.0",
            "scores": {"test": [{"hf_subset": "default", "ndcg_at_10": 83.6, "main_score": 83.6}]}}
    p = tmp_path / "m.json"
    p.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(DataFormatError, match="divide by 100"):
        SavedResults.load(p)
    body["scores"]["test"][0].update(ndcg_at_10=0.836, main_score=0.836)
    p.write_text(json.dumps(body), encoding="utf-8")
    assert SavedResults.load(p).aggregate == {"ndcg@10": 0.836}


def test_counts_and_geometric_means_save_with_their_rule_and_range(tmp_path: Path) -> None:
    metrics = ["num_ret", "num_rel_ret", "hits@10", "gm_map", "bpref", "err@10", "ndcg@10"]
    ev = evaluate(Qrels.from_dict(QRELS), Run.from_dict(RUN_A, name="a"), metrics)
    saved = SavedResults.from_evaluation(ev)
    assert {k: m.aggregation for k, m in saved.metrics.items()} == {
        "num_ret": "sum", "num_rel_ret": "sum", "hits@10": "mean", "gm_map": "gmean", "bpref": "mean",
        "err@10": "mean", "ndcg@10": "mean"}
    body = saved.to_json()
    assert body["aggregate"]["num_ret"] == 6.0  # a count past 1 is in its range [0, inf]
    back = SavedResults.from_json(json.loads(json.dumps(body)), source="results.json")
    assert back.aggregate == saved.aggregate and back.metrics["gm_map"].aggregation == "gmean"
    del body["aggregation"]  # a file without the rules: each is the one its metric declares
    assert SavedResults.from_json(body, source="results.json").metrics["num_ret"].aggregation == "sum"
    assert infer_aggregation("gm_map") == "gmean" and infer_aggregation("NumRet") == "sum"
    body["aggregate"]["num_ret"] = -1.0
    with pytest.raises(DataFormatError, match=r"aggregate\..*num_ret"):
        SavedResults.from_json(body, source="results.json")
    cmp = compare([saved, SavedResults.from_evaluation(evaluate(Qrels.from_dict(QRELS), Run.from_dict(RUN_B, name="b"),
                                                                metrics))], n_resamples=50)
    assert {"num_ret", "num_rel_ret", "gm_map"} <= set(cmp.skipped)  # not means: no paired test of them
