"""finegrain.compare.relabel and ``finegrain compare --qrels-new``: metrics and system ranks under two qrels.

The tiny case is computed by hand (MRR@10 of three systems on two queries,
before and after a relabelling that finds two false negatives and demotes one
positive); Kendall's tau is checked against scipy and by counting pairs; the
real-data case hides positives of CapRetrieval and checks what relabelling
with the hidden labels gives back.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import scipy.stats as st

from finegrain.cli.main import main
from finegrain.compare.relabel import format_relabel, hide_relevant, kendall_tau, relabel_delta
from finegrain.datasets import load_dataset
from finegrain.errors import FinegrainError
from finegrain.evaluate.evaluate import evaluate
from finegrain.io.trec import write_qrels
from finegrain.results.files import save_run, write_results
from finegrain.retrieve.registry import get_retriever
from finegrain.types import Qrels, Run

# q1: d1 relevant; d2 a false negative. q2: d3 judged relevant, really irrelevant; d4 a false negative.
OLD = {"q1": {"d1": 1}, "q2": {"d3": 1}}
NEW = {"q1": {"d1": 1, "d2": 1, "d9": 0}, "q2": {"d3": 0, "d4": 1}}
RUNS = {
    "A": {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d4": 2.0, "d3": 1.0}},
    "B": {"q1": {"d1": 2.0, "d9": 1.0}, "q2": {"d3": 2.0, "d4": 1.0}},
    "C": {"q1": {"d9": 2.0, "d1": 1.0}, "q2": {"d3": 2.0, "d4": 1.0}},
}


def _runs() -> list[Run]:
    return [Run.from_dict(v, name=k) for k, v in RUNS.items()]


def test_hand_computed_delta_ranks_and_tau() -> None:
    d = relabel_delta(_runs(), Qrels.from_dict(OLD), Qrels.from_dict(NEW), ["mrr@10"])
    m = d["mrr@10"]
    # old: A (1/2 + 1/2)/2, B (1 + 1)/2, C (1/2 + 1)/2; new: A (1 + 1)/2, B (1 + 1/2)/2, C (1/2 + 1/2)/2
    expected = {"A": (0.5, 1.0, 3, 1), "B": (1.0, 0.75, 1, 2), "C": (0.75, 0.5, 2, 3)}
    for name, (old, new, r_old, r_new) in expected.items():
        row = m.row(name)
        assert math.isclose(row.old, old) and math.isclose(row.new, new), name
        assert math.isclose(row.delta, new - old)
        assert (row.rank_old, row.rank_new) == (r_old, r_new)
        assert row.rank_change == r_old - r_new
        assert (row.n_old, row.n_new) == (2, 2)
    assert m.order("old") == ("B", "C", "A") and m.order("new") == ("A", "B", "C")
    # pairs (A,B) and (A,C) swap, (B,C) keeps its order: (1 - 2) / 3
    assert math.isclose(m.kendall_tau, -1 / 3)
    ref = st.kendalltau([0.5, 1.0, 0.75], [1.0, 0.75, 0.5])
    assert math.isclose(m.kendall_tau, ref.statistic) and math.isclose(m.kendall_p, ref.pvalue)
    c = d.change
    assert (c.newly_judged, c.unjudged, c.regraded, c.became_relevant, c.became_irrelevant, c.queries_changed) == \
           (3, 0, 1, 2, 1, 2)


def test_a_query_that_gains_its_first_relevant_item_enters_the_mean() -> None:
    old = Qrels.from_dict({**OLD, "q3": {"d5": 0}})
    new = Qrels.from_dict({**OLD, "q3": {"d5": 1}})
    runs = {"A": Run.from_dict({**RUNS["A"], "q3": {"d5": 1.0}}), "B": Run.from_dict(RUNS["B"])}
    m = relabel_delta(runs, old, new, "mrr@10")["mrr@10"]
    a, b = m.row("A"), m.row("B")
    assert (a.n_old, a.n_new) == (2, 3) and (b.n_old, b.n_new) == (2, 3)
    assert math.isclose(a.old, 0.5) and math.isclose(a.new, (0.5 + 0.5 + 1.0) / 3)
    assert math.isclose(b.old, 1.0) and math.isclose(b.new, (1.0 + 1.0 + 0.0) / 3)  # q3 missing from B's run
    assert (a.rank_old, a.rank_new, b.rank_old, b.rank_new) == (2, 1, 1, 1)  # 2/3 each: a tie shares rank 1
    assert m.kendall_tau is None  # the new side is all ties


def test_a_query_new_to_the_qrels_but_in_the_runs_is_relabelled() -> None:
    # a TREC qrels file has no line for a query without judgments: its first positive comes with the new qrels
    old = Qrels.from_dict(OLD)
    new = Qrels.from_dict({**OLD, "q3": {"d5": 1}})
    runs = {"A": Run.from_dict({**RUNS["A"], "q3": {"d5": 1.0}}), "B": Run.from_dict(RUNS["B"])}
    d = relabel_delta(runs, old, new, "mrr@10")
    a = d.row("A", "mrr@10")
    assert (a.n_old, a.n_new) == (2, 3) and math.isclose(a.new, 2 / 3)
    assert d.change.n_queries == 3 and d.change.newly_judged == 1 and d.change.became_relevant == 1


def test_ties_share_the_better_rank_lower_is_better_and_undefined_tau() -> None:
    same = Qrels.from_dict(OLD)
    runs = [Run.from_dict(RUNS["B"], name="B"), Run.from_dict(RUNS["B"], name="B2"), Run.from_dict(RUNS["A"], name="A")]
    d = relabel_delta(runs, same, same, ["mrr@10", "median_rank"])
    m = d["mrr@10"]
    assert [(r.rank_old, r.rank_new) for r in m.rows] == [(1, 1), (1, 1), (3, 3)]
    assert all(r.delta == 0 for r in m.rows) and math.isclose(m.kendall_tau, 1.0)
    mr = d["median_rank"]  # B: rank 1 on both queries; A: rank 2 on both: lower is better
    assert mr.lower_is_better and [r.rank_old for r in mr.rows] == [1, 1, 3]
    assert kendall_tau([1.0, 1.0], [2.0, 3.0]) == (None, None)  # one side all ties
    assert kendall_tau([1.0, None], [2.0, 3.0]) == (None, None)  # fewer than two pairs


def test_hide_relevant_is_seeded_and_keeps_every_query() -> None:
    q = Qrels.from_dict({"a": {"1": 2, "2": 1, "3": 0}, "b": {"4": 1}, "c": {}})
    holed, hidden = hide_relevant(q, 0.5, seed=3)
    assert len(hidden) == 2 and all(q[x][d] >= 1 for x, d in hidden)
    assert list(holed) == ["a", "b", "c"] and holed["a"]["3"] == 0  # zeros are never hidden
    assert holed.n_entries == q.n_entries - 2
    assert hide_relevant(q, 0.5, seed=3) == (holed, hidden) and hide_relevant(q, 0.0, seed=3)[0] == q
    with pytest.raises(FinegrainError, match=r"fraction must be in \[0, 1\]"):
        hide_relevant(q, 1.5, seed=0)


def test_bad_input_is_one_clear_error() -> None:
    old, new = Qrels.from_dict(OLD), Qrels.from_dict(NEW)
    with pytest.raises(FinegrainError, match="judge 1 query that neither the old qrels nor any run has .*'q7'"):
        relabel_delta(_runs(), old, Qrels.from_dict({"q7": {"d1": 1}}), ["ndcg@10"])
    with pytest.raises(FinegrainError, match=r"unknown grade 5 in the new qrels \(query 'q1', document 'd2'\)"):
        relabel_delta(_runs(), old, Qrels.from_dict({"q1": {"d1": 1, "d2": 5}}), ["ndcg@10"])
    assert relabel_delta(_runs(), old, Qrels.from_dict({"q1": {"d2": 5}}), ["ndcg@10"], grades=[0, 1, 5])
    with pytest.raises(FinegrainError, match="retrieve for none of the 2 queries"):
        relabel_delta([Run.from_dict({"x": {"d1": 1.0}}, name="A")], old, new, ["ndcg@10"])
    with pytest.raises(FinegrainError, match="two runs are named 'A'"):
        relabel_delta([Run.from_dict(RUNS["A"], name="A")] * 2, old, new, ["ndcg@10"])
    with pytest.raises(FinegrainError, match="unknown metric"):
        relabel_delta(_runs(), old, new, ["ndgc@10"])
    with pytest.raises(FinegrainError, match="no metric"):
        relabel_delta(_runs(), old, new, [])
    with pytest.raises(FinegrainError, match="must be a finegrain Qrels"):
        relabel_delta(_runs(), OLD, new, ["ndcg@10"])  # type: ignore[arg-type]


def test_json_and_text() -> None:
    d = relabel_delta(_runs(), Qrels.from_dict(OLD), Qrels.from_dict(NEW), ["mrr@10", "ndcg@10"], old_label="o.txt",
                      new_label="n.txt")
    body = json.loads(json.dumps(d.to_json_dict()))
    assert body["schema"] == "finegrain.relabel/1" and body["qrels"] == {"old": "o.txt", "new": "n.txt"}
    row = body["by_metric"]["mrr@10"]["systems"]["A"]
    assert row == {"old": 0.5, "new": 1.0, "delta": 0.5, "rank_old": 3, "rank_new": 1, "n_old": 2, "n_new": 2}
    assert body["by_metric"]["mrr@10"]["order_new"] == ["A", "B", "C"]
    text = format_relabel(d)
    assert "Kendall's tau old vs new: -0.333" in text
    assert any(line.split() == ["A", "50.00", "100.00", "+50.00", "3", "->", "1", "(+2)"] for line in text.splitlines())


# --------------------------------------------------------------------------- the CLI


def _folder(tmp_path: Path, name: str, run: dict[str, dict[str, float]], qrels: Qrels) -> Path:
    r = Run.from_dict(run, name=name)
    ev = evaluate(qrels, r, ["mrr@10", "ndcg@10"])
    body = {**ev.to_json_dict(), "aggregation": ev.aggregation(),
            "provenance": {"dataset": {"name": "toy"}, "retriever": {"name": name}}}
    out = tmp_path / name
    write_results(out, body)
    save_run(out, r)
    return out


def _write_qrels(path: Path, q: dict[str, dict[str, int]]) -> Path:
    write_qrels(Qrels.from_dict(q), path)
    return path


def test_cli_compare_with_two_qrels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = Qrels.from_dict(OLD)
    dirs = [str(_folder(tmp_path, n, RUNS[n], old)) for n in RUNS]
    o, n = _write_qrels(tmp_path / "old.qrels", OLD), _write_qrels(tmp_path / "new.qrels", NEW)
    out = tmp_path / "delta.json"
    assert main(["compare", *dirs, "--qrels", str(o), "--qrels-new", str(n), "-m", "mrr@10", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Kendall's tau old vs new: -0.333" in text and "wrote" in text
    body = json.loads(out.read_text(encoding="utf-8"))
    assert body["by_metric"]["mrr@10"]["systems"]["C"]["rank_new"] == 3
    # without -m: every shared mean metric of the folders
    assert main(["compare", *dirs, "--qrels", str(o), "--qrels-new", str(n), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"] == ["mrr@10", "ndcg@10"]
    # --qrels alone, and bad new qrels: one line, non-zero
    assert main(["compare", *dirs, "--qrels", str(o)]) != 0
    assert "needs --qrels-new" in capsys.readouterr().err
    bad = _write_qrels(tmp_path / "bad.qrels", {"q1": {"d1": 3}})
    assert main(["compare", *dirs, "--qrels", str(o), "--qrels-new", str(bad)]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown grade 3" in err and "Traceback" not in err


# --------------------------------------------------------------------------- real data


def test_capretrieval_bm25_relabelling_with_the_hidden_labels(with_data_root: Path) -> None:
    ds = load_dataset("capretrieval/zh")
    run = get_retriever("bm25-okapi").retrieve(ds.corpus, ds.queries, lang=ds.lang, top_k=10, show_progress=False)
    holed, hidden = hide_relevant(ds.qrels, 0.1, seed=1)
    assert len(hidden) == round(0.1 * 4683)
    # "judging" the whole depth-10 pool of the run from the true labels (CapRetrieval is fully judged: unlisted = 0)
    judged = {q: dict(holed[q]) for q in holed}
    for q in run:
        for doc in run.ranked(q, 10):
            judged.setdefault(q, {}).setdefault(doc, ds.qrels[q].get(doc, 0) if q in ds.qrels else 0)
    relabelled = Qrels.from_dict(judged)
    d = relabel_delta([run], holed, relabelled, ["precision@10", "ndcg@10"])
    true = relabel_delta([run], holed, ds.qrels, ["precision@10", "ndcg@10"])
    p_new, p_true = d.row("bm25-okapi", "precision@10"), true.row("bm25-okapi", "precision@10")
    # precision@10 sees only the judged top 10, so its sum over queries is fully recovered; the mean is not quite:
    # a query whose positives were all hidden and none retrieved stays without a relevant item, so unscored
    assert math.isclose(p_new.new * p_new.n_new, p_true.new * p_true.n_new)
    assert p_new.n_old <= p_new.n_new <= p_true.n_new == 377
    assert p_new.delta > 0  # the hidden positives in the top 10 count again
    found = sum(1 for q, doc in hidden if relabelled[q].get(doc, 0) >= 1)
    in_top = sum(1 for q, doc in hidden if doc in run.ranked(q, 10))
    assert found == in_top > 0 and d.change.became_relevant == in_top
