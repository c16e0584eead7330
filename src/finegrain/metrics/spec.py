"""Metric specs: one grammar, one canonical key.

A metric is written ``name[@k][(param=value, ...)]``::

    ndcg@10            recall@50          precision@5      hit_rate@1
    map@100  map       mrr@10  mrr        r_precision      median_rank@100
    fail_rate@1        ndcg@10(rel=2)     set_f1           set_fbeta(beta=0.5)
    reject_f1          pair_precision@20  judged@10

``@k`` cuts the ranking at its top ``k`` (ranks come from the one ranking rule,
:mod:`finegrain.ranking`), ``k`` in ASCII digits from 1 to :data:`MAX_CUTOFF`;
without it the whole returned list counts, except
that ``precision`` needs a cutoff (the precision of the whole returned set is
``set_precision``), ``fail_rate`` means ``fail_rate@1`` ("first relevant item
not at rank 1"), and ``r_precision`` and ``reject_*`` take none.
``rel=N`` (default 1) is the lowest grade that counts as relevant. ``beta`` is
the weight of recall in ``set_fbeta``. ``judged`` (the share of the top
``k`` that has a judgement of any grade) takes no ``rel``. Names are
case-insensitive and a few aliases are accepted (``nDCG@10``, ``P@5``, ``R@50``, ``MRR@10``,
``success@1``, ``recip_rank``, ``P_5``, ``ndcg_cut_10``, ``P(rel=2)@5``); every
spec prints back as one canonical, lower-case key: ``parse_metric(s.key) == s``.

trec_eval's ``set_F.x`` weighs recall with ``x = beta**2`` (``m_set_F.c``:
``(x+1)PR/(xP+R)``), unlike ``set_fbeta(beta=b)``; the spelling is refused
unless ``trec_eval=True`` (``--compat trec_eval``), where it reads as trec_eval
reads it: ``set_F.4`` is ``set_f2``, ``set_F.x`` is ``set_fbeta(beta=sqrt(x))``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.registry import Param, check_options


class Cutoff(Enum):
    """Whether a metric takes ``@k``."""

    OPTIONAL = "optional"  # without @k the whole ranking counts
    REQUIRED = "required"
    NONE = "none"


@dataclass(frozen=True)
class _Rule:
    family: str  # "ranking", "set", "pair" or "reject"
    cutoff: Cutoff
    params: Mapping[str, Param]
    default_k: int | None = None
    needs: frozenset[str] = frozenset()


#: The largest cutoff ``@k``: deeper than any run is long, and within every integer type a cutoff meets.
MAX_CUTOFF = 10**9
# The declared parameters (ir_measures' SUPPORTED_PARAMS); checked by finegrain.registry.check_options.
REL = Param(int, 1, min=1, help="lowest grade that counts as relevant")
BETA = Param(float, None, required=True, max=1e6, help="weight of recall in the F measure (> 0)",
             why="beta**2 weighs recall; beyond 1e6 the F measure is recall")
_RANK: Mapping[str, Param] = MappingProxyType({"rel": REL})
_RANK_BETA: Mapping[str, Param] = MappingProxyType({"rel": REL, "beta": BETA})
_NONE: Mapping[str, Param] = MappingProxyType({})
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
}

_ALIASES: dict[str, str] = {
    "ndcg_cut": "ndcg",
    "p": "precision",
    "prec": "precision",
    "r": "recall",
    "hit": "hit_rate",
    "hits": "hit_rate",
    "hitrate": "hit_rate",
    "success": "hit_rate",
    "rr": "mrr",
    "recip_rank": "mrr",
    "reciprocal_rank": "mrr",
    "ap": "map",
    "map_cut": "map",
    "rprec": "r_precision",
    "r-precision": "r_precision",
    "medr": "median_rank",
    "set_p": "set_precision",
    "set_r": "set_recall",
    "set_f": "set_f1",
    "rej_p": "reject_precision",
    "rej_r": "reject_recall",
    "rej_f1": "reject_f1",
}

# trec_eval measure names with the cutoff after "_" or ".": P_5, ndcg_cut_10, recall.100
# (Digits are ASCII only: Python's \d and int() also read ٣ and １０.)
_TREC_CUT = re.compile(r"^(p|recall|ndcg_cut|map_cut|success)[._]([0-9]+)$", re.ASCII)
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
        """``"ranking"``, ``"set"``, ``"pair"``, ``"reject"`` or ``"judged"``."""
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


RANK_VALUED = frozenset({"median_rank"})  # values are ranks (>= 1), every other metric is a fraction in [0, 1]


def metric_range(name: str) -> tuple[float, float]:
    """The closed interval every value of the metric ``name`` lies in: ``[0, 1]`` for the fractions (nDCG,
    recall, MRR, ...), ``[1, inf]`` for a rank. A saved value outside it is not this metric's."""
    _RULES[name]  # noqa: B018 - an unknown name is a KeyError, as for metric_params
    return (1.0, math.inf) if name in RANK_VALUED else (0.0, 1.0)


def metric_names() -> list[str]:
    """The canonical metric names (without cutoff or parameters)."""
    return list(_RULES)


def parse_metric(text: str | MetricSpec, *, trec_eval: bool = False) -> MetricSpec:
    """Parse ``name[@k][(param=value,...)]`` into a :class:`MetricSpec`.

    Raises :class:`~finegrain.errors.UnknownNameError` (with "did you mean")
    for an unknown name and :class:`~finegrain.errors.FinegrainError` naming the
    bad value for a bad cutoff or parameter. ``trec_eval=True`` also reads
    trec_eval's ``set_F.x`` (``x = beta**2``); see the module docstring.
    """
    if isinstance(text, MetricSpec):
        return text
    if not isinstance(text, str):
        raise FinegrainError(f"a metric must be a string like 'ndcg@10', got {text!r}")
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
    if trec and raw_k is None:
        lowered, raw_k = trec[1], trec[2]
    name = _ALIASES.get(lowered, lowered)
    if name not in _RULES:
        raise UnknownNameError("metric", raw_name, _RULES)
    k = _parse_k(text, name, raw_k)
    params = _parse_params(text, name, m["p1"] if m["p1"] is not None else m["p2"])
    no_rel = {"rel": f"{name} counts items of every grade: write {name}@k without (rel=...)"}
    values = check_options(f"metric {text!r}", _RULES[name].params, params, hints=no_rel)
    return MetricSpec(name, k, values.get("rel", 1), values.get("beta"))


def parse_metrics(
    texts: str | MetricSpec | Iterable[str | MetricSpec], *, trec_eval: bool = False
) -> list[MetricSpec]:
    """Parse several specs (each item may itself be a comma-separated list); duplicates are dropped."""
    items = [texts] if isinstance(texts, str | MetricSpec) else list(texts)
    out: dict[str, MetricSpec] = {}
    for item in items:
        for part in _split_commas(item) if isinstance(item, str) else [item]:
            spec = parse_metric(part, trec_eval=trec_eval)
            out.setdefault(spec.key, spec)
    return list(out.values())


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
