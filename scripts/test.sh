#!/usr/bin/env bash
# Set up (with the test extras, dlib faces and Chromium for the browser tests), then run the
# whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/install-faces.sh
[[ -f scripts/install-system-deps.sh ]] && bash scripts/install-system-deps.sh
exec .venv/bin/python -m pytest -q "$@"
