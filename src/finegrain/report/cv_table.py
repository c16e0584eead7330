"""Terminal view of ``finegrain eval --cv``, rendered from the saved ``"cv"`` section and ``provenance["cv"]``
(:mod:`finegrain.experiment.tuning.cv`): per metric the cross-validated mean and CI next to the a-priori default, and the
settings each fold chose."""

from __future__ import annotations

from pydantic import JsonValue
from rich.console import Console
from rich.table import Table

from finegrain.report.console import table_console
from finegrain.report.table import fmt
from finegrain.results.tuning import CvProvenance, CvSection, Setting


def _ci(x: tuple[float, float] | None) -> str:
    return "—" if not x else f"[{fmt(x[0])}, {fmt(x[1])}]"


def _setting(s: Setting) -> str:
    def one(v: JsonValue) -> str:
        if isinstance(v, (list, tuple)):
            return ",".join(f"{x:g}" if isinstance(x, int | float) else str(x) for x in v)
        return "default" if v is None else f"{v:g}" if isinstance(v, float) else str(v)

    return " ".join(f"{k}={one(v)}" for k, v in s.items()) or "—"


def cv_table(cv: CvSection, prov: CvProvenance, title: str = "") -> Table:
    """One row per metric: CV mean [CI], default mean [CI], difference [CI] and its randomization p (x100)."""
    t = Table(title=(f"{title} · " if title else "") + f"{prov.folds}-fold CV on {cv.objective} "
              "(x100; out-of-fold values, bootstrap 95% CI)", title_justify="left")
    for col in ("metric", "CV mean", "CI", "a-priori default", "CI", "CV - default", "CI", "p"):
        t.add_column(col, justify="left" if col == "metric" else "right")
    for m, c in cv.metrics.items():
        t.add_row(m, fmt(c.mean), _ci(c.ci), fmt(c.default_mean), _ci(c.default_ci),
                  fmt(c.diff), _ci(c.diff_ci), "—" if c.p_rand is None else f"{c.p_rand:.3g}")
    return t


def fold_lines(prov: CvProvenance) -> list[str]:
    """The setting each fold chose on the other folds, the consensus and the (optimistic) in-sample best."""
    out = [f"default: {_setting(prov.default)}"]
    for f in prov.per_fold:
        out.append(f"fold {f.fold + 1} ({f.n_queries} queries): {_setting(f.setting)} · fitted "
                   f"{fmt(f.fitted_value)} on the other folds · held out {fmt(f.held_out_value)}")
    out.append(f"consensus (most folds): {_setting(prov.consensus)}")
    out.append(f"in-sample best {_setting(prov.in_sample.setting)} = {fmt(prov.in_sample.value)} "
               "(optimistic: chosen on the queries it is scored on; not a result)")
    return out


def print_cv(cv: CvSection, prov: CvProvenance, title: str = "", console: Console | None = None) -> None:
    console = console or table_console()
    console.print(cv_table(cv, prov, title))
    for line in fold_lines(prov):
        console.print(line, highlight=False)
