#!/usr/bin/env bash
# Set up (with the test extras, dlib faces and Chromium for the browser tests), then lint, type-check
# and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/install-faces.sh
[[ -f scripts/install-system-deps.sh ]] && bash scripts/install-system-deps.sh
# Lint (ruff) and types (mypy, strict on the core types, metrics and evaluation) before the tests.
.venv/bin/ruff check src tests benchmarks
.venv/bin/mypy src/finegrain/types.py src/finegrain/metrics src/finegrain/evaluate
exec .venv/bin/python -m pytest -q "$@"
