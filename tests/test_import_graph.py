"""The module-level import graph of finegrain has no cycle, and verb modules never import the CLI root.

Module-level imports only (what runs when a module is imported); imports inside
functions are the lazy, deliberate ones. ``from pkg import sub`` where ``sub`` is
a module counts as an edge to ``pkg.sub``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules() -> dict[str, Path]:
    mods = {}
    for p in SRC.rglob("*.py"):
        name = ".".join(p.relative_to(SRC).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = p
    return mods


def import_graph() -> nx.DiGraph:
    mods = _modules()
    g = nx.DiGraph()
    for name, path in mods.items():
        g.add_node(name)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in mods]
                targets = subs if len(subs) == len(node.names) else [node.module, *subs]
            else:
                continue
            g.add_edges_from((name, t) for t in targets if t in mods and t != name)
    return g


def test_no_import_cycle() -> None:
    g = import_graph()
    assert g.number_of_nodes() > 100 and g.number_of_edges() > 200  # the graph was really built
    cycles = list(nx.simple_cycles(g))
    assert not cycles, [" -> ".join([*c, c[0]]) for c in cycles[:5]]


def test_the_cycle_finder_sees_a_cycle(tmp_path: Path) -> None:
    g = nx.DiGraph([("a", "b"), ("b", "a")])
    assert list(nx.simple_cycles(g))


def test_verb_modules_and_report_sections_import_downwards() -> None:
    g = import_graph()
    for name in g:
        if name.startswith("finegrain.cli.") and name.endswith("_cmd"):
            assert "finegrain.cli.main" not in g[name] and "finegrain.cli.app" not in g[name], name
        if name.startswith("finegrain.report.") and name != "finegrain.report.html":
            assert "finegrain.report.html" not in g[name], name
