"""Terminal tables of a comparison, rendered from a :class:`~finegrain.compare.comparison.Comparison`.

Marks: ``*`` significant by Fisher's randomization test, ``†`` by the paired
t-test (both two-sided, Holm-adjusted across the systems compared with the
baseline, per metric). In the per-type win/tie/loss tables ``*`` is the
randomization test within the type, Holm-adjusted across the types.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from finegrain.compare.comparison import Comparison, PairedTest, finite
from finegrain.compare.stats import WinTieLoss
from finegrain.report.console import table_console
from finegrain.report.table import fmt

RAND_MARK = "*"
T_MARK = "†"


def _pct(x: float | None) -> str:
    return fmt(finite(x))


def _delta(x: float | None) -> str:
    x = finite(x)
    if x is None:
        return "undefined"
    return f"{x * 100:+.2f}"


def _p(p: float | None) -> str:
    p = finite(p)
    if p is None:
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _marks(test: PairedTest) -> str:
    return (RAND_MARK if test.significant else "") + (T_MARK if test.significant_t else "")


def headline_table(cmp: Comparison) -> Table:
    """One row per system and metric: mean [CI] x100, the difference to the baseline with its marks and p.

    Long form, so the table keeps five columns however many metrics are compared
    and fits an 80-column terminal.
    """
    conf = cmp.settings.confidence
    base = cmp.baseline
    t = Table(title=f"{cmp.dataset or 'results'} · x100, {conf:.0%} bootstrap CI · baseline {base}",
              title_justify="left")
    t.add_column("system")
    t.add_column("metric", no_wrap=True)
    t.add_column("mean [CI]", justify="right", no_wrap=True)
    t.add_column("Δ", justify="right", no_wrap=True)
    t.add_column("p (Holm)", justify="right", no_wrap=True)
    for i, m in enumerate(cmp.metrics):
        if i:
            t.add_section()
        for system in cmp.systems:
            name = system.name
            s = cmp.summaries[m][name]
            lo, hi = finite(s.ci.low), finite(s.ci.high)
            mean = f"{_pct(s.mean)} [{_pct(lo)}, {_pct(hi)}]" if lo is not None else _pct(s.mean)
            test = cmp.tests[m].get(name)
            diff, p = ("—", "") if test is None else (f"{_delta(test.mean_diff)}{_marks(test)}", _p(test.p_rand_holm))
            t.add_row(f"{name} (baseline)" if name == cmp.baseline else name, m, mean, diff, p)
    return t


def win_tie_loss_table(cmp: Comparison, metric: str, system: str, *, wide: bool = True,
                       slices: str = "by_type") -> Table:
    """Per query type: W / T / L of ``system`` against the baseline (E>B / E=B / E<B), with per-type significance.

    ``wide`` adds the W/T/L shares and the unadjusted p; without it the table fits 80 columns.
    ``slices="by_rollup"``: per roll-up group instead (CapRetrieval's Table 3: Singleton Entity, ...).
    """
    test = cmp.tests[metric][system]
    base = cmp.baseline
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

    def shares(w: WinTieLoss) -> list[str]:
        if not wide:
            return []
        return [f"{100 * k / w.n:.0f}%" if w.n else "—" for k in (w.win, w.tie, w.loss)]

    def p_cols(p_rand: float | None, p_holm: float | None) -> list[str]:
        return [_p(p_rand), _p(p_holm)] if wide else [_p(p_holm)]

    for c in (test.by_type if slices == "by_type" else test.by_rollup):
        w = c.wtl
        t.add_row(c.slice, str(c.n), str(w.win), str(w.tie), str(w.loss), *shares(w),
                  _pct(c.mean), _pct(c.baseline_mean), _delta(c.mean_diff),
                  *p_cols(c.p_rand, c.p_rand_holm), RAND_MARK if c.significant else "")
    summ = cmp.summaries[metric]
    w = test.wtl
    t.add_section()
    t.add_row("all", str(test.n), str(w.win), str(w.tie), str(w.loss), *shares(w),
              _pct(summ[system].mean), _pct(summ[base].mean), _delta(test.mean_diff),
              *p_cols(test.p_rand, test.p_rand_holm), _marks(test), style="bold")
    return t


def legend(cmp: Comparison) -> str:
    s = cmp.settings
    n_others = sum(1 for x in cmp.systems if x.name != cmp.baseline)
    return (
        f"{RAND_MARK} significant by Fisher's randomization test, {T_MARK} by the paired t-test "
        f"(two-sided, Holm-adjusted across the {n_others} system(s) compared with the baseline, per metric; "
        f"alpha {s.alpha}). Per type: {RAND_MARK} = randomization test within the type, Holm-adjusted "
        f"across the types. W / T / L = win/tie/loss: queries where the system scores higher than / "
        f"the same as (|Δ| <= {s.tol:g}) / lower than the baseline {cmp.baseline} "
        f"(E>B / E=B / E<B). Intervals: {s.confidence:.0%} {s.ci_method} bootstrap of the mean, "
        f"{s.n_resamples} resamples, seed {s.seed}."
    )


WIDE = 110  # columns from which the win/tie/loss tables add shares and unadjusted p-values


def comparison_tables(cmp: Comparison, width: int = 200) -> list[Table]:
    tables = [headline_table(cmp)]
    for m in cmp.metrics:
        for name, test in cmp.tests[m].items():
            tables.append(win_tie_loss_table(cmp, m, name, wide=width >= WIDE))
            if test.by_rollup:
                tables.append(win_tie_loss_table(cmp, m, name, wide=width >= WIDE, slices="by_rollup"))
    return tables


def print_comparison(cmp: Comparison, console: Console | None = None) -> None:
    """Print a comparison's tables, skipped metrics, notes and legend (what ``finegrain compare`` prints)."""
    if console is None:
        console = table_console()
    for t in comparison_tables(cmp, console.width):
        console.print(t)
    for k, why in cmp.skipped.items():
        console.print(f"skipped {k}: {why}", highlight=False)
    for note in cmp.notes:
        console.print(f"note: {note}", highlight=False)
    console.print(legend(cmp), highlight=False)
