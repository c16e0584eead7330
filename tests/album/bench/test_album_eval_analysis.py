"""PhotoBench's analyses of an album evaluation: hand-computed slices on a tiny run, then album1 through
``finegrain album eval`` (--by dimension, --tools, --ablation) and the LLM planner against a local stub."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from finegrain.album.bench.analysis import ablation_row, complexity_table, dimension_rows, outcome_counts
from finegrain.album.bench.evaluation import METRICS, evaluate_album
from finegrain.cli.main import main
from finegrain.errors import FinegrainError
from finegrain.evaluate import evaluate
from finegrain.io.photobench import read_album
from llm_stub import chat_server

# --------------------------------------------------------------------------- hand-computed, tiny

SOURCES = {"q1": "M", "q2": "VM", "q3": "VMF", "q4": "V", "q5": "VMF"}
DIMS = {"q1": {"Location": "fact"}, "q2": {"Location": "cognitive"},
        "q3": {"Location": "fact", "Time": "cognitive"}, "q5": {"Object": "fact"}}  # q4 has no tags
QRELS = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {}, "q4": {"c": 1}, "q5": {"e": 1}}
RUN = {"q1": {"a": 1.0}, "q2": {}, "q3": {"x": 1.0}, "q4": {"c": 1.0, "d": 0.5}, "q5": {"e": 1.0, "f": 0.5}}
ZERO = frozenset({"q3"})


@pytest.fixture(scope="module")
def tiny():
    return evaluate(QRELS, RUN, list(METRICS), queries=list(SOURCES), query_types=SOURCES)


def test_dimension_rows_by_hand(tiny) -> None:
    rows = {(r.group, r.value): r for r in dimension_rows(tiny, DIMS, ZERO)}
    assert list(rows) == [("Location", "fact"), ("Location", "cognitive"), ("Time", "cognitive"),
                          ("Object", "fact"), ("any", "fact only"), ("any", "cognitive")]
    loc = rows[("Location", "fact")]  # q1 (F1 1) and q3 (zero GT, a missed rejection)
    assert (loc.n_queries, loc.n_zero_ground_truth) == (2, 1)
    assert (loc.metrics["set_f1"].value, loc.metrics["set_f1"].n) == (1.0, 1)
    assert (loc.metrics["reject_f1"].value, loc.metrics["reject_f1"].n) == (0.0, 1)  # 2A / (2A + B + C) = 0 / 1
    assert rows[("Location", "cognitive")].metrics["set_f1"].value == 0.0  # q2 abstained
    fact_only = rows[("any", "fact only")]  # q1 and q5, not q3 (it has a cognitive label) nor q4 (no label)
    assert fact_only.n_queries == 2 and fact_only.metrics["set_f1"].value == pytest.approx((1 + 2 / 3) / 2)
    assert rows[("any", "cognitive")].n_queries == 2


def test_complexity_by_hand(tiny) -> None:
    c = complexity_table(tiny, SOURCES, ZERO)
    single, dual, triple = c.levels
    assert single.set_f1.value == pytest.approx((1 + 2 / 3) / 2) and single.set_f1.n == 2
    assert dual.set_f1.value == 0.0 and (triple.n_queries, triple.n_zero_ground_truth, triple.set_f1.n) == (2, 1, 1)
    assert triple.set_f1.value == pytest.approx(2 / 3) and single.by_type["F"].n == 0 and single.by_type["F"].value is None
    d = {x.name: x for x in c.deltas}
    assert d["2-1"].relative_pct == pytest.approx(-100.0) and d["2-1"].points == pytest.approx(-5 / 6)
    assert d["3-2"].relative_pct is None and d["3-2"].points == pytest.approx(2 / 3)  # relative to F1 0: undefined
    assert d["3-1"].relative_pct == pytest.approx(100 * ((2 / 3) / (5 / 6) - 1))
    assert c.to_dict()["deltas"][0]["name"] == "2-1"


def test_ablation_row_and_outcome_counts(tiny) -> None:
    row = ablation_row("V,M", tiny, SOURCES, ZERO)
    assert list(row.by_source) == ["V", "M", "VM", "VMF"]  # the paper's order
    assert row.all.n == 4 and row.all.value == pytest.approx((1 + 0 + 2 / 3 + 2 / 3) / 4)
    assert (row.reject_f1.value, row.reject_f1.n) == (0.0, 2)  # q2 false rejection, q3 missed rejection
    counts = outcome_counts({"q1": "found", "q2": "visual_uncheckable", "q3": "found", "q4": "found"},
                            {"q1": "M", "q2": "VM", "q3": "VMF", "q4": "V"})
    assert list(counts) == ["V", "M", "VM", "VMF", "all"] and counts["all"] == {"found": 3, "visual_uncheckable": 1}


# --------------------------------------------------------------------------- album1 through the CLI


@pytest.fixture(scope="module")
def album1_mf(album_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("mf")
    return evaluate_album(album_dir, "en", out, tools="M,F"), out


def test_cli_by_dimension_prints_location_and_cognitive(album_dir, tmp_path, capsys) -> None:
    assert main(["album", "eval", "--photobench", str(album_dir), "--lang", "en", "--by", "dimension",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "location" in out and "cognitive" in out and "Table 9" in out and "Table 6" not in out
    saved = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    judged = read_album(album_dir).judged_queries
    for row in saved["by_dimension"]:
        if row["group"] != "any":
            assert row["n_queries"] == sum(q.dimensions.get(row["group"]) == row["value"] for q in judged)


def test_tools_mf_drops_the_visual_part(album1_mf) -> None:
    result, out = album1_mf
    assert result["settings"]["tools"] == "M,F"
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved["ablation"] == [] and saved["settings"]["tools"] == "M,F"
    kiosk = next(q for q in saved["per_query"] if q["query"].startswith("group photo of Chenyang"))
    assert any(step.startswith("tools M,F: dropped visual") for step, _ in kiosk["plan"]["explain"])
    assert all(q["outcome"]["kind"] != "visual_uncheckable" for q in saved["per_query"])
    for source, row in saved["outcomes"].items():
        n = sum(1 for q in saved["per_query"] if source in (q["source"], "all"))
        assert sum(row.values()) == n


def test_cli_tools_and_ablation(album_dir, tmp_path, capsys) -> None:
    assert main(["album", "eval", "--photobench", str(album_dir), "--lang", "cn", "--ablation",
                 "--by", "complexity", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Table 5" in out and "Δ2-1" in out
    saved = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert [r["tools"] for r in saved["ablation"]] == ["V", "V,M", "V,F", "V,M,F"]
    v_only = saved["ablation"][0]
    assert v_only["by_source"]["M"]["value"] == 0.0  # no metadata tool: M queries cannot be answered
    full = saved["ablation"][-1]
    assert full["by_source"]["M"]["value"] == saved["by_source"]["M"]["set_f1"]["value"]
    with pytest.raises(FinegrainError, match="unknown tool 'X'"):
        evaluate_album(album_dir, "en", tools="V,X")
    assert main(["album", "eval", "--photobench", str(album_dir), "--lang", "en", "--by", "dimensions"]) != 0


# --------------------------------------------------------------------------- the LLM planner end to end


def _plan_reply(query: str) -> str | int:
    """Valid plans for two queries, an unknown person for a third, HTTP 500 for the rest."""
    plan: dict[str, Any] = {"source": "M", "time_ranges": [], "places": [], "people": [], "event_words": [],
                            "visual_text": ""}
    if query == "photos in Yantian District":
        plan["places"] = ["Yantian District"]
    elif query == "photos from May 2024":
        plan["time_ranges"] = [{"start": "2024-05-01", "end": "2024-05-31", "text": "May 2024"}]
    elif query.startswith("photos with Weiwei"):
        plan["people"] = ["Nobody"]
    else:
        return 500
    return json.dumps(plan)


@pytest.fixture
def stub_llm() -> Iterator[str]:
    with chat_server(_plan_reply) as url:
        yield url


def test_llm_planner_end_to_end(album_dir, tmp_path, capsys, stub_llm) -> None:
    pytest.importorskip("pydantic")
    assert main(["album", "eval", "--photobench", str(album_dir), "--lang", "en", "--llm-url", stub_llm,
                 "--llm-model", "stub", "--by", "source", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "planned by: llm 2, rules 18 (of 20); LLM fallbacks: 18" in out
    saved = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert saved["settings"]["planner"] == "llm" and saved["settings"]["llm"]["model"] == "stub"
    by_query = {q["query"]: q for q in saved["per_query"]}
    yantian = by_query["photos in Yantian District"]
    assert yantian["planner"] == "llm" and yantian["fallback_reason"] is None and yantian["metrics"]["set_f1"] == 1.0
    weiwei = by_query["photos with Weiwei in April 2025"]
    assert weiwei["planner"] == "rules" and "'Nobody' is not a nickname" in weiwei["fallback_reason"]
    assert weiwei["metrics"]["set_f1"] == 1.0  # the rules' plan answered it
    reasons = saved["planners"]["fallback_reasons"]
    assert sum(reasons.values()) == 18 and any("HTTP 500" in r and n == 17 for r, n in reasons.items())


def test_llm_options_come_in_pairs(album_dir) -> None:
    assert main(["album", "eval", "--photobench", str(album_dir), "--lang", "en",
                 "--llm-url", "http://127.0.0.1:9/v1"]) != 0
