"""``finegrain triage DIR... --qrels Q -o POOL``: suspected false negatives of saved runs, as a pool to judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from finegrain.cli import options as opt

N_SHOWN = 10


def triage_command(
    dirs: list[Path] = typer.Argument(..., metavar="RESULTS_DIR",
                                      help="Results folders written by 'finegrain eval --out DIR' (results.json and "
                                           "the run); their top --depth items are the candidates."),
    qrels: Path = typer.Option(..., "--qrels", metavar="Q",
                               help="The qrels as they are (TREC, BEIR tsv, ranx JSON); unlisted = unjudged."),
    out: Path = opt.out_option("The pool file to write (JSON lines, .gz to compress); the evidence goes beside it "
                               "in NAME.evidence.jsonl."),
    depth: int = typer.Option(10, "--depth", min=1, help="Pool depth: each run's top K are candidates."),
    top_k: int | None = opt.top_k_option("Keep the N strongest suspects (default: all)."),
    encoder: str = opt.encoder_option(
        "Encoder of the semantic evidence: auto (e5 when installed), none, or e5, minilm, st:PATH ...", "auto"),
    dataset: str | None = typer.Option(None, "--dataset", "-d",
                                       help="Dataset of the texts (default: the one the folders were evaluated on)."),
    lang: str | None = opt.lang_option("Language of the tokenizer (default: the dataset's).", None),
    unjudged_only: bool = typer.Option(False, "--unjudged-only",
                                       help="Leave out items the qrels judged irrelevant (default: kept as candidates)."),
    grades: str = typer.Option("0,1,2", "--grades", help="The judging scale written to the pool, e.g. 0,1,2."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the pooling."),
    no_cache: bool = opt.no_cache_option(),
    quiet: bool = opt.quiet_option(),
    top: int | None = opt.retired_option("--top", "-k/--top-k", min=1),
) -> None:
    """Rank the top-ranked unjudged or judged-irrelevant passages that look relevant (suspected false negatives).

    Evidence per candidate: how many runs rank it in the top --depth and its best rank; the share of the query's
    terms it holds and its embedding cosine to the query; its term and embedding similarity to the query's known
    positives. The score is the mean of the candidates' percentiles of these (equal weights, fixed a priori); see
    finegrain.build.triage. The pool file feeds the judging page.
    """
    from finegrain.build.judge.scale import Scale
    from finegrain.build.triage import triage, write_triage
    from finegrain.compare.relabel import saved_runs
    from finegrain.datasets import load_dataset
    from finegrain.errors import FinegrainError
    from finegrain.io.files import read_qrels_file
    from finegrain.settings import Settings

    scale = Scale.parse(grades).grades
    runs, systems = saved_runs(dirs)
    names = {s.results.dataset_name for s in systems}
    if dataset is None:
        if len(names) != 1 or None in names:
            raise FinegrainError(f"the folders were evaluated on {len(names)} datasets "
                                 f"({', '.join(sorted(map(str, names)))})",
                                 "triage folders of one dataset, or name it with --dataset")
        dataset = str(next(iter(names)))
    ds = load_dataset(dataset, Settings.from_env())
    q, _ = read_qrels_file(qrels)
    tri = triage(runs, q, ds.corpus, ds.queries, lang=lang or str(ds.lang), depth=depth,
                 top=opt.either(top_k, top, "-k/--top-k", "--top"), include_judged=not unjudged_only,
                 encoder=None if encoder == "none" else encoder, grades=scale, seed=seed, dataset=ds.name,
                 cache=not no_cache, show_progress=not quiet)
    pool_path, evidence = write_triage(tri, out)
    _print(tri)
    typer.echo(f"wrote {pool_path} ({len(tri)} suspects of {tri.n_candidates} candidates, {tri.n_pooled} pooled) "
               f"and {evidence}")


def _print(tri: Any) -> None:  # a finegrain.build.triage.Triage
    from rich import box
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"Suspected false negatives (top {min(N_SHOWN, len(tri))} of {len(tri)})", title_justify="left",
              box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 0))
    for col in ("#", "query", "doc", "score", "runs", "best", "q.terms", "q.cos", "p.terms", "p.cos"):
        text = col in ("query", "doc")
        t.add_column(col, justify="left" if text else "right", no_wrap=True, overflow="ellipsis",
                     max_width=10 if text else None, min_width=None if text else len(col))
    for i, s in enumerate(tri.suspects[:N_SHOWN]):
        f = s.features
        t.add_row(str(i + 1), tri.queries.get(s.qid, s.qid), s.doc_id, f"{s.score:.3f}",
                  f"{s.n_systems}/{len(tri.systems)}", str(s.best_rank),
                  *(_num(f[k]) for k in ("query_terms", "query_cosine", "positive_terms", "positive_cosine")))
    Console().print(t)
    typer.echo("runs: in the top --depth of how many runs; best: best rank; q.terms / q.cos: the query's terms in it "
               "(idf-weighted share) / embedding cosine; p.terms / p.cos: the same to the closest known positive")
    for note in tri.notes:
        typer.echo(f"note: {note}")


def _num(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"
