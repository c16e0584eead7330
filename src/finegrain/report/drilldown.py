"""The report's per-query table and drill-down, and the charts of paired differences.

:func:`per_query_view` gives the template one row per query (text, type, each
system's value on the headline metric, each challenger's difference to the
baseline) and the data the drill-down shows when a row is clicked: each system's
ranked list (top :data:`TOP`, read from the run file beside ``results.json`` with
:func:`finegrain.experiment.run.read_saved_run`), the grade of every listed
passage (``results.json``'s ``judged`` section; a file written before it was
saved shows the list without grades and says so), each listed passage's text as
saved, shortened, in ``passages`` (:mod:`finegrain.results.passages`), with the
query's words marked (:func:`finegrain.build.judge.highlight.highlight`, the rule the
judging page uses), the error tag of each wrong passage and missed relevant passage
(``errors``) and the query's error type (``taxonomy``). The data travels as one JSON
script block (:func:`json_script`), escaped so that no text can close the block; the
page's script puts every text in place as text (``textContent``), never as HTML.

:func:`difference_charts` draws the forest plot (each challenger's mean
difference and its paired bootstrap interval, from :mod:`finegrain.compare.comparison`)
and one histogram of per-query differences per challenger.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from finegrain.build.judge.highlight import highlight, query_terms
from finegrain.compare.comparison import Comparison, finite
from finegrain.compare.systems import LabelledResults
from finegrain.errors import FinegrainError
from finegrain.frozen import EMPTY
from finegrain.report.charts import colour
from finegrain.report.diff_charts import ForestRow, difference_histogram, forest_plot
from finegrain.report.format import fmt, fmt_p, is_rank, readable
from finegrain.results.companions import IncompleteFolderError
from finegrain.results.diagnosis import Failure, QueryErrorsRecord
from finegrain.results.files import read_saved_run

__all__ = ["MAX_QUERIES", "TOP", "difference_charts", "json_script", "per_query_view"]

TOP = 10
MAX_QUERIES = 2000  # the largest differences first beyond this; the page says how many are shown

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def json_script(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: ``<``, ``>``, ``&`` and the JS line separators
    are written as ``\\uXXXX`` escapes, so ``</script>`` or ``<!--`` in a query cannot end the block."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return "".join(_JSON_ESCAPES.get(ch, ch) for ch in text)


def _run_of(s: LabelledResults) -> tuple[Any | None, str | None]:
    """The saved run of a system's folder, or None and why not."""
    if s.path is None:
        return None, "no results folder (in-memory results): no ranked list"

    try:
        return read_saved_run(Path(s.path), s.results), None
    except IncompleteFolderError:
        raise  # a folder written in part is refused whole, never shown in part
    except FinegrainError as e:
        return None, f"no ranked list: {e.message}"
    except (OSError, ValueError) as e:  # a damaged run file hides the lists, never the page
        return None, f"no ranked list: the run file could not be read ({type(e).__name__})"


def _error_items(s: LabelledResults) -> Mapping[str, QueryErrorsRecord]:
    return EMPTY if s.results.errors is None else s.results.errors.per_query


def _taxonomy_items(s: LabelledResults) -> Mapping[str, Failure]:
    return EMPTY if s.results.taxonomy is None else s.results.taxonomy.per_query


def per_query_view(systems: Sequence[LabelledResults], baseline: int, key: str) -> dict[str, Any] | None:
    """The per-query table and the drill-down data (see the module docstring); None without per-query values."""
    if not all(key in s.results.metrics and s.results.metrics[key].per_query is not None for s in systems):
        return None
    base = systems[baseline].results
    pqs = [s.results.metrics[key].per_query or {} for s in systems]
    qids = [q for q in pqs[baseline] if all(q in pq for pq in pqs)]
    sign = -1.0 if is_rank(key) else 1.0
    others = [i for i in range(len(systems)) if i != baseline]

    def gap(q: str) -> float:
        b = pqs[baseline][q]
        return max((abs((pqs[i][q] or 0.0) - (b or 0.0)) for i in others if b is not None and pqs[i][q] is not None),
                   default=0.0)

    n_total = len(qids)
    if n_total > MAX_QUERIES:
        keep = set(sorted(qids, key=lambda q: (-gap(q), q))[:MAX_QUERIES])
        qids = [q for q in qids if q in keep]

    runs = [_run_of(s) for s in systems]
    errs = [_error_items(s) for s in systems]
    taxs = [_taxonomy_items(s) for s in systems]
    sys_info = []
    for i, s in enumerate(systems):
        run, why = runs[i]
        judged = s.results.judged
        note = why or ("" if judged is not None else
                       "grades not saved in this results.json (written before they were; re-run 'finegrain eval' "
                       "to add them): ranked list without grades")
        if s.results.passages is None and not why:
            note = (note + "; " if note else "") + ("passage texts not saved in this results.json (re-run "
                                                    "'finegrain eval' to add them): document ids only")
        sys_info.append({"label": s.label, "colour": _colour(i), "baseline": i == baseline,
                         "hasRun": run is not None, "hasGrades": judged is not None, "note": note,
                         "rel": judged.rel if judged is not None else 1})

    texts = [s.results.passages.text if s.results.passages is not None else EMPTY for s in systems]
    rows, data = [], []
    for q in qids:
        rec = base.queries.get(q)
        text, qtype = (rec.text, rec.type) if rec is not None else ("", None)
        vals = [pq[q] for pq in pqs]
        deltas = []
        for i in others:
            b, v = vals[baseline], vals[i]
            d = None if b is None or v is None else v - b
            shown = "—" if d is None else ("0" if d == 0 else f"{d:+g}") if is_rank(key) else (
                "0.00" if d == 0 else f"{d * 100:+.2f}")
            deltas.append({"text": shown,
                           "cls": "" if not d else ("up" if sign * d > 0 else "down"), "value": d})
        rows.append({"qid": q, "text": text or q, "type": readable(qtype), "values": [fmt(v, key) for v in vals],
                     "deltas": deltas})
        lists = []
        for i, s in enumerate(systems):
            run = runs[i][0]
            judged = s.results.judged
            e = errs[i].get(q) or QueryErrorsRecord()
            fp_tags = {x.doc_id: x.tag for x in e.false_positives}
            ranked = run.ranked(q, TOP) if run is not None and q in run else []
            items = [[d, None if judged is None else judged.grade(q, d), readable(fp_tags[d]) if d in fp_tags else None]
                     for d in ranked]
            missed = [[x.doc_id, x.grade, readable(x.tag), x.rank] for x in e.false_negatives]
            t = taxs[i].get(q)
            lists.append({"items": items, "missed": missed,
                          "nRelevant": None if judged is None else judged.n_relevant.get(q),
                          "taxonomy": None if t is None else f"{readable(t.tag)}: {t.rule}",
                          "value": fmt(vals[i], key)})
        data.append({"qid": q, "text": text, "type": readable(qtype), "lists": lists,
                     "passages": _passages(text, lists, texts)})
    return {
        "metric": key,
        "rows": rows,
        "others": [{"label": systems[i].label, "colour": _colour(i)} for i in others],
        "systems": [{"label": s.label, "colour": _colour(i)} for i, s in enumerate(systems)],
        "n_shown": len(qids), "n_total": n_total, "top": TOP,
        "json": json_script({"metric": key, "top": TOP, "systems": sys_info, "queries": data}),
    }


def _passages(query: str, lists: Sequence[Mapping[str, Any]],
              texts: Sequence[Mapping[str, str]]) -> dict[str, list[tuple[str, bool]]]:
    """``{doc_id: [(piece, marked), ...]}`` for every passage the query's lists show whose text some system
    saved (each system saves the passages of its own lists), the query's words marked."""
    terms = query_terms(query)
    shown = dict.fromkeys(d for lst in lists for d in [it[0] for it in lst["items"]] + [m[0] for m in lst["missed"]])
    out: dict[str, list[tuple[str, bool]]] = {}
    for doc_id in shown:
        text = next((saved[doc_id] for saved in texts if doc_id in saved), None)
        if text is not None:
            out[doc_id] = highlight(text, terms)
    return out


def _colour(i: int) -> str:
    return colour(i)


def difference_charts(comparison: Comparison, systems: Sequence[LabelledResults], baseline: int,
                      key: str) -> dict[str, Any] | None:
    """The forest plot of every challenger's difference on ``key`` and one histogram of per-query differences each.

    The interval is the comparison's paired bootstrap interval of the mean
    difference (``tests[key][label].diff_ci``), the note its Holm-adjusted
    randomization p-value with ``*`` when significant. None when ``key`` was not tested.
    """

    tests = comparison.tests.get(key) or {}
    if not tests:
        return None
    rank = is_rank(key)
    base = systems[baseline]
    st = comparison.settings
    rows = []
    for i, s in enumerate(systems):
        if i == baseline:
            continue
        t = tests.get(s.label)
        if t is None:
            rows.append(ForestRow(s.label, None, None, None, "not tested", _colour(i)))
            continue
        p = finite(t.p_rand_holm)
        note = f"p = {fmt_p(p)}" + (" *" if t.significant else "") if p is not None else "not tested"
        rows.append(ForestRow(s.label, finite(t.mean_diff), finite(t.diff_ci.low), finite(t.diff_ci.high), note,
                              _colour(i)))
    better = "lower is better" if rank else "higher is better"
    scale = "" if rank else " (x100)"
    conf = st.confidence
    forest = forest_plot(
        rows, title=f"Difference to {base.label} on {key}, with {conf:.0%} CI",
        axis_label=f"mean difference in {key}{scale}: system − {base.label} ({better})",
        fmt=(lambda v: f"{v:+.3g}") if rank else (lambda v: f"{v * 100:+.2f}"),
        tick_fmt=(lambda v: f"{v:g}") if rank else (lambda v: f"{v * 100:.4g}"),
    )
    hists = []
    bpq = base.results.metrics[key].per_query or {}
    for i, s in enumerate(systems):
        if i == baseline:
            continue
        pq = s.results.metrics[key].per_query or {}
        diffs = [pq[q] - bpq[q] for q in bpq if q in pq and pq[q] is not None and bpq[q] is not None]  # type: ignore[operator]
        ties = sum(1 for d in diffs if abs(d) <= st.tol)
        hists.append({"label": s.label, "n": len(diffs), "ties": ties, "chart": Markup(difference_histogram(
            diffs, title=f"{s.label} − {base.label}: {key} per query (n={len(diffs)})",
            x_label=f"difference in {key}{scale} ({better}); the middle bar holds ties",
            fill=_colour(i), tick_fmt=(lambda v: f"{v:g}") if rank else (lambda v: f"{v * 100:.4g}")))})
    return {"forest": Markup(forest), "histograms": hists,
            "note": (f"Dots: mean per-query difference to {base.label}; whiskers: its {conf:.0%} "
                     f"{st.ci_method} paired bootstrap interval ({st.n_resamples} resamples, "
                     f"seed {st.seed}); p: Fisher's randomization test, Holm-adjusted across systems; "
                     "* = significant. A whisker crossing the dashed line at 0 is a difference the queries "
                     "do not settle.")}
