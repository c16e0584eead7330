"""Metric specs: one grammar, one canonical key.

A metric is written ``name[@k][(param=value, ...)]``::

    ndcg@10            recall@50          precision@5      hit_rate@1
    map@100  map       mrr@10  mrr        r_precision      median_rank@100
    fail_rate@1        ndcg@10(rel=2)     set_f1           set_fbeta(beta=0.5)
    reject_f1          pair_precision@20  judged@10        hits@10
    bpref              infap              err@20           gm_map
    num_ret            num_rel            num_rel_ret      iprec_at_recall_0.50

``@k`` cuts the ranking at its top ``k`` (ranks come from the one ranking rule,
:mod:`finegrain.ranking`), ``k`` in ASCII digits from 1 to :data:`MAX_CUTOFF`;
without it the whole returned list counts, except
that ``precision`` needs a cutoff (the precision of the whole returned set is
``set_precision``), ``fail_rate`` means ``fail_rate@1`` ("first relevant item
not at rank 1"), and ``r_precision``, ``reject_*`` and the trec_eval measures
without a cutoff (``bpref``, ``infap``, ``gm_map``, ``num_*``,
``iprec_at_recall_*``) take none.
``rel=N`` (default 1) is the lowest grade that counts as relevant. ``beta`` is
the weight of recall in ``set_fbeta``. ``judged`` (the share of the top
``k`` that has a judgement of any grade), ``err`` and ``num_ret`` take no
``rel``. Names are case-insensitive; every spec prints back as one canonical,
lower-case key: ``parse_metric(s.key) == s``.

Other libraries' names are read only where they mean the same measure
(:data:`_ALIASES`): trec_eval's (``P_5``, ``P.5``, ``ndcg_cut_10``,
``map_cut_100``, ``recall_100``, ``success_10``, ``recip_rank``, ``Rprec``,
``set_P``, ``set_F``, ``infAP``), ir_measures' (``nDCG@10``, ``P(rel=2)@5``,
``R@50``, ``AP``, ``RR@10``, ``Success@1``, ``SetP``, ``SetR``, ``SetF``,
``NumRet``, ``NumRel``, ``NumRelRet``, ``IPrec@0.5``, ``Bpref``, ``ERR@20``,
``Judged@10``; an ``ir_measures`` measure object reads as its string) and
ranx's (``hits@k``: the *number* of relevant items in the top k, averaged
over queries, unlike ``hit_rate@k``). A name that means something else in
another library, or nothing single, is refused with what to write instead
(:data:`_REFUSED`): ``hit``, and trec_eval's cutoff lists without a cutoff
(``ndcg_cut``, ``map_cut``, ``success``).

trec_eval's ``set_F.x`` weighs recall with ``x = beta**2`` (``m_set_F.c``:
``(x+1)PR/(xP+R)``), unlike ``set_fbeta(beta=b)``; the spelling is refused
unless ``trec_eval=True`` (``--compat trec_eval``), where it reads as trec_eval
reads it: ``set_F.4`` is ``set_f2``, ``set_F.x`` is ``set_fbeta(beta=sqrt(x))``.
ir_measures' ``SetF(beta=b)`` is computed by its pytrec_eval back-end as that
same ``set_F.b``, so it is refused for ``b != 1`` for the same reason.
A comma list continues a trec_eval cutoff list: ``P.5,10`` is ``P.5`` and
``P.10`` (:func:`parse_metrics`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from types import MappingProxyType

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.metrics.values import Rule
from finegrain.numbers import NumberError, parse_float
from finegrain.registry import Param, check_options


class Cutoff(Enum):
    """Whether a metric takes ``@k``."""

    OPTIONAL = "optional"  # without @k the whole ranking counts
    REQUIRED = "required"
    NONE = "none"


@dataclass(frozen=True)
class _Rule:
    family: str  # "ranking", "set", "pair", "reject", "judged" or "count"
    cutoff: Cutoff
    params: Mapping[str, Param]
    default_k: int | None = None
    needs: frozenset[str] = frozenset()
    values: str = "fraction"  # "fraction" in [0, 1], "rank" >= 1, "count" >= 0
    aggregation: Rule = "mean"  # the rule of finegrain.metrics.values the metric's values aggregate by


#: The largest cutoff ``@k``: deeper than any run is long, and within every integer type a cutoff meets.
MAX_CUTOFF = 10**9
# The declared parameters (ir_measures' SUPPORTED_PARAMS); checked by finegrain.registry.check_options.
REL = Param(int, 1, min=1, help="lowest grade that counts as relevant")
BETA = Param(float, None, required=True, max=1e6, help="weight of recall in the F measure (> 0)",
             why="beta**2 weighs recall; beyond 1e6 the F measure is recall")
_RANK: Mapping[str, Param] = MappingProxyType({"rel": REL})
_RANK_BETA: Mapping[str, Param] = MappingProxyType({"rel": REL, "beta": BETA})
_NONE: Mapping[str, Param] = MappingProxyType({})
#: trec_eval's 11 recall levels of interpolated precision (``m_iprec_at_recall.c``), as its C literals.
IPREC_LEVELS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: ``iprec_at_recall_0.10`` -> 0.1: one metric per level, named as trec_eval prints it (``%3.2f``).
IPREC_NAMES: Mapping[str, float] = MappingProxyType({f"iprec_at_recall_{x:.2f}": x for x in IPREC_LEVELS})
_RULES: dict[str, _Rule] = {
    "ndcg": _Rule("ranking", Cutoff.OPTIONAL, _RANK),
    "precision": _Rule("ranking", Cutoff.REQUIRED, _RANK),
    "recall": _Rule("ranking", Cutoff.OPTIONAL, _RANK),
    "hit_rate": _Rule("ranking", Cutoff.OPTIONAL, _RANK),
    "mrr": _Rule("ranking", Cutoff.OPTIONAL, _RANK),
    "map": _Rule("ranking", Cutoff.OPTIONAL, _RANK),
    "r_precision": _Rule("ranking", Cutoff.NONE, _RANK),
    "median_rank": _Rule("ranking", Cutoff.OPTIONAL, _RANK),
    "fail_rate": _Rule("ranking", Cutoff.OPTIONAL, _RANK, default_k=1),
    "set_precision": _Rule("set", Cutoff.OPTIONAL, _RANK),
    "set_recall": _Rule("set", Cutoff.OPTIONAL, _RANK),
    "set_f1": _Rule("set", Cutoff.OPTIONAL, _RANK),
    "set_f2": _Rule("set", Cutoff.OPTIONAL, _RANK),
    "set_fbeta": _Rule("set", Cutoff.OPTIONAL, _RANK_BETA, needs=frozenset({"beta"})),
    "pair_precision": _Rule("pair", Cutoff.OPTIONAL, _RANK),
    "pair_recall": _Rule("pair", Cutoff.OPTIONAL, _RANK),
    "pair_f1": _Rule("pair", Cutoff.OPTIONAL, _RANK),
    "reject_precision": _Rule("reject", Cutoff.NONE, _RANK),
    "reject_recall": _Rule("reject", Cutoff.NONE, _RANK),
    "reject_f1": _Rule("reject", Cutoff.NONE, _RANK),
    "judged": _Rule("judged", Cutoff.OPTIONAL, _NONE),
    "hits": _Rule("count", Cutoff.OPTIONAL, _RANK, values="count"),
    "err": _Rule("ranking", Cutoff.OPTIONAL, _NONE),
    "bpref": _Rule("ranking", Cutoff.NONE, _RANK),
    "infap": _Rule("ranking", Cutoff.NONE, _RANK),
    "gm_map": _Rule("ranking", Cutoff.NONE, _RANK, aggregation="gmean"),
    "num_ret": _Rule("count", Cutoff.NONE, _NONE, values="count", aggregation="sum"),
    "num_rel": _Rule("count", Cutoff.NONE, _RANK, values="count", aggregation="sum"),
    "num_rel_ret": _Rule("count", Cutoff.NONE, _RANK, values="count", aggregation="sum"),
    **{name: _Rule("ranking", Cutoff.NONE, _RANK) for name in IPREC_NAMES},
}
_RULES["median_rank"] = replace(_RULES["median_rank"], values="rank", aggregation="median")
for _name in ("pair_precision", "pair_recall", "pair_f1", "reject_precision", "reject_recall", "reject_f1"):
    _RULES[_name] = replace(_RULES[_name], aggregation="ratio")

#: Other libraries' names of the same measures (lower case), each checked against its source's definition:
#: trec_eval (``m_*.c``), ir_measures (``measures/*.py``) and ranx (``metrics/*.py``).
_ALIASES: dict[str, str] = {
    "ndcg_cut": "ndcg",  # trec_eval ndcg_cut_k (with its cutoff only: see _REFUSED)
    "p": "precision",  # trec_eval P_k, ir_measures P@k
    "prec": "precision",
    "r": "recall",  # ir_measures R@k
    "hitrate": "hit_rate",
    "success": "hit_rate",  # trec_eval success_k, ir_measures Success@k (with a cutoff only)
    "rr": "mrr",  # ir_measures RR, RR@k
    "recip_rank": "mrr",  # trec_eval recip_rank
    "reciprocal_rank": "mrr",
    "ap": "map",  # ir_measures AP, AP@k (= trec_eval map, map_cut_k)
    "map_cut": "map",  # trec_eval map_cut_k (with its cutoff only)
    "rprec": "r_precision",  # trec_eval Rprec, ir_measures Rprec
    "r-precision": "r_precision",
    "medr": "median_rank",
    "set_p": "set_precision",  # trec_eval set_P
    "setp": "set_precision",  # ir_measures SetP
    "set_r": "set_recall",
    "setr": "set_recall",  # ir_measures SetR
    "set_f": "set_f1",  # trec_eval set_F (its default x = 1), ir_measures SetF (default beta = 1)
    "setf": "set_f1",
    "rej_p": "reject_precision",
    "rej_r": "reject_recall",
    "rej_f1": "reject_f1",
    "numret": "num_ret",  # ir_measures NumRet; NumRet(rel=N) is num_rel_ret (see parse_metric)
    "numrel": "num_rel",  # ir_measures NumRel
    "numrelret": "num_rel_ret",  # ir_measures NumRelRet
}

_NO_REL = {
    "num_ret": "num_ret counts every returned item; num_rel_ret(rel=N) counts those of grade >= N",
    "err": "ERR's gains are the grades themselves (gdeval): write err@k without (rel=...)",
}

#: trec_eval's cutoff lists: ``-m P`` means these cutoffs (``m_P.c``, ``m_recall.c``, ``m_ndcg_cut.c``,
#: ``m_map_cut.c``, ``m_success.c``), ``-m P.5,10`` the ones given.
TREC_CUTOFF_LISTS: Mapping[str, tuple[int, ...]] = MappingProxyType({
    "p": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
})

#: Names refused because they mean another measure elsewhere, or no single one: name -> (why, what to write).
_REFUSED: dict[str, tuple[str, str]] = {
    "hit": ("is ambiguous: ranx's hits@k counts the relevant items in the top k, hit rates are 0 or 1",
            "write hits@k for the count (ranx) or hit_rate@k for 1 if any relevant item is in the top k"),
    "ndcg_cut": ("is trec_eval's list of nDCG cutoffs (5,10,15,20,30,100,200,500,1000), not one measure",
                 "write ndcg_cut_10 (= ndcg@10), or ndcg for the whole ranking; finegrain evaluate --format "
                 "trec_eval reads -m ndcg_cut as trec_eval does"),
    "map_cut": ("is trec_eval's list of AP cutoffs (5,10,15,20,30,100,200,500,1000), not one measure",
                "write map_cut_100 (= map@100), or map for the whole ranking; finegrain evaluate --format "
                "trec_eval reads -m map_cut as trec_eval does"),
    "success": ("is trec_eval's list of success cutoffs (1,5,10), not one measure",
                "write success_10 or hit_rate@10; finegrain evaluate --format trec_eval reads -m success as "
                "trec_eval does"),
    "numq": ("is the number of queries, not a per-query measure",
             "every metric's denominators count its queries; finegrain evaluate --format trec_eval prints "
             "num_q"),
    "num_q": ("is the number of queries, not a per-query measure",
              "every metric's denominators count its queries; finegrain evaluate --format trec_eval prints "
              "num_q"),
}

# trec_eval measure names with the cutoff after "_" or ".": P_5, ndcg_cut_10, recall.100
# (Digits are ASCII only: Python's \d and int() also read ٣ and １０.)
_TREC_CUT = re.compile(r"^(p|recall|ndcg_cut|map_cut|success)[._]([0-9]+)$", re.ASCII)
# Interpolated precision at a recall level: trec_eval's iprec_at_recall_0.10 (or .0.1), ir_measures' IPrec@0.1.
_LEVEL = r"[0-9]*\.?[0-9]+"
_TREC_IPREC = re.compile(rf"^iprec_at_recall[._](?P<level>{_LEVEL})$", re.ASCII)
# A bare number in a comma list continues the cutoff list of the trec_eval measure before it: P.5,10
_LIST_HEAD = re.compile(r"^\s*(?:p|recall|ndcg_cut|map_cut|success|iprec_at_recall)\.", re.ASCII | re.IGNORECASE)
_LIST_ITEM = re.compile(rf"^\s*{_LEVEL}\s*$", re.ASCII)
# trec_eval's set_F with its parameter x = beta**2: set_F.0.5, set_F.4
_TREC_SET_F = re.compile(r"^set_f[._](?P<x>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$", re.ASCII)
_SPEC = re.compile(
    r"^\s*(?P<name>[A-Za-z][A-Za-z0-9_.\-]*?)\s*"
    r"(?:\((?P<p1>[^()]*)\))?\s*"
    r"(?:@\s*(?P<k>[^()\s]*))?\s*"
    r"(?:\((?P<p2>[^()]*)\))?\s*$"
)


@dataclass(frozen=True)
class MetricSpec:
    """One metric, parsed: ``name``, cutoff ``k`` (None = whole ranking), ``rel`` and ``beta``.

    ``key`` is the canonical string; two specs are equal exactly when their keys are.
    """

    name: str
    k: int | None = None
    rel: int = 1
    beta: float | None = None

    def __post_init__(self) -> None:
        rule = _RULES.get(self.name)
        if rule is None:
            raise UnknownNameError("metric", self.name, _RULES)
        if self.k is None and rule.default_k is not None:
            object.__setattr__(self, "k", rule.default_k)
        if self.k is not None and (isinstance(self.k, bool) or not isinstance(self.k, int)
                                   or not 1 <= self.k <= MAX_CUTOFF):
            raise FinegrainError(
                f"metric {self.name!r}: cutoff {self.k!r} is not a positive integer (at most {MAX_CUTOFF})",
                _cutoff_hint(self.name))
        if rule.cutoff is Cutoff.NONE and self.k is not None:
            raise FinegrainError(
                f"metric {self.name!r} takes no cutoff, got @{self.k}",
                f"write {self.name} without @k",
            )
        if rule.cutoff is Cutoff.REQUIRED and self.k is None:
            raise FinegrainError(
                f"metric {self.name!r} needs a cutoff",
                f"write {self.name}@k, e.g. {self.name}@10"
                + ("; for the precision of the whole returned set use set_precision" if self.name == "precision" else ""),
            )
        if isinstance(self.rel, bool) or not isinstance(self.rel, int) or self.rel < 1:
            raise FinegrainError(
                f"metric {self.name!r}: rel={self.rel!r} is not an integer >= 1",
                "rel is the lowest grade that counts as relevant, e.g. (rel=2)",
            )
        if self.rel != 1 and "rel" not in rule.params:
            raise FinegrainError(
                f"metric {self.name!r} takes no rel, got rel={self.rel}",
                f"it counts items of every grade: write {self.name}@k without (rel=...)",
            )
        if "beta" in rule.needs and self.beta is None:
            raise FinegrainError(f"metric {self.name!r} needs a beta", f"write e.g. {self.name}(beta=0.5)")
        if self.beta is not None:
            if "beta" not in rule.params:
                raise FinegrainError(
                    f"metric {self.name!r} takes no beta", "beta is a parameter of set_fbeta only"
                )
            if not (isinstance(self.beta, int | float) and math.isfinite(self.beta) and self.beta > 0):
                raise FinegrainError(
                    f"metric {self.name!r}: beta={self.beta!r} is not a positive number",
                    f"write e.g. {self.name}(beta=0.5)",
                )
            BETA.convert("beta", self.beta, f"metric {self.name!r}")  # its declared range
            object.__setattr__(self, "beta", float(self.beta))

    @property
    def family(self) -> str:
        """``"ranking"``, ``"set"``, ``"pair"``, ``"reject"``, ``"judged"`` or ``"count"`` (hits, num_*)."""
        return _RULES[self.name].family

    @property
    def key(self) -> str:
        """The canonical spelling, e.g. ``ndcg@10``, ``ndcg@10(rel=2)``, ``set_fbeta(beta=0.5)``."""
        out = self.name if self.k is None else f"{self.name}@{self.k}"
        params = []
        if self.rel != 1:
            params.append(f"rel={self.rel}")
        if self.beta is not None:
            params.append(f"beta={_number(self.beta)}")
        return out + (f"({','.join(params)})" if params else "")

    def __str__(self) -> str:
        return self.key


def metric_params(name: str) -> Mapping[str, Param]:
    """The declared parameters of the metric ``name`` (``rel``, ``beta`` for set_fbeta, none for judged)."""
    return _RULES[name].params


def metric_cutoff(name: str) -> Cutoff:
    """Whether the metric ``name`` takes ``@k``."""
    return _RULES[name].cutoff


RANK_VALUED = frozenset(n for n, r in _RULES.items() if r.values == "rank")  # values are ranks (>= 1)
_RANGES: Mapping[str, tuple[float, float]] = MappingProxyType(
    {"fraction": (0.0, 1.0), "rank": (1.0, math.inf), "count": (0.0, math.inf)})


def metric_range(name: str) -> tuple[float, float]:
    """The closed interval every value of the metric ``name`` lies in: ``[0, 1]`` for the fractions (nDCG,
    recall, MRR, ERR, bpref, gm_map, ...), ``[1, inf]`` for a rank, ``[0, inf]`` for a count (``hits``,
    ``num_ret``, ``num_rel``, ``num_rel_ret``). A saved value outside it is not this metric's."""
    return _RANGES[_RULES[name].values]


def metric_aggregation(name: str) -> Rule:
    """How the per-query values of the metric ``name`` aggregate (:mod:`finegrain.metrics.values`):
    ``median`` for median_rank, ``ratio`` for pair_* and reject_*, ``sum`` for num_*, ``gmean`` for
    gm_map, ``mean`` for every other metric."""
    return _RULES[name].aggregation


def metric_names() -> list[str]:
    """The canonical metric names (without cutoff or parameters)."""
    return list(_RULES)


def ir_measures_text(obj: object) -> str | None:
    """The string of an ``ir_measures`` measure object (``ir_measures.nDCG@10`` -> ``"nDCG@10"``), else None.

    Recognised by the module of its class, so ir_measures is never imported here.
    """
    module = type(obj).__module__ or ""
    if module.partition(".")[0] == "ir_measures" and hasattr(obj, "NAME"):
        return str(obj)
    return None


def is_metric(obj: object) -> bool:
    """Whether ``obj`` is one metric (a string, a :class:`MetricSpec` or an ir_measures measure), not a list."""
    return isinstance(obj, str | MetricSpec) or ir_measures_text(obj) is not None


def parse_metric(text: str | MetricSpec | object, *, trec_eval: bool = False) -> MetricSpec:
    """Parse ``name[@k][(param=value,...)]`` (or an ir_measures measure object) into a :class:`MetricSpec`.

    Raises :class:`~finegrain.errors.UnknownNameError` (with "did you mean")
    for an unknown name and :class:`~finegrain.errors.FinegrainError` naming the
    bad value for a bad cutoff or parameter, or a name that would mean another
    measure (see the module docstring). ``trec_eval=True`` also reads
    trec_eval's ``set_F.x`` (``x = beta**2``).
    """
    if isinstance(text, MetricSpec):
        return text
    measure = ir_measures_text(text)
    if measure is not None:
        text = measure
    if not isinstance(text, str):
        raise FinegrainError(f"a metric must be a string like 'ndcg@10' or an ir_measures measure, got {text!r}")
    set_f = _TREC_SET_F.match(text.strip().lower())
    if set_f:
        return _set_f_x(text, set_f["x"], trec_eval)
    m = _SPEC.match(text)
    if m is None or (m["p1"] is not None and m["p2"] is not None):
        raise FinegrainError(
            f"cannot read metric {text!r}",
            "write name@k(param=value), e.g. ndcg@10, recall@50 or ndcg@10(rel=2)",
        )
    raw_name, raw_k = m["name"], m["k"]
    lowered = raw_name.lower()
    trec = _TREC_CUT.match(lowered)
    iprec = _TREC_IPREC.match(lowered)
    if trec and raw_k is None:
        lowered, raw_k = trec[1], trec[2]
    elif iprec:
        lowered = _iprec_name(text, iprec["level"])
    elif lowered == "iprec" and raw_k is not None:  # ir_measures' IPrec@0.1: the recall level after the @
        lowered, raw_k = _iprec_name(text, raw_k), None
    if lowered in _REFUSED and not (lowered in _ALIASES and raw_k is not None):
        why, fix = _REFUSED[lowered]
        raise FinegrainError(f"metric {text!r}: {raw_name!r} {why}", fix)
    params = _parse_params(text, lowered, m["p1"] if m["p1"] is not None else m["p2"])
    name = _ALIASES.get(lowered, lowered)
    if lowered == "numret" and "rel" in params:
        name = "num_rel_ret"  # ir_measures' NumRet(rel=N) counts the returned items of grade >= N
    if lowered in ("set_f", "setf") and "beta" in params:
        _set_f_beta(text, params.pop("beta"))
    if name not in _RULES:
        raise UnknownNameError("metric", raw_name, _RULES)
    k = _parse_k(text, name, raw_k)
    no_rel = {"rel": _NO_REL.get(name) or f"{name} counts items of every grade: write {name}"
                     f"{'' if _RULES[name].cutoff is Cutoff.NONE else '@k'} without (rel=...)"}
    values = check_options(f"metric {text!r}", _RULES[name].params, params, hints=no_rel)
    return MetricSpec(name, k, values.get("rel", 1), values.get("beta"))


def parse_metrics(texts: object, *, trec_eval: bool = False) -> list[MetricSpec]:
    """Parse several specs (each string may itself be a comma-separated list); duplicates are dropped.

    ``texts`` is one metric (a string, spec or ir_measures measure) or an iterable of them. In a
    comma list a bare number continues the cutoff list of the trec_eval measure before it:
    ``"P.5,10"`` is ``P.5`` and ``P.10``, ``"iprec_at_recall.0,.5"`` two recall levels.
    """
    if is_metric(texts):
        items: list[object] = [texts]
    elif isinstance(texts, Iterable):
        items = list(texts)
    else:
        raise FinegrainError(f"metrics must be a metric or a list of metrics, got {texts!r}",
                             "e.g. ['ndcg@10', 'recall@100'] or 'ndcg@10,recall@100'")
    out: dict[str, MetricSpec] = {}
    for item in items:
        for part in split_metric_list(item) if isinstance(item, str) else [item]:
            spec = parse_metric(part, trec_eval=trec_eval)
            out.setdefault(spec.key, spec)
    return list(out.values())


def split_metric_list(text: str) -> list[str]:
    """The metrics of one comma list, stripped: commas inside parentheses do not split
    (``set_fbeta(beta=2,rel=2)``), and a bare number continues the trec_eval cutoff list before it
    (``P.5,10`` -> ``P.5``, ``P.10``)."""
    return _continue_lists(_split_commas(text))


# --------------------------------------------------------------------------- helpers


def _set_f_x(text: str, raw: str, trec_eval: bool) -> MetricSpec:
    """trec_eval's ``set_F.x``: F with ``beta = sqrt(x)`` (``x = 1``: set_f1, ``x = 4``: set_f2)."""
    x = float(raw)
    if not (math.isfinite(x) and x > 0):
        raise FinegrainError(f"metric {text!r}: x={raw} is not a positive number", "write e.g. set_F.1 or set_F.0.25")
    beta = math.sqrt(x)
    same = "set_f1" if x == 1 else "set_f2" if x == 4 else f"set_fbeta(beta={_number(beta)})"
    if not trec_eval:
        raise FinegrainError(
            f"metric {text!r} is trec_eval's spelling, whose parameter is beta**2, not beta",
            f"write {same} (the same measure), or add --compat trec_eval to read trec_eval's spelling",
        )
    if x == 1:
        return MetricSpec("set_f1")
    if x == 4:
        return MetricSpec("set_f2")
    return MetricSpec("set_fbeta", beta=beta)


def _set_f_beta(text: str, raw: str) -> None:
    """``SetF(beta=b)``: F1 for ``b = 1``; any other ``b`` is refused (ir_measures computes trec_eval's set_F.b)."""
    try:
        beta = parse_float(raw)
    except NumberError as e:
        raise FinegrainError(f"metric {text!r}: beta={raw!r} is not a finite number", e.hint) from None
    if beta == 1:
        return
    same = "set_f2" if beta == 4 else f"set_fbeta(beta={_number(math.sqrt(beta))})" if beta > 0 else None
    raise FinegrainError(
        f"metric {text!r}: ir_measures' SetF(beta={raw}) is computed (by pytrec_eval) as trec_eval's "
        f"set_F.{raw}, the F measure with beta**2 = {raw}, not beta = {raw}",
        (f"write {same} for the number ir_measures prints, or " if same else "write ")
        + f"set_fbeta(beta={raw}) for beta = {raw}",
    )


def _iprec_name(text: str, raw: str) -> str:
    """``iprec_at_recall_0.10`` for the recall level ``raw`` (``0.1``, ``.1``, ``0.10``): one of trec_eval's 11."""
    try:
        level = parse_float(raw) if re.fullmatch(_LEVEL, raw, re.ASCII) else math.nan
    except NumberError:
        level = math.nan
    for name, x in IPREC_NAMES.items():
        if abs(level - x) < 1e-9:
            return name
    raise FinegrainError(
        f"metric {text!r}: recall level {raw!r} is not one of trec_eval's 11 (0, 0.1, ..., 1)",
        "write iprec_at_recall_0.50 (trec_eval) or IPrec@0.5 (ir_measures), the level a multiple of 0.1",
    )


def _continue_lists(parts: list[str]) -> list[str]:
    """``["P.5", "10"]`` -> ``["P.5", "P.10"]``: a bare number continues the trec_eval cutoff list before it."""
    out: list[str] = []
    head: str | None = None
    for part in parts:
        if head is not None and _LIST_ITEM.match(part):
            out.append(head + part.strip())
            continue
        lead = _LIST_HEAD.match(part)
        head = lead[0].strip() if lead else None
        out.append(part)
    return out


def _split_commas(text: str) -> list[str]:
    """Split on commas outside parentheses: ``"ndcg@10,set_fbeta(beta=2,rel=2)"``."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    out = [p.strip() for p in parts if p.strip()]
    if not out:
        raise FinegrainError(f"empty metric list {text!r}", "give at least one metric, e.g. ndcg@10")
    return out


def _parse_k(text: str, name: str, raw: str | None) -> int | None:
    """The cutoff of ``name@k``: ASCII digits, 1..MAX_CUTOFF (a longer string is refused before int() reads it)."""
    if raw is None:
        return None
    digits = re.fullmatch(r"[0-9]+", raw, re.ASCII) is not None
    if not digits or len(raw.lstrip("0")) > len(str(MAX_CUTOFF)) or not 1 <= int(raw) <= MAX_CUTOFF:
        raise FinegrainError(
            f"metric {text!r}: cutoff {raw!r} is not a positive integer (ASCII digits, at most {MAX_CUTOFF})",
            _cutoff_hint(name))
    return int(raw)


def _cutoff_hint(name: str) -> str:
    return f"write {name}@k with k in ASCII digits 0-9, 1 <= k <= {MAX_CUTOFF}, e.g. {name}@10"


def _parse_params(text: str, name: str, raw: str | None) -> dict[str, str]:
    if raw is None:
        return {}
    params: dict[str, str] = {}
    for item in raw.split(","):
        key, eq, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq or not key or not value:
            raise FinegrainError(
                f"metric {text!r}: cannot read parameter {item.strip()!r}",
                f"write parameters as name=value, e.g. {name}(rel=2)",
            )
        if key in params:
            raise FinegrainError(f"metric {text!r}: parameter {key!r} is given twice", "give it once")
        params[key] = value
    return params


def _number(x: float) -> str:
    return str(int(x)) if x == int(x) else repr(x)
