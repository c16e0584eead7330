"""A comparison as tables: rich terminal tables, plain text, Markdown, LaTeX and a pandas DataFrame.

Every view of a :class:`~finegrain.compare.comparison.Comparison` is rendered here: ``str(cmp)``,
``repr(cmp)``, ``cmp.to_table()`` / ``to_markdown()`` / ``to_latex()`` / ``to_dataframe()``, and
the tables ``finegrain compare`` prints (:mod:`finegrain.report.compare_table` prints these to the
console). Values are the means of the per-query values, x100 where the metric is a fraction
(:mod:`finegrain.evaluate.summary`); the DataFrame keeps raw values.

Marks: ``*`` significant by Fisher's randomization test, ``†`` by the paired
t-test (both two-sided, Holm-adjusted across the systems compared with the
baseline, per metric). In the per-type win/tie/loss tables ``*`` is the
randomization test within the type, Holm-adjusted across the types.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from finegrain._lazy import require
from finegrain.compare.stats import WinTieLoss, finite
from finegrain.evaluate.summary import html_table, is_fraction, text_table, value_text

if TYPE_CHECKING:
    from finegrain.compare.comparison import Comparison, PairedTest

RAND_MARK = "*"
T_MARK = "†"
TEXT_WIDTH = 100  # columns of str(comparison)


def _pct(x: float | None) -> str:
    x = finite(x)
    return "undefined" if x is None else f"{x * 100:.2f}"


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


# --------------------------------------------------------------------------- the terminal tables (rich)


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


def _marks_legend(cmp: Comparison) -> str:
    s = cmp.settings
    n_others = sum(1 for x in cmp.systems if x.name != cmp.baseline)
    return (f"{RAND_MARK} significant by Fisher's randomization test, {T_MARK} by the paired t-test "
            f"(two-sided, Holm-adjusted across the {n_others} system(s) compared with the baseline, per metric; "
            f"alpha {s.alpha})")


def _intervals_legend(cmp: Comparison) -> str:
    s = cmp.settings
    return (f"Intervals: {s.confidence:.0%} {s.ci_method} bootstrap of the mean, "
            f"{s.n_resamples} resamples, seed {s.seed}.")


def legend(cmp: Comparison) -> str:
    s = cmp.settings
    return (
        f"{_marks_legend(cmp)}. Per type: {RAND_MARK} = randomization test within the type, Holm-adjusted "
        f"across the types. W / T / L = win/tie/loss: queries where the system scores higher than / "
        f"the same as (|Δ| <= {s.tol:g}) / lower than the baseline {cmp.baseline} "
        f"(E>B / E=B / E<B). {_intervals_legend(cmp)}"
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


def render_text(tables: Sequence[Table], width: int = TEXT_WIDTH) -> str:
    """Rich tables as plain text (no colour, no terminal codes)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False, force_jupyter=False,
                      legacy_windows=False, soft_wrap=False)
    for t in tables:
        console.print(t)
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip("\n").splitlines())


def comparison_text(cmp: Comparison) -> str:
    """``str(comparison)``: the headline table, skipped metrics, notes and the legend of its marks."""
    lines = [render_text([headline_table(cmp)])]
    lines += [f"skipped {k}: {why}" for k, why in cmp.skipped.items()]
    lines += [f"note: {note}" for note in cmp.notes]
    lines.append(f"{_marks_legend(cmp)}. {_intervals_legend(cmp)}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the wide views (one row per system)


def _cell(cmp: Comparison, metric: str, system: str, marks: tuple[str, str] = (RAND_MARK, T_MARK)) -> str:
    value = value_text(metric, finite(cmp.summaries[metric][system].mean))
    test = cmp.tests[metric].get(system)
    if test is None:
        return value
    return value + (marks[0] if test.significant else "") + (marks[1] if test.significant_t else "")


def _system_label(cmp: Comparison, name: str) -> str:
    return f"{name} (baseline)" if name == cmp.baseline else name


def _wide(cmp: Comparison, marks: tuple[str, str] = (RAND_MARK, T_MARK)) -> tuple[list[str], list[list[str]]]:
    header = ["system", *cmp.metrics]
    rows = [[_system_label(cmp, s.name), *(_cell(cmp, m, s.name, marks) for m in cmp.metrics)] for s in cmp.systems]
    return header, rows


def _scale(cmp: Comparison) -> str:
    raw = [m for m in cmp.metrics if not is_fraction(m)]
    return "means x100" + (f" ({', '.join(raw)} as is)" if raw else "")


def _queries_line(cmp: Comparison) -> str:
    if not any(cmp.n_queries.values()):
        return "queries: aggregates only (no per-query values: no interval or test)"
    counts: dict[int, list[str]] = {}
    for m in cmp.metrics:
        counts.setdefault(cmp.n_queries[m], []).append(m)
    if len(counts) == 1:
        return f"queries: {next(iter(counts))} compared per metric (those with a value in every system)"
    return "queries compared: " + "; ".join(f"{', '.join(ms)}: {n}" for n, ms in counts.items())


def _caption(cmp: Comparison) -> str:
    on = f" on {cmp.dataset!r}" if cmp.dataset else ""
    return f"Comparison of {len(cmp.systems)} systems{on}: {_scale(cmp)}, baseline {cmp.baseline!r}"


def comparison_repr(cmp: Comparison) -> str:
    """``repr(comparison)``: one row per system, one column per metric, then the queries compared."""
    header, rows = _wide(cmp)
    marks = f"{RAND_MARK} / {T_MARK} significant vs the baseline (randomization / t-test, Holm, alpha {cmp.settings.alpha})"
    return f"{_caption(cmp)}\n{text_table(header, rows)}\n{_queries_line(cmp)}; {marks}"


def comparison_html(cmp: Comparison) -> str:
    header, rows = _wide(cmp)
    return html_table(_caption(cmp), header, rows, f"{_queries_line(cmp)}; {_marks_legend(cmp)}")


def to_markdown(cmp: Comparison) -> str:
    """A Markdown table (one row per system), then a line saying the scale and the marks."""
    header, rows = _wide(cmp, (r"\*", T_MARK))

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", r"\|") for c in cells) + " |"

    table = [line(header), "|" + "|".join([" --- "] + [" ---: "] * len(cmp.metrics)) + "|", *map(line, rows)]
    return "\n".join([*table, "", f"{_caption(cmp)}. {_queries_line(cmp)}. {_marks_legend(cmp)}."])


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def to_latex(cmp: Comparison) -> str:
    """A LaTeX ``tabular`` (booktabs rules: ``\\usepackage{booktabs}``), one row per system; a comment above
    says the scale and the marks ($^{*}$ randomization test, $^{\\dagger}$ paired t-test)."""
    rows = []
    for s in cmp.systems:
        cells = [_tex(_system_label(cmp, s.name))]
        for m in cmp.metrics:
            cells.append(_tex(_cell(cmp, m, s.name, ("", ""))) + _latex_marks(cmp.tests[m].get(s.name)))
        rows.append(" & ".join(cells) + r" \\")
    comment = f"% {_caption(cmp)}. {_queries_line(cmp)}. {_marks_legend(cmp)}.".replace(T_MARK, "dagger")
    return "\n".join([
        comment,
        r"\begin{tabular}{l" + "r" * len(cmp.metrics) + "}",
        r"\toprule",
        " & ".join(["System", *map(_tex, cmp.metrics)]) + r" \\",
        r"\midrule",
        *rows,
        r"\bottomrule",
        r"\end{tabular}",
    ])


def _latex_marks(test: PairedTest | None) -> str:
    if test is None or not (test.significant or test.significant_t):
        return ""
    return "$^{" + ("*" if test.significant else "") + (r"\dagger" if test.significant_t else "") + "}$"


def to_dataframe(cmp: Comparison) -> Any:
    """Long form, one row per system and metric: ``system, metric, mean, ci_low, ci_high, diff, p, significant``.

    Raw values (not x100); ``diff`` is system - baseline, ``p`` the Holm-adjusted randomization p,
    ``significant`` whether it is below alpha. The baseline's ``diff`` and ``p`` are NaN and it is not
    significant; an undefined value is NaN.
    """
    pd = require("pandas", "interop")
    nan = float("nan")
    rows = []
    for m in cmp.metrics:
        for s in cmp.systems:
            summary = cmp.summaries[m][s.name]
            test = cmp.tests[m].get(s.name)
            rows.append({
                "system": s.name, "metric": m, "mean": _num(summary.mean), "ci_low": _num(summary.ci.low),
                "ci_high": _num(summary.ci.high),
                "diff": nan if test is None else _num(test.mean_diff),
                "p": nan if test is None else _num(test.p_rand_holm),
                "significant": False if test is None else bool(test.significant),
            })
    columns = ["system", "metric", "mean", "ci_low", "ci_high", "diff", "p", "significant"]
    return pd.DataFrame(rows, columns=columns)


def _num(x: float | None) -> float:
    value = finite(x)
    return float("nan") if value is None else value


__all__ = ["RAND_MARK", "T_MARK", "WIDE", "comparison_html", "comparison_repr", "comparison_tables",
           "comparison_text", "headline_table", "legend", "render_text", "to_dataframe", "to_latex", "to_markdown",
           "win_tie_loss_table"]
