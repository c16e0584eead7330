"""``finegrain list KIND``: the registered retrievers, metrics, datasets, encoders, fusion methods and rerankers.

Each with its declared parameters (type, choices, default) and a line of help;
a table that fits an 80-column terminal, or ``--json`` for machines.
"""

from __future__ import annotations

import json
from typing import Any

import typer

KINDS = ("retrievers", "metrics", "datasets", "encoders", "fusion", "rerankers")


def list_command(
    kind: str = typer.Argument(..., metavar="KIND", help="retrievers, metrics, datasets, encoders, fusion or rerankers."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (name, help, params) instead of a table."),
) -> None:
    """List what can be named on the command line, with each entry's parameters (--set KEY=VALUE)."""
    kind = resolve_kind(kind)
    rows = catalogue(kind)
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    _print(kind, rows)


def resolve_kind(text: str) -> str:
    """``retrievers`` (also ``retriever``, ``fusions``, ``RETRIEVERS``); unknown kinds suggest near ones."""
    from finegrain.errors import UnknownNameError

    low = text.strip().lower()
    for kind in KINDS:
        if low in (kind, kind.rstrip("s"), kind + "s"):
            return kind
    raise UnknownNameError("kind of entry", text, KINDS)


def catalogue(kind: str) -> list[dict[str, Any]]:
    """``[{"name", "help", "params": {key: {"type", "default", "choices", "help", ...}}}]`` for ``kind``."""
    if kind == "datasets":
        from finegrain.datasets.registry import list_datasets

        return [
            {"name": d.name, "help": d.help, "lang": d.lang, "available": d.available,
             **({"how_to_get": d.how_to_get} if d.how_to_get else {}), "params": {}}
            for d in list_datasets()
        ]
    if kind == "metrics":
        from finegrain.metrics import METRICS
        from finegrain.metrics.spec import metric_cutoff

        registry: Any = METRICS
        extra = {n: {"cutoff": metric_cutoff(n).value} for n in METRICS}
    elif kind == "encoders":
        from finegrain.retrieve.dense.encoders.registry import ENCODERS

        registry, extra = ENCODERS, {}
    else:
        from finegrain.retrieve import registry as reg

        registry = {"retrievers": reg.RETRIEVERS, "fusion": reg.FUSIONS, "rerankers": reg.RERANKERS}[kind]
        extra = {}
    out = []
    for entry in registry.entries():
        params = {key: _param(p) for key, p in (entry.params or {}).items()}
        out.append({"name": entry.name, "help": entry.help, **extra.get(entry.name, {}), "params": params})
    return out


def _param(p: Any) -> dict[str, Any]:
    choices = p.allowed()
    return {
        "type": p.type_name,
        "default": list(p.default) if isinstance(p.default, tuple) else p.default,
        "choices": list(choices) if choices is not None else None,
        "nullable": p.nullable,
        "required": p.required,
        "min": p.min,
        "max": p.max,
        "help": p.help,
        "summary": p.describe(),
    }


def _print(kind: str, rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    width = min(console.width, 100)
    table = Table(title=f"finegrain {kind}", show_lines=True, width=width, title_justify="left")
    table.add_column("name", style="bold", overflow="fold")
    if kind == "datasets":
        table.add_column("lang", no_wrap=True)
        table.add_column("ready", no_wrap=True)
        table.add_column("description", ratio=1, overflow="fold")
        for r in rows:
            how = f"\n[bold]to get it:[/bold] {escape(r['how_to_get'])}" if r.get("how_to_get") else ""
            table.add_row(escape(r["name"]), r["lang"], "yes" if r["available"] else "no", escape(r["help"]) + how)
    else:
        if kind == "metrics":
            table.add_column("@k", no_wrap=True)
        how = "name@k(param=value)" if kind == "metrics" else "--set KEY=VALUE"
        table.add_column(f"description and parameters ({how})", ratio=1, overflow="fold")
        for r in rows:
            lines = [escape(r["help"])] if r["help"] else []
            lines += [f"[cyan]{k}[/cyan]: " + escape(p["summary"] + (f" — {p['help']}" if p["help"] else ""))
                      for k, p in r["params"].items()]
            cells = [escape(r["name"]), *([r["cutoff"]] if kind == "metrics" else []), "\n".join(lines) or "-"]
            table.add_row(*cells)
    console.print(table)
    if kind == "metrics":
        console.print("Write a metric as name@k(param=value), e.g. ndcg@10, ndcg@10(rel=2), set_fbeta(beta=0.5).",
                      highlight=False)
    elif kind in ("retrievers", "encoders"):
        console.print("Set a parameter with --set KEY=VALUE, e.g. finegrain eval -r bm25 --set k1=1.2.", highlight=False)
