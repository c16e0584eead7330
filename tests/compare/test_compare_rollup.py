"""CapRetrieval's Table 3 roll-up in finegrain compare (finegrain.compare.rollup): Singleton Entity = object +
person + place + concept, hand-computed win/tie/loss and means, the terminal table, and capretrieval/zh."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from finegrain.cli.main import main
from finegrain.compare.comparison import compare, load_comparison
from finegrain.compare.rollup import CAPRETRIEVAL_TABLE3, rollup_of

# query -> (type, baseline value, system value)
CASES = {
    "q1": ("singleton_object", 0.5, 1.0),   # win
    "q2": ("singleton_person", 1.0, 0.5),   # loss
    "q3": ("singleton_place", 0.25, 0.25),  # tie
    "q4": ("singleton_concept", 0.0, 1.0),  # win
    "q5": ("singleton_event", 0.5, 0.0),    # loss
    "q6": ("complex_condition", 0.0, 0.75),  # win
    "q7": ("simple_condition", 1.0, 1.0),   # tie
    "q8": (None, 0.0, 0.5),                 # win, untyped
}


def _results(which: int, retriever: str) -> dict[str, Any]:
    vals = {q: c[which] for q, c in CASES.items()}
    return {
        "aggregate": {"ndcg@10": sum(vals.values()) / len(vals)},
        "per_query": {"ndcg@10": vals},
        "denominators": {},
        "queries": {q: {"text": q, "type": c[0]} for q, c in CASES.items()},
        "provenance": {"dataset": {"name": "toy/zh", "lang": "zh"}, "retriever": {"name": retriever}},
    }


def test_rollup_is_recognised_only_for_capretrievals_types() -> None:
    assert rollup_of(["singleton_object", "conjunction", "untyped"]) is CAPRETRIEVAL_TABLE3
    assert rollup_of(["entity", "event"]) is None  # the embedded set's own four types
    assert rollup_of(["singleton_event", "conjunction"]) is None  # nothing to roll up
    assert rollup_of([]) is None
    assert CAPRETRIEVAL_TABLE3.ordered(["Complex Cond.", "untyped", "Singleton Entity"]) == [
        "Singleton Entity", "Complex Cond.", "untyped"]


def test_by_rollup_by_hand() -> None:
    cmp = compare([_results(1, "bm25"), _results(2, "dense")], n_resamples=200)
    t = cmp.tests["ndcg@10"]["dense"]
    groups = {s.slice: s for s in t.by_rollup}
    assert list(groups) == ["Singleton Entity", "Singleton Event", "Simple Cond.", "Complex Cond.", "untyped"]
    e = groups["Singleton Entity"]  # q1 win, q2 loss, q3 tie, q4 win
    assert (e.n, e.wtl.win, e.wtl.tie, e.wtl.loss) == (4, 2, 1, 1)
    assert e.baseline_mean == pytest.approx((0.5 + 1.0 + 0.25 + 0.0) / 4)
    assert e.mean == pytest.approx((1.0 + 0.5 + 0.25 + 1.0) / 4)
    assert (groups["Singleton Event"].wtl.loss, groups["Complex Cond."].wtl.win) == (1, 1)
    assert sum(s.n for s in t.by_rollup) == sum(s.n for s in t.by_type) == 8
    d = cmp.to_json_dict()
    assert d["rollup"]["name"] == "capretrieval_table3"
    assert d["rollup"]["groups"]["singleton_person"] == "Singleton Entity"
    assert d["tests"]["ndcg@10"]["dense"]["by_rollup"]["Singleton Entity"]["win"] == 2


def test_no_rollup_for_other_types() -> None:
    a, b = _results(1, "bm25"), _results(2, "dense")
    for r in (a, b):
        for q in r["queries"].values():
            q["type"] = "entity"
    cmp = compare([a, b], n_resamples=100)
    assert cmp.rollup is None and cmp.tests["ndcg@10"]["dense"].by_rollup == ()
    assert "rollup" not in cmp.to_json_dict() and "by_rollup" not in cmp.to_json_dict()["tests"]["ndcg@10"]["dense"]


def test_capretrieval_compare_prints_the_table3_rollup(tmp_path: Path, with_data_root: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    for retr in ("bm25-okapi", "bm25"):
        assert main(["eval", "-d", "capretrieval/zh", "-r", retr, "-m", "ndcg@10", "-o", str(tmp_path / retr),
                     "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "bm25-okapi"), str(tmp_path / "bm25"), "--resamples", "500"]) == 0
    out = capsys.readouterr().out
    assert "CapRetrieval Table 3 roll-up · bm25 vs bm25-okapi · ndcg@10" in out
    for g in CAPRETRIEVAL_TABLE3.order:
        assert g in out, g
    cmp = load_comparison([tmp_path / "bm25-okapi", tmp_path / "bm25"], n_resamples=500)
    t = cmp.tests["ndcg@10"]["bm25"]
    by_type = {s.slice: s.n for s in t.by_type}
    rolled = {s.slice: s.n for s in t.by_rollup}
    assert rolled["Singleton Entity"] == sum(by_type.get(x, 0) for x in (
        "singleton_object", "singleton_person", "singleton_place", "singleton_concept"))
    assert sum(rolled.values()) == t.n == 377
