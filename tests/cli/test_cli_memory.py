"""Running out of memory is one ``error:`` line naming the command and the ways out, exit code 1, no traceback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import finegrain.train.finetune
from finegrain.cli.app import OUT_OF_MEMORY_EXIT
from finegrain.cli.main import app, main


def _numpy_runs_out(config: object) -> object:
    return np.empty(10**13)  # 72.8 TiB: refused by the allocator, whatever the machine


def _bare(config: object) -> object:
    raise MemoryError


@pytest.mark.parametrize(("work", "detail"), [(_numpy_runs_out, ": Unable to allocate 72.8 TiB"), (_bare, " (")])
def test_a_memory_error_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch, work, detail: str) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"query": "a", "passage": "b"}\n')
    monkeypatch.setattr(finegrain.train.finetune, "train_encoder", work)
    args = ["train", "--base", "minilm", "--pairs", str(pairs), "-o", str(tmp_path / "out"), "-q"]

    assert main(args) == OUT_OF_MEMORY_EXIT != 0
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in captured.err and not captured.out
    assert err[0].startswith(f"error: finegrain train ran out of memory{detail}")
    assert "smaller input" in err[0] and "--batch" in err[0] and "more free memory" in err[0]

    result = CliRunner().invoke(app, args)  # the installed script and the test runner alike
    assert result.exit_code == OUT_OF_MEMORY_EXIT, result.output
    out = result.stderr if hasattr(result, "stderr") else result.output
    assert out.strip().splitlines() == err
