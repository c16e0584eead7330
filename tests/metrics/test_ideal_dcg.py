"""nDCG's ideal DCG from per-query grade counts equals the DCG of each query's judged grades sorted
descending, computed here by sorting, for narrow and wide grade ranges (the wide ones take the distinct
grades), negative and zero grades, every relevance level and cutoffs below, at and past the judgements."""

from __future__ import annotations

import math

import numpy as np
import pytest

from finegrain import Qrels, Run
from finegrain.metrics.join import join
from finegrain.metrics.ranking import _ideal_dcg


def _sorted_reference(qrels: dict[str, dict[str, int]], qids: tuple[str, ...], rel: int, k: int | None) -> list[float]:
    out = []
    for q in qids:
        grades = sorted((g for g in qrels.get(q, {}).values() if g >= rel), reverse=True)[:k]
        out.append(sum(g / math.log2(i + 2) for i, g in enumerate(grades)))
    return out


@pytest.mark.parametrize("spread", [4, 70, 5000])
@pytest.mark.parametrize("seed", range(4))
def test_ideal_dcg_is_the_dcg_of_the_sorted_grades(spread: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(-2, spread)) for d in rng.choice(60, int(rng.integers(1, 40)),
                                                                                   replace=False)}
             for q in range(int(rng.integers(1, 30)))}
    run = Run.from_dict({"q0": {"d0": 1.0}})
    joined = join(Qrels.from_dict(qrels), run)
    for rel in (1, 2, -1):
        for k in (1, 5, 10, 100, None):
            want = _sorted_reference(qrels, joined.qids, rel, k)
            assert np.allclose(_ideal_dcg(joined, rel, k), want, rtol=1e-12, atol=0)


def test_a_count_table_much_larger_than_the_judgements_is_not_built() -> None:
    """Many distinct grades over many queries: the counts would dwarf the judgements, so the ideal DCG
    comes from sorting them, and equals the reference."""
    qrels = {f"q{q}": {"d1": 10 * q + 1, "d2": 7 * q} for q in range(1200)}
    joined = join(Qrels.from_dict(qrels), Run.from_dict({"q0": {"d1": 1.0}}))
    assert joined.grade_counts(1) is None
    assert np.allclose(_ideal_dcg(joined, 1, 10), _sorted_reference(qrels, joined.qids, 1, 10), rtol=1e-12, atol=0)
