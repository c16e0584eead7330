"""Local and global concept reports (Table 3 columns), and the ``finegrain concepts`` CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.diagnose.concepts.objects import ConceptObject, ObjectSet
from finegrain.diagnose.concepts.report import (
    explain_failures,
    global_report,
    local_report,
    render_global,
    render_local,
)


def objs(*synsets: str) -> ObjectSet:
    return ObjectSet(tuple(ConceptObject(f"{s}.n.01", (0, 0, 10, 10)) for s in synsets))


def test_local_report_counts_hits_misses_and_multiplicities() -> None:
    gt = objs("dog", "dog", "dog", "ball", "park", "tree")
    rt = objs("dog", "ball", "ball", "park", "cat")
    r = local_report(gt, rt)
    assert (r.object_hit, r.object_miss) == (3, 1)          # dog, ball, park found; tree missed
    assert r.matched_synset_pct == pytest.approx(75.0)
    assert (r.same_multiplicity, r.different_multiplicity) == (1, 2)  # park same; dog 3/1, ball 1/2
    assert r.enum_disagreement_pct == pytest.approx(50.0)     # 2 of 4 ground-truth synsets
    assert r.comparison.scores.ce == 3
    d = r.to_dict()
    assert d["gt_only"] == ["tree.n.01"] and d["retrieved_only"] == ["cat.n.01"]
    json.dumps(d)  # serialisable


def test_global_report_pools_and_averages_over_defined_values() -> None:
    failures = [
        (objs("dog", "ball", "park"), objs("dog", "frisbee", "park"), None),   # CA 2/3, NCS defined
        (objs(*["dog"] * 10, "frisbee"), objs("dog", "frisbee"), None),       # CA 1, NCS undefined, CE 9
        (objs("cat"), objs("fish"), None),                                    # CA 0, no common: SD undefined
    ]
    reps, g = explain_failures(failures)
    assert g.n_failures == 3
    assert g.ca == pytest.approx((2 / 3 + 1 + 0) / 3) and g.n_ca == 3
    assert g.n_ncs == 2
    assert g.ncs == pytest.approx((reps[0].comparison.scores.ncs + reps[2].comparison.scores.ncs) / 2)
    assert g.ce == pytest.approx(3.0) and g.ce_mode == 0
    assert g.n_sd == 2 and g.sd_binary == 0.0
    assert (g.object_hit, g.object_miss) == (4, 2)
    assert g.matched_synset_pct == pytest.approx(400 / 6)
    assert (g.same_multiplicity, g.different_multiplicity) == (3, 1)
    assert g.enum_disagreement_pct == pytest.approx((0 + 50 + 0) / 3)
    assert (g.ncs_pairs, g.non_common_synsets) == (2, 4)
    assert g.ncs_matched_pct == pytest.approx(50.0)
    assert global_report(reps) == g
    json.dumps(g.to_dict())


def test_global_report_of_nothing() -> None:
    g = global_report([])
    assert g.n_failures == 0 and g.ca is None and g.matched_synset_pct is None


def test_renderers_produce_tables() -> None:
    from rich.console import Console

    console = Console(record=True, width=120)
    for t in render_local(local_report(objs("dog", "ball"), objs("dog", "frisbee"), "a dog and a ball")):
        console.print(t)
    console.print(render_global(explain_failures([(objs("dog"), objs("cat"), None)])[1]))
    text = console.export_text()
    assert "query-informed" in text and "matched synsets %" in text and "object miss" in text


# ---------------------------------------------------------------- CLI

def write(path: Path, *synsets: str, box: list[float] | None = None) -> Path:
    path.write_text(json.dumps({"objects": [{"synset": s, "bbox": box or [0, 0, 10, 10]} for s in synsets]}))
    return path


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["concepts", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_json_has_exactly_the_five_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = write(tmp_path / "g.json", "dog.n.01", "ball.n.01", "park.n.01")
    r1 = write(tmp_path / "r1.json", "dog.n.01", "frisbee.n.01", "park.n.01")
    r2 = write(tmp_path / "r2.json", "dog.n.01", "cat.n.01", "park.n.01")
    a = run_json(capsys, "--ground-truth", str(g), "--retrieved", str(r1))
    b = run_json(capsys, "--ground-truth", str(g), "--retrieved", str(r2))
    assert set(a) == {"ca", "ncs", "ce", "sd", "sd_binary"}
    assert a["ca"] == pytest.approx(2 / 3) and a["ncs"] > b["ncs"]
    g2 = write(tmp_path / "g2.json", *["dog.n.01"] * 10, "frisbee.n.01")
    r3 = write(tmp_path / "r3.json", "dog.n.01", "frisbee.n.01")
    assert run_json(capsys, "-g", str(g2), "--retrieved", str(r3))["ce"] == 9


def test_cli_query_and_threshold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = write(tmp_path / "g.json", "dog.n.01", "tree.n.01")
    r = tmp_path / "r.json"
    r.write_text(json.dumps({"objects": [{"synset": "dog.n.01", "bbox": [0, 0, 15, 10]},
                                         {"synset": "car.n.01", "bbox": [0, 0, 1, 1]}]}))
    out = run_json(capsys, "-g", str(g), "--retrieved", str(r), "--query", "a dog on the grass")
    assert out["ca"] == 1.0 and out["ncs"] is None and out["sd"] == pytest.approx(0.5)
    assert out["sd_binary"] == 0.0
    assert run_json(capsys, "-g", str(g), "--retrieved", str(r), "--td", "0.5")["sd_binary"] == 1.0


def test_cli_table_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = write(tmp_path / "g.json", "dog.n.01", "ball.n.01")
    r = write(tmp_path / "r.json", "dog.n.01", "frisbee.n.01")
    assert main(["concepts", "-g", str(g), "--retrieved", str(r)]) == 0
    out = capsys.readouterr().out
    assert "NCS matching" in out and "ball.n.01" in out and "frisbee.n.01" in out and "object hit" in out


def test_cli_bad_file_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = write(tmp_path / "g.json", "dog.n.01")
    bad = write(tmp_path / "bad.json", "dgo.n.01")
    assert main(["concepts", "-g", str(g), "--retrieved", str(bad), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: ") and "bad.json" in captured.err and "dgo.n.01" in captured.err
    assert "Traceback" not in captured.err
