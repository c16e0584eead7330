"""The compiled helpers of ``src/finegrain/_native.c``, or None where finegrain was installed without a C compiler.

Each helper is a faster way to the result its caller's Python path computes, for the plain case only:
it returns None (or False) for anything else, and the caller takes its Python path, which accepts or
refuses the input with its own rules. So whether the module is built changes how fast finegrain is,
never what it returns (``tests/core/test_native.py`` checks both paths against each other).
"""

from __future__ import annotations

import importlib
from typing import Any

#: What the callers use; a module built from an older ``_native.c`` (a checkout updated without reinstalling)
#: lacks some, and is then not used at all.
FUNCTIONS = ("flatten", "columns_new", "columns_add", "columns_finish", "jsonl_add", "index_in", "judged_grades",
             "has_repeats", "string_ranks", "segments_of", "positions_of", "rank_rows")

NATIVE: Any
try:  # a compiled module: import-linter sees no Python source in it, and it imports nothing of finegrain
    NATIVE = importlib.import_module("finegrain._native")
except ImportError:  # built without a C compiler: every caller's Python path
    NATIVE = None
if NATIVE is not None and not all(hasattr(NATIVE, name) for name in FUNCTIONS):
    NATIVE = None
