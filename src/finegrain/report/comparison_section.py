"""The page's comparison section, from ``finegrain compare``'s result (:mod:`finegrain.compare.comparison`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from finegrain.compare.systems import LabelledResults
from finegrain.report import charts
from finegrain.report.format import fmt_delta, fmt_p, readable


def ci_note(comparison: Mapping[str, Any] | None, intervals: Mapping[str, Any] | None) -> str:
    st = (comparison or {}).get("settings") or (intervals or {}).get("_settings")
    if not st:
        return ""
    return (f"In brackets: {st['confidence']:.0%} {st['ci_method']} bootstrap confidence interval of the mean over "
            f"queries ({st['n_resamples']} resamples, seed {st['seed']}).")


def comparison_view(comparison: Mapping[str, Any], systems: Sequence[LabelledResults], baseline: int, key: str,
                     types: Sequence[str]) -> dict[str, Any]:
    """Adapt :meth:`Comparison.to_json_dict` to the template: tests against the baseline and win/tie/loss."""

    st = comparison.get("settings") or {}
    tests: Mapping[str, Mapping[str, Any]] = comparison.get("tests") or {}
    base = systems[baseline].label
    versus = []
    for i, s in enumerate(systems):
        if i == baseline:
            continue
        for m in comparison.get("metrics") or []:
            t = (tests.get(m) or {}).get(s.label)
            if not t:
                continue
            lo, hi = t.get("diff_ci") or [None, None]
            versus.append({
                "label": s.label, "colour": charts.colour(i), "metric": m, "n": t.get("n"),
                "delta": fmt_delta(t.get("mean_diff")), "up": (t.get("mean_diff") or 0) >= 0,
                "diff_ci": f"[{fmt_delta(lo)}, {fmt_delta(hi)}]",
                "p_rand": fmt_p(t.get("p_rand_holm")), "p_t": fmt_p(t.get("p_t_holm")),
                "sig": bool(t.get("significant")), "sig_t": bool(t.get("significant_t")),
                "win": t.get("win"), "tie": t.get("tie"), "loss": t.get("loss"),
            })
    wtl = []
    for i, s in enumerate(systems):
        t = (tests.get(key) or {}).get(s.label)
        if i == baseline or not t:
            continue
        by_type = t.get("by_type") or {}
        rows = [{"name": "all queries", "overall": True, "n": t.get("n"), "win": t.get("win"), "tie": t.get("tie"),
                 "loss": t.get("loss"), "delta": fmt_delta(t.get("mean_diff")), "p": fmt_p(t.get("p_rand_holm")),
                 "sig": bool(t.get("significant"))}]
        order = [g for g in types if g in by_type] + [g for g in by_type if g not in types]
        for g in order:
            c = by_type[g]
            rows.append({"name": readable(g), "overall": False, "n": c.get("n"), "win": c.get("win"),
                         "tie": c.get("tie"), "loss": c.get("loss"), "delta": fmt_delta(c.get("mean_diff")),
                         "p": fmt_p(c.get("p_rand_holm")), "sig": bool(c.get("significant"))})
        chart = charts.win_tie_loss_chart(
            [(f"{r['name']} (n={r['n']})", r["win"] or 0, r["tie"] or 0, r["loss"] or 0) for r in rows],
            title=f"{s.label} vs {base} on {key}: queries won, tied, lost",
            labels=(f"{s.label} better", "tie", f"{base} better"),
            colours=(charts.colour(i), charts.TIE, charts.colour(baseline)),
        )
        wtl.append({"label": s.label, "rows": rows, "chart": Markup(chart)})
    alpha = st.get("alpha", 0.05)
    return {
        "versus": versus,
        "wtl": wtl,
        "alpha": alpha,
        "skipped": dict(comparison.get("skipped_metrics") or {}),
        "key_skipped": key not in tests,
        "note": (f"p: two-sided tests on the paired per-query values, Holm-adjusted across the systems compared "
                 f"with the baseline (per metric): Fisher's randomization test (sign flips, {st.get('n_resamples')} "
                 f"resamples) and the paired t-test. * marks a Holm-adjusted randomization p < {alpha}. "
                 f"W/T/L: queries where the system scores higher than, equal to (within {st.get('tie_tolerance', 0):g}) "
                 f"or lower than the baseline."),
        "wtl_note": (f"p is the randomization test within the slice, Holm-adjusted across the query types of this "
                     f"system; * marks p < {alpha}. Small slices rarely reach significance."),
    }
