"""The sections benchmark scripts write under docs/results: a resumed call's run line says what it reused."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location("_results", Path(__file__).parents[2] / "benchmarks" / "_results.py")
assert _SPEC is not None and _SPEC.loader is not None
results = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(results)


def _run_line(page: Path) -> str:
    return next(line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("Run: "))


def _age(path: Path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_a_resumed_call_says_which_outputs_earlier_calls_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    (out / "eval").mkdir(parents=True)
    for name, age in (("a.json", 7200), ("eval/b.json", 3600)):
        (out / name).write_text("{}", encoding="utf-8")
        _age(out / name, age)
    page = tmp_path / "page.md"
    monkeypatch.setattr(sys, "argv", ["bench.py"])
    with results.Recorder(__file__, page) as rec:
        rec.outputs = out
        (out / "new.json").write_text("{}", encoding="utf-8")  # written by this call: not reused
        rec.body = ["body"]
    line = _run_line(page)
    first = datetime.fromtimestamp(time.time() - 7200, UTC)
    assert "(this call; it reused 2 file(s) under" in line, line
    assert f"{first:%Y-%m-%d %H:%M} to " in line, line


def test_a_call_that_made_everything_itself_says_nothing_of_reuse(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "page.md"
    monkeypatch.setattr(sys, "argv", ["bench.py"])
    with results.Recorder(__file__, page) as rec:
        rec.outputs = tmp_path / "fresh"
        rec.outputs.mkdir()
        (rec.outputs / "x.json").write_text("{}", encoding="utf-8")
        rec.body = ["body"]
    assert "reused" not in _run_line(page)


def test_reused_outputs_of_a_missing_folder_is_none(tmp_path: Path) -> None:
    assert results.reused_outputs(tmp_path / "absent", datetime.now(UTC)) is None
