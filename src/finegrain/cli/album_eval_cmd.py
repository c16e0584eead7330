"""``finegrain album eval``: score the album engine on a PhotoBench album.

Scores the engine on a PhotoBench album (and on the queries of ``--queries``
files, e.g. from ``album zero-answer``), prints Reject-Precision / Recall / F1
and tables by Source type.
"""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli.album_search_cmd import _POLICY_HELP, _encoder
from finegrain.cli.options import lang_option


def eval_command(
    photobench: Path = typer.Option(..., "--photobench", "-p", help="A PhotoBench album folder."),
    lang: str = lang_option("Query language:"),
    out: Path | None = typer.Option(None, "--out", "-o", help="Folder for results.json."),
    catalog: Path | None = typer.Option(None, "--catalog", "-c", help="Reuse (or create) this catalog file instead of a temporary one."),
    encoder: str | None = typer.Option(None, "--encoder", "-e", help="Text encoder of the catalog's caption embeddings."),
    unverified_visual: str = typer.Option("abstain", "--unverified-visual", help=_POLICY_HELP),
    queries: list[Path] = typer.Option(
        [], "--queries",
        help="A query file (JSON: id, text, lang, ground_truth; e.g. from 'album zero-answer') whose queries in "
             "--lang are scored with the album's own (repeatable)."),
    no_album_queries: bool = typer.Option(False, "--no-album-queries", help="Score only the --queries files' queries."),
) -> None:
    """Score the album engine on the PhotoBench queries with ground truth, by Source type."""
    from finegrain.album.evaluation import evaluate_album

    result = evaluate_album(photobench, lang, out, catalog=catalog, encoder=_encoder(encoder),
                            unverified_visual=unverified_visual, query_files=queries,
                            album_queries=not no_album_queries)
    _print_tables(result)
    if out is not None:
        typer.echo(f"wrote {out / 'results.json'}")


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _print_tables(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{result['album']}[/bold] ({result['lang']}): {result['n_queries']} judged queries, "
                  f"{result['n_zero_ground_truth']} with zero ground truth; unverified visual: "
                  f"{result['settings']['unverified_visual']}")
    for f in result.get("query_files", []):
        console.print(f"  {f['n_queries']} queries from {f['path']} ({f['n_zero_ground_truth']} with zero ground truth)")
    zero = [q for q in result["per_query"] if q["n_ground_truth"] == 0]
    console.print(f"zero-ground-truth queries rejected: {sum(q['abstained'] for q in zero)}/{len(zero)}; "
                  f"queries with ground truth abstained on: "
                  f"{sum(q['abstained'] for q in result['per_query'] if q['n_ground_truth'])}/{result['n_queries'] - len(zero)}")
    agg = result["aggregate"]
    console.print(f"Reject-Precision {_fmt(agg.get('reject_precision'))}, Reject-Recall {_fmt(agg.get('reject_recall'))}, "
                  f"Reject-F1 {_fmt(agg.get('reject_f1'))} over {result['n_queries']} queries ({len(zero)} with zero "
                  f"ground truth)")
    counts: dict[str, int] = {}
    for q in result["per_query"]:
        counts[q["source"]] = counts.get(q["source"], 0) + 1
    groups = [("sets", ("set_precision", "set_recall", "set_f1")),
              ("rejection", ("reject_precision", "reject_recall", "reject_f1")),
              ("recall", tuple(k for k in result["aggregate"] if k.startswith("recall@"))),
              ("ndcg", tuple(k for k in result["aggregate"] if k.startswith("ndcg@")))]
    for title, keys in groups:
        table = Table("source", "queries", *keys, title=title)
        for source, row in result["by_source"].items():
            table.add_row(source, str(counts.get(source, 0)), *(_fmt(row[k]["value"]) if k in row else "-" for k in keys))
        table.add_row("all", str(result["n_queries"]), *(_fmt(result["aggregate"].get(k)) for k in keys))
        console.print(table)
