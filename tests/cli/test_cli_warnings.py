"""Warnings on the command line: finegrain's own as one ``warning:`` line, none that the printed
denominators already say."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from finegrain.cli.main import _show_warning
from finegrain.io.trec import write_qrels, write_run
from finegrain.types import Qrels, Run


def test_a_warning_from_finegrain_is_one_line_without_the_source() -> None:
    out = io.StringIO()
    _show_warning(UserWarning("3 queries left out"), UserWarning, "/x/finegrain/evaluate/evaluate.py", 7, out)
    assert out.getvalue() == "warning: 3 queries left out\n"


def test_fuse_with_an_excluded_query_prints_its_denominators_and_no_python_warning(tmp_path: Path) -> None:
    write_qrels(Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 0}}), tmp_path / "qrels.trec")
    write_run(Run.from_dict({"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}, name="a"), tmp_path / "a.trec")
    write_run(Run.from_dict({"q1": {"d2": 1.0}, "q2": {"d1": 1.0}}, name="b"), tmp_path / "b.trec")
    res = subprocess.run([sys.executable, "-m", "finegrain", "fuse", "a.trec", "b.trec", "--qrels", "qrels.trec",
                          "-o", "f"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "left out of" not in res.stderr and ".py:" not in res.stderr, res.stderr  # said once, by the table
