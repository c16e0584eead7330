"""The page's comparison section, from ``finegrain compare``'s result (:mod:`finegrain.compare.comparison`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from finegrain.compare.comparison import CompareSettings, Comparison, finite
from finegrain.compare.systems import LabelledResults
from finegrain.report import charts
from finegrain.report.format import fmt_delta, fmt_p, readable


def ci_note(settings: CompareSettings | None) -> str:
    if settings is None:
        return ""
    return (f"In brackets: {settings.confidence:.0%} {settings.ci_method} bootstrap confidence interval of the mean "
            f"over queries ({settings.n_resamples} resamples, seed {settings.seed}).")


def comparison_view(comparison: Comparison, systems: Sequence[LabelledResults], baseline: int, key: str,
                    types: Sequence[str]) -> dict[str, Any]:
    """Adapt a :class:`Comparison` to the template: tests against the baseline and win/tie/loss."""

    st = comparison.settings
    tests = comparison.tests
    base = systems[baseline].label
    versus = []
    for i, s in enumerate(systems):
        if i == baseline:
            continue
        for m in comparison.metrics:
            t = (tests.get(m) or {}).get(s.label)
            if t is None:
                continue
            diff = finite(t.mean_diff)
            versus.append({
                "label": s.label, "colour": charts.colour(i), "metric": m, "n": t.n,
                "delta": fmt_delta(diff), "up": (diff or 0) >= 0,
                "diff_ci": f"[{fmt_delta(finite(t.diff_ci.low))}, {fmt_delta(finite(t.diff_ci.high))}]",
                "p_rand": fmt_p(finite(t.p_rand_holm)), "p_t": fmt_p(finite(t.p_t_holm)),
                "sig": t.significant, "sig_t": t.significant_t,
                "win": t.wtl.win, "tie": t.wtl.tie, "loss": t.wtl.loss,
            })
    wtl = []
    for i, s in enumerate(systems):
        t = (tests.get(key) or {}).get(s.label)
        if i == baseline or t is None:
            continue
        by_type = {c.slice: c for c in t.by_type}
        rows: list[dict[str, Any]] = [{"name": "all queries", "overall": True, "n": t.n, "win": t.wtl.win, "tie": t.wtl.tie,
                 "loss": t.wtl.loss, "delta": fmt_delta(finite(t.mean_diff)), "p": fmt_p(finite(t.p_rand_holm)),
                 "sig": t.significant}]
        order = [g for g in types if g in by_type] + [g for g in by_type if g not in types]
        for g in order:
            c = by_type[g]
            rows.append({"name": readable(g), "overall": False, "n": c.n, "win": c.wtl.win,
                         "tie": c.wtl.tie, "loss": c.wtl.loss, "delta": fmt_delta(finite(c.mean_diff)),
                         "p": fmt_p(finite(c.p_rand_holm)), "sig": c.significant})
        chart = charts.win_tie_loss_chart(
            [(f"{r['name']} (n={r['n']})", r["win"] or 0, r["tie"] or 0, r["loss"] or 0) for r in rows],
            title=f"{s.label} vs {base} on {key}: queries won, tied, lost",
            labels=(f"{s.label} better", "tie", f"{base} better"),
            colours=(charts.colour(i), charts.TIE, charts.colour(baseline)),
        )
        wtl.append({"label": s.label, "rows": rows, "chart": Markup(chart)})
    alpha = st.alpha
    return {
        "versus": versus,
        "wtl": wtl,
        "alpha": alpha,
        "skipped": dict(comparison.skipped),
        "key_skipped": key not in tests,
        "note": (f"p: two-sided tests on the paired per-query values, Holm-adjusted across the systems compared "
                 f"with the baseline (per metric): Fisher's randomization test (sign flips, {st.n_resamples} "
                 f"resamples) and the paired t-test. * marks a Holm-adjusted randomization p < {alpha}. "
                 f"W/T/L: queries where the system scores higher than, equal to (within {st.tol:g}) "
                 f"or lower than the baseline."),
        "wtl_note": (f"p is the randomization test within the slice, Holm-adjusted across the query types of this "
                     f"system; * marks p < {alpha}. Small slices rarely reach significance."),
    }
