"""``best-zh``: hybrid-use with the fusion its 5-fold CV on capretrieval/zh agreed on, and the
provenance that makes a score on capretrieval/zh itself say it is in-sample."""

from __future__ import annotations

from finegrain.experiment.run import in_sample_warning
from finegrain.retrieve.fused import BEST_ZH
from finegrain.retrieve.registry import get_retriever


def test_best_zh_fixes_the_consensus_settings_and_says_where_they_came_from() -> None:
    r = get_retriever("best-zh")
    cfg = r.config()
    assert [p["name"] for p in cfg["parts"]] == ["bm25-okapi", "e5", "e5-sparse", "use-m3"]
    assert tuple(cfg["weights"]) == BEST_ZH["weights"] and cfg["k"] == BEST_ZH["k"] and cfg["fusion"] == "rrf"
    assert cfg["tuned_on"]["dataset"] == "capretrieval/zh" and "cross-validation" in cfg["tuned_on"]["method"]


def test_changing_a_tuned_setting_drops_the_tuning_provenance() -> None:
    assert "tuned_on" not in get_retriever("best-zh", k=60).config()
    assert "tuned_on" not in get_retriever("best-zh", weights=[1, 1, 1, 1]).config()


def test_a_score_on_the_tuning_dataset_is_labelled_in_sample() -> None:
    cfg = get_retriever("best-zh").config()
    warning = in_sample_warning("best-zh", cfg, "capretrieval/zh")
    assert warning is not None and warning.startswith("IN-SAMPLE") and "capretrieval/zh" in warning
    assert in_sample_warning("best-zh", cfg, "capretrieval/en") is None
    assert in_sample_warning("hybrid", get_retriever("hybrid").config(), "capretrieval/zh") is None
