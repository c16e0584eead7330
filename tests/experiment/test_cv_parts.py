"""``finegrain eval --cv K --cv-parts``: a fusion's parts tuned inside each fold, then the fusion
(finegrain.experiment.tuning.nested)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.errors import FinegrainError
from finegrain.experiment.tuning.cv import CVSpec, Tunable, fold_sets, parse_cv, part_tunables
from finegrain.experiment.tuning.folds import select_queries
from finegrain.experiment.tuning.grid import cross_validate
from finegrain.experiment.tuning.nested import PartGrid, choose_part, choose_with_parts, score_fusions
from finegrain.experiment.tuning.routing import RoutedCrossValidation, choose_routed_with_parts
from finegrain.retrieve.fusion.hybrid import hybrid_retriever
from finegrain.retrieve.query.types import route_of
from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run

HIT, MISS = {"rel": 2.0, "other": 1.0}, {"rel": 1.0, "other": 2.0}
QIDS = ("q1", "q2", "q3", "q4")
FOLDS = {"q1": 0, "q2": 0, "q3": 1, "q4": 1}


def _run(hits: tuple[bool, ...], name: str) -> Run:
    return Run.from_dict({q: dict(HIT if h else MISS) for q, h in zip(QIDS, hits)}, name=name)


A = _run((True, True, True, False), "A")
B = _run((False, True, True, True), "B")
PICK = (Tunable("pick", (0, 1), 0),)


def _pick(setting: dict[str, int], runs: list[Run]) -> Run:
    """A stand-in fusion: the part ``pick`` names."""
    return runs[setting["pick"]]


def _nested(qrels: Qrels) -> object:
    a = PartGrid("a", (Tunable("x", (0, 1), 0),), ({"x": 0}, {"x": 1}), A, runs=(A, B))
    b = PartGrid("b", (), ({},), B, runs=(B,))
    return choose_with_parts(qrels, [a, b], _pick, PICK, {"pick": 0}, ["ndcg@1"], CVSpec(2, 0, "ndcg@1"),
                             queries=list(QIDS), assignment=FOLDS, n_resamples=100)


def test_each_fold_tunes_the_parts_then_the_fusion_on_the_other_folds_only() -> None:
    cv = _nested(Qrels.from_dict({q: {"rel": 1} for q in QIDS}))
    # fold 0 is fitted on {q3, q4}: part a alone: A 0.5, B 1.0 -> x=1 (B); fused: pick 0 (B) ties pick 1 (B)
    # -> the default, pick 0. Fold 1 on {q1, q2}: x=0 (A) 1.0; fused: pick 0 (A) 1.0 beats pick 1 (B) 0.5.
    assert [dict(f.setting) for f in cv.folds] == [{"a.x": 1, "pick": 0}, {"a.x": 0, "pick": 0}]
    assert cv.run.to_dict() == {"q1": B["q1"], "q2": B["q2"], "q3": A["q3"], "q4": A["q4"]}
    assert [f.held_out_value for f in cv.folds] == [0.5, 0.5]
    assert dict(cv.default_setting) == {"a.x": 0, "pick": 0}
    assert [t.key for t in cv.tuned] == ["a.x", "pick"]
    prov = cv.provenance()
    json.dumps(prov)
    assert "nested" in prov["method"] and prov["spec"].endswith("seed=0")
    assert prov["n_points"] == 3 + 2 * 2  # part a's 2 points and b's 1, then the fusion's 2 for x=0 and x=1


def test_the_fusion_stage_chooses_on_the_other_folds_too() -> None:
    p, c = _run((False, True, True, True), "P"), _run((True, True, False, False), "C")
    cv = choose_with_parts(Qrels.from_dict({q: {"rel": 1} for q in QIDS}),
                           [PartGrid("p", (), ({},), p, runs=(p,)), PartGrid("c", (), ({},), c, runs=(c,))], _pick, PICK,
                           {"pick": 0}, ["ndcg@1"], CVSpec(2, 0, "ndcg@1"), queries=list(QIDS), assignment=FOLDS,
                           n_resamples=100)
    # fold 0 on {q3, q4}: P 1.0, C 0 -> P; fold 1 on {q1, q2}: P 0.5, C 1.0 -> C (on all queries P would win)
    assert [dict(f.setting) for f in cv.folds] == [{"pick": 0}, {"pick": 1}]
    assert cv.run.to_dict() == {"q1": p["q1"], "q2": p["q2"], "q3": c["q3"], "q4": c["q4"]}
    assert dict(cv.in_sample) == {"pick": 0} and cv.in_sample_value == 0.75


def test_a_part_choice_keeps_only_its_picks_and_must_share_the_folds() -> None:
    qrels = Qrels.from_dict({q: {"rel": 1} for q in QIDS})
    c = _run((True, True, False, False), "C")
    grid = PartGrid("a", (Tunable("x", (0, 1, 2), 0),), ({"x": 0}, {"x": 1}, {"x": 2}), A, runs=(A, B, c))
    _, trains = fold_sets(list(QIDS), CVSpec(2, 0, "ndcg@1"), assignment=FOLDS)
    choice = choose_part(qrels, grid, "ndcg@1", list(QIDS), trains)
    assert choice.per_fold == (1, 0) and choice.everyone == 0 and set(choice.runs) == {0, 1}  # C is dropped
    made_first = choose_with_parts(qrels, [choice], _pick, (), {"pick": 0}, ["ndcg@1"], CVSpec(2, 0, "ndcg@1"),
                                   queries=list(QIDS), assignment=FOLDS, n_resamples=100)
    made_here = choose_with_parts(qrels, [grid], _pick, (), {"pick": 0}, ["ndcg@1"], CVSpec(2, 0, "ndcg@1"),
                                  queries=list(QIDS), assignment=FOLDS, n_resamples=100)
    assert made_first.run.to_dict() == made_here.run.to_dict()
    with pytest.raises(FinegrainError, match="other folds"):
        choose_with_parts(qrels, [choice], _pick, (), {"pick": 0}, ["ndcg@1"], CVSpec(2, 0, "ndcg@1"),
                          queries=list(QIDS), assignment={"q1": 0, "q2": 1, "q3": 0, "q4": 1}, n_resamples=100)


def test_a_fold_choice_never_depends_on_its_own_qrels() -> None:
    base = _nested(Qrels.from_dict({q: {"rel": 1} for q in QIDS}))
    # fold 0's queries judged the other way round: only fold 1's choice may change
    flipped = _nested(Qrels.from_dict({"q1": {"other": 1}, "q2": {"other": 1}, "q3": {"rel": 1}, "q4": {"rel": 1}}))
    assert dict(flipped.folds[0].setting) == dict(base.folds[0].setting)


CORPUS = Corpus([Document(f"d{i}", t) for i, t in enumerate([
    "red apple on a table", "green apple tree", "a red car on the road", "blue car and red bus", "apple pie recipe",
    "a dog on the road", "red dog toy", "the green bus", "table and chairs", "a tree by the road",
    "red red apple apple", "the road to the apple farm"])])
QUERIES = Queries([Query(f"q{i}", t, ("x", "y")[i % 2]) for i, t in enumerate(
    ["red apple", "car road", "green bus", "dog", "apple tree", "red table", "apple road", "red bus"])])
QRELS_T = Qrels.from_dict({"q0": {"d0": 1, "d10": 1}, "q1": {"d2": 1}, "q2": {"d7": 1}, "q3": {"d5": 1, "d6": 1},
                           "q4": {"d1": 1}, "q5": {"d0": 1, "d8": 1}, "q6": {"d11": 1}, "q7": {"d3": 1}})
OPTIONS = {"parts": ("bm25-okapi", "bm25"), "bm25.tokenizer": "capretrieval", "bm25.k1": 1.2}


def test_parts_are_chosen_as_alone_and_each_fold_is_the_fusion_at_its_setting() -> None:
    spec = CVSpec(2, 0, None, "tuned")
    cv = cross_validate("hybrid", OPTIONS, CORPUS, QUERIES, QRELS_T, lang="en", metrics=["ndcg@10"], spec=spec,
                        strata=QUERIES.types())
    assert [t.key for t in cv.tuned] == ["bm25-okapi.k1", "bm25-okapi.b", "bm25.b", "weights", "k"]
    alone = cross_validate("bm25-okapi", {}, CORPUS, QUERIES, QRELS_T, lang="en", metrics=["ndcg@10"],
                           spec=CVSpec(2, 0), strata=QUERIES.types())
    assert dict(cv.fold_of) == dict(alone.fold_of)
    for nested, plain in zip(cv.folds, alone.folds):
        assert {k: nested.setting[f"bm25-okapi.{k}"] for k in ("k1", "b")} == dict(plain.setting)
    for f, choice in enumerate(cv.folds):  # fold f's queries: the fusion built at fold f's setting
        held = frozenset(q for q, k in cv.fold_of.items() if k == f)
        setting = {k: v for k, v in choice.setting.items() if v is not None}
        built = hybrid_retriever(**{**OPTIONS, **setting}).retrieve(CORPUS, QUERIES, lang="en", top_k=None,
                                                                    show_progress=False)
        assert select_queries(cv.run, held).to_dict() == select_queries(built, held).to_dict()
    default = hybrid_retriever(**OPTIONS).retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    assert cv.metrics["ndcg@10"].default_mean == pytest.approx(
        sum(v for v in _ndcg(default).values()) / len(QRELS_T))


def _ndcg(run: Run) -> dict[str, float]:
    out = {}
    for q, rels in QRELS_T.to_dict().items():
        ranked = sorted(run.to_dict().get(q, {}).items(), key=lambda kv: -kv[1])[:10]
        dcg = sum(1 / math.log2(i + 2) for i, (d, _) in enumerate(ranked) if d in rels)
        out[q] = dcg / sum(1 / math.log2(i + 2) for i in range(min(len(rels), 10)))
    return out


def test_part_tunables_leave_out_what_set_fixes_and_refuse_a_retriever_without_parts() -> None:
    by_part = part_tunables("hybrid", OPTIONS)
    assert {n: [t.key for t in ts] for n, ts in by_part.items()} == {"bm25-okapi": ["k1", "b"], "bm25": ["b"]}
    assert [t.key for t in part_tunables("hybrid", {})["e5"]] == ["prf_depth", "rocchio_beta"]
    with pytest.raises(FinegrainError, match="no parts"):
        part_tunables("bm25-okapi", {})


def test_parse_cv_reads_parts() -> None:
    assert parse_cv("5,parts=tuned") == CVSpec(5, 0, None, "tuned") and parse_cv("5,parts=tuned").tune_parts
    assert not parse_cv("5").tune_parts and parse_cv("5").key == "5,metric=None,seed=0"
    with pytest.raises(FinegrainError, match="parts="):
        parse_cv("5,parts=some")


def test_cli_cv_parts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "-d", "embedded/captions-en", "-r", "hybrid", "--set", "parts=bm25-okapi,bm25", "-q"]
    assert main([*args, "--set", "bm25.k1=1.2", "--cv", "3", "--cv-parts", "-o", str(tmp_path / "cv")]) == 0
    prov = json.loads((tmp_path / "cv" / "results.json").read_text())["provenance"]["cv"]
    assert set(prov["grid"]) == {"bm25-okapi.k1", "bm25-okapi.b", "bm25.b", "weights", "k"}
    assert prov["spec"].endswith(",parts=tuned") and "nested" in prov["method"]
    assert all("bm25-okapi.k1" in f["setting"] for f in prov["per_fold"])
    assert main([*args, "--cv-parts", "-o", str(tmp_path / "x")]) != 0
    assert "--cv-parts goes with --cv" in capsys.readouterr().err
    assert main(["eval", "-d", "embedded/captions-en", "-r", "bm25-okapi", "--cv", "3", "--cv-parts",
                 "-o", str(tmp_path / "y")]) != 0
    assert "no parts" in capsys.readouterr().err


PLAIN = ["猫", "狗", "鱼", "花", "树", "cat", "dog", "tree"]
CONSTRAINED = ["白色的猫", "黑色的狗", "水里的鱼", "红色的花", "a white cat on a sofa", "a dog by the sea",
               "a red flower in a vase", "a tree by the road"]
TEXTS = {f"p{i}": t for i, t in enumerate(PLAIN)} | {f"c{i}": t for i, t in enumerate(CONSTRAINED)}
GOLD: dict[str, str | None] = {q: "singleton_object" if q[0] == "p" else "simple_condition" for q in TEXTS}
ASSIGN = {q: i % 2 for i, q in enumerate(sorted(TEXTS))}  # each fold has plain and constrained queries


def _routed_parts(qrels: Qrels) -> RoutedCrossValidation:
    """Part a (x=0 finds the plain queries, x=1 none), part b (the constrained ones); the fusion picks a part."""
    def run(found: str, name: str) -> Run:
        return Run.from_dict({q: dict(HIT if q[0] == found else MISS) for q in TEXTS}, name=name)

    plain, none, constrained = run("p", "A"), run("-", "none"), run("c", "B")
    a = PartGrid("a", (Tunable("x", (0, 1), 1),), ({"x": 0}, {"x": 1}), none, runs=(plain, none))
    b = PartGrid("b", (), ({},), constrained, runs=(constrained,))
    spec = CVSpec(2, 0, "ndcg@1", "tuned")
    scores = score_fusions(qrels, [a, b], _pick, PICK, {"pick": 0}, ["ndcg@1"], spec, queries=list(TEXTS),
                           assignment=ASSIGN)
    return choose_routed_with_parts(qrels, scores, ["ndcg@1"], spec, texts=TEXTS, gold=GOLD, min_queries=2,
                                    n_resamples=100)


def test_a_routed_fusion_tunes_its_parts_then_each_route_on_the_other_folds() -> None:
    cv = _routed_parts(Qrels.from_dict({q: {"rel": 1} for q in TEXTS}))
    # stage 1, every fold: part a alone is better at x=0 (finds half) than at its default x=1 (finds none);
    # stage 2 per route: plain queries -> pick part a, constrained ones -> pick part b; one pick for all: half
    for f, choice in enumerate(cv.route_choices):
        assert {r: dict(cv.points[i]) for r, (i, _, fb) in choice.items() if not fb} == {
            "plain": {"a.x": 0, "pick": 0}, "constrained": {"a.x": 0, "pick": 1}}, f
    assert dict(cv.folds[0].setting) == {"parts": "a.x=0", "constrained": "pick=1", "plain": "pick=0"}
    assert dict(cv.consensus) == {"parts": "a.x=0", "constrained": "pick=1", "plain": "pick=0"}
    assert cv.metrics["ndcg@1"].mean == 1.0 and cv.unrouted is not None
    assert cv.unrouted.metrics["ndcg@1"].mean == 0.5 and cv.vs_unrouted["ndcg@1"].diff == pytest.approx(0.5)
    assert dict(cv.default_setting) == {"a.x": 1, "pick": 0} and cv.metrics["ndcg@1"].default_mean == 0.0
    prov = json.loads(json.dumps(cv.provenance()))
    assert "nested and routed" in prov["method"] and "for the part alone" in prov["method"]
    assert prov["n_points"] == 3 + 2  # a's 2 points and b's 1, then the fusion's 2 for the one combination
    assert prov["routing"]["per_fold"][0]["plain"]["setting"] == {"a.x": 0, "pick": 0}


def test_each_routed_fold_fuses_the_parts_at_its_own_stage_1_points() -> None:
    """Part a at x=0 finds the plain queries of fold 1 only, at x=1 those of fold 0 only: fold 0 (fitted on fold 1)
    takes x=0, fold 1 takes x=1, and so every held-out plain query misses, as an honest CV must say."""
    qrels = Qrels.from_dict({q: {"rel": 1} for q in TEXTS})

    def run(fold: int, name: str) -> Run:
        return Run.from_dict({q: dict(HIT if q[0] == "p" and ASSIGN[q] == fold else MISS) for q in TEXTS}, name=name)

    constrained = Run.from_dict({q: dict(HIT if q[0] == "c" else MISS) for q in TEXTS}, name="B")
    a = PartGrid("a", (Tunable("x", (0, 1), 1),), ({"x": 0}, {"x": 1}), run(0, "x1"), runs=(run(1, "x0"), run(0, "x1")))
    b = PartGrid("b", (), ({},), constrained, runs=(constrained,))
    spec = CVSpec(2, 0, "ndcg@1", "tuned")
    scores = score_fusions(qrels, [a, b], _pick, PICK, {"pick": 0}, ["ndcg@1"], spec, queries=list(TEXTS),
                           assignment=ASSIGN)
    cv = choose_routed_with_parts(qrels, scores, ["ndcg@1"], spec, texts=TEXTS, gold=GOLD, min_queries=2,
                                  n_resamples=100)
    assert [dict(cv.points[c["plain"][0]])["a.x"] for c in cv.route_choices] == [0, 1]
    assert all(cv.evaluation["ndcg@1"].per_query[q] == 0.0 for q in TEXTS if q[0] == "p")


def test_the_routed_and_unrouted_choices_share_one_default_fusion() -> None:
    qrels = Qrels.from_dict({q: {"rel": 1} for q in TEXTS})
    run = Run.from_dict({q: dict(HIT) for q in TEXTS}, name="R")
    defaults: list[object] = []

    def fuse(setting: dict[str, int], runs: list[Run]) -> Run:
        defaults.extend(runs[:1] if runs[0].name == "default" else [])
        return runs[setting["pick"]]

    default = Run.from_dict({q: dict(HIT) for q in TEXTS}, name="default")
    a = PartGrid("a", (Tunable("x", (0, 1), 1),), ({"x": 0}, {"x": 1}), default, runs=(run, run))
    b = PartGrid("b", (), ({},), run, runs=(run,))
    spec = CVSpec(2, 0, "ndcg@1", "tuned")
    scores = score_fusions(qrels, [a, b], fuse, PICK, {"pick": 0}, ["ndcg@1"], spec, queries=list(TEXTS),
                           assignment=ASSIGN)
    choose_routed_with_parts(qrels, scores, ["ndcg@1"], spec, texts=TEXTS, gold=GOLD, min_queries=2, n_resamples=50)
    assert len(defaults) == 1


def test_a_routed_fold_choice_never_depends_on_its_own_qrels() -> None:
    base = _routed_parts(Qrels.from_dict({q: {"rel": 1} for q in TEXTS}))
    held = [q for q in TEXTS if ASSIGN[q] == 0]  # fold 0's queries judged the other way round
    flipped = _routed_parts(Qrels.from_dict({q: {"other" if q in held else "rel": 1} for q in TEXTS}))
    assert dict(flipped.route_choices[0]) == dict(base.route_choices[0])
    assert [dict(flipped.points[i]) for i, _, _ in flipped.route_choices[0].values()] == [
        dict(base.points[i]) for i, _, _ in base.route_choices[0].values()]


def test_hybrid_routed_with_parts_matches_the_nested_hybrid_and_builds_each_route() -> None:
    options = {**OPTIONS, "routes": "types", "min_queries": 1}
    spec = CVSpec(2, 0, None, "tuned")
    cv = cross_validate("hybrid-routed", options, CORPUS, QUERIES, QRELS_T, lang="en", metrics=["ndcg@10"],
                        spec=spec, strata=QUERIES.types())
    assert isinstance(cv, RoutedCrossValidation) and cv.unrouted is not None
    flat = cross_validate("hybrid", OPTIONS, CORPUS, QUERIES, QRELS_T, lang="en", metrics=["ndcg@10"], spec=spec,
                          strata=QUERIES.types())
    assert cv.unrouted.run.to_dict() == flat.run.to_dict()  # the un-routed side is the nested hybrid's CV
    assert [dict(f.setting) for f in cv.unrouted.folds] == [dict(f.setting) for f in flat.folds]
    texts = {q.id: q.text for q in QUERIES.values()}
    for f, choice in enumerate(cv.route_choices):  # each held-out query: the hybrid at its route's setting
        held = [q for q, k in cv.fold_of.items() if k == f]
        for q in held:
            from_route = dict(cv.points[choice[_route(cv.predicted[q])][0]])
            setting = {k: v for k, v in from_route.items() if v is not None}
            built = hybrid_retriever(**{**OPTIONS, **setting}).retrieve(
                CORPUS, Queries([Query(q, texts[q])]), lang="en", top_k=None, show_progress=False)
            assert cv.run.to_dict()[q] == built.to_dict()[q]


def _route(predicted: str) -> str:
    return str(route_of(predicted, "types"))


def test_cli_cv_parts_on_the_routed_fusion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "routed"
    assert main(["eval", "-d", "embedded/captions-en", "-r", "hybrid-routed", "--set", "parts=bm25-okapi,bm25",
                 "--set", "min_queries=2", "--cv", "2", "--cv-parts", "-o", str(out), "-q"]) == 0
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    prov = data["provenance"]["cv"]
    assert "nested and routed" in prov["method"]
    assert any("bm25-okapi.k1" in s["setting"] for f in prov["routing"]["per_fold"] for s in f.values())
    assert "routing" in data["cv"] and data["cv"]["routing"]["vs_unrouted"]
