"""A run made elsewhere enters the eval workflow: ``finegrain eval --run FILE`` and ``Experiment(run=...)``.

The imported run here is an eval's own run rewritten as another tool writes it (its own scores and
tag, the same order), so every section of its results folder must equal the eval's own.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.errors import FinegrainError
from finegrain.experiment.run import Experiment, run_experiment
from finegrain.io.trec import read_run
from finegrain.settings import Settings
from finegrain.types import Run

DATASET = "embedded/captions-en"
METRICS = "ndcg@10,recall@10"


@pytest.fixture(scope="module")
def retrieved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eval") / "bm25"
    assert main(["eval", "-d", DATASET, "-r", "bm25-okapi", "-m", METRICS, "-o", str(out), "-q"]) == 0
    return out


def _as_elsewhere(folder: Path, path: Path) -> Path:
    """The folder's run as Pyserini would write it: rank order kept, scores and tag its own."""
    lines = (folder / "run.trec").read_text(encoding="utf-8").splitlines()
    path.write_text("".join(f"{ln.split()[0]} Q0 {ln.split()[2]} {n} {100 - n} mine\n"
                            for n, ln in enumerate(lines, 1)), encoding="utf-8")
    return path


def _results(folder: Path) -> dict:
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


def test_a_run_file_gets_everything_a_retrieved_run_gets(retrieved: Path, tmp_path: Path) -> None:
    mine = _as_elsewhere(retrieved, tmp_path / "mine.trec")
    out = tmp_path / "mine"
    assert main(["eval", "-d", DATASET, "--run", str(mine), "-m", METRICS, "-o", str(out), "-q"]) == 0
    a, b = _results(retrieved), _results(out)
    for section in ("aggregate", "per_query", "by_type", "denominators", "curves", "queries", "judged", "passages"):
        assert b[section] == a[section], section
    assert b["errors"]["per_query"] == a["errors"]["per_query"] and b["taxonomy"] == a["taxonomy"]
    assert b["passages"]["text"]  # the drill-down's texts
    prov = b["provenance"]
    assert prov["retriever"] == {"name": "mine", "from": "run"}
    assert prov["run"]["source"] == "file" and prov["run"]["path"] == str(mine.resolve())
    assert prov["run"]["sha256"] == hashlib.sha256(mine.read_bytes()).hexdigest()
    assert prov["run"]["size"] == mine.stat().st_size and "retrieve_seconds" not in prov
    assert read_run(out / "run.trec").to_dict() == read_run(mine).to_dict()
    assert main(["compare", str(retrieved), str(out)]) == 0
    assert main(["report", str(retrieved), str(out), "-o", str(tmp_path / "r.html")]) == 0


def test_the_python_experiment_takes_a_run_file_or_a_run(retrieved: Path, tmp_path: Path) -> None:
    mine = _as_elsewhere(retrieved, tmp_path / "mine.trec")
    exp = Experiment(dataset=DATASET, retriever=None, metrics=("ndcg@10",), run=mine)
    outcome = run_experiment(exp, Settings.from_env(), show_progress=False)
    assert outcome.saved.aggregate["ndcg@10"] == _results(retrieved)["aggregate"]["ndcg@10"]
    assert outcome.saved.provenance["run"]["source"] == "file" and outcome.saved.errors is not None
    run = read_run(mine).renamed("in-memory")
    held = run_experiment(Experiment(DATASET, None, ("ndcg@10",), run=run), Settings.from_env(), show_progress=False)
    assert held.saved.retriever_name == "in-memory" and held.saved.provenance["run"]["source"] == "memory"
    assert held.saved.aggregate == outcome.saved.aggregate
    cut = run_experiment(Experiment(DATASET, None, ("recall@10",), top_k=1, run=run), Settings.from_env(),
                         show_progress=False)
    assert max(len(cut.run.ranked(q)) for q in cut.run.qids) == 1


@pytest.mark.parametrize(("args", "needle"), [
    (["-r", "bm25"], "not both"),
    ([], "neither"),
    (["--cv", "3"], "--cv chooses a retriever's options"),
    (["--set", "k1=1.2"], "--set sets a retriever's options"),
])
def test_a_run_with_a_retriever_or_its_options_is_one_clear_line(
        retrieved: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str) -> None:
    mine = _as_elsewhere(retrieved, tmp_path / "mine.trec")
    source = ["--run", str(mine)] if args != [] else []
    code = main(["eval", "-d", DATASET, *source, *args, "-o", str(tmp_path / "x"), "-q"])
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code != 0 and len(err) == 1 and err[0].startswith("error:") and needle in err[0], err
    assert not (tmp_path / "x").exists()


def test_a_run_of_another_dataset_is_refused_and_strays_are_counted(retrieved: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.trec"
    other.write_text("x1 Q0 d1 1 2.0 t\nx2 Q0 d2 1 1.0 t\n", encoding="utf-8")
    exp = Experiment(DATASET, None, ("ndcg@10",), run=other)
    with pytest.raises(FinegrainError, match="none of the run's 2 query ids is a query of embedded/captions-en"):
        run_experiment(exp, Settings.from_env(), show_progress=False)
    with pytest.raises(FinegrainError, match="no run file"):
        run_experiment(Experiment(DATASET, None, ("ndcg@10",), run=tmp_path / "missing.trec"), Settings.from_env(),
                       show_progress=False)
    run = read_run(retrieved / "run.trec").to_dict()
    qid = next(iter(run))
    run[qid] = {**run[qid], "not-a-doc": -1.0}
    run["not-a-query"] = {"c01": 1.0}
    outcome = run_experiment(Experiment(DATASET, None, ("ndcg@10",), run=Run.from_dict(run, name="x")),
                             Settings.from_env(), show_progress=False)
    warnings = " | ".join(outcome.saved.provenance["warnings"])
    assert "1 of the run's" in warnings and "'not-a-query'" in warnings
    assert "'not-a-doc'" in warnings and "never relevant" in warnings
