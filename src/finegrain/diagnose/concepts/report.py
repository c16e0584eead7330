"""Local (one failure) and global (all failures) concept reports -- Table 3 of the explainable-ranking paper.

Besides CA / NCS / CE / SD the paper reports, per model over all failures (Section 6.3):

* **object hit** -- common concepts between I_g and I_r, summed over failures (the paper's 134 630
  "common concepts" is its "obj hit");
* **object miss** -- ground-truth concepts not found in I_r, summed;
* **matched % synsets** -- ground-truth synsets found in I_r over all ground-truth synsets
  (pooled over failures: sum of hits / sum of ground-truth synsets). Table 3's 29.43 for
  MiniLM-L3 instead equals the NCS matched pairs over the non-common synsets (184 747 / 627 833);
  that share is reported separately as ``ncs_matched_pct``;
* **enumeration disagreement** -- per failure, common synsets whose multiplicity differs over
  all ground-truth synsets (a synset missing from I_r is an object miss, not an enumeration
  error), averaged over failures; plus the pooled counts of same / different multiplicity.

Counts are over distinct synsets (the concept sets V), multiplicities over objects.
Global means are over the failures where the value is defined; each denominator is reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rich.table import Table
from tqdm.auto import tqdm

from finegrain.diagnose.concepts.metrics import (
    DEFAULT_TD,
    ConceptComparison,
    compare_concepts,
)
from finegrain.diagnose.concepts.objects import ObjectSet


@dataclass(frozen=True, slots=True)
class LocalReport:
    """One failure explained: the metrics and the hits, misses and multiplicities behind them."""

    comparison: ConceptComparison
    object_hit: int
    object_miss: int
    same_multiplicity: int
    different_multiplicity: int

    @property
    def matched_synset_pct(self) -> float | None:
        n = self.object_hit + self.object_miss
        return 100.0 * self.object_hit / n if n else None

    @property
    def enum_disagreement_pct(self) -> float | None:
        n = self.object_hit + self.object_miss
        return 100.0 * self.different_multiplicity / n if n else None

    @property
    def size_disagreeing(self) -> int:
        return sum(1 for p in self.comparison.size_pairs if p[3] >= self.comparison.td)

    def to_dict(self) -> dict[str, Any]:
        c = self.comparison
        return {
            "scores": c.scores.to_dict(), "query": c.query, "td": c.td,
            "object_hit": self.object_hit, "object_miss": self.object_miss,
            "matched_synset_pct": self.matched_synset_pct,
            "same_multiplicity": self.same_multiplicity, "different_multiplicity": self.different_multiplicity,
            "enum_disagreement_pct": self.enum_disagreement_pct,
            "common": list(c.common), "gt_only": list(c.gt_only), "retrieved_only": list(c.retrieved_only),
            "ncs_pairs": [list(p) for p in c.ncs_pairs],
            "multiplicities": [list(m) for m in c.multiplicities],
            "size_pairs": [list(p) for p in c.size_pairs],
        }


def local_report(gt: ObjectSet, retrieved: ObjectSet, query: str | None = None, *,
                 td: float = DEFAULT_TD) -> LocalReport:
    """The local report of one failure (query-informed when ``query`` is given)."""
    return from_comparison(compare_concepts(gt, retrieved, query, td=td))


def from_comparison(c: ConceptComparison) -> LocalReport:
    same = sum(1 for _, ng, nr in c.multiplicities if ng == nr)
    return LocalReport(comparison=c, object_hit=len(c.common), object_miss=len(c.gt_only),
                       same_multiplicity=same, different_multiplicity=len(c.multiplicities) - same)


@dataclass(frozen=True, slots=True)
class GlobalReport:
    """Table 3 of the paper for one system: means over failures and pooled counts."""

    n_failures: int
    ca: float | None
    n_ca: int
    ncs: float | None
    n_ncs: int
    ce: float | None
    ce_mode: int | None
    sd: float | None
    sd_binary: float | None
    n_sd: int
    object_hit: int
    object_miss: int
    matched_synset_pct: float | None
    enum_disagreement_pct: float | None
    same_multiplicity: int
    different_multiplicity: int
    ncs_pairs: int
    non_common_synsets: int
    ncs_matched_pct: float | None
    size_pairs: int
    size_disagreeing_pairs: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def global_report(reports: Iterable[LocalReport]) -> GlobalReport:
    """Aggregate local reports over all failures of a system."""
    reps = list(reports)
    cs = [r.comparison for r in reps]
    ca = [c.scores.ca for c in cs if c.scores.ca is not None]
    ncs = [c.scores.ncs for c in cs if c.scores.ncs is not None]
    sized = [c for c in cs if c.scores.sd_binary is not None]
    ces = [c.scores.ce for c in cs]
    hit = sum(r.object_hit for r in reps)
    miss = sum(r.object_miss for r in reps)
    enum = [r.enum_disagreement_pct for r in reps if r.enum_disagreement_pct is not None]
    pairs = sum(len(c.ncs_pairs) for c in cs)
    non_common = sum(len(c.gt_only) + len(c.retrieved_only) for c in cs)
    return GlobalReport(
        n_failures=len(reps),
        ca=_mean(ca), n_ca=len(ca),
        ncs=_mean(ncs), n_ncs=len(ncs),
        ce=_mean(ces), ce_mode=Counter(ces).most_common(1)[0][0] if ces else None,
        sd=_mean([c.scores.sd for c in sized]), sd_binary=_mean([c.scores.sd_binary for c in sized]),  # type: ignore[misc]
        n_sd=len(sized),
        object_hit=hit, object_miss=miss,
        matched_synset_pct=100.0 * hit / (hit + miss) if hit + miss else None,
        enum_disagreement_pct=_mean(enum),
        same_multiplicity=sum(r.same_multiplicity for r in reps),
        different_multiplicity=sum(r.different_multiplicity for r in reps),
        ncs_pairs=pairs, non_common_synsets=non_common,
        ncs_matched_pct=100.0 * pairs / non_common if non_common else None,
        size_pairs=sum(len(c.size_pairs) for c in cs),
        size_disagreeing_pairs=sum(r.size_disagreeing for r in reps),
    )


def explain_failures(failures: Iterable[tuple[ObjectSet, ObjectSet, str | None]], *, td: float = DEFAULT_TD,
                     show_progress: bool = False) -> tuple[list[LocalReport], GlobalReport]:
    """Local reports for ``(ground truth, retrieved, query or None)`` triples, and their global report."""
    items = list(failures)
    it: Iterable[tuple[ObjectSet, ObjectSet, str | None]] = items
    if show_progress:
        it = tqdm(items, desc="concepts", unit="failure")
    reps = [local_report(g, r, q, td=td) for g, r, q in it]
    return reps, global_report(reps)


def _fmt(v: Any, digits: int = 4) -> str:
    if v is None:
        return "undefined"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def render_local(report: LocalReport) -> list[Any]:
    """rich tables of one failure: scores, concepts, NCS pairs, multiplicities, size pairs."""

    c = report.comparison
    title = "query-informed" + f" ({c.query!r})" if c.query is not None else "query-agnostic"
    t = Table(title=f"concept scores, {title}", title_justify="left")
    t.add_column("metric")
    t.add_column("value", justify="right")
    for k, v in c.scores.to_dict().items():
        t.add_row(k, _fmt(v))
    t.add_row("object hit", str(report.object_hit))
    t.add_row("object miss", str(report.object_miss))
    t.add_row("matched synsets %", _fmt(report.matched_synset_pct, 2))
    t.add_row("enumeration disagreement %", _fmt(report.enum_disagreement_pct, 2))
    tables = [t]
    s = Table(title="concepts", title_justify="left")
    s.add_column("common")
    s.add_column("ground truth only")
    s.add_column("retrieved only")
    s.add_row(", ".join(c.common) or "-", ", ".join(c.gt_only) or "-", ", ".join(c.retrieved_only) or "-")
    tables.append(s)
    if c.ncs_pairs:
        n = Table(title="NCS matching (path similarity)", title_justify="left")
        n.add_column("ground truth")
        n.add_column("retrieved")
        n.add_column("ps", justify="right")
        for a, b, w in c.ncs_pairs:
            n.add_row(a, b, f"{w:.3f}")
        tables.append(n)
    if c.multiplicities:
        m = Table(title=f"multiplicities and sizes (TD={c.td:g})", title_justify="left")
        for col in ("synset", "n ground truth", "n retrieved", "matched pairs", "pairs DA >= TD", "mean DA"):
            m.add_column(col, justify="left" if col == "synset" else "right")
        for u, ng, nr in c.multiplicities:
            das = [p[3] for p in c.size_pairs if p[0] == u]
            m.add_row(u, str(ng), str(nr), str(len(das)), str(sum(d >= c.td for d in das)),
                      f"{sum(das) / len(das):.3f}" if das else "-")
        tables.append(m)
    return tables


def render_global(report: GlobalReport) -> Any:
    """A rich table of the global report (Table 3 columns first)."""

    t = Table(title=f"concept report over {report.n_failures} failures", title_justify="left")
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_column("over", justify="right")
    rows = [
        ("CA (mean)", _fmt(report.ca), f"{report.n_ca} failures"),
        ("NCS (mean)", _fmt(report.ncs), f"{report.n_ncs} failures"),
        ("CE (mean)", _fmt(report.ce), f"{report.n_failures} failures"),
        ("CE (most common)", _fmt(report.ce_mode), ""),
        ("SD (mean)", _fmt(report.sd), f"{report.n_sd} failures"),
        ("SD binary (mean)", _fmt(report.sd_binary), f"{report.n_sd} failures"),
        ("object hit", str(report.object_hit), ""),
        ("object miss", str(report.object_miss), ""),
        ("matched synsets %", _fmt(report.matched_synset_pct, 2), f"{report.object_hit + report.object_miss} synsets"),
        ("enumeration disagreement % (mean)", _fmt(report.enum_disagreement_pct, 2), ""),
        ("same / different multiplicity", f"{report.same_multiplicity} / {report.different_multiplicity}", ""),
        ("NCS matched pairs %", _fmt(report.ncs_matched_pct, 2), f"{report.non_common_synsets} non-common"),
        ("size pairs DA >= TD", f"{report.size_disagreeing_pairs} / {report.size_pairs}", ""),
    ]
    for r in rows:
        t.add_row(*r)
    return t
