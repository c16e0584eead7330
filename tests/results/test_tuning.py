"""The tuning sections (cv, provenance.cv, threshold_sweep) read back as typed objects, and damage is refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from finegrain.cli.main import main
from finegrain.errors import DataFormatError
from finegrain.results.saved import SavedResults


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("tuned") / "cv"
    assert main(["eval", "-d", "embedded/captions-en", "-r", "bm25-okapi", "-q", "--set", "k1=1.5",
                 "--cv", "3", "--seed", "1", "--sweep", "threshold=0:10:0.5,folds=3", "-o", str(out)]) == 0
    body: dict[str, Any] = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return body


def test_the_tuning_sections_round_trip_as_typed_objects(tuned: dict[str, Any]) -> None:
    saved = SavedResults.from_json(tuned, source="results.json")
    assert saved.cv is not None and saved.cv_provenance is not None and saved.threshold_sweep is not None
    assert saved.cv.objective == tuned["cv"]["objective"]
    assert saved.cv_provenance.folds == 3 and len(saved.cv_provenance.per_fold) == 3
    sweep = saved.threshold_sweep
    assert len(sweep.thresholds) == len(sweep.rejected) == len(sweep.curve[sweep.metrics[0]])
    assert saved.to_json()["cv"] == tuned["cv"]
    assert saved.to_json()["threshold_sweep"] == tuned["threshold_sweep"]
    assert saved.to_json()["provenance"]["cv"] == tuned["provenance"]["cv"]


def _set(body: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node: Any = body
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


@pytest.mark.parametrize(("path", "value", "named"), [
    ("cv.objective", 3, "cv.objective"),
    ("cv.metrics.ndcg@10.p_rand", 1.5, "cv.metrics.ndcg@10.p_rand"),
    ("cv.metrics.ndcg@10.n", "33", "cv.metrics.ndcg@10.n"),
    ("cv.metrics.ndcg@10.ci", [0.1], "cv.metrics.ndcg@10.ci"),
    ("cv.fold_of", ["q1"], "cv.fold_of"),
    ("provenance.cv.folds", "3", "provenance.cv.folds"),
    ("provenance.cv.per_fold.0.fold", -1, "provenance.cv.per_fold.0.fold"),
    ("threshold_sweep.rejected.0", "3", "threshold_sweep.rejected.0"),
    ("threshold_sweep.thresholds", [0.0, 0.5], "threshold_sweep"),
    ("threshold_sweep.metrics", ["ndcg@10", "recall@7"], "threshold_sweep"),
    ("threshold_sweep.normalisation", "minmax", "threshold_sweep.normalisation"),
])
def test_a_one_field_edit_is_one_error_naming_the_place(tuned: dict[str, Any], path: str, value: Any,
                                                        named: str) -> None:
    body = copy.deepcopy(tuned)
    _set(body, path, value)
    with pytest.raises(DataFormatError) as e:
        SavedResults.from_json(body, source="results.json")
    assert str(e.value).startswith("results.json: expected ") and named in str(e.value)


def test_report_on_a_damaged_sweep_is_one_error_line(tuned: dict[str, Any], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    body = copy.deepcopy(tuned)
    body["threshold_sweep"]["mean_returned"] = body["threshold_sweep"]["mean_returned"][:-1]
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "results.json").write_text(json.dumps(body), encoding="utf-8")
    assert main(["report", str(tmp_path / "d"), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "Traceback" not in err and "mean_returned" in err
    assert not (tmp_path / "r.html").exists()
