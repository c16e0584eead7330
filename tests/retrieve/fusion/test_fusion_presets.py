"""``hybrid-use-k10``: hybrid-use with the fusion its 5-fold CV on capretrieval/zh agreed on, and the
provenance that makes a score on capretrieval/zh itself say it is in-sample."""

from __future__ import annotations

import pytest

from finegrain.experiment.run import in_sample_warning
from finegrain.retrieve.fusion.presets import HYBRID_USE_K10
from finegrain.retrieve.registry import RETRIEVERS, get_retriever


def test_hybrid_use_k10_fixes_the_consensus_settings_and_says_where_they_came_from() -> None:
    r = get_retriever("hybrid-use-k10")
    cfg = r.config()
    assert [p["name"] for p in cfg["parts"]] == ["bm25-okapi", "e5", "e5-sparse", "use-m3"]
    assert tuple(cfg["weights"]) == HYBRID_USE_K10["weights"] and cfg["k"] == HYBRID_USE_K10["k"] and cfg["fusion"] == "rrf"
    assert cfg["tuned_on"]["dataset"] == "capretrieval/zh" and "cross-validation" in cfg["tuned_on"]["method"]


def test_changing_a_tuned_setting_drops_the_tuning_provenance() -> None:
    assert "tuned_on" not in get_retriever("hybrid-use-k10", k=60).config()
    assert "tuned_on" not in get_retriever("hybrid-use-k10", weights=[1, 1, 1, 1]).config()


def test_a_score_on_the_tuning_dataset_is_labelled_in_sample() -> None:
    cfg = get_retriever("hybrid-use-k10").config()
    warning = in_sample_warning("hybrid-use-k10", cfg, "capretrieval/zh")
    assert warning is not None and warning.startswith("IN-SAMPLE") and "capretrieval/zh" in warning
    assert in_sample_warning("hybrid-use-k10", cfg, "capretrieval/en") is None
    assert in_sample_warning("hybrid", get_retriever("hybrid").config(), "capretrieval/zh") is None


def test_the_old_names_still_build_the_renamed_presets_with_a_deprecation_warning() -> None:
    for old, new in (("best-zh", "hybrid-use-k10"), ("best-zh-rerank", "hybrid-use-k10-coverage")):
        assert old in RETRIEVERS and old not in RETRIEVERS.names()  # usable, not listed
        with pytest.warns(FutureWarning, match=f"now called '{new}'") as caught:
            r = RETRIEVERS.build(old)
        assert r.name == new and len(caught) == 1  # one warning per build
