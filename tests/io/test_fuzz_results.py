"""The saved-results fuzz targets: their seeds are read as the reference reads them, and their oracles can fail."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from finegrain.testing import fuzz_refs as ref
from finegrain.testing.fuzz import Invalid, Target, classify
from finegrain.testing.fuzz_results import STALE, results_targets


def _target(name: str) -> Target:
    return next(t for t in results_targets() if t.name == name)


@pytest.mark.parametrize("target", results_targets(), ids=lambda t: t.name)
def test_every_seed_is_read_as_the_reference_reads_it(target: Target, tmp_path: Path) -> None:
    for seed in target.seeds:
        assert classify(target, seed, tmp_path) == ("ok", "")


def _edited(data: bytes, change: dict) -> bytes:
    body = json.loads(data)
    for path, value in change.items():
        node = body
        *head, last = path
        for key in head:
            node = node[key]
        node[last] = value
    return json.dumps(body).encode()


@pytest.mark.parametrize("change", [
    {("aggregate", "ndcg@10"): 1.5},  # a fraction past 1
    {("aggregate", "ndcg@10"): "0.5"},  # a string number
    {("per_query", "recall@5", "q01"): -0.25},
    {("by_type", "entity", "ndcg@10", "n"): True},  # a bool count
    {("curves", "ndcg", "\ufeff"): 0.5},  # a cutoff that is no whole number
])
def test_the_eval_reference_refuses_what_the_format_forbids(change: dict) -> None:
    seed = _target("compare-eval").seeds[0]["results.json"]
    ref.eval_results_reference(seed)  # the seed itself is valid
    with pytest.raises(Invalid):
        ref.eval_results_reference(_edited(seed, change))


def test_a_reader_that_takes_a_percent_score_is_a_misparse(tmp_path: Path) -> None:
    target = _target("compare-mteb")
    data = _edited(target.seeds[0]["mteb.json"], {("scores", "test", 0, "ndcg_at_10"): 83.6})
    assert classify(target, {"mteb.json": data}, tmp_path)[0] == "error"  # refused, with the hint
    lenient = Target("lenient", target.seeds, lambda p: ref.mteb_key("ndcg_at_10") and {"ndcg@10": 83.6},
                     target.oracle)
    assert classify(lenient, {"mteb.json": data}, tmp_path)[0] == "misparse"


def _run_variant(seed: bytes, stale: bool) -> bytes:
    """The seed run with one line added, so that the target keeps (stale) or updates the run's record."""
    for i in range(10_000):
        run = seed.rstrip(b"\n") + f"\nqx Q0 dx 1 {i}.5 tag\n".encode()
        if (hashlib.sha256(run).digest()[0] < STALE) == stale:
            return run
    raise AssertionError("no variant found")


def test_a_run_that_does_not_match_its_record_is_refused_and_a_recorded_one_is_listed(tmp_path: Path) -> None:
    target = _target("report-run-trec")
    seed = target.seeds[0]
    recorded = {**seed, "run.trec": _run_variant(seed["run.trec"], stale=False)}
    assert classify(target, recorded, tmp_path) == ("ok", "")
    stale = {**seed, "run.trec": _run_variant(seed["run.trec"], stale=True)}
    outcome, detail = classify(target, stale, tmp_path)
    assert outcome == "error" and "recorded in results.json" in detail
