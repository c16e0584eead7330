"""Charts of paired differences against a baseline: a forest plot and a histogram, as inline SVG.

Pure functions from numbers to one ``<svg>`` string, like :mod:`finegrain.report.charts`
(whose palette, escaping and fonts they share); no script, no plotting library.

- :func:`forest_plot` -- one row per system: its mean difference to the baseline (a dot)
  and the confidence interval of that difference (a whisker with end caps), a dashed line
  at 0 ("no difference"), and the row's label with its p-value and significance marker;
- :func:`difference_histogram` -- the distribution of one system's per-query differences
  (system minus baseline), in bins of equal width centred on 0 so that ties (a difference of
  exactly 0) fill the middle bar; :func:`histogram_bins` computes the bins.

Every drawn element carries its number (``data-value``, ``data-low``, ``data-high``,
``data-count``) and axis ticks carry theirs (``data-tick``), so tests check that what is
drawn sits where the numbers say.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from finegrain.report.charts import (
    GRID,
    MUTED,
    TEXT,
    Formatter,
    _svg_open,
    _t,
    _text_width,
    colour,
    percent_tick,
    row_label,
    x_axis,
)

__all__ = ["ForestRow", "difference_histogram", "forest_plot", "histogram_bins", "signed_percent"]


def signed_percent(v: float) -> str:
    """0.0123 -> '+1.23' (a difference on the report's x100 scale)."""
    return f"{v * 100:+.2f}"


@dataclass(frozen=True)
class ForestRow:
    """One row of a forest plot: a label, the mean difference, its interval, and a note (p-value, marker)."""

    label: str
    value: float | None
    low: float | None
    high: float | None
    note: str = ""
    colour: str = TEXT


def _finite(*xs: float | None) -> bool:
    return all(x is not None and math.isfinite(x) for x in xs)


def _row_note(r: ForestRow, fmt: Formatter) -> str:
    if r.value is None or r.low is None or r.high is None or not _finite(r.value, r.low, r.high):
        return "n/a"
    return f"{fmt(r.value)} [{fmt(r.low)}, {fmt(r.high)}]  {r.note}".rstrip()


def _nice_step(span: float, n: int = 6) -> float:
    """A tidy tick step (1, 2, 2.5, 5 x 10^k) giving about ``n`` intervals over ``span``."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / n
    if raw <= 0:  # span / n underflowed: the span itself is the smallest step there is
        return span
    exp = math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * 10.0**exp >= raw * (1 - 1e-12):  # relative: an absolute slack swallows spans near 1e-15
            return float(m * 10.0**exp)
    return float(10.0 ** (exp + 1))


def _axis(values: Sequence[float]) -> tuple[float, float, float]:
    """``(lo, hi, step)``: a range with 0 inside, ends on multiples of a tidy step."""
    lo, hi = min([0.0, *values]), max([0.0, *values])
    if hi - lo <= 0:
        lo, hi = -1.0, 1.0
    step = _nice_step(hi - lo)
    return math.floor(lo / step - 1e-9) * step, math.ceil(hi / step + 1e-9) * step, step


def forest_plot(
    rows: Sequence[ForestRow],
    *,
    title: str,
    axis_label: str,
    fmt: Formatter = signed_percent,
    tick_fmt: Formatter = percent_tick,
    width: float = 1100,
) -> str:
    """Differences to the baseline with their confidence intervals, one row per system.

    A row without a finite value or interval draws "n/a". The x axis spans
    every interval and 0, in tidy ticks; the row's text on the right is
    ``value [low, high]`` then ``note``.
    """
    drawn = [v for r in rows for v in (r.value, r.low, r.high) if v is not None and math.isfinite(v)]
    lo, hi, step = _axis(drawn)
    row_h = 30.0
    label_w = min(max((_text_width(r.label, 12) for r in rows), default=40) + 16, width * 0.3)
    notes = [_row_note(r, fmt) for r in rows]
    note_w = min(max((_text_width(n, 12) for n in notes), default=40) + 16, width * 0.35)
    left, right = label_w, note_w
    plot_w = width - left - right
    top_y = 40.0
    plot_h = max(len(rows), 1) * row_h
    height = top_y + plot_h + 50
    out = _svg_open(width, height, title)
    out.append(f'<text x="8" y="20" font-size="14" font-weight="600">{_t(title)}</text>')

    def x_of(v: float) -> float:
        return left + plot_w * (v - lo) / (hi - lo)

    ticks = [lo + i * step for i in range(round((hi - lo) / step) + 1)]
    out += x_axis(x_of, [(t, tick_fmt(t)) for t in ticks], left=left, plot_w=plot_w, top_y=top_y, plot_h=plot_h,
                  label=axis_label, label_gap=36)
    zero = x_of(0.0)
    out.append(f'<line class="zero" x1="{zero:.2f}" y1="{top_y - 6:.1f}" x2="{zero:.2f}" y2="{top_y + plot_h:.1f}" '
               f'stroke="{MUTED}" stroke-dasharray="4 3"/>')
    for i, (r, note) in enumerate(zip(rows, notes)):
        y = top_y + row_h * i + row_h / 2
        out.append(row_label(left, y, r.label))
        out.append(f'<text class="note" x="{left + plot_w + 10:.1f}" y="{y + 4:.1f}">{_t(note)}</text>')
        if not _finite(r.value, r.low, r.high):
            continue
        assert r.value is not None and r.low is not None and r.high is not None
        x1, x2, xv = x_of(r.low), x_of(r.high), x_of(r.value)
        tip = _t(f"{r.label}: {note}")
        out.append(f'<g class="row" data-label="{_t(r.label)}"><title>{tip}</title>'
                   f'<line class="whisker" data-low="{r.low:.12g}" data-high="{r.high:.12g}" x1="{x1:.2f}" '
                   f'y1="{y:.1f}" x2="{x2:.2f}" y2="{y:.1f}" stroke="{r.colour}" stroke-width="2"/>'
                   f'<line x1="{x1:.2f}" y1="{y - 6:.1f}" x2="{x1:.2f}" y2="{y + 6:.1f}" stroke="{r.colour}" stroke-width="2"/>'
                   f'<line x1="{x2:.2f}" y1="{y - 6:.1f}" x2="{x2:.2f}" y2="{y + 6:.1f}" stroke="{r.colour}" stroke-width="2"/>'
                   f'<circle class="point" data-value="{r.value:.12g}" cx="{xv:.2f}" cy="{y:.1f}" r="5" '
                   f'fill="{r.colour}" stroke="#fff"/></g>')
    out.append("</svg>")
    return "\n".join(out)


def histogram_bins(values: Sequence[float], n_side: int = 10) -> tuple[list[float], list[int]]:
    """``(edges, counts)``: ``2 * n_side + 1`` bins of equal width centred on 0 (the middle bin holds the ties).

    The width is a tidy step with ``n_side`` bins covering the largest ``|value|``
    on each side; every finite value falls in exactly one bin (a bin holds
    ``edge_i <= v < edge_i+1``; a value on the last edge goes to the last bin).
    """
    vals = [float(v) for v in values if v is not None and math.isfinite(v)]
    top = max((abs(v) for v in vals), default=0.0)
    width = _nice_step(top, n_side) if top > 0 else 1.0
    while width * (n_side + 0.5) < top:  # the step rounds down only by float noise; widen if ever short
        width = _nice_step(width * n_side * 1.01, n_side)
    edges = [(i - n_side - 0.5) * width for i in range(2 * n_side + 2)]
    counts = [0] * (2 * n_side + 1)
    for v in vals:
        i = min(max(math.floor(v / width + n_side + 0.5), 0), len(counts) - 1)
        counts[i] += 1
    return edges, counts


def difference_histogram(
    values: Sequence[float],
    *,
    title: str,
    x_label: str,
    fill: str | None = None,
    tick_fmt: Formatter = percent_tick,
    width: float = 540,
    height: float = 280,
) -> str:
    """Bars of the per-query differences (system minus baseline) in :func:`histogram_bins`; the count above each bar.

    The y axis counts queries; the x axis is the difference, with 0 marked.
    """
    edges, counts = histogram_bins(values)
    fill = fill or colour(1)
    left, right, top_y, bottom = 46.0, 14.0, 36.0, 46.0
    plot_w, plot_h = width - left - right, height - top_y - bottom
    ymax = max(max(counts, default=0), 1)
    ystep = max(1, math.ceil(_nice_step(ymax, 4)))
    ytop = math.ceil(ymax / ystep) * ystep
    lo, hi = edges[0], edges[-1]

    def x_of(v: float) -> float:
        return left + plot_w * (v - lo) / (hi - lo)

    def y_of(c: float) -> float:
        return top_y + plot_h * (1 - c / ytop)

    out = _svg_open(width, height, title)
    out.append(f'<text x="8" y="20" font-size="14" font-weight="600">{_t(title)}</text>')
    for c in range(0, ytop + 1, ystep):
        y = y_of(c)
        out.append(f'<line x1="{left:.1f}" y1="{y:.2f}" x2="{left + plot_w:.1f}" y2="{y:.2f}" stroke="{GRID}"/>')
        out.append(f'<text class="ytick" data-tick="{c}" x="{left - 6:.1f}" y="{y:.2f}" text-anchor="end" '
                   f'dominant-baseline="middle" fill="{MUTED}">{c}</text>')
    n_bins = len(counts)
    mid = n_bins // 2
    for i, c in enumerate(counts):
        x1, x2 = x_of(edges[i]), x_of(edges[i + 1])
        if c:
            y = y_of(c)
            tip = _t(f"{tick_fmt(edges[i])} to {tick_fmt(edges[i + 1])}: {c} quer{'y' if c == 1 else 'ies'}")
            out.append(f'<rect class="bar" data-low="{edges[i]:.12g}" data-high="{edges[i + 1]:.12g}" data-count="{c}" '
                       f'x="{x1 + 0.5:.2f}" y="{y:.2f}" width="{max(x2 - x1 - 1, 0.5):.2f}" '
                       f'height="{top_y + plot_h - y:.2f}" fill="{fill}"><title>{tip}</title></rect>')
            out.append(f'<text x="{(x1 + x2) / 2:.2f}" y="{y - 3:.2f}" text-anchor="middle" font-size="10">{c}</text>')
        if (i - mid) % 5 == 0:  # ticks at 0 and every fifth bin centre
            centre = (edges[i] + edges[i + 1]) / 2
            out.append(f'<text class="xtick" data-tick="{centre:.12g}" x="{x_of(centre):.2f}" '
                       f'y="{top_y + plot_h + 15:.1f}" text-anchor="middle" fill="{MUTED}">{_t(tick_fmt(centre))}</text>')
    zero = x_of(0.0)
    out.append(f'<line class="zero" x1="{zero:.2f}" y1="{top_y:.1f}" x2="{zero:.2f}" y2="{top_y + plot_h:.1f}" '
               f'stroke="{MUTED}" stroke-dasharray="4 3"/>')
    out.append(f'<line x1="{left:.1f}" y1="{top_y + plot_h:.1f}" x2="{left + plot_w:.1f}" y2="{top_y + plot_h:.1f}" '
               f'stroke="{MUTED}"/>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 8:.1f}" text-anchor="middle" fill="{MUTED}">'
               f"{_t(x_label)}</text>")
    out.append(f'<text transform="translate(12 {top_y + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle" '
               f'fill="{MUTED}">queries</text>')
    out.append("</svg>")
    return "\n".join(out)
