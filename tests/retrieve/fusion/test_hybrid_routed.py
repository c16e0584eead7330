"""``hybrid-routed``: fusion settings per predicted query type, chosen by CV (finegrain.retrieve.fusion.routed)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from finegrain.errors import FinegrainError
from finegrain.experiment.tuning.cv import CVSpec
from finegrain.experiment.tuning.grid import cross_validate
from finegrain.experiment.tuning.routing import RoutedCrossValidation, choose_routed
from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run

# plain (one word) and constrained ("X的Y" / "a X on Y") queries; run A finds the plain ones, B the constrained
PLAIN = ["猫", "狗", "鱼", "花", "树", "cat", "dog", "tree"]
CONSTRAINED = ["白色的猫", "黑色的狗", "水里的鱼", "红色的花", "a white cat on a sofa", "a dog by the sea",
               "a red flower in a vase", "a tree by the road"]
TEXTS = {f"p{i}": t for i, t in enumerate(PLAIN)} | {f"c{i}": t for i, t in enumerate(CONSTRAINED)}
GOLD: dict[str, str | None] = {q: "singleton_object" if q[0] == "p" else "simple_condition" for q in TEXTS}
QRELS = Qrels.from_dict({q: {"rel": 1} for q in TEXTS})
HIT, MISS = {"rel": 2.0, "other": 1.0}, {"rel": 1.0, "other": 2.0}
A = Run.from_dict({q: dict(HIT if q[0] == "p" else MISS) for q in TEXTS}, name="A")
B = Run.from_dict({q: dict(MISS if q[0] == "p" else HIT) for q in TEXTS}, name="B")
POINTS = [{"weights": (1.0, 0.0)}, {"weights": (0.0, 1.0)}]
ASSIGN = {q: i % 2 for i, q in enumerate(sorted(TEXTS))}  # fixed folds: each fold has plain and constrained


def _routed(gold: dict[str, str | None] = GOLD, **kw: object) -> RoutedCrossValidation:
    args = {"texts": TEXTS, "gold": gold, "points": POINTS, "default_setting": {"weights": None},
            "assignment": ASSIGN, "min_queries": 2, "n_resamples": 200, **kw}
    runs = args.pop("runs", [A, B])
    return choose_routed(QRELS, runs, A, ["ndcg@1", "ndcg@10"], CVSpec(2, 0, "ndcg@1"), **args)  # type: ignore[arg-type]


def test_each_route_gets_its_own_point_and_beats_one_point_for_all() -> None:
    cv = _routed()
    for choice in cv.route_choices:  # every fold: plain -> A, constrained -> B, neither a fallback
        assert {r: (i, fb) for r, (i, _, fb) in choice.items()} == {"plain": (0, False), "constrained": (1, False)}
    assert cv.metrics["ndcg@1"].mean == 1.0  # each query from the run that finds it
    assert cv.unrouted is not None and cv.unrouted.metrics["ndcg@1"].mean == 0.5  # one run for all: half miss
    assert cv.vs_unrouted["ndcg@1"].diff == pytest.approx(0.5)
    assert cv.accuracy is not None and cv.accuracy.accuracy == 1.0 and cv.accuracy.n == len(TEXTS)
    assert dict(cv.consensus) == {"constrained": "0:1", "plain": "1:0"}


class _Counted(Sequence[Run]):
    """Runs that count their reads, as a grid that fuses each run when it is read would pay for them."""

    def __init__(self, runs: list[Run]) -> None:
        self.runs, self.reads = runs, [0] * len(runs)

    def __len__(self) -> int:
        return len(self.runs)

    def __getitem__(self, i):  # type: ignore[no-untyped-def,override]
        self.reads[i] += 1
        return self.runs[i]


def test_each_grid_run_is_scored_once_for_both_choices() -> None:
    """The routed and the un-routed choice share one scoring pass: a run is read once to be scored, and at most
    once more for each choice that assembles from it."""
    runs = _Counted([A, B])
    _routed(runs=runs)
    assert max(runs.reads) <= 3 and sum(runs.reads) <= 2 + 2 * 2
    scored_once = _Counted([A, B, A])  # the third point is never chosen (ties go to the first): scored only
    _routed(runs=scored_once, points=[*POINTS, {"weights": (1.0, 0.0, 0.0)}])
    assert scored_once.reads[2] == 1


def test_provenance_holds_each_folds_route_choices() -> None:
    cv = _routed()
    prov = json.loads(json.dumps(cv.provenance()))
    assert len(prov["per_fold"]) == 2 and len(prov["routing"]["per_fold"]) == 2
    assert prov["per_fold"][0]["setting"] == {"constrained": "0:1", "plain": "1:0"}
    assert prov["routing"]["per_fold"][1]["plain"] == {"setting": {"weights": [1.0, 0.0]}, "n_train": 4,
                                                       "fallback": False}
    assert prov["unrouted"]["per_fold"][0]["setting"] in ({"weights": [1.0, 0.0]}, {"weights": [0.0, 1.0]})
    data = json.loads(json.dumps(cv.to_json_dict()))
    assert data["routing"]["predicted_type"]["c0"] == "simple_condition"
    assert data["routing"]["vs_unrouted"]["ndcg@1"]["diff"] == pytest.approx(0.5)


def test_no_gold_type_is_read_for_a_held_out_query() -> None:
    """A query's own gold type (wrong or absent) never changes its ranking: its route comes from its text."""
    base = _routed()
    for wrong in ("singleton_object", None):
        gold = {**GOLD, "c0": wrong}
        cv = _routed(gold)
        assert cv.run.to_dict()["c0"] == base.run.to_dict()["c0"]
        assert cv.predicted["c0"] == "simple_condition"


def test_small_routes_fall_back_to_the_unrouted_choice() -> None:
    cv = _routed(min_queries=100)
    assert all(fb for c in cv.route_choices for (_, _, fb) in c.values())
    assert cv.unrouted is not None and cv.run.to_dict() == cv.unrouted.run.to_dict()
    with pytest.raises(FinegrainError, match="min_queries=0"):
        _routed(min_queries=0)
    with pytest.raises(FinegrainError, match="routes="):
        _routed(routes="coarse")


CORPUS = Corpus([Document(f"d{i}", t) for i, t in enumerate([
    "a white cat on a sofa", "a cat", "a dog by the sea", "a dog", "a red flower in a vase", "flower",
    "a tree by the road", "tree", "fish", "a fish in the water"])])


def test_eval_cv_reaches_the_routed_protocol() -> None:
    queries = Queries([Query(q, TEXTS[q], GOLD[q]) for q in sorted(TEXTS) if TEXTS[q].isascii()])
    qrels = Qrels.from_dict({"p5": {"d1": 1}, "p6": {"d3": 1}, "p7": {"d7": 1}, "c4": {"d0": 1}, "c5": {"d2": 1},
                             "c6": {"d4": 1}, "c7": {"d6": 1}})
    opts = {"parts": ("bm25-okapi", "bm25"), "bm25.tokenizer": "capretrieval", "min_queries": 1}
    cv = cross_validate("hybrid-routed", opts, CORPUS, queries, qrels, lang="en", metrics=["ndcg@10"],
                        spec=CVSpec(2, 0), strata=queries.types())
    assert isinstance(cv, RoutedCrossValidation)
    assert len(cv.points) == 44 and len(cv.route_choices) == 2  # 11 weight vectors x 4 k
    assert set(cv.run.qids) == set(queries) and "routing" in cv.provenance()
