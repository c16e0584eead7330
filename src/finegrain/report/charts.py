"""Inline SVG charts for the HTML report: pure functions from numbers to an SVG string.

No plotting library and no script: each function returns one ``<svg>`` element
that a page embeds as is. Every piece of text that reaches the SVG (labels,
titles, legend entries) is XML-escaped here, so a query type or system name
can never inject markup. Colours come from the Okabe-Ito palette, which stays
distinguishable under the common colour-vision deficiencies; lines also differ
by dash pattern and marker so a chart survives printing in grey.

- :func:`grouped_bar_chart` -- horizontal bars, one group per category (query
  type), one bar per series (system);
- :func:`line_chart` -- metric-vs-k curves, one line per series, log-scaled x;
- :func:`win_tie_loss_chart` -- one 100 % stacked bar per row (wins, ties, losses), drawn by
  :func:`stacked_bar_chart`, which the probe sections use too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from html import escape

# Okabe & Ito (2008), "Color Universal Design": black left out (used for text).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")
WIN, TIE, LOSS = "#0072B2", "#C8C8C8", "#D55E00"
DASHES = ("", "6 3", "2 3", "8 3 2 3", "1 2", "10 4")
MARKERS = ("circle", "square", "diamond", "triangle", "circle", "square")

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'Noto Sans CJK SC', sans-serif"
TEXT = "#222"
MUTED = "#666"
GRID = "#e3e3e3"

Number = float | int | None
Formatter = Callable[[float], str]


def colour(i: int) -> str:
    """The i-th series colour (cycles through :data:`PALETTE`)."""
    return PALETTE[i % len(PALETTE)]


def percent(v: float) -> str:
    """0.6654 -> '66.5' (the report's x100 scale, one decimal for chart labels)."""
    return f"{v * 100:.1f}"


def percent_tick(v: float) -> str:
    """0.2 -> '20' (axis ticks: no decimals unless needed)."""
    return f"{v * 100:.4g}"


def _t(text: object) -> str:
    return escape(str(text), quote=True)


def _text_width(text: str, size: float) -> float:
    """A rough rendered width: CJK and other wide characters count double."""
    units = sum(2.0 if ord(ch) > 0x2E80 else 1.0 for ch in text)
    return units * size * 0.56


def _svg_open(width: float, height: float, title: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" style="max-width:100%;height:auto" '
        f'font-family="{_t(FONT)}" font-size="12" fill="{TEXT}" aria-label="{_t(title)}">',
        f"<title>{_t(title)}</title>",
    ]


def _legend(items: Sequence[tuple[str, str]], x: float, y: float, max_width: float, *,
            lines: bool = False) -> tuple[list[str], float]:
    """Legend swatches flowing left to right; returns the SVG parts and the height used."""
    parts: list[str] = ['<g class="legend">']
    cx, cy = x, y
    for i, (label, fill) in enumerate(items):
        w = 22 + _text_width(label, 12) + 18
        if cx > x and cx + w > x + max_width:
            cx, cy = x, cy + 18
        if lines:
            dash = DASHES[i % len(DASHES)]
            dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
            parts.append(f'<line x1="{cx:.1f}" y1="{cy + 6:.1f}" x2="{cx + 16:.1f}" y2="{cy + 6:.1f}" '
                         f'stroke="{fill}" stroke-width="2.5"{dash_attr}/>')
            parts.append(_marker(MARKERS[i % len(MARKERS)], cx + 8, cy + 6, fill))
        else:
            parts.append(f'<rect x="{cx:.1f}" y="{cy:.1f}" width="14" height="12" rx="2" fill="{fill}"/>')
        parts.append(f'<text x="{cx + 20:.1f}" y="{cy + 10.5:.1f}">{_t(label)}</text>')
        cx += w
    parts.append("</g>")
    return parts, cy - y + 18


def _marker(shape: str, x: float, y: float, fill: str, size: float = 3.6) -> str:
    if shape == "square":
        return f'<rect x="{x - size:.1f}" y="{y - size:.1f}" width="{2 * size:.1f}" height="{2 * size:.1f}" fill="{fill}"/>'
    if shape == "diamond":
        s = size * 1.3
        return f'<path d="M{x:.1f},{y - s:.1f}L{x + s:.1f},{y:.1f}L{x:.1f},{y + s:.1f}L{x - s:.1f},{y:.1f}Z" fill="{fill}"/>'
    if shape == "triangle":
        s = size * 1.3
        return f'<path d="M{x:.1f},{y - s:.1f}L{x + s:.1f},{y + s * 0.8:.1f}L{x - s:.1f},{y + s * 0.8:.1f}Z" fill="{fill}"/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{size:.1f}" fill="{fill}"/>'


def _nice_max(v: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^n at or above ``v`` (a tidy axis end)."""
    if v <= 0 or not math.isfinite(v):
        return 1.0
    exp = math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if m * 10**exp >= v - 1e-12:
            return m * 10**exp
    return 10 ** (exp + 1)


def _ticks(top: float, n: int = 5) -> list[float]:
    return [top * i / n for i in range(n + 1)]


def x_axis(x_of: Callable[[float], float], ticks: Iterable[tuple[float, str]], *, left: float, plot_w: float,
           top_y: float, plot_h: float, label: str, label_gap: float = 34.0) -> list[str]:
    """A value axis along the bottom: a grid line and its text at each ``(value, text)`` tick, then
    the axis label centred ``label_gap`` below the plot."""
    out: list[str] = []
    bottom = top_y + plot_h
    for value, text in ticks:
        x = x_of(value)
        out.append(f'<line x1="{x:.2f}" y1="{top_y:.1f}" x2="{x:.2f}" y2="{bottom:.1f}" stroke="{GRID}"/>')
        out.append(f'<text class="tick" data-tick="{value:.12g}" x="{x:.2f}" y="{bottom + 15:.1f}" '
                   f'text-anchor="middle" fill="{MUTED}">{_t(text)}</text>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{bottom + label_gap:.1f}" text-anchor="middle" '
               f'fill="{MUTED}">{_t(label)}</text>')
    return out


def row_label(left: float, y: float, text: str) -> str:
    """A category's name, right-aligned against the plot's left edge at height ``y``."""
    return f'<text x="{left - 8:.1f}" y="{y + 4:.1f}" text-anchor="end">{_t(text)}</text>'


def grouped_bar_chart(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[Number]]],
    *,
    title: str,
    axis_label: str,
    value_max: float | None = None,
    fmt: Formatter = percent,
    tick_fmt: Formatter = percent_tick,
    width: float = 1100,
) -> str:
    """Horizontal grouped bars: a group per category, a bar per series, the value at its end.

    ``series`` is ``[(name, [value per category])]``; a missing value (None)
    draws no bar and the text "n/a". The value axis starts at 0 and ends at
    ``value_max`` (default: a tidy number above the largest value).
    """
    _check_lengths(categories, series)
    n_series = max(len(series), 1)
    values = [v for _, vs in series for v in vs if v is not None and math.isfinite(v)]
    top = value_max if value_max is not None else _nice_max(max(values, default=1.0))
    bar_h, gap_in, gap_out = 14.0, 2.0, 12.0
    group_h = n_series * bar_h + (n_series - 1) * gap_in
    label_w = min(max((_text_width(c, 12) for c in categories), default=40) + 14, width * 0.4)
    left, right = label_w, 56.0
    plot_w = width - left - right
    y0 = 34.0
    legend, legend_h = _legend([(name, colour(i)) for i, (name, _) in enumerate(series)], left, y0, plot_w)
    top_y = y0 + legend_h + 8
    plot_h = len(categories) * (group_h + gap_out) + gap_out
    height = top_y + plot_h + 42
    parts = _svg_open(width, height, title)
    parts.append(f'<text x="{left:.1f}" y="20" font-size="14" font-weight="600">{_t(title)}</text>')
    parts += legend

    def x_of(v: float) -> float:
        return left + plot_w * max(0.0, min(v, top)) / top if top > 0 else left

    parts += x_axis(x_of, [(t, tick_fmt(t)) for t in _ticks(top)], left=left, plot_w=plot_w, top_y=top_y,
                    plot_h=plot_h, label=axis_label)
    for ci, cat in enumerate(categories):
        gy = top_y + gap_out + ci * (group_h + gap_out)
        parts.append(row_label(left, gy + group_h / 2, cat))
        for si, (name, vs) in enumerate(series):
            v = vs[ci]
            y = gy + si * (bar_h + gap_in)
            if v is None or not math.isfinite(v):
                parts.append(f'<text x="{left + 4:.1f}" y="{y + bar_h - 3:.1f}" fill="{MUTED}" font-size="11">n/a</text>')
                continue
            w = x_of(v) - left
            parts.append(f'<rect x="{left:.1f}" y="{y:.1f}" width="{max(w, 0.5):.1f}" height="{bar_h:.1f}" '
                         f'fill="{colour(si)}"><title>{_t(f"{cat} · {name}: {fmt(v)}")}</title></rect>')
            parts.append(f'<text x="{left + w + 4:.1f}" y="{y + bar_h - 3:.1f}" font-size="11">{_t(fmt(v))}</text>')
    parts.append(f'<line x1="{left:.1f}" y1="{top_y:.1f}" x2="{left:.1f}" y2="{top_y + plot_h:.1f}" stroke="{MUTED}"/>')
    parts.append("</svg>")
    return "\n".join(parts)


def line_chart(
    xs: Sequence[float],
    series: Sequence[tuple[str, Sequence[Number]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    log_x: bool = True,
    y_max: float | None = None,
    fmt: Formatter = percent,
    tick_fmt: Formatter = percent_tick,
    width: float = 420,
    height: float = 300,
) -> str:
    """Lines over shared x values (e.g. k = 1, 2, 3, 5, 10, ...), log-scaled x by default.

    A None value breaks the line. Each x value gets a tick; the y axis runs
    from 0 to ``y_max`` (default: a tidy number above the largest value).
    """
    _check_lengths(xs, series)
    if log_x and any(x <= 0 for x in xs):
        raise ValueError(f"log_x needs positive x values, got {list(xs)!r}; pass log_x=False")
    values = [v for _, vs in series for v in vs if v is not None and math.isfinite(v)]
    top = y_max if y_max is not None else _nice_max(max(values, default=1.0))
    left, right = 48.0, 14.0
    plot_w = width - left - right
    legend, legend_h = _legend([(n, colour(i)) for i, (n, _) in enumerate(series)], left, 30, plot_w, lines=True)
    top_y = 30 + legend_h + 8
    bottom = 44.0
    plot_h = height - top_y - bottom
    parts = _svg_open(width, height, title)
    parts.append(f'<text x="{left:.1f}" y="18" font-size="14" font-weight="600">{_t(title)}</text>')
    parts += legend
    tx = [math.log(x) for x in xs] if log_x else [float(x) for x in xs]
    lo, hi = (min(tx), max(tx)) if tx else (0.0, 1.0)
    span = hi - lo or 1.0

    def px(i: int) -> float:
        return left + plot_w * (tx[i] - lo) / span

    def py(v: float) -> float:
        return top_y + plot_h * (1 - max(0.0, min(v, top)) / top)

    for tick in _ticks(top):
        y = py(tick)
        parts.append(f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{left + plot_w:.1f}" y2="{y:.1f}" stroke="{GRID}"/>')
        parts.append(f'<text x="{left - 6:.1f}" y="{y + 4:.1f}" text-anchor="end" fill="{MUTED}">{_t(tick_fmt(tick))}</text>')
    for i, x in enumerate(xs):
        parts.append(f'<text x="{px(i):.1f}" y="{top_y + plot_h + 15:.1f}" text-anchor="middle" fill="{MUTED}">'
                     f"{_t(_num(x))}</text>")
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 8:.1f}" text-anchor="middle" fill="{MUTED}">'
                 f"{_t(x_label)}</text>")
    parts.append(f'<text transform="translate(12 {top_y + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle" '
                 f'fill="{MUTED}">{_t(y_label)}</text>')
    parts.append(f'<line x1="{left:.1f}" y1="{top_y + plot_h:.1f}" x2="{left + plot_w:.1f}" y2="{top_y + plot_h:.1f}" '
                 f'stroke="{MUTED}"/>')
    for si, (name, vs) in enumerate(series):
        c = colour(si)
        dash = DASHES[si % len(DASHES)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        runs: list[list[tuple[float, float]]] = [[]]
        for i, v in enumerate(vs):
            if v is None or not math.isfinite(v):
                runs.append([])
            else:
                runs[-1].append((px(i), py(v)))
        for run in runs:
            if len(run) > 1:
                pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in run)
                parts.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2.2"{dash_attr}/>')
        for i, v in enumerate(vs):
            if v is not None and math.isfinite(v):
                parts.append(f'<g>{_marker(MARKERS[si % len(MARKERS)], px(i), py(v), c)}'
                             f"<title>{_t(f'{name} @ {_num(xs[i])}: {fmt(v)}')}</title></g>")
    parts.append("</svg>")
    return "\n".join(parts)


def win_tie_loss_chart(
    rows: Sequence[tuple[str, int, int, int]],
    *,
    title: str,
    labels: tuple[str, str, str] = ("win", "tie", "loss"),
    colours: tuple[str, str, str] = (WIN, TIE, LOSS),
    width: float = 1100,
) -> str:
    """One 100 % stacked horizontal bar per row: wins, ties, losses, counts written inside.

    ``rows`` is ``[(label, wins, ties, losses)]``; ``labels`` names the three
    parts in the legend (e.g. "e5 better", "tie", "bm25 better"); ``colours``
    colours them (a report passes the two systems' own colours, so a colour
    means the same system in every chart).
    """
    return stacked_bar_chart([(label, counts, None) for label, *counts in rows], title=title, parts=labels,
                             colours=colours, empty="no paired queries", width=width)


def stacked_bar_chart(
    rows: Sequence[tuple[str, Sequence[int], Sequence[float | None] | None]],
    *,
    title: str,
    parts: Sequence[str],
    colours: Sequence[str],
    empty: str,
    width: float,
) -> str:
    """100 % stacked horizontal bars: ``rows`` is ``[(label, counts, percents or None)]``; a part is
    drawn with width count / total and labelled "58.5% (24)" (with percents) or "24" when it fits."""
    bar_h, gap = 20.0, 8.0
    label_w = min(max((_text_width(r[0], 12) for r in rows), default=40) + 14, width * 0.42)
    left, right = label_w, 20.0
    plot_w = width - left - right
    legend, legend_h = _legend(list(zip(parts, colours)), left, 30, plot_w)
    top_y = 30 + legend_h + 6
    height = top_y + len(rows) * (bar_h + gap) + gap + 22
    out = _svg_open(width, height, title)
    out.append(f'<text x="8" y="18" font-size="14" font-weight="600">{_t(title)}</text>')
    out += legend
    for ri, (label, counts, pcts) in enumerate(rows):
        y = top_y + gap + ri * (bar_h + gap)
        total = sum(counts)
        out.append(f'<text x="{left - 8:.1f}" y="{y + bar_h - 6:.1f}" text-anchor="end">{_t(label)}</text>')
        if total <= 0:
            out.append(f'<text x="{left + 4:.1f}" y="{y + bar_h - 6:.1f}" fill="{MUTED}">{_t(empty)}</text>')
            continue
        x = left
        for i, (count, fill, part) in enumerate(zip(counts, colours, parts)):
            w = plot_w * count / total
            if w <= 0:
                continue
            pct = None if pcts is None else pcts[i]
            share = None if pcts is None else (f"{pct:.1f}%" if pct is not None else "—")
            tip = f"{label} · {part}: {count} of {total}" + (f" ({share})" if share else "")
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{bar_h:.1f}" fill="{fill}">'
                       f"<title>{_t(tip)}</title></rect>")
            ink = TEXT if _luminance(fill) > 0.21 else "#fff"  # the higher contrast of the two
            for text in ((f"{share} ({count})", share, str(count)) if share else (str(count),)):
                if _text_width(text, 11) + 6 < w:
                    out.append(f'<text x="{x + w / 2:.1f}" y="{y + bar_h - 6:.1f}" text-anchor="middle" '
                               f'font-size="11" fill="{ink}">{_t(text)}</text>')
                    break
            x += w
    axis_y = top_y + len(rows) * (bar_h + gap) + gap
    for frac in (0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<text x="{left + plot_w * frac:.1f}" y="{axis_y + 14:.1f}" text-anchor="middle" '
                   f'fill="{MUTED}">{frac:.0%}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _luminance(hex_colour: str) -> float:
    """Relative luminance (WCAG 2) of ``#rrggbb``: pick dark or white text on a fill."""
    h = hex_colour.lstrip("#")
    if len(h) != 6:
        return 0.0
    chans = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in chans]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _check_lengths(axis: Sequence[object], series: Sequence[tuple[str, Sequence[Number]]]) -> None:
    for name, vs in series:
        if len(vs) != len(axis):
            raise ValueError(f"series {name!r} has {len(vs)} values for {len(axis)} positions; give one value "
                             "(or None) per position")
