"""Terminal view of ``finegrain eval --cv``, rendered from ``results["cv"]`` and ``provenance["cv"]``
(:mod:`finegrain.experiment.tuning.cv`): per metric the cross-validated mean and CI next to the a-priori default, and the
settings each fold chose."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from finegrain.report.console import table_console
from finegrain.report.table import fmt


def _ci(x: Any) -> str:
    return "—" if not x else f"[{fmt(x[0])}, {fmt(x[1])}]"


def _setting(s: Mapping[str, Any]) -> str:
    def one(v: Any) -> str:
        if isinstance(v, (list, tuple)):
            return ",".join(f"{x:g}" for x in v)
        return "default" if v is None else f"{v:g}" if isinstance(v, float) else str(v)

    return " ".join(f"{k}={one(v)}" for k, v in s.items()) or "—"


def cv_table(cv: Mapping[str, Any], prov: Mapping[str, Any], title: str = "") -> Table:
    """One row per metric: CV mean [CI], default mean [CI], difference [CI] and its randomization p (x100)."""
    t = Table(title=(f"{title} · " if title else "") + f"{prov.get('folds')}-fold CV on {cv.get('objective')} "
              "(x100; out-of-fold values, bootstrap 95% CI)", title_justify="left")
    for col in ("metric", "CV mean", "CI", "a-priori default", "CI", "CV - default", "CI", "p"):
        t.add_column(col, justify="left" if col == "metric" else "right")
    for m, c in cv["metrics"].items():
        p = c.get("p_rand")
        t.add_row(m, fmt(c.get("mean")), _ci(c.get("ci")), fmt(c.get("default_mean")), _ci(c.get("default_ci")),
                  fmt(c.get("diff")), _ci(c.get("diff_ci")), "—" if p is None else f"{p:.3g}")
    return t


def fold_lines(prov: Mapping[str, Any]) -> list[str]:
    """The setting each fold chose on the other folds, the consensus and the (optimistic) in-sample best."""
    out = [f"default: {_setting(prov.get('default') or {})}"]
    for f in prov.get("per_fold") or []:
        out.append(f"fold {f['fold'] + 1} ({f['n_queries']} queries): {_setting(f['setting'])} · fitted "
                   f"{fmt(f.get('fitted_value'))} on the other folds · held out {fmt(f.get('held_out_value'))}")
    out.append(f"consensus (most folds): {_setting(prov.get('consensus') or {})}")
    ins = prov.get("in_sample") or {}
    out.append(f"in-sample best {_setting(ins.get('setting') or {})} = {fmt(ins.get('value'))} "
               "(optimistic: chosen on the queries it is scored on; not a result)")
    return out


def print_cv(cv: Mapping[str, Any], prov: Mapping[str, Any], title: str = "", console: Console | None = None) -> None:
    console = console or table_console()
    console.print(cv_table(cv, prov, title))
    for line in fold_lines(prov):
        console.print(line, highlight=False)
