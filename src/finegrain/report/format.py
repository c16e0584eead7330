"""How the report writes numbers and names: the leaf every report section imports (never the page module).

Values are shown x100 with two decimals (a rank as is), differences with a
sign, p-values to three decimals, and query types as words
(``singleton_object`` -> ``singleton object``).
"""

from __future__ import annotations

import math
from typing import Any

from finegrain.evaluate.groups import group_of

RANK_METRICS = frozenset({"median_rank"})  # values are ranks (lower is better), not fractions


def readable(name: str | None) -> str:
    """``singleton_object`` -> ``singleton object``; None -> ``untyped``."""
    return group_of(name).replace("_", " ").replace("-", " ")


def is_rank(key: str) -> bool:
    """True for a metric whose values are ranks (``median_rank@k``): shown as is, lower is better."""
    return key.split("@")[0].split("(")[0] in RANK_METRICS


def fmt(value: Any, key: str = "") -> str:
    """A metric value x100 with two decimals (a rank as is); an em dash for undefined."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{value:g}" if is_rank(key) else f"{value * 100:.2f}"


def fmt_p(p: Any) -> str:
    if p is None or (isinstance(p, float) and not math.isfinite(p)):
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def fmt_delta(value: Any) -> str:
    """A difference x100 with a sign; an em dash for undefined."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{value * 100:+.2f}"
