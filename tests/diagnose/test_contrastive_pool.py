"""Contrastive-pool retrieval (CCD Tables 2/4), pair cosines (Fig. 5) and the CCD x category ablation table.

Hand-computed cases use an encoder that returns vectors written out in the test: query ``qa`` is
``e0`` and ``qb`` is ``e1``, so a candidate's first two coordinates *are* its scores against the two
queries; each candidate gets its own filler axis so rows have unit length and the cosine of two
candidates is the dot product of their first two coordinates. A brute-force sort is the reference
for the rank rule on random scores. The real-encoder figure (all-MiniLM-L6-v2 on the 83 SugarCrepe
pairs) runs on the shared data.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dense_fakes import BagOfWordsEncoder
from finegrain.cli.main import main
from finegrain.diagnose.contrastive import (
    UNMAPPED,
    ContrastRecord,
    ContrastScores,
    ablation_table,
    best_relevant_ranks,
    make_pair,
    pool_retrieval,
    run_contrast,
)
from finegrain.diagnose.contrastive.sugarcrepe import SUGARCREPE_CATEGORIES, sugarcrepe_pairs
from finegrain.errors import FinegrainError
from finegrain.results.probes import ContrastBootstrap, ContrastEncoder, PairsSource
from finegrain.retrieve.dense.encoders import registry

# the header finegrain contrast writes around the outcome's sections
HEADER = {"version": "0", "pairs": PairsSource(name="pairs.jsonl", path="pairs.jsonl", n_pairs=1),
          "encoder": ContrastEncoder(spec="fake"),
          "bootstrap": ContrastBootstrap(resamples=50, seed=0, confidence=0.95, unit="pair")}

# candidate -> (score vs qa, score vs qb)
CANDS = {"A": (0.9, 0.3), "A neg": (0.95, 0.1), "B": (0.1, 0.8), "B neg": (0.2, 0.5), "A2": (0.5, 0.2)}


class TableEncoder:
    """Vectors written out by hand: queries on the first two axes, candidates padded to unit length."""

    model_id = "test/table"
    builtin_prefixes = False
    dim = 2 + len(CANDS)

    def __init__(self) -> None:
        self.names = list(CANDS)
        self.calls: list[tuple[str, list[str]]] = []

    def config(self) -> dict[str, Any]:
        return {"adapter": "test", "model_id": self.model_id}

    def encode(self, texts: Sequence[str], *, kind: Any) -> np.ndarray:
        self.calls.append((kind, list(texts)))
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        for i, t in enumerate(texts):
            if t == "qa":
                out[i, 0] = 1.0
            elif t == "qb":
                out[i, 1] = 1.0
            else:
                x, y = CANDS[t]
                out[i, :2] = (x, y)
                out[i, 2 + self.names.index(t)] = math.sqrt(1.0 - x * x - y * y)
        return out.astype(np.float32)


def _pairs(extra: bool = False) -> list[Any]:
    ps = [make_pair("p1", "entity attribute", target_text="A", contrastive_text="A neg", queries=["qa"]),
          make_pair("p2", "scene type", target_text="B", contrastive_text="B neg", queries=["qb"])]
    if extra:
        ps.append(make_pair("p3", "my own", target_text="A2", contrastive_text="A neg", queries=["qa", "B"]))
    return ps


def test_rank_rule_counts_ties_against_the_target_and_ignores_inactive_candidates() -> None:
    scores = np.array([[0.5, 0.7, 0.5, 0.9],
                       [0.2, 0.1, 0.3, 0.3]])
    relevant = np.array([[True, False, False, False],
                         [False, True, True, False]])
    # row 0: best relevant 0.5; non-relevant >= 0.5: 0.7, 0.5 (tie), 0.9 -> 4; without column 3 -> 3
    # row 1: best relevant 0.3 (column 2); non-relevant >= 0.3: column 3 (tie) -> 2
    assert best_relevant_ranks(scores, relevant, np.ones(4, bool)).tolist() == [4, 2]
    assert best_relevant_ranks(scores, relevant, np.array([True, True, True, False])).tolist() == [3, 1]
    with pytest.raises(FinegrainError, match="no relevant candidate in the pool"):
        best_relevant_ranks(scores, relevant, np.array([False, True, False, True]))


def test_rank_rule_equals_a_brute_force_sort_on_random_scores() -> None:
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 6, (40, 9)).astype(float)  # many ties
    relevant = rng.random((40, 9)) < 0.25
    relevant[np.arange(40), rng.integers(0, 9, 40)] = True
    active = rng.random(9) < 0.7
    active[relevant.any(axis=0)] = True
    got = best_relevant_ranks(scores, relevant, active)
    for i in range(40):
        # pessimistic sort: score descending, non-relevant before relevant on a tie
        order = sorted((j for j in range(9) if active[j]), key=lambda j: (-scores[i, j], bool(relevant[i, j])))
        assert got[i] == 1 + next(n for n, j in enumerate(order) if relevant[i, j])


def test_pool_recall_change_and_pair_cosines_by_hand() -> None:
    rep = pool_retrieval(_pairs(), "text->text", TableEncoder(), ks=(1, 2), n_resamples=200)
    # qa: pool {A .9, B .1} -> 1; add A neg .95 -> 2.  qb: {B .8, A .3} -> 1; with B neg .5, A neg .1 -> 1
    assert [(u.item, u.query, u.rank_without, u.rank_with) for u in rep.units] == [("A", "qa", 1, 2),
                                                                                    ("B", "qb", 1, 1)]
    assert (rep.without.n_candidates, rep.with_negatives.n_candidates) == (2, 4)
    r1_without, r2_without = rep.without.recall
    r1_with, r2_with = rep.with_negatives.recall
    assert (r1_without.hits, r1_without.n, r1_without.value) == (2, 2, 1.0)
    assert (r1_with.hits, r1_with.value) == (1, 0.5)
    assert r2_with.value == 1.0 and r2_without.value == 1.0
    c1, c2 = rep.change
    assert (c1.k, c1.delta, c1.lost) == (1, -0.5, 1) and (c2.delta, c2.lost) == (0.0, 0)
    assert tuple(c2.ci) == (0.0, 0.0)
    # cos(A, A neg) = .9*.95 + .3*.1 = .885; cos(B, B neg) = .1*.2 + .8*.5 = .42
    by_cat = {c.name: c for c in rep.cosine_by_category}
    assert by_cat["entity attribute"].mean == pytest.approx(0.885)
    assert by_cat["scene type"].mean == pytest.approx(0.42)
    assert rep.cosine_overall.mean == pytest.approx((0.885 + 0.42) / 2)
    assert rep.cosine_overall.n_pairs == 2 and rep.cosine_overall.low == pytest.approx(0.42)
    assert [c.name for c in rep.cosine_by_ccd] == ["entity attribute", "scene type"]  # CCD's order


def test_an_items_other_targets_are_relevant_and_a_query_that_is_a_candidate_is_left_out() -> None:
    # p3 describes the same image as p1: its target A2 is relevant to p1's query and p1's target to p3's
    ps = _pairs(extra=True)
    ps = [make_pair(p.pair_id, p.category, target_text=p.target_text, contrastive_text=p.contrastive_text,
                    queries=p.queries, target_image="img1.jpg" if p.pair_id in ("p1", "p3") else "img2.jpg")
          for p in ps]
    rep = pool_retrieval(ps, "text->text", TableEncoder(), n_resamples=100)
    # units: (img1, qa) once although p1 and p3 both give it; (img1, "B") is left out: "B" is a candidate
    assert [(u.item, u.query, u.n_relevant) for u in rep.units] == [("img1.jpg", "qa", 2), ("img2.jpg", "qb", 1)]
    assert rep.n_excluded == 1 and rep.n_items == 2
    # qa: relevant A .9 / A2 .5, best .9; with negatives A neg .95 is above -> 2; B neg is a negative once
    assert [u.rank_with for u in rep.units] == [2, 1]
    assert rep.with_negatives.n_candidates == 5  # A, B, A2 + A neg, B neg (A neg shared by p1 and p3)


class TableImages(TableEncoder):
    """The same table for images: an image path names its vector ("qa"/"qb" as queries, "A", ... as candidates)."""

    def encode_images(self, paths: Sequence[str]) -> np.ndarray:
        self.calls.append(("image", list(paths)))
        return self.encode(paths, kind="image")


def test_cross_modal_directions_route_queries_and_candidates_to_the_right_encoder() -> None:
    enc = TableImages()
    # text->image: text queries, image candidates (A, A neg, ... as image paths)
    t2i = [make_pair("p1", "entity attribute", target_image="A", contrastive_image="A neg", queries=["qa"]),
           make_pair("p2", "scene type", target_image="B", contrastive_image="B neg", queries=["qb"])]
    rep = pool_retrieval(t2i, "text->image", enc, enc, n_resamples=100)
    assert [(u.rank_without, u.rank_with) for u in rep.units] == [(1, 2), (1, 1)]
    assert ("image", ["A", "B", "A neg", "B neg"]) in enc.calls
    assert rep.cosine_overall.mean == pytest.approx((0.885 + 0.42) / 2)
    # image->text: the target image is the query, texts are the candidates; one unit per image
    i2t = [make_pair("p1", "entity attribute", target_text="A", contrastive_text="A neg", target_image="qa"),
           make_pair("p2", "scene type", target_text="B", contrastive_text="B neg", target_image="qb")]
    rep = pool_retrieval(i2t, "image->text", enc, enc, n_resamples=100)
    assert [(u.item, u.rank_without, u.rank_with) for u in rep.units] == [("qa", 1, 2), ("qb", 1, 1)]
    with pytest.raises(FinegrainError, match="no pair supports direction text->image"):
        pool_retrieval(_pairs(), "text->image", enc, enc)


def test_pool_never_raises_recall_and_its_json_has_both_settings() -> None:
    words = ["red", "blue", "car", "dog", "cat", "green", "big", "small", "man", "horse"]
    rng = np.random.default_rng(0)
    ps = []
    for i in range(30):
        t = " ".join(rng.choice(words, 4))
        c = " ".join(rng.choice(words, 4))
        ps.append(make_pair(f"p{i}", ["entity type", "scene attribute"][i % 2], target_text=t,
                            contrastive_text=c, queries=[" ".join(rng.choice(words, 3)) + f" q{i}"]))
    out = run_contrast(ps, BagOfWordsEncoder(16), pool=True, n_resamples=200)
    rep = out.pools[0]
    for u in rep.units:
        assert u.rank_with >= u.rank_without
    for a, b in zip(rep.without.recall, rep.with_negatives.recall):
        assert b.value <= a.value
    body = out.to_results(**HEADER).to_json()
    pool = body["pool"]["directions"][0]
    assert {"without_negatives", "with_negatives", "change", "pair_cosine", "units"} <= set(pool)
    assert pool["with_negatives"]["recall@1"]["value"] == rep.with_negatives.recall[0].value
    assert "pool" not in run_contrast(ps, BagOfWordsEncoder(16), n_resamples=50).to_results(**HEADER).to_json()


def test_pairwise_and_pool_share_one_encoding_of_each_text() -> None:
    enc = TableEncoder()
    run_contrast(_pairs(), enc, pool=True, n_resamples=50)
    seen = [(kind, t) for kind, texts in enc.calls for t in texts]
    assert len(seen) == len(set(seen))


def _scores(rows: list[tuple[str, str, str | None, bool]]) -> ContrastScores:
    recs = tuple(ContrastRecord(pid, "text->text", f"q{i}", "t", "c", cat, ccd)
                 for i, (pid, cat, ccd, _) in enumerate(rows))
    ok = np.array([c for *_, c in rows])
    return ContrastScores("text->text", recs, np.where(ok, 1.0, 0.0), np.full(len(rows), 0.5))


def test_ablation_table_counts_pairs_units_and_keeps_empty_cells() -> None:
    s = _scores([("a", "swap", "entity attribute", True), ("a", "swap", "entity attribute", False),
                 ("b", "swap", "entity attribute", True), ("c", "add", "entity type", False),
                 ("d", "odd", None, True)])
    t = ablation_table(s, category_order=["swap", "add"], min_pairs=2)
    assert t.columns == ("swap", "add", "odd")
    assert t.rows[:9][0] == "entity type" and len(t.rows) == 10 and t.rows[-1] == UNMAPPED
    cell = t.cell("entity attribute", "swap")
    assert (cell.n_pairs, cell.n, cell.correct, cell.fg_cda) == (2, 3, 2, pytest.approx(2 / 3))
    assert not t.sparse(cell)  # 2 pairs, min_pairs=2
    one = t.cell("entity type", "add")
    assert (one.n_pairs, one.fg_cda) == (1, 0.0) and t.sparse(one)
    empty = t.cell("scene type", "swap")
    assert (empty.n_pairs, empty.n, empty.fg_cda) == (0, 0, None) and not t.sparse(empty)
    assert t.ccd_with_data == ("entity type", "entity attribute")
    assert [c.n_pairs for c in t.column_totals] == [2, 1, 1] and t.total.n == 5 and t.total.correct == 3
    d = t.saved()
    assert d.cells[1][0].n_pairs == 2 and d.cells[0][1].sparse is True
    assert d.n_ccd_categories == 9
    with pytest.raises(FinegrainError, match="no cell"):
        t.cell("entity type", "nope")
    with pytest.raises(FinegrainError, match="min_pairs"):
        ablation_table(s, min_pairs=0)


def test_cli_pool_prints_both_settings_the_cosines_and_the_ablation(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(registry, "get_encoder", lambda spec, **kw: TableEncoder())
    f = tmp_path / "pairs.jsonl"
    f.write_text("".join(json.dumps({"id": p.pair_id, "category": p.category, "target": p.target_text,
                                     "contrastive": p.contrastive_text, "queries": list(p.queries)}) + "\n"
                         for p in _pairs()), encoding="utf-8")
    assert main(["contrast", "--pairs", str(f), "--encoder", "x", "--pool", "--no-cache", "--resamples", "100",
                 "--out", str(tmp_path / "o"), "-q"]) == 0
    out = capsys.readouterr().out
    for text in ("contrastive-pool retrieval", "without negatives", "with negatives", "R@1", "R@5",
                 "mean cosine of the contrastive pairs", "CCD category x category", "2 of 9 CCD categories"):
        assert text in out, text
    body = json.loads((tmp_path / "o" / "results.json").read_text())
    p = body["pool"]["directions"][0]
    assert p["without_negatives"]["recall@1"]["value"] == 1.0 and p["with_negatives"]["recall@1"]["value"] == 0.5
    assert body["ablation"][0]["ccd_with_data"] == ["entity attribute", "scene type"]


def test_minilm_on_sugarcrepe_loses_r_at_1_when_the_negatives_join_the_pool(data_root: Path) -> None:
    """The real-encoder figure: all-MiniLM-L6-v2, 83 SugarCrepe pairs, text->text."""
    pytest.importorskip("sentence_transformers")
    from finegrain.retrieve.dense.encoders.registry import get_encoder

    pairs = sugarcrepe_pairs(data_root)
    out = run_contrast(pairs, get_encoder("minilm"), pool=True, category_order=SUGARCREPE_CATEGORIES,
                       n_resamples=1000)
    rep = out.pools[0]
    assert rep.n_units >= 50 and rep.n_items == 20
    r1_without, r1_with = rep.without.recall[0].value, rep.with_negatives.recall[0].value
    assert r1_with < r1_without - 0.1, (r1_without, r1_with)
    assert rep.change[0].ci.high < 0  # the drop is clear of zero
    table = out.ablations[0]
    assert table.ccd_with_data == ("entity type", "entity attribute", "entity relation", "event attribute")
    assert table.total.n_pairs == 83
