"""Numbers on the command line: every int and float option of every verb is read by the one number grammar
(finegrain.numbers), and a run depth -k above the corpus size is the corpus size."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from finegrain.cli.app import VERBS, build_cli
from finegrain.cli.eval_cmd import cv_spec
from finegrain.cli.main import main
from finegrain.cli.options import _number_type
from finegrain.datasets import load_dataset
from finegrain.errors import FinegrainError
from finegrain.io.trec import read_run

build_cli()  # gives the verbs' numeric options their parsers


def _numeric_options() -> list[tuple[str, str, type, object]]:
    import typing

    out = []
    for path, fn in VERBS:
        hints = typing.get_type_hints(fn)
        for name, param in inspect.signature(fn).parameters.items():
            kind = _number_type(hints.get(name))
            if kind is not None:
                out.append((path, name, kind, param.default))
    return out


NUMERIC = _numeric_options()


def test_the_walk_finds_the_numeric_options() -> None:
    names = {(path, name) for path, name, _, _ in NUMERIC}
    assert ("eval", "top_k") in names and ("fuse", "cv") in names and ("fuse", "step") in names
    assert len(NUMERIC) > 40


@pytest.mark.parametrize(("path", "name", "kind", "info"), NUMERIC, ids=[f"{p} {n}" for p, n, _, _ in NUMERIC])
def test_every_numeric_option_reads_the_one_grammar(path: str, name: str, kind: type, info: object) -> None:
    parse = info.parser  # type: ignore[attr-defined]
    assert parse is not None, f"{path} --{name} has no grammar parser"
    bad = ["1_0", "١٠", "１０", "nan", "inf", "1e999", "0x"] + (["1e1", "10.0", "99999999999999999999"] if kind is int else [])
    for raw in bad:
        with pytest.raises(FinegrainError):
            parse(raw)
    lo, hi = info.min, info.max  # type: ignore[attr-defined]
    good = lo if lo is not None else (hi if hi is not None else 1)
    assert parse(str(int(good) if kind is int else float(good))) == good
    if lo is not None:
        with pytest.raises(FinegrainError, match=r">= |in \["):
            parse(str(int(lo) - 1 if kind is int else lo - 1.0))


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("k", ["1_0", "١٠", "１０", "1e1", "10.0", "0", "-5", "99999999999999999999", ""])
def test_eval_refuses_a_bad_top_k_with_one_line(k: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "-d", "embedded/captions-en", "-r", "bm25", "-k", k, "-o", str(tmp_path / "o"), "-q"])
    line = _one_error_line(capsys.readouterr().err)
    assert code == 2 and "--top-k" in line
    assert not (tmp_path / "o").exists()


def test_a_top_k_above_the_corpus_size_is_the_corpus_size(tmp_path: Path) -> None:
    n = len(load_dataset("embedded/captions-en").corpus)
    runs = {}
    for k in (str(n), "99999999999", str(2**63 - 1)):  # used to allocate k results per query: MemoryError
        out = tmp_path / k
        assert main(["eval", "-d", "embedded/captions-en", "-r", "bm25", "-k", k, "-m", "ndcg@10", "-o", str(out),
                     "-q"]) == 0
        runs[k] = (read_run(out / "run.trec").to_dict(), json.loads((out / "results.json").read_text())["aggregate"])
    assert runs[str(n)] == runs["99999999999"] == runs[str(2**63 - 1)]
    assert max(len(docs) for docs in runs[str(n)][0].values()) <= n


@pytest.mark.parametrize("cv", ["1_0", "٣", "５", " 3_0 "])
def test_eval_cv_reads_the_one_grammar(cv: str) -> None:
    with pytest.raises(FinegrainError, match="not a whole number of folds"):  # int() read these as 10, 3, 5, 30
        cv_spec(cv, None, None)
    assert cv_spec(" 7 ", None, None) == "7,seed=0"
