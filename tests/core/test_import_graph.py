"""The import graph of finegrain, imports inside functions included: no cycle; the layer contract of
pyproject.toml holds (import-linter); no finegrain module is imported inside a function outside ``cli/``
(a verb may defer its work's modules to keep ``finegrain --help`` fast; import-linter still sees those
edges); verb modules never import the CLI root.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import networkx as nx
import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"


def import_graph(package: str = "finegrain") -> nx.DiGraph:
    """Every import between the package's modules, wherever it stands (grimp parses function bodies too)."""
    g = grimp.build_graph(package, cache_dir=None, exclude_type_checking_imports=True)
    out = nx.DiGraph()
    for m in g.modules:
        out.add_node(m)
        out.add_edges_from((m, i) for i in g.find_modules_directly_imported_by(m))
    return out


def function_level_imports(root: Path, internal: bool) -> list[str]:
    """``path:line`` of each import inside a function: of the package's own modules, or of third parties."""
    found = []
    for p in sorted(root.rglob("*.py")):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom):
                    names = ["." if node.level else (node.module or "")]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                else:
                    continue
                if any((n == "." or n.split(".")[0] == "finegrain") == internal for n in names):
                    found.append(f"{p.relative_to(root)}:{node.lineno}")
    return sorted(set(found))


def test_no_import_cycle() -> None:
    g = import_graph()
    assert g.number_of_nodes() > 100 and g.number_of_edges() > 500  # the graph was really built
    cycles = [c for c in nx.simple_cycles(g) if len(c) > 1]
    assert not cycles, [" -> ".join([*c, c[0]]) for c in cycles[:5]]


def test_the_graph_sees_imports_inside_functions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("def f():\n    from toy import high\n    return high\n")
    (pkg / "high.py").write_text("from toy import low\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    g = import_graph("toy")
    assert g.has_edge("toy.low", "toy.high") and [c for c in nx.simple_cycles(g) if len(c) > 1]
    assert function_level_imports(tmp_path, internal=False) == ["toy/low.py:2"]  # "toy" is not finegrain
    assert function_level_imports(tmp_path, internal=True) == []


def test_no_finegrain_import_inside_a_function_outside_cli() -> None:
    inner = [p for p in function_level_imports(SRC / "finegrain", internal=True) if not p.startswith("cli/")]
    assert not inner, f"{len(inner)} imports of finegrain modules inside functions (import at the top): {inner[:5]}"


def test_the_counter_finds_an_internal_import_inside_a_function(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import os\n\ndef f():\n    from finegrain.errors import FinegrainError\n"
                                   "    import numpy\n    return FinegrainError, numpy\n")
    assert function_level_imports(tmp_path, internal=True) == ["m.py:4"]
    assert function_level_imports(tmp_path, internal=False) == ["m.py:5"]


def test_the_layer_contract_holds() -> None:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    r = subprocess.run([lint, "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "layers" in r.stdout and "BROKEN" not in r.stdout


def test_verb_modules_and_report_sections_import_downwards() -> None:
    g = import_graph()
    for name in g:
        if name.startswith("finegrain.cli.") and name.endswith("_cmd"):
            assert "finegrain.cli.main" not in g[name] and "finegrain.cli.app" not in g[name], name
        if name.startswith("finegrain.report.") and name != "finegrain.report.html":
            assert "finegrain.report.html" not in g[name], name
