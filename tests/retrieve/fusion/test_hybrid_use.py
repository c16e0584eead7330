"""``hybrid-use``: bm25-okapi + e5 + e5-sparse + use-m3 fused as hybrid does; its CV grid over four parts."""

from __future__ import annotations

import pytest

from finegrain.errors import FinegrainError
from finegrain.experiment.tuning.cv import grid_points, tunables
from finegrain.retrieve.registry import RETRIEVERS, get_retriever


def test_hybrid_use_parts_and_options() -> None:
    h = get_retriever("hybrid-use")  # models load on first retrieval, not here
    assert h.name == "hybrid-use"
    assert [p.name for p in h.parts] == ["bm25-okapi", "e5", "e5-sparse", "use-m3"]
    assert h.fusion == "rrf" and h.k == 60 and h.weights is None
    assert RETRIEVERS.params("hybrid-use")["parts"].default == ("bm25-okapi", "e5", "e5-sparse", "use-m3")
    assert get_retriever("hybrid-use", **{"use-m3.threads": "1"}).parts[3].config()["model_id"].startswith("use-m3:")
    with pytest.raises(FinegrainError, match="weights"):
        get_retriever("hybrid-use", weights="1,1")  # two weights for four parts


def test_cv_grid_over_four_parts() -> None:
    """--cv tries every vector of multiples of 0.25 over the four parts (35) and four RRF k: 140 fusions."""
    by_key = {t.key: t for t in tunables("hybrid-use", {})}
    weights = by_key["weights"].values
    assert len(weights) == 35 and len(set(weights)) == 35
    for w in weights:
        assert len(w) == 4 and sum(w) == pytest.approx(1.0)
        assert all(x >= 0 and (4 * x) == pytest.approx(round(4 * x)) for x in w)
    assert (0.25, 0.25, 0.25, 0.25) in weights and (1.0, 0.0, 0.0, 0.0) in weights
    assert by_key["k"].values == (10.0, 30.0, 60.0, 100.0)
    assert len(grid_points(tuple(by_key.values()))) == 140
