#!/usr/bin/env bash
# Set up, then run the main job on the embedded bilingual caption set: BM25 (Okapi), graded nDCG and more.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=${1:-results/demo}
for lang in zh en; do
  .venv/bin/finegrain eval --dataset "embedded/captions-$lang" --retriever bm25-okapi \
    --metrics ndcg@1,ndcg@5,ndcg@10,recall@10,mrr@10,hit_rate@1,set_f1,reject_f1 --out "$out/$lang"
done
