"""Deliverable 7 of issue 11, "the report people read": the saved grades of the top k (``judged``), the
headline metric rule, the forest plot and the histogram of per-query differences (numbers drawn = numbers
given), the drill-down data (escaped JSON), system labels in every table, and words shown as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from finegrain.errors import DataFormatError
from finegrain.evaluate.pipeline import judged_section
from finegrain.evaluate.saved import SavedResults
from finegrain.types import Qrels, Run


def _run(rankings: dict[str, list[str]]) -> Run:
    return Run.from_dict({q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in rankings.items()})


def _minimal(**extra: object) -> dict[str, object]:
    return {"aggregate": {"ndcg@10": 0.5}, "per_query": {"ndcg@10": {"q1": 0.5}}, **extra}


# --------------------------------------------------------------------------- judged


def test_judged_section_holds_the_grades_of_the_top_k_only() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 2, "b": 0, "z": 1}, "q2": {"c": 1}})
    run = _run({"q1": ["b", "x", "a", "z"], "q2": ["y"]})
    sec = judged_section(qrels, run, ["q1", "q2", "q3"], k=3)
    assert sec["grades"] == {"q1": {"b": 0, "a": 2}, "q2": {}, "q3": {}}  # z is rank 4: outside the top 3
    assert sec["n_relevant"] == {"q1": 2, "q2": 1, "q3": 0}
    saved = SavedResults.from_json(_minimal(judged=sec))
    assert saved.judged is not None and saved.judged.k == 3
    assert saved.judged.grade("q1", "a") == 2 and saved.judged.grade("q1", "x") is None
    assert SavedResults.from_json(saved.to_json()).judged == saved.judged  # round trip
    assert "judged" not in saved.extra


def test_fully_judged_reads_an_absent_document_as_zero() -> None:
    sec = judged_section(Qrels.from_dict({"q1": {"a": 1}}), _run({"q1": ["a", "x"]}), ["q1"], fully_judged=True)
    j = SavedResults.from_json(_minimal(judged=sec)).judged
    assert j is not None and j.grade("q1", "x") == 0 and j.grade("q1", "a") == 1


def test_older_files_without_judged_still_read_and_a_bad_section_is_refused() -> None:
    assert SavedResults.from_json(_minimal()).judged is None
    with pytest.raises(DataFormatError, match="judged"):
        SavedResults.from_json(_minimal(judged={"k": 10, "grades": {"q1": {"a": "two"}}}))
