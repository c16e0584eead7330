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
    no_cache: bool = no_cache_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON instead of tables."),
    quiet: bool = quiet_option(),
) -> None:
    """Share of (pair, query) where the target outscores its contrastive candidate, per category and overall."""
    import json

    from finegrain import __version__
    from finegrain.cli.options import encoder_options
    from finegrain.diagnose.contrastive import (
        SUGARCREPE_MAPPING_NOTES,
        SUGARCREPE_TO_CCD,
        run_contrast,
    )
    from finegrain.errors import FinegrainError
    from finegrain.io.sugarcrepe import (
        SUGARCREPE_CATEGORIES,
        read_contrast_jsonl,
        sugarcrepe_pairs,
    )
    from finegrain.retrieve.encoders.cache import CachedEncoder, EmbeddingCache
    from finegrain.retrieve.encoders.registry import get_encoder
    from finegrain.settings import Settings

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
                           n_resamples=resamples, seed=seed)

    body = {
        "schema": "finegrain.contrast/1", "tool": "finegrain contrast", "version": __version__,
        "pairs": {**source, "n_pairs": len(pair_list)},
        "encoder": {"spec": encoder, **enc.config()},
        "bootstrap": {"resamples": resamples, "seed": seed, "confidence": 0.95, "unit": "pair"},
        **outcome.to_json_dict(),
    }
    try:
        out.mkdir(parents=True, exist_ok=True)
        target = out / "results.json"
        target.write_text(json.dumps(body, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    except OSError as e:
        raise FinegrainError(f"cannot write {str(out)!r}: {e.strerror}", "choose a writable --out folder") from None
    if as_json:
        summary = {k: v for k, v in body.items() if k != "records"}
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
