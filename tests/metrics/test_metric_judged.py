"""judged@k: the share of the top k with a judgement (any grade), as ir_measures' Judged@k.

Hand-computed cases, the grammar and registry, differential tests against
ir_measures (random runs and real dureader/mini and CapRetrieval BM25 runs) and
``finegrain eval -m judged@10`` end to end.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from finegrain.cli.list_cmd import catalogue
from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.errors import FinegrainError
from finegrain.evaluate import evaluate
from finegrain.metrics import METRICS, metric_values
from finegrain.metrics.spec import MetricSpec, metric_params, parse_metric
from finegrain.retrieve.registry import get_retriever
from finegrain.types import Qrels, Run

ir_measures = pytest.importorskip("ir_measures")

# q1: a (judged 0), b (judged 1), z (unjudged), c (judged -1), in rank order a b z c
QRELS = {"q1": {"a": 0, "b": 1, "c": -1, "x": 2}, "q2": {"x": 1}, "q3": {}, "q4": {"y": 1}, "q5": {"y": 0}}
RUN = {"q1": {"a": 4.0, "b": 3.0, "z": 2.0, "c": 1.0}, "q2": {"y": 1.0}, "q3": {"m": 1.0}, "q5": {}, "q9": {"k": 1.0}}


def values(spec: str, qrels: dict = QRELS, run: dict = RUN) -> dict[str, float | None]:
    return metric_values(Qrels.from_dict(qrels), Run.from_dict(run), spec)


# --------------------------------------------------------------------------- hand-computed


def test_hand_computed_values() -> None:
    # q1: top 2 = a, b both judged (grade 0 counts) -> 2/2; top 3 = a b z -> 2/3; all 4 -> 3/4
    # q2: y unjudged -> 0; q3: no judgement at all, m retrieved -> 0
    # q4: absent from the run -> 0; q5: in the run with no result -> 0 (nothing retrieved)
    assert values("judged@2") == {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": 0.0, "q5": 0.0}
    assert values("judged@3")["q1"] == pytest.approx(2 / 3)
    assert values("judged")["q1"] == pytest.approx(3 / 4)
    # k beyond the results: the denominator is the number returned (3 of 4), not k
    assert values("judged@10")["q1"] == pytest.approx(3 / 4)
    # the run's query q9 is outside the universe (the qrels' queries): ignored
    assert "q9" not in values("judged@10")


def test_a_judged_zero_and_a_negative_grade_count_as_judged() -> None:
    v = values("judged@10", {"q": {"a": 0, "b": -1}}, {"q": {"a": 2.0, "b": 1.0}})
    assert v == {"q": 1.0}


def test_ties_at_the_cutoff_follow_the_one_ranking_rule() -> None:
    # equal scores: doc id descending (trec_eval), so "b" ranks before "a"
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    assert values("judged@1", qrels, run) == {"q": 0.0}
    assert values("judged@2", qrels, run) == {"q": 0.5}


def test_aggregate_is_the_mean_over_every_universe_query_and_denominators_are_counted() -> None:
    ev = evaluate(QRELS, RUN, ["judged@2"])
    r = ev["judged@2"]
    assert r.value == pytest.approx((1.0 + 0 + 0 + 0 + 0) / 5)
    d = r.denominators
    assert (d.n_universe, d.n_scored, d.n_missing_from_run, d.n_undefined, d.n_ignored_run_queries) == (5, 5, 1, 0, 1)
    assert ev.aggregation()["judged@2"] == "mean"


def test_explicit_universe_scores_a_query_the_qrels_do_not_name() -> None:
    v = metric_values(Qrels.from_dict(QRELS), Run.from_dict(RUN), "judged@5", queries=["q1", "q9"])
    assert v == {"q1": pytest.approx(3 / 4), "q9": 0.0}


# --------------------------------------------------------------------------- grammar and registry


def test_grammar_canonical_keys_and_no_rel() -> None:
    assert parse_metric("Judged@10").key == "judged@10"  # ir_measures' spelling
    assert parse_metric("judged").key == "judged"
    assert parse_metric("judged@10") == MetricSpec("judged", 10)
    assert parse_metric("judged@10").family == "judged"
    assert dict(metric_params("judged")) == {}
    with pytest.raises(FinegrainError, match="judged counts items of every grade"):
        parse_metric("judged@10(rel=2)")
    with pytest.raises(FinegrainError, match="takes no rel"):
        MetricSpec("judged", 10, rel=2)
    with pytest.raises(FinegrainError, match="not a positive integer"):
        parse_metric("judged@0")


def test_registered_and_listed() -> None:
    assert "judged" in METRICS.names()
    params = METRICS.params("judged")
    assert params is not None and dict(params) == {}  # declared: no parameter at all
    row = next(r for r in catalogue("metrics") if r["name"] == "judged")
    assert row["cutoff"] == "optional" and row["params"] == {} and "judg" in row["help"]


def test_list_metrics_cli_shows_judged(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "metrics"]) == 0
    assert "judged" in capsys.readouterr().out


def test_trec_eval_mode_refuses_judged() -> None:
    with pytest.raises(FinegrainError, match="no trec_eval measure"):
        evaluate(QRELS, RUN, ["judged@10"], compat="trec_eval")


# --------------------------------------------------------------------------- differential: ir_measures


def ir_measures_values(qrels: dict, run: dict, k: int | None) -> tuple[dict[str, float], float]:
    measure = ir_measures.Judged if k is None else ir_measures.Judged @ k
    # ir_measures divides by zero on a query present with no result: give it the run without those
    run = {q: r for q, r in run.items() if r}
    per_query = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    return per_query, ir_measures.calc_aggregate([measure], qrels, run)[measure]


def straddling_ties(run: dict, k: int | None) -> set[str]:
    """Queries where a score tie crosses rank k (the only place ir_measures' tie rule differs)."""
    out = set()
    for q, scores in run.items():
        ranked = sorted(scores.values(), reverse=True)
        if k is not None and 0 < k < len(ranked) and ranked[k - 1] == ranked[k]:
            out.add(q)
    return out


def random_case(seed: int, n_queries: int = 50, ties: bool = False) -> tuple[dict, dict]:
    rnd = random.Random(seed)
    pool = [f"d{j}" for j in range(80)] + ["D", "é", "z9"]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in range(n_queries):
        q = f"q{qi}"
        docs = rnd.sample(pool, rnd.randint(1, 40))
        if qi % 10 != 9:  # some queries only in the run
            judged = rnd.sample(docs, rnd.randint(0, len(docs))) + rnd.sample(pool, 3)
            qrels[q] = {d: rnd.choice([-1, 0, 0, 1, 2]) for d in judged}
            if qi % 17 == 3:
                qrels[q] = {}  # a query without any judgement
        if qi % 11 != 10:  # some queries only in the qrels
            if ties:
                run[q] = {d: float(rnd.randint(0, 4)) for d in docs}
            else:
                run[q] = {d: float(i) + rnd.random() / 2 for i, d in enumerate(docs)}
    return qrels, run


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 3, 5, 10, 20, 100, None])
def test_equals_ir_measures_on_random_runs(seed: int, k: int | None) -> None:
    qrels, run = random_case(seed)
    spec = "judged" if k is None else f"judged@{k}"
    ref, ref_mean = ir_measures_values(qrels, run, k)
    ours = values(spec, qrels, run)
    assert set(ours) == set(ref) == set(qrels)
    for q, v in ref.items():
        assert ours[q] == pytest.approx(v, abs=1e-12), q
    assert evaluate(qrels, run, [spec])[spec].value == pytest.approx(ref_mean, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 3, 10])
def test_with_ties_differs_from_ir_measures_only_where_a_tie_straddles_k(seed: int, k: int) -> None:
    qrels, run = random_case(seed, ties=True)
    ref, _ = ir_measures_values(qrels, run, k)
    ours = values(f"judged@{k}", qrels, run)
    differ = {q for q in ref if abs(ours[q] - ref[q]) > 1e-12}
    assert differ <= straddling_ties(run, k)
    # reversing the ids' order makes ir_measures' tie rule (id ascending) ours (id descending)
    flip = {q: {_rev(d): s for d, s in r.items()} for q, r in run.items()}
    ref_flip, _ = ir_measures_values({q: {_rev(d): g for d, g in j.items()} for q, j in qrels.items()}, flip, k)
    assert ours == pytest.approx(ref_flip, abs=1e-12)


def _rev(doc: str) -> str:
    """An id whose code-point order is the reverse of ``doc``'s among these ids (fixed width)."""
    return "".join(chr(0x10000 - ord(c)) for c in doc.ljust(4, "\0")) if doc else doc


# --------------------------------------------------------------------------- real data


def _bm25_run(name: str):
    ds = load_dataset(name)
    run = get_retriever("bm25-okapi").retrieve(ds.corpus, ds.queries, lang=ds.lang, top_k=None, show_progress=False)
    return ds, run


@pytest.mark.parametrize("name", ["dureader/mini", "capretrieval/zh"])
def test_equals_ir_measures_on_real_bm25_runs(with_data_root: Path, name: str) -> None:
    ds, run = _bm25_run(name)
    qrels, run_d = ds.qrels.to_dict(), run.to_dict()
    for k in (1, 5, 10, 100, None):
        spec = "judged" if k is None else f"judged@{k}"
        ref, ref_mean = ir_measures_values(qrels, run_d, k)
        ours = metric_values(ds.qrels, run, spec)
        tied = straddling_ties(run_d, k)
        for q, v in ref.items():
            if q not in tied:
                assert ours[q] == pytest.approx(v, abs=1e-12), (name, spec, q)
        if not tied:
            assert evaluate(ds.qrels, run, [spec])[spec].value == pytest.approx(ref_mean, abs=1e-12), (name, spec)


def test_dureader_mini_bm25_okapi_golden(with_data_root: Path) -> None:
    ds, run = _bm25_run("dureader/mini")
    ev = evaluate(ds.qrels, run, ["judged@10"], queries=list(ds.queries))
    assert ev["judged@10"].value == pytest.approx(0.7430555555555556, abs=1e-12)  # = ir_measures Judged@10


def test_eval_cli_saves_judged_at_10(tmp_path: Path, with_data_root: Path) -> None:
    out = tmp_path / "j"
    assert main(["eval", "-d", "dureader/mini", "-r", "bm25-okapi", "-m", "judged@10", "-o", str(out), "--quiet"]) == 0
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["aggregate"]["judged@10"] == pytest.approx(0.7430555555555556, abs=1e-12)
    assert res["aggregation"]["judged@10"] == "mean"
    assert res["denominators"]["judged@10"]["n_scored"] == 8
