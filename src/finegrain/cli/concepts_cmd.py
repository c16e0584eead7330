"""``finegrain concepts``: explain one retrieval failure with CA, NCS, CE and SD."""

from __future__ import annotations

from pathlib import Path

import typer


def concepts_command(
    ground_truth: Path = typer.Option(..., "--ground-truth", "-g",
                                      help='Objects of the ground-truth image: {"objects": [{"synset", "bbox"}]}.'),
    retrieved: Path = typer.Option(..., "--retrieved", help="Objects of the wrongly retrieved image, same form."),
    query: str | None = typer.Option(None, "--query",
                                     help="Query text: score only the concepts it mentions (query-informed)."),
    td: float = typer.Option(1.0, "--td", min=0.0,
                             help="Size threshold TD on the relative area difference (1.0 = one box twice the other)."),
    as_json: bool = typer.Option(False, "--json", help='Print only {"ca", "ncs", "ce", "sd", "sd_binary"} as JSON.'),
) -> None:
    """Concept agreement, non-common concept similarity, enumeration and size disagreement of one failure."""
    import json

    from finegrain.diagnose.concepts.objects import read_object_set
    from finegrain.diagnose.concepts.report import local_report, render_local

    gt = read_object_set(ground_truth)
    rt = read_object_set(retrieved)
    report = local_report(gt, rt, query, td=td)
    if as_json:
        typer.echo(json.dumps(report.comparison.scores.to_dict()))
        return
    from rich.console import Console

    console = Console()
    console.print(f"ground truth {ground_truth} ({len(gt)} objects) vs retrieved {retrieved} ({len(rt)} objects)")
    for table in render_local(report):
        console.print(table)
