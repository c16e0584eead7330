"""Inline SVG charts for the probe sections (perturbation, contrastive discrimination).

Pure functions from numbers to one ``<svg>`` string, like
:mod:`finegrain.report.charts` (same palette, fonts and escaping):

- :func:`share_chart` -- one 100 % stacked horizontal bar per row, each part
  labelled with its saved percentage and count (Table 4: the best relevant item
  moved lower / stayed / moved higher);
- :func:`interval_chart` -- a dot and a whisker per row and series (an estimate
  with its confidence interval) against a reference line (0 for a delta, 50 %
  for a pairwise accuracy), the numbers written in a column at the right.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from finegrain.report.charts import (
    GRID,
    MUTED,
    TEXT,
    _legend,
    _marker,
    _svg_open,
    _t,
    _text_width,
    colour,
    row_label,
    stacked_bar_chart,
    x_axis,
)

# lower (worse) / same / higher (better), as the win/tie/loss chart colours them
LOWER, SAME, HIGHER = "#D55E00", "#C8C8C8", "#0072B2"

Interval = tuple[float, float, float] | None  # (estimate, low, high), None: undefined
AXIS_LIMIT = 1e300  # the automatic axis spans at most +-this, so its tidy ends stay floats


def share_chart(
    rows: Sequence[tuple[str, Sequence[int], Sequence[float | None]]],
    *,
    title: str,
    parts: Sequence[str] = ("lower", "same", "higher"),
    colours: Sequence[str] = (LOWER, SAME, HIGHER),
    empty: str = "no query to count",
    width: float = 520,
) -> str:
    """100 % stacked bars: ``rows`` is ``[(label, counts, percents)]``, one count and one
    (saved) percentage per part; a part is drawn with width count / total and
    labelled "58.5% (24)" when the text fits inside it."""
    return stacked_bar_chart(rows, title=title, parts=parts, colours=colours, empty=empty, width=width)


def _tidy(v: float) -> float:
    """A step of 1, 2 or 5 x 10^n near ``v``."""
    if v <= 0 or not math.isfinite(v):
        return 1.0
    exp = math.floor(math.log10(v))
    for m in (1, 2, 5, 10):
        if m * 10**exp >= v - 1e-12:
            return m * 10**exp
    return 10 ** (exp + 1)


def interval_chart(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[Interval]]],
    *,
    title: str,
    axis_label: str,
    reference: float = 0.0,
    reference_label: str = "",
    domain: tuple[float, float] | None = None,
    fmt: str = "{:+.2f}",
    scale: float = 100.0,
    colours: Sequence[str] | None = None,
    width: float = 520,
) -> str:
    """Dot-and-whisker rows: a group per category, a row per series, the reference as a line.

    Values are drawn and written x ``scale`` (the report's x100). ``domain``
    fixes the axis (in unscaled units); by default it spans every interval and
    the reference, rounded out to tidy ticks (at most +-:data:`AXIS_LIMIT`; a
    value beyond is drawn at the end of the axis and written as it is). An
    undefined interval writes "n/a".
    """
    for name, vals in series:
        if len(vals) != len(categories):
            raise ValueError(f"series {name!r} has {len(vals)} intervals for {len(categories)} categories; "
                             "give one (or None) per category")
    cols = list(colours) if colours is not None else [colour(i) for i in range(len(series))]
    scaled = (v * scale for _, vals in series for iv in vals if iv is not None for v in iv)
    pts = [min(max(v, -AXIS_LIMIT), AXIS_LIMIT) for v in scaled if math.isfinite(v)]
    if domain is not None:
        lo, hi = domain[0] * scale, domain[1] * scale
    else:
        lo, hi = min(pts + [reference * scale]), max(pts + [reference * scale])
        step = _tidy((hi - lo) / 5 if hi > lo else 1.0)
        lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
        if hi <= lo:
            hi = lo + step
    span = hi - lo
    step = _tidy(span / 5)
    n_series = max(len(series), 1)
    row_h, gap_out = 16.0, 10.0
    group_h = n_series * row_h
    label_w = min(max((_text_width(c, 12) for c in categories), default=40) + 14, width * 0.34)
    num_w = max((_text_width(fmt.format(-99.99) + " [-99.99, -99.99]", 11)), 120) + 8
    left, right = label_w, num_w
    plot_w = width - left - right
    y0 = 30.0
    legend_h = 0.0
    out = _svg_open(width, 0, title)  # height patched below
    out.append(f'<text x="8" y="18" font-size="14" font-weight="600">{_t(title)}</text>')
    if len(series) > 1:
        legend, legend_h = _legend([(n, cols[i]) for i, (n, _) in enumerate(series)], left, y0, plot_w + right)
        out += legend
    top_y = y0 + legend_h + (20 if reference_label else 6)
    plot_h = len(categories) * (group_h + gap_out) + gap_out
    height = top_y + plot_h + 40

    def x_of(v: float) -> float:
        return left + plot_w * (min(max(v, lo), hi) - lo) / span

    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    ticks = [(i * step, f"{i * step:g}") for i in range(first, last + 1)]
    out += x_axis(x_of, ticks, left=left, plot_w=plot_w, top_y=top_y, plot_h=plot_h, label=axis_label, label_gap=33)
    rx = x_of(reference * scale)
    dash = "" if reference == 0 else ' stroke-dasharray="4 3"'
    out.append(f'<line class="reference" x1="{rx:.1f}" y1="{top_y - 4:.1f}" x2="{rx:.1f}" y2="{top_y + plot_h:.1f}" '
               f'stroke="{TEXT}" stroke-width="1.2"{dash}/>')
    if reference_label:
        out.append(f'<text x="{rx:.1f}" y="{top_y - 7:.1f}" text-anchor="middle" font-size="11" fill="{MUTED}">'
                   f"{_t(reference_label)}</text>")
    for ci, cat in enumerate(categories):
        gy = top_y + gap_out + ci * (group_h + gap_out)
        if ci:
            out.append(f'<line x1="{left:.1f}" y1="{gy - gap_out / 2:.1f}" x2="{left + plot_w:.1f}" '
                       f'y2="{gy - gap_out / 2:.1f}" stroke="{GRID}" stroke-dasharray="2 3"/>')
        out.append(row_label(left, gy + group_h / 2, cat))
        for si, (name, vals) in enumerate(series):
            cy = gy + si * row_h + row_h / 2
            iv = vals[ci]
            c = cols[si]
            if iv is None or not all(math.isfinite(v) for v in iv):
                out.append(f'<text x="{left + plot_w + 8:.1f}" y="{cy + 4:.1f}" font-size="11" fill="{MUTED}">n/a</text>')
                continue
            v, a, b = (u * scale for u in iv)
            text = f"{fmt.format(v)} [{fmt.format(a)}, {fmt.format(b)}]"
            xa, xb = x_of(a), x_of(b)
            out.append(f'<g class="interval"><title>{_t(f"{cat} · {name}: {text}")}</title>'
                       f'<line x1="{xa:.1f}" y1="{cy:.1f}" x2="{xb:.1f}" y2="{cy:.1f}" stroke="{c}" stroke-width="2"/>'
                       f'<line x1="{xa:.1f}" y1="{cy - 4:.1f}" x2="{xa:.1f}" y2="{cy + 4:.1f}" stroke="{c}" stroke-width="2"/>'
                       f'<line x1="{xb:.1f}" y1="{cy - 4:.1f}" x2="{xb:.1f}" y2="{cy + 4:.1f}" stroke="{c}" stroke-width="2"/>'
                       f"{_marker('circle', x_of(v), cy, c, 4.2)}</g>")
            out.append(f'<text x="{left + plot_w + 8:.1f}" y="{cy + 4:.1f}" font-size="11">{_t(text)}</text>')
    out.append(f'<line x1="{left:.1f}" y1="{top_y + plot_h:.1f}" x2="{left + plot_w:.1f}" y2="{top_y + plot_h:.1f}" '
               f'stroke="{MUTED}"/>')
    out.append("</svg>")
    head = _svg_open(width, height, title)
    out[0] = head[0]
    return "\n".join(out)
