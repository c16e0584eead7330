#!/usr/bin/env bash
# Create .venv (if missing) and install finegrain with the given extras into it.
# Usage: bash scripts/setup.sh [EXTRAS]     e.g. bash scripts/setup.sh test
set -euo pipefail
cd "$(dirname "$0")/.."
extras=${1:-}
if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
spec="."
[[ -n $extras ]] && spec=".[$extras]"
.venv/bin/python -m pip install -q --disable-pip-version-check -e "$spec" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import finegrain" || { echo "setup failed: finegrain does not import" >&2; exit 1; }
