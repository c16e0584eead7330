"""FG-CDA / FG-CDE: hand-computed accuracies, grouping, taxonomy mapping, bootstrap over pairs."""

from __future__ import annotations

import numpy as np
import pytest

from finegrain.compare.stats import bootstrap_ci
from finegrain.diagnose.contrastive import (
    CCD_CATEGORIES,
    CCD_GROUPS,
    SUGARCREPE_MAPPING_NOTES,
    SUGARCREPE_TO_CCD,
    ContrastRecord,
    ContrastScores,
    canonical_ccd,
    default_directions,
    expand,
    make_pair,
    pair_bootstrap_ci,
    report,
    run_contrast,
    score,
)
from finegrain.diagnose.contrastive.sugarcrepe import SUGARCREPE_CATEGORIES
from finegrain.errors import FinegrainError
from finegrain.results.probes import ContrastBootstrap, ContrastEncoder, PairsSource

# the header finegrain contrast writes around the outcome's sections
HEADER = {"version": "0", "pairs": PairsSource(name="pairs.jsonl", path="pairs.jsonl", n_pairs=1),
          "encoder": ContrastEncoder(spec="fake"),
          "bootstrap": ContrastBootstrap(resamples=50, seed=0, confidence=0.95, unit="pair")}


class TableEncoder:
    """Texts -> fixed unit vectors from a table (kind ignored), and images likewise by path."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = {k: np.asarray(v, dtype=np.float32) / np.linalg.norm(v) for k, v in table.items()}
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def encode(self, texts, *, kind):
        self.calls.append((kind, tuple(texts)))
        return np.stack([self.table[t] for t in texts])

    def encode_images(self, paths):
        self.calls.append(("image", tuple(paths)))
        return np.stack([self.table[p] for p in paths])


def _scores(rows: list[tuple[str, str, str | None, float, float]]) -> ContrastScores:
    """(pair_id, category, ccd, target score, contrastive score) -> ContrastScores."""
    recs = tuple(ContrastRecord(p, "text->text", f"q{i}", "t", "c", cat, ccd) for i, (p, cat, ccd, _, _) in enumerate(rows))
    return ContrastScores("text->text", recs, np.array([r[3] for r in rows]), np.array([r[4] for r in rows]))


def test_accuracy_per_category_group_and_overall_by_hand():
    rows = [
        # pair, category, ccd, S(q, target), S(q, contrastive)
        ("p1", "add_att", "entity attribute", 0.9, 0.5),   # correct
        ("p1", "add_att", "entity attribute", 0.4, 0.6),   # wrong
        ("p2", "replace_att", "entity attribute", 0.7, 0.7),  # tie: wrong
        ("p3", "replace_obj", "entity type", 0.8, 0.1),    # correct
        ("p3", "replace_obj", "entity type", 0.8, 0.2),    # correct
        ("p4", "swap_obj", "event attribute", 0.3, 0.2),   # correct
        ("p5", "mine", None, 0.1, 0.9),                    # wrong, unmapped
    ]
    rep = report(_scores(rows), n_resamples=200)
    assert rep.overall.n == 7 and rep.overall.n_pairs == 5
    assert rep.overall.correct == 4 and rep.overall.ties == 1
    assert rep.overall.accuracy == pytest.approx(4 / 7)
    assert rep.overall.fg_cde == pytest.approx(3 / 7)
    by_cat = {a.name: a for a in rep.by_category}
    assert [a.name for a in rep.by_category] == sorted(by_cat)
    assert by_cat["add_att"].accuracy == 0.5 and by_cat["add_att"].n == 2 and by_cat["add_att"].n_pairs == 1
    assert by_cat["replace_att"].accuracy == 0.0 and by_cat["replace_att"].ties == 1
    assert by_cat["replace_obj"].accuracy == 1.0
    by_ccd = {a.name: a for a in rep.by_ccd}
    assert list(by_ccd) == ["entity type", "entity attribute", "event attribute"]  # CCD Table-5 order
    assert by_ccd["entity attribute"].accuracy == pytest.approx(1 / 3) and by_ccd["entity attribute"].n_pairs == 2
    by_group = {a.name: a for a in rep.by_group}
    assert by_group["entity"].n == 5 and by_group["entity"].correct == 3  # pooled over units, not a mean of means
    assert by_group["event"].accuracy == 1.0
    assert rep.unmapped == 1
    assert by_ccd["entity type"].mean_margin == pytest.approx(((0.8 - 0.1) + (0.8 - 0.2)) / 2)
    d = rep.saved()
    assert d.overall.fg_cda + d.overall.fg_cde == pytest.approx(1.0)


def test_category_order_is_respected():
    rows = [("a", "swap_obj", None, 1, 0), ("b", "add_att", None, 1, 0), ("c", "zzz", None, 0, 1)]
    rep = report(_scores(rows), category_order=["swap_obj", "add_att", "not-present"], n_resamples=10)
    assert [a.name for a in rep.by_category] == ["swap_obj", "add_att", "zzz"]


def test_score_dot_products_and_directions_against_numpy():
    table = {"q1": [1, 0, 0], "q2": [0, 1, 0], "t": [1, 1, 0], "c": [0, 1, 1], "img_t": [1, 0.2, 0], "img_c": [0, 0, 1]}
    enc = TableEncoder(table)
    p = make_pair("p", "entity type", target_text="t", contrastive_text="c", queries=["q1", "q2"],
                  target_image="img_t", contrastive_image="img_c")
    assert p.directions() == ("text->text", "text->image", "image->text")
    tt = score(expand([p], "text->text"), enc)
    unit = {k: np.asarray(v, float) / np.linalg.norm(v) for k, v in table.items()}
    np.testing.assert_allclose(tt.target, [unit["q1"] @ unit["t"], unit["q2"] @ unit["t"]], rtol=1e-6)
    np.testing.assert_allclose(tt.contrastive, [unit["q1"] @ unit["c"], unit["q2"] @ unit["c"]], rtol=1e-6)
    assert tt.correct.tolist() == [True, False]  # q2 is equally close to t and c: a tie fails
    # queries encoded as queries, candidates as passages, each distinct text once
    assert ("query", ("q1", "q2")) in enc.calls and ("passage", ("t", "c")) in enc.calls
    ti = score(expand([p], "text->image"), enc, enc)
    np.testing.assert_allclose(ti.target, [unit["q1"] @ unit["img_t"], unit["q2"] @ unit["img_t"]], rtol=1e-6)
    it = score(expand([p], "image->text"), enc, enc)
    assert len(it.records) == 1 and it.records[0].query == "img_t"
    np.testing.assert_allclose(it.target, [unit["img_t"] @ unit["t"]], rtol=1e-6)
    with pytest.raises(FinegrainError, match="image encoder"):
        score(expand([p], "image->text"), enc)


def test_default_directions_and_run_contrast_skips():
    text_only = make_pair("a", "x", target_text="t", contrastive_text="c", queries=["q"])
    with_image = make_pair("b", "x", target_text="t", contrastive_text="c", queries=["q"], target_image="i")
    assert default_directions([text_only], has_images=False) == ("text->text",)
    assert default_directions([text_only, with_image], has_images=True) == ("image->text",)
    enc = TableEncoder({"t": [1, 0], "c": [0, 1], "q": [1, 0.1], "i": [0.2, 1]})
    out = run_contrast([text_only, with_image], enc, enc, n_resamples=50)
    assert [r.direction for r in out.reports] == ["image->text"]
    assert "text->image" in out.skipped
    assert out.reports[0].overall.accuracy == 0.0  # image i is closer to c
    with pytest.raises(FinegrainError, match="no pair supports direction text->image"):
        run_contrast([text_only], enc, enc, directions=["text->image"])
    body = out.to_results(**HEADER).to_json()
    assert body["records"]["image->text"][0]["correct"] is False


def test_ccd_taxonomy_names_and_aliases():
    assert len(CCD_CATEGORIES) == 9 and set(CCD_GROUPS) == set(CCD_CATEGORIES)
    assert set(CCD_GROUPS.values()) == {"entity", "scene", "event", "style & presentation"}
    assert canonical_ccd("Entity_Attribute") == "entity attribute"
    assert canonical_ccd("Event/Action Type") == "event type"
    assert canonical_ccd("S&P") == "style & presentation"
    assert canonical_ccd("emotion") == "entity emotion"
    assert canonical_ccd("add_att") is None


def test_sugarcrepe_mapping_covers_all_seven_categories():
    assert set(SUGARCREPE_TO_CCD) == set(SUGARCREPE_CATEGORIES) and len(SUGARCREPE_CATEGORIES) == 7
    assert set(SUGARCREPE_MAPPING_NOTES) == set(SUGARCREPE_CATEGORIES)
    assert all(v in CCD_CATEGORIES for v in SUGARCREPE_TO_CCD.values())
    assert SUGARCREPE_TO_CCD["replace_rel"] == "entity relation"
    assert SUGARCREPE_TO_CCD["swap_obj"] == "event attribute"
    p = make_pair("x", "swap_att", target_text="t", contrastive_text="c", queries=["q"], mapping=SUGARCREPE_TO_CCD)
    assert p.ccd_category == "entity attribute"
    with pytest.raises(FinegrainError, match="not a CCD category"):
        make_pair("x", "mine", ccd_category="colourfulness")


def test_pair_bootstrap_equals_plain_bootstrap_of_pair_means():
    rng = np.random.default_rng(3)
    correct = rng.random(40 * 4) < 0.7
    pairs = np.repeat([f"p{i:02d}" for i in range(40)], 4)
    got = pair_bootstrap_ci(correct, pairs, n_resamples=2000, seed=5)
    pair_means = correct.reshape(40, 4).mean(axis=1)
    ref = bootstrap_ci(pair_means, n_resamples=2000, seed=5)
    assert got.low == pytest.approx(ref.low, abs=1e-12) and got.high == pytest.approx(ref.high, abs=1e-12)
    # one unit per pair: the ordinary bootstrap of the mean
    one = pair_bootstrap_ci(correct[:50], [str(i) for i in range(50)], n_resamples=500, seed=1)
    assert tuple(one) == pytest.approx(tuple(bootstrap_ci(correct[:50].astype(float), n_resamples=500, seed=1)))


def test_pair_bootstrap_unequal_pairs_is_ratio_of_sums():
    # pair a: 3/3 correct, pair b: 0/1 -> drawing {a, b} gives 3/4, not the mean of means 1/2
    correct = np.array([1, 1, 1, 0], bool)
    pairs = ["a", "a", "a", "b"]
    lo, hi = pair_bootstrap_ci(correct, pairs, n_resamples=4000, seed=0, confidence=0.5)
    possible = {0.0, 0.75, 1.0}
    assert lo in possible and hi in possible and lo <= 0.75 <= hi
    assert pair_bootstrap_ci(np.ones(5, bool), list("abcde")) == (1.0, 1.0)
    with pytest.raises(FinegrainError):
        pair_bootstrap_ci(np.ones(3, bool), ["a", "b"])
