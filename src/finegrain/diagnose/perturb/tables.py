"""Tables 4 and 5 of the explainable-ranking paper, rendered from perturbation results (:class:`~finegrain.results.probes.PerturbResults`).

Rich tables for the terminal and Markdown for notes; both are views of the
saved results, nothing is recomputed. Metric values are shown x100.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from finegrain.diagnose.caption_corpus import PAPER_NAMES
from finegrain.results.probes import PerturbResults


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _x100(v: float | None, sign: bool = False) -> str:
    if v is None:
        return "-"
    return f"{v * 100:+.2f}" if sign else f"{v * 100:.2f}"


def rows(results: PerturbResults) -> dict[str, list[list[str]]]:
    """The three tables as header + rows of strings: ``rank_change``, ``deltas``, ``dataset``."""
    metrics = list(results.metrics)
    fams = results.families
    head = metric_names(results)
    conf = round(results.confidence * 100)
    t4 = [["family", "perturbed queries", "% of queries", "with relevant", "lower %", "higher %", "same %"]]
    for f, e in fams.items():
        rc = e.rank_change
        pc = rc.percent
        t4.append([f, str(e.n_perturbed), f"{100 * e.share_of_queries:.2f}", str(rc.n),
                   _pct(pc.lower), _pct(pc.higher), _pct(pc.same)])
    t5 = [["family", "metric", "n", "original", "perturbed", "delta", f"{conf}% CI"]]
    for f, e in fams.items():
        for m in metrics:
            c = e.metrics[m]
            ci = "-" if c.delta is None else f"[{_x100(c.ci_low, True)}, {_x100(c.ci_high, True)}]"
            t5.append([f, head[m], str(c.n), _x100(c.original), _x100(c.perturbed), _x100(c.delta, True), ci])
    ds = [["queries", *(head[m] for m in metrics)]]
    ds.append(["original", *[_x100(results.original.get(m)) for m in metrics]])
    for f, e in fams.items():
        ds.append([f, *[_x100(e.metrics[m].dataset_perturbed) for m in metrics]])
    return {"rank_change": t4, "deltas": t5, "dataset": ds}


def metric_names(results: PerturbResults) -> dict[str, str]:
    """Column names: the paper's (R@1, MRR@all, Fails %) on the caption-corpus protocol, else the metric keys."""
    if results.protocol is not None:
        return {m: PAPER_NAMES.get(m, m) for m in results.metrics}
    return {m: m for m in results.metrics}


def protocol_line(results: PerturbResults) -> str | None:
    """On the caption-corpus protocol: the unperturbed R@1 and that it is the plain protocol's."""
    if results.protocol is None:
        return None
    plain = results.protocol.plain_protocol
    return (f"unperturbed queries: the plain caption-corpus protocol ({results.dataset}), "
            f"R@1 {100 * plain.recall_1:.2f}, R@10 {100 * plain.recall_10:.2f}, "
            f"MRR@all {100 * plain.mrr:.2f}, median rank {plain.median_rank:g}; ranks are exact (no cut)")


TITLES = {
    "rank_change": "Rank of the best relevant item after perturbation (Table 4)",
    "deltas": "Metrics on the perturbed queries, original qrels, x100 (Table 5, paired)",
    "dataset": "All queries, perturbed ones substituted, x100 (Table 5, as in the paper)",
}


def print_tables(results: PerturbResults, console: Any = None) -> None:
    """Print the three tables with rich."""

    console = console or Console()
    head = f"{results.dataset} · {results.retriever} · {results.n_queries} queries"
    console.print(f"[bold]{head}[/bold]")
    line = protocol_line(results)
    if line:
        console.print(line)
    for key, data in rows(results).items():
        t = Table(title=TITLES[key], title_justify="left")
        for i, h in enumerate(data[0]):
            t.add_column(h, justify="left" if i == 0 else "right", overflow="fold")
        for r in data[1:]:
            t.add_row(*r)
        console.print(t)


def markdown_tables(results: PerturbResults) -> str:
    """The three tables as Markdown, with a header line naming dataset, retriever and seed."""
    prov = results.provenance
    head = (f"## {results.dataset} · {results.retriever} ({results.n_queries} queries,"
            f" seed {prov.seed}, colour threshold {prov.color_threshold})")
    lines = [head, ""]
    line = protocol_line(results)
    if line:
        lines += [line, ""]
    for key, data in rows(results).items():
        lines += [f"**{TITLES[key]}**", "", "| " + " | ".join(data[0]) + " |",
                  "|" + "|".join(["---"] + ["---:"] * (len(data[0]) - 1)) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in data[1:]]
        lines.append("")
    return "\n".join(lines)
