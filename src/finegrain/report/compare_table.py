"""Terminal tables of a comparison, rendered from ``Comparison.to_json_dict()`` (or its saved JSON).

Marks: ``*`` significant by Fisher's randomization test, ``†`` by the paired
t-test (both two-sided, Holm-adjusted across the systems compared with the
baseline, per metric). In the per-type win/tie/loss tables ``*`` is the
randomization test within the type, Holm-adjusted across the types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from finegrain.compare.comparison import Comparison
from finegrain.report.console import table_console
from finegrain.report.table import fmt

RAND_MARK = "*"
T_MARK = "†"


def _pct(x: Any) -> str:
    return fmt(x)


def _delta(x: Any) -> str:
    if x is None:
        return "undefined"
    return f"{x * 100:+.2f}"


def _p(p: Any) -> str:
    if p is None:
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _marks(test: Mapping[str, Any]) -> str:
    return (RAND_MARK if test.get("significant") else "") + (T_MARK if test.get("significant_t") else "")


def headline_table(cmp: Mapping[str, Any]) -> Table:
    """One row per system and metric: mean [CI] x100, the difference to the baseline with its marks and p.

    Long form, so the table keeps five columns however many metrics are compared
    and fits an 80-column terminal.
    """
    conf = cmp["settings"]["confidence"]
    base = cmp["baseline"]
    t = Table(title=f"{cmp.get('dataset') or 'results'} · x100, {conf:.0%} bootstrap CI · baseline {base}",
              title_justify="left")
    t.add_column("system")
    t.add_column("metric", no_wrap=True)
    t.add_column("mean [CI]", justify="right", no_wrap=True)
    t.add_column("Δ", justify="right", no_wrap=True)
    t.add_column("p (Holm)", justify="right", no_wrap=True)
    for i, m in enumerate(cmp["metrics"]):
        if i:
            t.add_section()
        for sysrec in cmp["systems"]:
            name = sysrec["name"]
            s = cmp["summary"][m][name]
            lo, hi = s["ci"]
            mean = f"{_pct(s['mean'])} [{_pct(lo)}, {_pct(hi)}]" if lo is not None else _pct(s["mean"])
            test = cmp["tests"][m].get(name)
            diff, p = ("—", "") if test is None else (f"{_delta(test['mean_diff'])}{_marks(test)}", _p(test["p_rand_holm"]))
            t.add_row(f"{name} (baseline)" if sysrec["is_baseline"] else name, m, mean, diff, p)
    return t


def win_tie_loss_table(cmp: Mapping[str, Any], metric: str, system: str, *, wide: bool = True,
                       slices: str = "by_type") -> Table:
    """Per query type: W / T / L of ``system`` against the baseline (E>B / E=B / E<B), with per-type significance.

    ``wide`` adds the W/T/L shares and the unadjusted p; without it the table fits 80 columns.
    ``slices="by_rollup"``: per roll-up group instead (CapRetrieval's Table 3: Singleton Entity, ...).
    """
    test = cmp["tests"][metric][system]
    base = cmp["baseline"]
    title = f"win/tie/loss · {system} vs {base} · {metric}"
    if slices == "by_rollup":
        title = f"CapRetrieval Table 3 roll-up · {system} vs {base} · {metric}"
    if wide:
        title += f" (W = {system} higher, L = {base} higher)"
    t = Table(title=title, title_justify="left")
    t.add_column("type" if slices == "by_type" else "query group")
    t.add_column("n", justify="right")
    shares_cols = ("W %", "T %", "L %") if wide else ()
    for c in ("W", "T", "L", *shares_cols):
        t.add_column(c, justify="right")
    t.add_column("system", justify="right")
    t.add_column("baseline", justify="right")
    t.add_column("Δ", justify="right")
    if wide:
        t.add_column("p (rand)", justify="right")
    t.add_column("p (Holm)", justify="right")
    t.add_column("sig", justify="center")

    def shares(c: Mapping[str, Any]) -> list[str]:
        if not wide:
            return []
        n = c["win"] + c["tie"] + c["loss"]
        return [f"{100 * c[k] / n:.0f}%" if n else "—" for k in ("win", "tie", "loss")]

    def p_cols(c: Mapping[str, Any]) -> list[str]:
        return [_p(c["p_rand"]), _p(c["p_rand_holm"])] if wide else [_p(c["p_rand_holm"])]

    for group, c in test[slices].items():
        t.add_row(group, str(c["n"]), str(c["win"]), str(c["tie"]), str(c["loss"]), *shares(c),
                  _pct(c["mean"]), _pct(c["baseline_mean"]), _delta(c["mean_diff"]),
                  *p_cols(c), RAND_MARK if c["significant"] else "")
    summ = cmp["summary"][metric]
    t.add_section()
    t.add_row("all", str(test["n"]), str(test["win"]), str(test["tie"]), str(test["loss"]), *shares(test),
              _pct(summ[system]["mean"]), _pct(summ[base]["mean"]), _delta(test["mean_diff"]),
              *p_cols(test), _marks(test), style="bold")
    return t


def legend(cmp: Mapping[str, Any]) -> str:
    s = cmp["settings"]
    n_others = sum(1 for x in cmp["systems"] if not x["is_baseline"])
    return (
        f"{RAND_MARK} significant by Fisher's randomization test, {T_MARK} by the paired t-test "
        f"(two-sided, Holm-adjusted across the {n_others} system(s) compared with the baseline, per metric; "
        f"alpha {s['alpha']}). Per type: {RAND_MARK} = randomization test within the type, Holm-adjusted "
        f"across the types. W / T / L = win/tie/loss: queries where the system scores higher than / "
        f"the same as (|Δ| <= {s['tie_tolerance']:g}) / lower than the baseline {cmp['baseline']} "
        f"(E>B / E=B / E<B). Intervals: {s['confidence']:.0%} {s['ci_method']} bootstrap of the mean, "
        f"{s['n_resamples']} resamples, seed {s['seed']}."
    )


WIDE = 110  # columns from which the win/tie/loss tables add shares and unadjusted p-values


def comparison_tables(cmp: Mapping[str, Any], width: int = 200) -> list[Table]:
    tables = [headline_table(cmp)]
    for m in cmp["metrics"]:
        for name in cmp["tests"][m]:
            tables.append(win_tie_loss_table(cmp, m, name, wide=width >= WIDE))
            if cmp["tests"][m][name].get("by_rollup"):
                tables.append(win_tie_loss_table(cmp, m, name, wide=width >= WIDE, slices="by_rollup"))
    return tables


def print_comparison(comparison: Comparison | Mapping[str, Any], console: Console | None = None) -> None:
    """Print a comparison's tables, skipped metrics, notes and legend (what ``finegrain compare`` prints)."""
    cmp = comparison.to_json_dict() if isinstance(comparison, Comparison) else comparison
    if console is None:
        console = table_console()
    for t in comparison_tables(cmp, console.width):
        console.print(t)
    skipped = cmp.get("skipped_metrics") or {}
    for k, why in skipped.items():
        console.print(f"skipped {k}: {why}", highlight=False)
    for note in cmp.get("notes") or ():
        console.print(f"note: {note}", highlight=False)
    console.print(legend(cmp), highlight=False)
