#!/usr/bin/env bash
# System packages the tests need beyond pip: headless Chromium for the browser tests
# (tests/album/engine/test_album_web_browser.py drives it over the DevTools protocol; no chromedriver) and
# WordNet 3.0 for the fine-grained probes (finegrain.lexicons.wordnet reads /usr/share/wordnet).
# Debian/Ubuntu; run as root or with sudo. Idempotent: installs only what is missing.
# Usage: bash scripts/install-system-deps.sh
set -euo pipefail
need=()
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && ! command -v google-chrome >/dev/null; then
    need+=(chromium fonts-noto-cjk)
fi
[[ -f /usr/share/wordnet/data.noun ]] || need+=(wordnet-base)
[[ -f /usr/share/wordnet/index.sense ]] || need+=(wordnet-sense-index)
if ((${#need[@]} == 0)); then
    echo "system dependencies present: $(command -v chromium || command -v chromium-browser || command -v google-chrome), WordNet"
    exit 0
fi
sudo=()
((EUID == 0)) || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${need[@]}"
