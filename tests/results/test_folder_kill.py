"""A results folder killed while it is written is either whole or refused: never read in part.

Each test kills a real ``finegrain eval -o`` process (SIGKILL, sent by the
process to itself at a chosen moment of the write) and then reads the folder
with ``pool`` and ``report``, which must either work on a whole folder or stop
with one error line.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.results.files import read_saved_run
from finegrain.results.saved import SavedResults

EVAL = ["eval", "-d", "embedded/captions-en", "-r", "bm25-okapi", "-q"]


def _killed_eval(out: Path, patch: str, retriever: str = "bm25-okapi") -> None:
    """Run ``finegrain eval -o out`` in a child that SIGKILLs itself where ``patch`` says."""
    code = "import os, signal, sys\n" + textwrap.dedent(patch) + textwrap.dedent(f"""
        from finegrain.cli.main import main
        main(["eval", "-d", "embedded/captions-en", "-r", {retriever!r}, "-q", "-o", {str(out)!r}])
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]


HALF_RUN = """
import finegrain.results.files as files
def half(run, path, tag=None):
    with open(path, "w") as f:
        f.write("q1 Q0 d1 1 1.0 x\\n")
        f.flush()
    os.kill(os.getpid(), signal.SIGKILL)
files.write_run = half
"""

BEFORE_RESULTS = """
from finegrain.results.saved import SavedResults
def die(self, folder):
    os.kill(os.getpid(), signal.SIGKILL)
SavedResults.save = die
"""


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "Traceback" not in err
    return err


def test_a_kill_while_the_run_is_written_leaves_the_previous_folder_whole(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    assert main([*EVAL, "-o", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    _killed_eval(out, HALF_RUN, retriever="bm25")
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.name in before} == before
    run = read_saved_run(out)  # the old folder reads whole: results.json's record matches its run
    assert len(run) == len(SavedResults.load(out).query_ids)


def test_a_kill_between_the_run_and_results_json_is_refused_by_every_reader(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ev"
    assert main([*EVAL, "-o", str(out)]) == 0
    _killed_eval(out, BEFORE_RESULTS, retriever="bm25")  # new run.trec in place, old results.json
    err = _refused(capsys, ["pool", str(out), "--depth", "5", "-o", str(tmp_path / "pool.jsonl")])
    assert "run.trec" in err and "recorded in results.json" in err
    assert not (tmp_path / "pool.jsonl").exists()
    err = _refused(capsys, ["report", str(out), "-o", str(tmp_path / "r.html")])
    assert "run.trec" in err
    assert not (tmp_path / "r.html").exists()
    assert main([*EVAL, "-o", str(out)]) == 0  # writing the folder again makes it whole
    assert main(["pool", str(out), "--depth", "5", "-o", str(tmp_path / "pool.jsonl")]) == 0


def test_a_truncated_run_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ev"
    assert main([*EVAL, "-o", str(out)]) == 0
    run = out / "run.trec"
    lines = run.read_text().splitlines(keepends=True)
    run.write_text("".join(lines[: len(lines) // 5]))
    err = _refused(capsys, ["pool", str(out), "--depth", "5", "-o", str(tmp_path / "pool.jsonl")])
    assert "bytes" in err


def test_results_json_records_the_run(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    assert main([*EVAL, "-o", str(out)]) == 0
    saved = SavedResults.load(out)
    assert set(saved.files) == {"run.trec"}
    assert saved.files["run.trec"].size == (out / "run.trec").stat().st_size
