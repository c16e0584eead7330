"""Finding headless Chromium for the browser tests: skipped locally when it is missing, failed in CI
(where scripts/install-system-deps.sh installs it and the test must run)."""

from __future__ import annotations

import os
import shutil

import pytest

CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(msg: str, *, module_level: bool = False) -> None:
    """Fail in CI, skip elsewhere."""
    if in_ci():
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg, allow_module_level=module_level)


def find_chromium(purpose: str) -> str:
    """The Chromium binary (``$FINEGRAIN_CHROMIUM`` or the usual names) for ``purpose``."""
    env = os.environ.get("FINEGRAIN_CHROMIUM")
    candidates = [env] if env else list(CANDIDATES)
    for c in candidates:
        found = shutil.which(c) if c else None
        if found:
            return found
    missing(f"headless Chromium is needed for {purpose} and was not found "
            f"(looked for {', '.join(c for c in candidates if c)}); install it with "
            "`bash scripts/install-system-deps.sh` (apt-get install -y chromium) or set FINEGRAIN_CHROMIUM")
    raise AssertionError("unreachable")
