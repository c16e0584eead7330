"""A fused run lists each query's documents by fused score, as every Run does (ranx's to_dict order)."""

from __future__ import annotations

import pytest

from finegrain.retrieve.fusion.methods import fuse

A = {"q": {"a": 3.0, "b": 2.0, "z": 1.0}}
B = {"q": {"z": 9.0, "b": 8.0, "c": 7.0}}


@pytest.mark.parametrize("method", ["rrf", "combsum", "combmnz", "combmax"])
def test_fused_to_dict_is_in_ranked_order(method: str) -> None:
    fused = fuse([A, B], method=method)
    docs = fused.to_dict()["q"]
    scores = list(docs.values())
    assert scores == sorted(scores, reverse=True), docs
    assert list(docs) == fused.ranked("q")


def test_rrf_puts_the_document_both_runs_rank_high_first() -> None:
    # rrf, k=60: b is 2nd in both (2/62); z is 3rd and 1st (1/63 + 1/61); a 1st in A only; c 3rd in B only
    assert list(fuse([A, B], method="rrf").to_dict()["q"]) == ["z", "b", "a", "c"]
