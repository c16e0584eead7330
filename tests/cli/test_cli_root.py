"""The CLI root: every verb registered on import, ``--help``/``--version``,
``python -m finegrain``, and one repeatable ``-m`` on every verb that takes metrics."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import finegrain
from finegrain.cli import app as app_module
from finegrain.cli.main import app, main

ROOT = Path(__file__).resolve().parents[2]
CLI_DIR = ROOT / "src" / "finegrain" / "cli"
METRIC_VERBS = {"eval", "evaluate", "perturb", "compare", "report"}
runner = CliRunner()


def _commands(cmd: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every (path, command) under ``cmd`` (typer vendors click, so duck-typed)."""
    out = [(path, cmd)]
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        out += _commands(sub, (*path, name))
    return out


ALL = _commands(typer.main.get_command(app))
VERB_PATHS = [p for p, _ in ALL if p]


# --------------------------------------------------------------------------- the root registers verbs


def test_root_lists_every_verb_without_calling_main() -> None:
    names = {p[0] for p in VERB_PATHS}
    assert {"eval", "evaluate", "compare", "report", "perturb", "contrast", "concepts", "caption-corpus", "album"} <= names
    album = {p[1] for p in VERB_PATHS if p[0] == "album" and len(p) == 2}
    assert {"index", "import-photobench", "people", "search", "eval", "plan", "eval-routing", "serve"} <= album


def test_root_help_through_clirunner() -> None:
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0, res.output
    assert "evaluate" in res.output and "album" in res.output


@pytest.mark.parametrize("path", VERB_PATHS, ids=" ".join)
def test_help_on_every_verb_exits_0(path: tuple[str, ...]) -> None:
    res = runner.invoke(app, [*path, "--help"])
    assert res.exit_code == 0, res.output
    assert "Usage:" in res.output


def test_version_through_clirunner() -> None:
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0, res.output
    assert re.fullmatch(r"finegrain \d+\.\d+\S*\n", res.output)
    assert res.output.split()[1] in (finegrain.__version__, _installed_version())


def _installed_version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("finegrain")
    except metadata.PackageNotFoundError:
        return None


def test_version_falls_back_to_the_package_attribute(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(app_module.metadata, "version", missing)
    monkeypatch.setattr(finegrain.version, "__version__", "9.8.7")
    assert app_module.version() == "9.8.7"


def test_bad_input_through_clirunner_is_one_error_line_and_exit_2(tmp_path: Path) -> None:
    res = runner.invoke(app, ["eval", "-d", "embedded/captions-en", "-r", "bm25-okpi", "-o", str(tmp_path)])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "bm25-okapi" in lines[0]
    assert res.exception is None or isinstance(res.exception, SystemExit)


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_a_path_the_system_refuses_is_one_error_line(which: str, tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text("q 0 d 1\n")
    (tmp_path / "r.txt").write_text("q Q0 d 1 1.0 t\n")
    long = str(tmp_path / ("x" * 300))  # longer than a file name may be: OSError ENAMETOOLONG, was a traceback
    args = [long, str(tmp_path / "r.txt")] if which == "qrels" else [str(tmp_path / "q.txt"), long]
    res = runner.invoke(app, ["evaluate", *args])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "x" * 300 in lines[0] and "too long" in lines[0]
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_verb_modules_never_import_the_root() -> None:
    roots = {"finegrain.cli.main", "finegrain.cli.app"}
    for f in sorted(CLI_DIR.glob("*_cmd.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = {node.module} | {f"{node.module}.{a.name}" for a in node.names}
                assert not names & roots, f"{f.name} imports the CLI root ({node.module})"
            elif isinstance(node, ast.Import):
                assert not {a.name for a in node.names} & roots, f"{f.name} imports the CLI root"


def test_every_verb_module_imports_alone_without_a_cycle() -> None:
    mods = sorted(f"finegrain.cli.{f.stem}" for f in CLI_DIR.glob("*_cmd.py"))
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}:\n"
        "    importlib.import_module(m)\n"
        "    assert 'finegrain.cli.main' not in sys.modules and 'finegrain.cli.app' not in sys.modules, m\n"
        "import finegrain.cli.main\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------- one repeatable -m


def test_every_metric_option_accumulates() -> None:
    found = set()
    for path, cmd in ALL:
        for p in cmd.params:
            if {"-m", "--metric", "--metrics"} & set(getattr(p, "opts", ())):
                found.add(" ".join(path))
                assert p.multiple, f"'finegrain {' '.join(path)}' has a -m that keeps only the last value"
                assert {"-m", "--metric"} <= set(p.opts), " ".join(path)
    assert METRIC_VERBS <= found


class _Stop(Exception):
    """Raised by a stand-in for the work behind a verb, carrying what the verb passed on."""

    def __init__(self, keys: Any) -> None:
        super().__init__(keys)
        self.keys = tuple(keys) if keys is not None else None


def _stop_with(attr: str) -> Any:
    def fake(*args: Any, **kwargs: Any) -> Any:
        if attr == "exp":
            raise _Stop(args[0].metrics)
        if attr == "cfg":
            raise _Stop(args[0].metrics)
        raise _Stop(kwargs.get(attr))

    return fake


FORMS = [
    ["-m", "ndcg@10", "-m", "recall@100"],
    ["-m", "ndcg@10,recall@100"],
    ["--metric", "ndcg@10", "--metrics", "recall@100"],
    ["-m", "ndcg@10", "-m", "recall@100,ndcg@10"],
    ["-m", "NDCG@10", "-m", " recall@100 "],
]


@pytest.fixture
def two_dirs(tmp_path: Path) -> list[str]:
    dirs = [tmp_path / "a", tmp_path / "b"]
    for d in dirs:
        d.mkdir()
    return [str(d) for d in dirs]


@pytest.mark.parametrize("form", FORMS, ids=lambda f: " ".join(f))
@pytest.mark.parametrize("verb", ["eval", "perturb", "compare", "report"])
def test_repeated_and_comma_metrics_mean_the_same(verb: str, form: list[str], two_dirs: list[str],
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if verb == "eval":
        import finegrain.experiment.run as target

        monkeypatch.setattr(target, "run_experiment", _stop_with("exp"))
        args = ["eval", "-d", "embedded/captions-en", "-r", "bm25-okapi", "-o", str(tmp_path / "o")]
    elif verb == "perturb":
        import finegrain.diagnose.perturb.run as target

        monkeypatch.setattr(target, "run_perturbation", _stop_with("cfg"))
        args = ["perturb", "-d", "embedded/captions-en", "-r", "bm25-okapi", "-o", str(tmp_path / "o")]
    elif verb == "compare":
        import finegrain.compare.comparison as target

        monkeypatch.setattr(target, "load_comparison", _stop_with("metrics"))
        args = ["compare", *two_dirs]
    else:
        import finegrain.report.html as target

        monkeypatch.setattr(target, "write_report", _stop_with("metrics"))
        args = ["report", *two_dirs, "-o", str(tmp_path / "r.html")]
    res = runner.invoke(app, [*args, *form])
    assert isinstance(res.exception, _Stop), res.output
    assert res.exception.keys == ("ndcg@10", "recall@100")


def test_report_charts_the_first_metric(two_dirs: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import finegrain.report.html as target

    seen: dict[str, Any] = {}
    monkeypatch.setattr(target, "write_report", lambda dirs, out, **kw: seen.update(kw) or Path(out))
    res = runner.invoke(app, ["report", *two_dirs, "-o", str(tmp_path / "r.html"), "-m", "recall@100", "-m", "ndcg@10"])
    assert res.exit_code == 0, res.output
    assert seen["metric"] == "recall@100" and seen["metrics"] == ("recall@100", "ndcg@10")


def test_defaults_apply_only_without_m(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import finegrain.experiment.run as target

    monkeypatch.setattr(target, "run_experiment", _stop_with("exp"))
    res = runner.invoke(app, ["eval", "-d", "embedded/captions-en", "-r", "bm25-okapi", "-o", str(tmp_path)])
    assert res.exception.keys == ("ndcg@1", "ndcg@5", "ndcg@10")


@pytest.fixture
def trec_pair(tmp_path: Path) -> tuple[str, str]:
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    r.write_text("q1 Q0 d2 1 2.0 s\nq1 Q0 d1 2 1.0 s\nq2 Q0 d3 1 1.0 s\n")
    return str(q), str(r)


@pytest.mark.parametrize("form", [f for f in FORMS if "--metrics" not in f], ids=lambda f: " ".join(f))
def test_evaluate_keeps_every_metric(form: list[str], trec_pair: tuple[str, str]) -> None:
    res = runner.invoke(app, ["evaluate", *trec_pair, *form, "--json"])
    assert res.exit_code == 0, res.output
    assert list(json.loads(res.stdout)) == ["ndcg@10", "recall@100"]


def test_a_bad_metric_among_several_is_named(trec_pair: tuple[str, str], tmp_path: Path) -> None:
    res = runner.invoke(app, ["eval", "-d", "embedded/captions-en", "-r", "bm25-okapi", "-o", str(tmp_path),
                              "-m", "ndcg@10", "-m", "ndgc@10"])
    assert res.exit_code == 2
    assert "'ndgc'" in res.stderr and res.stderr.startswith("error: ")


# --------------------------------------------------------------------------- the installed entry points


def _env() -> dict[str, str]:
    return {**os.environ, "FINEGRAIN_DATA": os.environ.get("FINEGRAIN_DATA", str(ROOT.parent / "shared" / "data"))}


def _script() -> str:
    exe = Path(sys.executable).parent / "finegrain"
    if not exe.is_file():
        pytest.skip("the finegrain script is not installed next to this Python")
    return str(exe)


@pytest.mark.parametrize("argv", [
    ["SCRIPT", "--help"],
    [sys.executable, "-m", "finegrain", "--help"],
    [sys.executable, "-m", "finegrain.cli.main", "--help"],
    [sys.executable, "-m", "finegrain", "album", "--help"],
], ids=["script", "python -m finegrain", "python -m finegrain.cli.main", "python -m finegrain album"])
def test_entry_points_show_help(argv: list[str]) -> None:
    argv = [_script() if a == "SCRIPT" else a for a in argv]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert "Usage:" in proc.stdout and "Traceback" not in proc.stderr


@pytest.mark.parametrize("how", ["script", "module"])
def test_version_entry_points(how: str) -> None:
    argv = [_script(), "--version"] if how == "script" else [sys.executable, "-m", "finegrain", "--version"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"finegrain \d+\.\d+\S*\n", proc.stdout)


def test_python_m_finegrain_eval_with_repeated_m(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "finegrain", "eval", "-d", "embedded/captions-en", "-r", "bm25-okapi",
                           "-m", "ndcg@10", "-m", "recall@10", "-o", str(out), "--quiet"],
                          capture_output=True, text=True, timeout=300, env=_env())
    assert proc.returncode == 0, proc.stderr
    agg = json.loads((out / "results.json").read_text(encoding="utf-8"))["aggregate"]
    assert set(agg) == {"ndcg@10", "recall@10"}


def test_python_m_finegrain_bad_input_exits_2(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "finegrain", "evaluate", str(tmp_path / "nope"), str(tmp_path / "nope"),
                           "-m", "ndcg@10"], capture_output=True, text=True, timeout=120, env=_env())
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def test_a_renamed_retriever_still_runs_and_says_its_new_name_in_one_warning_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "-d", "embedded/captions-en", "-r", "best-zh", "--set", "parts=bm25-okapi,bm25", "--set", "weights=1,1",
                 "-m", "ndcg@10",
                 "-o", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0 and "warning: retriever 'best-zh' is now called 'hybrid-use-k10'" in err
    assert "FutureWarning" not in err and "registry.py" not in err  # one line a person reads, no source location
