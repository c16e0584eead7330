"""trec_eval-shaped output: its ``-m`` syntax, its measure names, its lines.

``finegrain evaluate QRELS RUN --format trec_eval [-q] [-c] [-m ...]`` prints
what ``trec_eval [-q] [-c] [-m ...] QRELS RUN`` prints, for the measures
finegrain computes; the numbers are those of ``--compat trec_eval``
(:mod:`finegrain.evaluate.compat`).

Reading ``-m`` (``trec_eval.c``, ``mark_measure``; ``meas_init.c``):

- a nickname: ``official`` (trec_eval's default), ``all_trec``, ``set``
  (``measures.c``); the measures of ``all_trec`` finegrain does not compute
  are named in a note rather than printed;
- a measure with its parameters after a dot, a comma list: ``P.5,10``,
  ``ndcg_cut.10``, ``iprec_at_recall.0,.5,1``, ``set_F.0.5``;
- a measure with a cutoff list but no parameters takes trec_eval's default
  list: ``P``, ``recall``, ``ndcg_cut``, ``map_cut`` (5, 10, 15, 20, 30, 100,
  200, 500, 1000), ``success`` (1, 5, 10), ``iprec_at_recall`` (0, 0.1, ..., 1).
  So ``recall`` is the cutoff list here, as in trec_eval, not the recall of
  the whole ranking (``set_recall``);
- ``runid`` and ``num_q`` (lines, not measures);
- anything else is a finegrain spec (``ndcg@10``), printed under its
  trec_eval name (``ndcg_cut_10``); a spec without one (``mrr@10``: trec_eval's
  ``recip_rank`` has no cutoff) is refused.

Several ``-m`` of one measure add their cutoffs (trec_eval keeps the first).

Writing (``meas_print_single.c``, ``meas_print_final.c``): one line
``measure<TAB>qid<TAB>value`` per measure, the name padded to 22 columns, a
value with 4 decimals (``%6.4f``) or a whole number for the counts; with
``per_query``, every query's lines first (queries by id, as trec_eval sorts
them; no per-query ``gm_map``, ``runid`` or ``num_q``), then the ``all``
lines. Measures come in the order of trec_eval's measure table
(``measures.c``), cutoffs ascending within a measure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.evaluate.result import Evaluation
from finegrain.metrics.spec import (
    IPREC_NAMES,
    TREC_CUTOFF_LISTS,
    MetricSpec,
    parse_metric,
    split_metric_list,
)

#: trec_eval's measure table (``measures.c``), in its order, for what finegrain prints.
TABLE: tuple[str, ...] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "recall", "infAP", "ndcg", "ndcg_cut", "map_cut", "success", "set_P", "set_recall",
    "set_F",
)
#: trec_eval's nicknames (``measures.c``: ``off_names``, ``trec_names``, ``set_names``).
NICKNAMES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "utility",
                 "11pt_avg", "ideal_dcg", "dcg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map",
                 "set_F", "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
})
#: trec_eval measures of its nicknames that finegrain does not compute.
NOT_COMPUTED: frozenset[str] = frozenset(
    n for names in NICKNAMES.values() for n in names if n not in TABLE)
_LINES = ("runid", "num_q")
_COUNTS = frozenset({"num_ret", "num_rel", "num_rel_ret"})
_NAME_WIDTH = 22  # trec_eval's %-22s


@dataclass(frozen=True)
class TrecMeasures:
    """What ``-m`` asked for: the metric specs, the ``runid``/``num_q`` lines, and notes for stderr."""

    specs: tuple[MetricSpec, ...]
    lines: frozenset[str]
    notes: tuple[str, ...]


def read_measures(values: Sequence[str] | None) -> TrecMeasures:
    """The measures of ``-m`` values in trec_eval's syntax (``official`` when there are none)."""
    specs: dict[str, MetricSpec] = {}
    lines: set[str] = set()
    skipped: list[str] = []
    for value in values or ["official"]:
        for part in split_metric_list(value):
            nick = NICKNAMES.get(part.lower())
            for name in nick or (part,):
                if nick is not None and name in NOT_COMPUTED:
                    skipped.append(name)
                    continue
                if name.lower() in _LINES:
                    lines.add(name.lower())
                    continue
                for spec in _specs_of(name):
                    if trec_name(spec) is None:
                        raise FinegrainError(f"metric {spec.key!r} has no trec_eval measure to print it as",
                                             _no_name_hint(spec))
                    specs.setdefault(spec.key, spec)
    notes: tuple[str, ...] = ()
    if skipped:
        notes = (f"# not computed by finegrain, so not printed: {', '.join(dict.fromkeys(skipped))}",)
    return TrecMeasures(tuple(specs.values()), frozenset(lines), notes)


def trec_name(spec: MetricSpec) -> str | None:
    """The name trec_eval prints for ``spec`` (``ndcg@10`` -> ``ndcg_cut_10``), None when it has none."""
    place = _place(spec)
    return None if place is None else place[2]


def trec_eval_lines(ev: Evaluation, *, per_query: bool = False, lines: Iterable[str] = (),
                    show: Iterable[str] | None = None) -> list[str]:
    """The lines trec_eval prints for ``ev`` (an evaluation under ``--compat trec_eval``).

    ``lines``: which of ``runid`` and ``num_q`` to print; ``show``: the metric keys to print (default all).
    """
    if not ev.compat.trec_eval:
        raise FinegrainError("trec_eval's output shows trec_eval's numbers: this evaluation is in strict mode",
                             "evaluate with compat='trec_eval' (the CLI's --format trec_eval does)")
    wanted = set(ev) if show is None else set(show)
    rows: dict[str, tuple[tuple[int, float], str]] = {}  # trec_eval name -> (order, metric key)
    for key in ev:
        place = _place(parse_metric(key)) if key in wanted else None
        if place is not None:
            rows.setdefault(place[2], ((place[0], place[1]), key))
    ordered = sorted(rows.items(), key=lambda item: item[1][0])
    out: list[str] = []
    if per_query:
        first = next(iter(ev.values()))
        for qid in sorted(first.per_query):
            for name, (_, key) in ordered:
                if name != "gm_map":  # trec_eval prints gm_map only in the summary
                    out.append(_line(name, qid, ev[key].per_query.get(qid)))
    wanted_lines = set(lines)
    if "runid" in wanted_lines:
        out.append(f"{'runid':<{_NAME_WIDTH}}\tall\t{ev.run_name or ''}")
    if "num_q" in wanted_lines:
        first = next(iter(ev.values()))
        out.append(f"{'num_q':<{_NAME_WIDTH}}\tall\t{first.denominators.n_scored}")
    for name, (_, key) in ordered:
        out.append(_line(name, "all", ev[key].value))
    return out


# --------------------------------------------------------------------------- helpers


def _specs_of(name: str) -> list[MetricSpec]:
    """A trec_eval measure name, or a measure with its parameters (``P.5``), or a finegrain spec."""
    lowered = name.lower()
    if lowered in TREC_CUTOFF_LISTS:
        return [parse_metric(f"{name}_{k}") for k in TREC_CUTOFF_LISTS[lowered]]
    if lowered == "iprec_at_recall":
        return [parse_metric(n) for n in IPREC_NAMES]
    try:
        return [parse_metric(name, trec_eval=True)]
    except UnknownNameError as e:
        if name in NOT_COMPUTED:
            raise FinegrainError(f"trec_eval's measure {name!r} is not computed by finegrain",
                                 f"finegrain prints {', '.join(TABLE)}") from None
        raise e


def _place(spec: MetricSpec) -> tuple[int, float, str] | None:
    """``(table position, parameter, trec_eval name)`` of ``spec``, None when trec_eval has no such measure."""
    name, k = spec.name, spec.k
    fixed = {"num_ret": "num_ret", "num_rel": "num_rel", "num_rel_ret": "num_rel_ret", "gm_map": "gm_map",
             "r_precision": "Rprec", "bpref": "bpref", "infap": "infAP"}
    if name in fixed:
        return TABLE.index(fixed[name]), 0.0, fixed[name]
    if name in IPREC_NAMES:
        return TABLE.index("iprec_at_recall"), IPREC_NAMES[name], name
    cut = {"precision": "P", "recall": "recall", "ndcg": "ndcg_cut", "map": "map_cut", "hit_rate": "success"}
    if k is not None:
        return (TABLE.index(cut[name]), float(k), f"{cut[name]}_{k}") if name in cut else None
    whole = {"map": "map", "mrr": "recip_rank", "ndcg": "ndcg", "recall": "set_recall",
             "set_precision": "set_P", "set_recall": "set_recall", "set_f1": "set_F"}
    if name in whole:
        return TABLE.index(whole[name]), 0.0, whole[name]
    if name in ("set_f2", "set_fbeta"):
        x = 4.0 if name == "set_f2" else (spec.beta or 1.0) ** 2  # trec_eval's set_F.x: x = beta**2
        return TABLE.index("set_F"), x, f"set_F_{_number(x)}"
    return None


def _no_name_hint(spec: MetricSpec) -> str:
    if spec.name == "mrr":
        return "trec_eval's recip_rank has no cutoff: write recip_rank, or use --format table for " + spec.key
    return f"trec_eval prints {', '.join(TABLE)}; use --format table for {spec.key}"


def _line(name: str, qid: str, value: float | None) -> str:
    if value is None or not math.isfinite(value):
        text = "undefined"
    elif name in _COUNTS:
        text = str(int(round(value)))  # trec_eval's %ld of a whole count
    else:
        text = f"{value:6.4f}"
    return f"{name:<{_NAME_WIDTH}}\t{qid}\t{text}"


def _number(x: float) -> str:
    return str(int(x)) if x == int(x) else repr(x)
