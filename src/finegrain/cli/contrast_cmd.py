"""``finegrain contrast``: FG-CDA / FG-CDE of an encoder on contrastive pairs, per category."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from finegrain.cli.options import encoder_option, no_cache_option, out_option, quiet_option, set_option


def contrast_command(
    pairs: str = typer.Option(..., "--pairs",
                              help="'sugarcrepe' (the 83 SugarCrepe pairs with a COCO-mini image; queries are the "
                                   "image's other COCO captions) or a JSONL file of pairs."),
    encoder: str = encoder_option(),
    out: Path = out_option("Folder for results.json."),
    directions: list[str] = typer.Option([], "--direction",
                                         help="text->text, text->image or image->text (repeatable; default: the two "
                                              "cross-modal ones with clip:PATH, else text->text)."),
    options: list[str] = set_option("Encoder option KEY=VALUE (repeatable); see finegrain list encoders."),
    resamples: int = typer.Option(10000, "--resamples", min=1, help="Bootstrap resamples (over pairs)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    pool: bool = typer.Option(False, "--pool",
                              help="Also retrieve from a pool (CCD Tables 2/4): R@1/R@5 with the targets alone and "
                                   "with every contrastive negative added, and the mean cosine of the contrastive "
                                   "pairs per category."),
    min_pairs: int = typer.Option(10, "--min-pairs", min=1,
                                  help="Ablation table: a cell with fewer pairs is flagged sparse."),
    no_cache: bool = no_cache_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON instead of tables."),
    quiet: bool = quiet_option(),
) -> None:
    """Share of (pair, query) where the target outscores its contrastive candidate, per category and overall."""
    import json

    from finegrain.atomic import write_text
    from finegrain.cli.options import encoder_options
    from finegrain.diagnose.contrastive import (
        SUGARCREPE_MAPPING_NOTES,
        SUGARCREPE_TO_CCD,
        run_contrast,
    )
    from finegrain.diagnose.contrastive.sugarcrepe import (
        SUGARCREPE_CATEGORIES,
        read_contrast_jsonl,
        sugarcrepe_pairs,
    )
    from finegrain.errors import FinegrainError
    from finegrain.results.probes import ContrastBootstrap, ContrastEncoder, PairsSource
    from finegrain.retrieve.dense.encoders.cache import CachedEncoder, EmbeddingCache
    from finegrain.retrieve.dense.encoders.registry import get_encoder
    from finegrain.settings import Settings
    from finegrain.version import __version__

    enc = get_encoder(encoder, **encoder_options(encoder, options))  # a bad name or option fails before any data is read
    settings = Settings.from_env()
    if pairs == "sugarcrepe":
        root = settings.require_data_root()
        pair_list = sugarcrepe_pairs(root)
        source: dict[str, Any] = {
            "name": "sugarcrepe", "path": str(root / "sugarcrepe"),
            "protocol": "SugarCrepe pairs whose COCO val2017 image is in coco_mini; target = positive caption, "
                        "contrastive = hard negative, queries = the image's other COCO captions",
            "category_to_ccd": dict(SUGARCREPE_TO_CCD), "mapping_notes": dict(SUGARCREPE_MAPPING_NOTES),
        }
        order: tuple[str, ...] = SUGARCREPE_CATEGORIES
    else:
        path = Path(pairs)
        if not path.is_file():
            raise FinegrainError(f"--pairs {pairs!r} is neither 'sugarcrepe' nor an existing file",
                                 "give --pairs sugarcrepe or the path of a JSONL file of pairs")
        pair_list = read_contrast_jsonl(path)
        source, order = {"name": path.name, "path": str(path.resolve())}, ()

    cache = None if no_cache or settings.cache_dir is None else EmbeddingCache(settings.cache_dir)
    texts = CachedEncoder(enc, cache, show_progress=not quiet)
    images = enc if hasattr(enc, "encode_images") else None
    outcome = run_contrast(pair_list, texts, images, directions=directions or None, category_order=order,
                           n_resamples=resamples, seed=seed, pool=pool, min_pairs=min_pairs)

    results = outcome.to_results(
        version=__version__, pairs=PairsSource.model_validate({**source, "n_pairs": len(pair_list)}),
        encoder=ContrastEncoder.model_validate({"spec": encoder, **enc.config()}),
        bootstrap=ContrastBootstrap(resamples=resamples, seed=seed, confidence=0.95, unit="pair"),
    )
    body = results.to_json()
    target = write_text(out / "results.json", json.dumps(body, ensure_ascii=False, indent=1) + "\n")
    if as_json:
        summary = {k: v for k, v in body.items() if k != "records"}
        if "pool" in summary:
            summary["pool"] = {**summary["pool"], "directions": [{k: v for k, v in d.items() if k != "units"}
                                                                 for d in summary["pool"]["directions"]]}
        typer.echo(json.dumps(summary, ensure_ascii=False, indent=1))
    else:
        print_contrast(body, title=f"{source['name']} · {encoder}")
        typer.echo(f"wrote {target}")


def print_contrast(body: dict[str, Any], title: str = "") -> None:
    """One table per direction: overall, per category, per CCD category, per CCD group."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 120))
    for d in body["directions"]:
        t = Table(title=f"{title} · {d['direction']} · FG-CDA", title_justify="left")
        for col, just in (("slice", "left"), ("name", "left"), ("pairs", "right"), ("n", "right"),
                          ("correct", "right"), ("FG-CDA %", "right"), ("95% CI", "right"), ("FG-CDE %", "right")):
            t.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
        sections = (("overall", [d["overall"]]), ("category", d["by_category"]),
                    ("CCD category", d["by_ccd_category"]), ("CCD group", d["by_ccd_group"]))
        for label, rows in sections:
            for i, a in enumerate(rows):
                lo, hi = a["fg_cda_ci"]
                t.add_row(label if i == 0 else "", a["name"], str(a["n_pairs"]), str(a["n"]), str(a["correct"]),
                          f"{100 * a['fg_cda']:.1f}", f"{100 * lo:.1f}-{100 * hi:.1f}", f"{100 * a['fg_cde']:.1f}",
                          end_section=i == len(rows) - 1)
        console.print(t)
        if d["unmapped_units"]:
            console.print(f"{d['unmapped_units']} (pair, query) units have no CCD category")
    for name, why in body.get("skipped_directions", {}).items():
        console.print(f"skipped {name}: {why}")
    for a in body.get("ablation") or []:
        print_ablation(console, a, title)
    for p in (body.get("pool") or {}).get("directions") or []:
        print_pool(console, p, title)


def _ci(lo: float, hi: float) -> str:
    return f"{100 * lo:.1f}-{100 * hi:.1f}"


def print_ablation(console: Any, a: dict[str, Any], title: str = "") -> None:
    """CCD category x dataset category: pairs and FG-CDA per cell (· empty, * sparse)."""
    from rich.table import Table

    t = Table(title=f"{title} · {a['direction']} · CCD category x category: pairs (FG-CDA %)", title_justify="left")
    t.add_column("CCD category", no_wrap=True)
    for c in [*a["columns"], "all"]:
        t.add_column(c, justify="right", no_wrap=True)

    def cell(c: dict[str, Any]) -> str:
        if not c["n_pairs"]:
            return "·"
        return f"{c['n_pairs']}{'*' if c['sparse'] else ''} ({100 * c['fg_cda']:.0f})"

    for i, r in enumerate(a["rows"]):
        t.add_row(r, *[cell(c) for c in a["cells"][i]], cell(a["row_totals"][i]))
    t.add_row("all", *[cell(c) for c in a["column_totals"]], cell(a["total"] | {"sparse": False}),
              end_section=True)
    console.print(t)
    console.print(f"{len(a['ccd_with_data'])} of {a['n_ccd_categories']} CCD categories have pairs; "
                  f"· no pair, * fewer than {a['min_pairs']} pairs (sparse)")


def print_pool(console: Any, p: dict[str, Any], title: str = "") -> None:
    """R@k without and with the contrastive negatives side by side, then the pair cosines per category."""
    from rich.table import Table

    ks = [key for key in p["change"]]
    t = Table(title=f"{title} · {p['direction']} · contrastive-pool retrieval ({p['n_units']} queries of "
                    f"{p['n_items']} items)", title_justify="left")
    t.add_column("pool", no_wrap=True)
    t.add_column("candidates", justify="right")
    for key in ks:
        name = key.replace("recall@", "R@")
        t.add_column(name, justify="right")
        t.add_column(f"{name} 95% CI", justify="right")
    for setting in ("without_negatives", "with_negatives"):
        s = p[setting]
        cells = []
        for key in ks:
            r = s[key]
            cells += [f"{100 * r['value']:.1f}", _ci(*r["ci"])]
        t.add_row(s["name"], str(s["n_candidates"]), *cells)
    change = []
    for key in ks:
        c = p["change"][key]
        change += [f"{100 * c['delta']:+.1f}", f"{100 * c['ci'][0]:+.1f} to {100 * c['ci'][1]:+.1f}"]
    t.add_row("change", "", *change)
    console.print(t)
    if p["n_excluded_query_in_pool"]:
        console.print(f"{p['n_excluded_query_in_pool']} (item, query) units left out: the query is itself a "
                      "candidate of the pool")
    c = Table(title=f"{title} · {p['direction']} · mean cosine of the contrastive pairs (CCD Fig. 5)",
              title_justify="left")
    for col, just in (("slice", "left"), ("name", "left"), ("pairs", "right"), ("mean cos", "right"),
                      ("95% CI", "right"), ("min", "right"), ("max", "right")):
        c.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
    pc = p["pair_cosine"]
    for label, rows in (("overall", [pc["overall"]]), ("category", pc["by_category"]),
                        ("CCD category", pc["by_ccd_category"])):
        for i, r in enumerate(rows):
            c.add_row(label if i == 0 else "", r["name"], str(r["n_pairs"]), f"{r['mean']:.3f}",
                      f"{r['ci'][0]:.3f}-{r['ci'][1]:.3f}", f"{r['min']:.3f}", f"{r['max']:.3f}",
                      end_section=i == len(rows) - 1)
    console.print(c)
