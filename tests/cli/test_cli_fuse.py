"""``finegrain fuse``: fused runs from folders and files, weights by k-fold CV, clear errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from finegrain.cli.list_cmd import catalogue
from finegrain.cli.main import app, main
from finegrain.datasets import load_dataset
from finegrain.io.trec import write_qrels, write_run
from finegrain.results.files import read_any_run, write_results
from finegrain.results.saved import SavedResults
from finegrain.retrieve.fusion.methods import fuse
from finegrain.types import Qrels, Run

runner = CliRunner()


def _runs(tmp_path: Path) -> tuple[Path, Path, Path]:
    a = Run.from_dict({f"q{i}": {"d1": 3.0, "d2": 2.0, f"x{i}": 1.0} for i in range(6)}, name="a")
    b = Run.from_dict({f"q{i}": {"d2": 5.0, f"x{i}": 4.0, "d1": 0.5} for i in range(6)}, name="b")
    qrels = Qrels.from_dict({f"q{i}": {f"x{i}": 1} for i in range(6)})
    pa, pq = tmp_path / "a.trec", tmp_path / "qrels.trec"
    write_run(a, pa)
    (tmp_path / "b").mkdir()
    write_run(b, tmp_path / "b" / "run.trec")  # a results folder holds run.trec
    write_qrels(qrels, pq)
    return pa, tmp_path / "b", pq


def test_fuse_writes_the_fused_run_of_files_and_folders(tmp_path: Path) -> None:
    pa, pb, _ = _runs(tmp_path)
    res = runner.invoke(app, ["fuse", str(pa), str(pb), "--method", "wsum", "--set", "weights=1,3", "-o", str(tmp_path / "f")])
    assert res.exit_code == 0, res.output
    got = read_any_run(tmp_path / "f")
    want = fuse([read_any_run(pa), read_any_run(pb)], "wsum", weights=[1, 3])
    assert got.to_dict() == want.to_dict()
    assert got.to_dict()["q0"] != read_any_run(pa).to_dict()["q0"]


def test_fuse_cv_prints_weights_per_fold_and_saves_the_held_out_run(tmp_path: Path) -> None:
    pa, pb, pq = _runs(tmp_path)
    res = runner.invoke(app, ["fuse", str(pa), str(pb), "--method", "wsum", "--cv", "3", "--qrels", str(pq),
                              "--cv-metric", "mrr", "-o", str(tmp_path / "cv")])
    assert res.exit_code == 0, res.output
    assert len(re.findall(r"^  fold \d: weights \(", res.output, re.M)) == 3 and "held-out mrr over all queries: " in res.output
    assert len(read_any_run(tmp_path / "cv")) == 6


def test_fuse_refuses_bad_options_with_one_line(tmp_path: Path) -> None:
    pa, pb, pq = _runs(tmp_path)
    for args, needle in (
        (["--cv", "3"], "--qrels"),
        (["--cv", "3", "--qrels", str(pq), "--set", "weights=1,2"], "--set weights="),
        (["--set", "weights=1,x"], "weights"),
        (["--method", "borda"], "fusion method"),
        (["--method", "combsum", "--set", "weights=1,2"], "takes no 'weights'"),
        (["--set", "depth"], "KEY=VALUE"),
        (["--seed", "3"], "--seed goes with --cv"),
        (["--cv-metric", "mrr"], "--cv-metric goes with --cv"),
        (["--cv", "1", "--qrels", str(pq)], "fewer than 2 folds"),
    ):
        res = runner.invoke(app, ["fuse", str(pa), str(pb), "-o", str(tmp_path / "x"), *args])
        assert res.exit_code != 0 and needle in res.output, (args, res.output)
        assert "Traceback" not in res.output


def test_fuse_set_takes_every_parameter_list_fusion_shows(tmp_path: Path) -> None:
    pa, pb, _ = _runs(tmp_path)
    values = {"weights": "1,3", "k": "10", "norm": "zscore", "depth": "2"}
    for entry in catalogue("fusion"):
        sets = [f"{key}={values[key]}" for key in entry["params"]]
        res = runner.invoke(app, ["fuse", str(pa), str(pb), "--method", entry["name"],
                                  *[a for kv in sets for a in ("--set", kv)], "-o", str(tmp_path / entry["name"])])
        assert res.exit_code == 0, (entry["name"], res.output)
        given = {key: [float(v) for v in values[key].split(",")] if key == "weights" else values[key]
                 for key in entry["params"]}
        given = {k: float(v) if k == "k" else int(v) if k == "depth" else v for k, v in given.items()}
        want = fuse([read_any_run(pa), read_any_run(pb)], entry["name"], **given)
        assert read_any_run(tmp_path / entry["name"]).to_dict() == want.to_dict(), entry["name"]


def test_fuse_s_retired_spellings_still_fuse_with_one_warning_each(tmp_path: Path) -> None:
    pa, pb, pq = _runs(tmp_path)
    old = runner.invoke(app, ["fuse", str(pa), str(pb), "--method", "rrf", "--weights", "1,3", "--rrf-k", "10",
                              "--depth", "2", "-o", str(tmp_path / "old")])
    new = runner.invoke(app, ["fuse", str(pa), str(pb), "--method", "rrf", "--set", "weights=1,3", "--set", "k=10",
                              "--set", "depth=2", "-o", str(tmp_path / "new")])
    assert old.exit_code == new.exit_code == 0, old.output
    assert read_any_run(tmp_path / "old").to_dict() == read_any_run(tmp_path / "new").to_dict()
    warnings = [line for line in old.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: --weights is retired, write --set weights=1,3 (--weights stops working in the next release)",
        "warning: --rrf-k is retired, write --set k=10 (--rrf-k stops working in the next release)",
        "warning: --depth is retired, write --set depth=2 (--depth stops working in the next release)",
    ]
    assert "warning" not in new.stderr
    cv = runner.invoke(app, ["fuse", str(pa), str(pb), "--method", "wsum", "--cv", "3", "--qrels", str(pq),
                             "-m", "mrr", "-o", str(tmp_path / "cv-old")])
    assert cv.exit_code == 0 and "held-out mrr over all queries: " in cv.stdout  # -m: the metrics; --cv maximises the first
    assert not [line for line in cv.stderr.splitlines() if line.startswith("warning:")]


def test_a_saved_run_gets_back_the_queries_that_retrieved_nothing(tmp_path: Path) -> None:
    from finegrain import evaluate

    pa, _, _ = _runs(tmp_path)
    run = read_any_run(pa)
    folder = tmp_path / "saved"
    folder.mkdir()
    write_run(run, folder / "run.trec")
    qrels = Qrels.from_dict({**{q: {"x0": 1} for q in run.qids}, "q-empty": {"x0": 1}})
    write_results(folder, SavedResults.coerce(evaluate(qrels, run, ["mrr"])))
    back = read_any_run(folder)
    assert back.qids == (*run.qids, "q-empty") and back.ranked("q-empty") == []
    assert back.renamed("x").name == "x" and back.renamed("x").to_dict() == back.to_dict()


def test_fuse_refuses_bad_numbers_and_out_of_range_options_with_one_line(tmp_path: Path, capsys) -> None:
    pa, pb, _ = _runs(tmp_path)
    for args in (["--set", "k=1e20"], ["--set", "weights=1,1e300"], ["--set", "weights=1_0,1"], ["--set", "k=1_0"],
                 ["--set", "depth=１０"], ["--set", "depth=0"], ["--cv", "3", "--seed", "1e3"]):
        code = main(["fuse", str(pa), str(pb), "-o", str(tmp_path / "x"), *args])
        err = capsys.readouterr().err
        assert code == 2, (args, err)
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, (args, err)
        assert not (tmp_path / "x").exists()


# --------------------------------------------------------------------------- a fused run as a results folder


def _eval_folders(tmp_path: Path) -> tuple[Path, Path]:
    out = []
    for r in ("bm25-okapi", "bm25"):
        d = tmp_path / r
        assert main(["eval", "-d", "embedded/captions-en", "-r", r, "-m", "ndcg@10,recall@10", "-o", str(d), "-q"]) == 0
        out.append(d)
    return out[0], out[1]


def test_fusing_eval_folders_writes_a_results_folder_that_compare_and_report_read(tmp_path: Path) -> None:
    from finegrain.evaluate.evaluate import evaluate

    a, b = _eval_folders(tmp_path)
    res = runner.invoke(app, ["fuse", str(a), str(b), "-o", str(tmp_path / "rrf")])
    assert res.exit_code == 0, res.output
    saved = SavedResults.load(tmp_path / "rrf")
    fused = read_any_run(tmp_path / "rrf")
    assert fused.to_dict() == fuse([read_any_run(a), read_any_run(b)], "rrf").to_dict()
    assert list(saved.metrics) == ["ndcg@10", "recall@10"]  # the inputs' metrics
    assert saved.dataset_name == "embedded/captions-en" and saved.by_type and saved.errors is not None
    assert saved.judged is not None and saved.passages is not None and saved.passages.text
    ds = load_dataset("embedded/captions-en")
    want = evaluate(ds.qrels, fused, ["ndcg@10"], queries=list(ds.queries))
    assert saved.aggregate["ndcg@10"] == pytest.approx(want["ndcg@10"].value)
    inputs = saved.provenance["run"]["inputs"]
    assert [Path(i["path"]).parent for i in inputs] == [a.resolve(), b.resolve()] and all(i["sha256"] for i in inputs)
    assert saved.provenance["retriever"]["method"] == "rrf"
    assert main(["compare", str(a), str(tmp_path / "rrf")]) == 0
    assert main(["report", str(a), str(b), str(tmp_path / "rrf"), "-o", str(tmp_path / "r.html")]) == 0


def test_fuse_with_a_qrels_file_or_a_dataset_name(tmp_path: Path) -> None:
    pa, pb, pq = _runs(tmp_path)
    res = runner.invoke(app, ["fuse", str(pa), str(pb), "--qrels", str(pq), "-m", "mrr", "-o", str(tmp_path / "q")])
    assert res.exit_code == 0, res.output
    saved = SavedResults.load(tmp_path / "q")
    assert list(saved.metrics) == ["mrr"] and saved.metrics["mrr"].per_query is not None
    assert saved.judged is not None and saved.passages is None and saved.dataset_name is None  # qrels only
    a, b = _eval_folders(tmp_path)
    res = runner.invoke(app, ["fuse", str(a / "run.trec"), str(b / "run.trec"), "--qrels", "embedded/captions-en",
                              "--method", "wsum", "--cv", "3", "-o", str(tmp_path / "cv")])
    assert res.exit_code == 0, res.output
    saved = SavedResults.load(tmp_path / "cv")
    assert saved.dataset_name == "embedded/captions-en" and "ndcg@10" in saved.metrics and saved.by_type


def test_fuse_without_judgements_writes_the_run_and_says_why(tmp_path: Path) -> None:
    pa, pb, _ = _runs(tmp_path)
    res = runner.invoke(app, ["fuse", str(pa), str(pb), "-o", str(tmp_path / "f")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "f" / "run.trec").is_file() and not (tmp_path / "f" / "results.json").exists()
    assert "wrote the run only" in res.output and "--qrels" in res.output
    res = runner.invoke(app, ["fuse", str(pa), str(pb), "--qrels", "no/such-dataset", "-o", str(tmp_path / "g")])
    assert res.exit_code != 0 and "neither a qrels file" in res.output and "Traceback" not in res.output
