"""``finegrain report`` on a damaged perturbation or contrast folder: one ``error:`` line, never a traceback.

The folders are written by the real commands (:mod:`probe_folders`), then one value is edited. Each edit of
``results.json`` or of a ``perturbations.jsonl`` record the page shows is one error naming the file and the
place, and no page is written; a property test edits any value of any of the files and checks that the report
renders or refuses with a :class:`~finegrain.errors.FinegrainError`, never another exception.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finegrain.cli.main import main
from finegrain.errors import FinegrainError
from finegrain.report.html import write_report
from probe_folders import DELETE, EDITS, KINDS, dotted, edited, make_probe_folders, read_json

pytest.importorskip("jinja2")


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_probe_folders(tmp_path_factory.mktemp("probe_errors"))


def _copy(src: Path, dst: Path) -> Path:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


def _one_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI, which must fail with exit code 2 and one ``error:`` line; that line."""
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_the_report_of_the_unedited_folders_renders(folders: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "ok.html"
    assert main(["report", *map(str, folders.values()), "--out", str(out)]) == 0
    assert '<section id="perturbation">' in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(("kind", "path", "value", "named", "found"), EDITS, ids=[
    f"{k}:{dotted(p)}={'DELETE' if v is DELETE else json.dumps(v)}" for k, p, v, _, _ in EDITS])
def test_an_edited_results_file_is_one_error_line_and_no_page(
        folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        kind: str, path: tuple[str | int, ...], value: Any, named: str, found: str) -> None:
    d = _copy(folders[kind], tmp_path / kind)
    f = d / "results.json"
    f.write_text(json.dumps(edited(read_json(f), path, value)), encoding="utf-8")
    out = tmp_path / "r.html"
    line = _one_error(["report", str(folders["contrast"] if kind != "contrast" else folders["perturb"]), str(d),
                       "--out", str(out)], capsys)
    assert line.startswith(f"error: {f}: expected {named or dotted(path)} "), line
    assert f"found '{found}" in line and "write it again with the finegrain command that made it" in line
    assert not out.exists()


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("start", "3", "start to be a valid integer, found '\"3\"'"),
    ("start", -1, "start to be greater than or equal to 0"),
    ("end", 10_000, "end to be an offset from start"),
    ("original", 7, "original to be a valid string"),
    ("qid", None, "qid to be a valid string"),
    ("family", None, "family to be a valid string, found 'null'"),
    ("family", DELETE, "family to be a valid string, found 'null'"),
])
def test_an_edited_example_perturbation_is_one_error_naming_the_line(
        folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        field: str, value: Any, expected: str) -> None:
    d = _copy(folders["perturb"], tmp_path / "p")
    f = d / "perturbations.jsonl"
    lines = f.read_text(encoding="utf-8").splitlines()
    lines[1] = json.dumps(edited(json.loads(lines[1]), (field,), value))  # the second record: an example shown
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    line = _one_error(["report", str(d), "--out", str(tmp_path / "r.html")], capsys)
    assert line.startswith(f"error: {f}:2: expected {expected}"), line


def _leaves(x: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """The path of every value that is not a non-empty object or list."""
    if isinstance(x, dict) and x:
        return [p for k, v in x.items() for p in _leaves(v, (*path, k))]
    if isinstance(x, list) and x:
        return [p for i, v in enumerate(x) for p in _leaves(v, (*path, i))]
    return [path]


REPLACEMENTS = st.one_of(
    st.text(max_size=4), st.none(), st.booleans(), st.integers(-3, 3),
    st.sampled_from([10**30, -(10**30), 2**63, 1e300, -1e300, 1.7e306, -1.7e306, 0.5, -0.5, 1.5, 150.0]),
    st.lists(st.integers(0, 3), max_size=3), st.just({}),
)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("probe_mutations")


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_any_value_edit_renders_or_is_a_finegrain_error(folders: dict[str, Path], work: Path, data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(KINDS), label="folder")
    d = _copy(folders[kind], work / kind)
    examples = d / "perturbations.jsonl"
    if examples.is_file() and data.draw(st.booleans(), label="edit perturbations.jsonl"):
        lines = examples.read_text(encoding="utf-8").splitlines()
        i = data.draw(st.integers(0, min(len(lines), 20) - 1), label="line")
        rec = json.loads(lines[i])
        lines[i] = json.dumps(edited(rec, data.draw(st.sampled_from(_leaves(rec)), label="path"),
                                     data.draw(REPLACEMENTS, label="value")))
        examples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        raw = read_json(d / "results.json")
        path = data.draw(st.sampled_from(_leaves(raw)), label="path")
        value = data.draw(REPLACEMENTS, label="value")
        (d / "results.json").write_text(json.dumps(edited(raw, path, value)), encoding="utf-8")
    try:
        write_report([d], work / "page.html")
    except FinegrainError:
        pass


def _numbers(x: Any) -> dict[tuple[str, ...], list[tuple[str | int, ...]]]:
    """The path of every number (not a boolean), by field: its path without list positions, so that a field
    repeated in every record or query is drawn as often as one written once."""
    out: dict[tuple[str, ...], list[tuple[str | int, ...]]] = {}
    for path in _leaves(x):
        v = _at(x, path)
        if isinstance(v, int | float) and not isinstance(v, bool):
            out.setdefault(tuple(k for k in path if isinstance(k, str)), []).append(path)
    return out


def _at(x: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        x = x[key]
    return x


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_any_number_edit_renders_or_is_a_finegrain_error(folders: dict[str, Path], work: Path,
                                                          data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(KINDS), label="folder")
    d = _copy(folders[kind], work / f"n-{kind}")
    raw = read_json(d / "results.json")
    fields = _numbers(raw)
    field = data.draw(st.sampled_from(sorted(fields)), label="field")
    path = data.draw(st.sampled_from(fields[field]), label="path")
    value = data.draw(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(10**20), 10**20), label="value")
    (d / "results.json").write_text(json.dumps(edited(raw, path, value)), encoding="utf-8")
    try:
        write_report([d], work / "page.html")
    except FinegrainError:
        pass
