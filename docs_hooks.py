"""MkDocs hooks (mkdocs.yml ``hooks:``): reference pages generated from the code, so they cannot drift.

A page holds a marker comment where a generated part goes:

- ``<!-- generated: cli -->``      every ``finegrain`` verb, walked from the click tree the CLI itself runs
- ``<!-- generated: metrics -->``  every registered metric with its cutoff, parameters, aggregation and
                                    the spellings of trec_eval, ir_measures and others that read as it

``tests/docs/test_reference.py`` checks that every verb and every metric appears.
"""

from __future__ import annotations

import re
from typing import Any

import typer

from finegrain.cli.app import build_cli
from finegrain.evaluate.compat import TREC_EVAL_MEASURES
from finegrain.metrics import METRICS
from finegrain.metrics.spec import _ALIASES, IPREC_NAMES, metric_aggregation, metric_cutoff, metric_params

MARKER = re.compile(r"<!--\s*generated:\s*(?P<what>[a-z]+)\s*-->")

#: finegrain metric name -> ir_measures' spelling of the same measure (None: ir_measures has none).
#: tests/docs/test_reference.py parses each with ir_measures and with finegrain, and needs every metric here.
IR_MEASURES: dict[str, str | None] = {
    "ndcg": "nDCG@k", "precision": "P@k", "recall": "R@k", "hit_rate": "Success@k", "mrr": "RR@k", "map": "AP@k",
    "r_precision": "Rprec", "median_rank": None, "fail_rate": None, "set_precision": "SetP", "set_recall": "SetR",
    "set_f1": "SetF", "set_f2": None, "set_fbeta": None, "pair_precision": None, "pair_recall": None,
    "pair_f1": None, "reject_precision": None, "reject_recall": None, "reject_f1": None, "judged": "Judged@k",
    "hits": None, "err": "ERR@k", "bpref": "Bpref", "infap": "infAP", "gm_map": None, "num_ret": "NumRet",
    "num_rel": "NumRel", "num_rel_ret": "NumRelRet",
    **{name: f"IPrec@{level:.1f}" for name, level in IPREC_NAMES.items()},
}


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each ``<!-- generated: WHAT -->`` marker with its generated Markdown."""
    return MARKER.sub(lambda m: GENERATORS[m.group("what")](), markdown)


# ---- the CLI --------------------------------------------------------------------------------------------

def cli_markdown() -> str:
    """Every verb of ``finegrain``, in the order ``--help`` lists them: usage, help and parameters."""
    root = typer.main.get_command(build_cli())
    ctx = typer.Context(root, info_name="finegrain")
    parts = [_command_markdown(root, ctx, top=True)]
    for name, cmd, sub in _walk(root, ctx):
        parts.append(_command_markdown(cmd, sub, title=name))
    return "\n".join(parts)


def _walk(group: Any, ctx: typer.Context) -> list[tuple[str, Any, typer.Context]]:
    out: list[tuple[str, Any, typer.Context]] = []
    if not hasattr(group, "list_commands"):
        return out
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        sub = typer.Context(cmd, info_name=name, parent=ctx)
        out.append((sub.command_path, cmd, sub))
        out.extend(_walk(cmd, sub))
    return out


def _command_markdown(cmd: Any, ctx: typer.Context, *, title: str = "", top: bool = False) -> str:
    lines = [] if top else [f"## `{title}`", ""]
    help_text = _text(cmd.help or "")
    if help_text and not top:
        lines += [_paragraphs(help_text), ""]
    lines += ["```text", _unescape(cmd.get_usage(ctx)).strip(), "```", ""]
    rows = []
    for param in cmd.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, text = record
        if param.param_type_name == "argument" and not text:
            continue
        rows.append(f"| `{_unescape(names)}` | {_cell(text)} |")
    if rows:
        lines += ["| Parameter | Description |", "| --- | --- |", *rows, ""]
    if hasattr(cmd, "list_commands"):
        subs = [(n, cmd.get_command(ctx, n)) for n in cmd.list_commands(ctx)]
        items = [f"| [`{n}`](#{_anchor(ctx.command_path + ' ' + n)}) | {_cell(_text(c.help or '').split(chr(10) * 2)[0])} |"
                 for n, c in subs if c is not None and not c.hidden]
        lines += ["| Command | What it does |", "| --- | --- |", *items, ""]
    return "\n".join(lines)


def _anchor(title: str) -> str:
    """The id Python-Markdown's toc gives a heading ``finegrain album index`` (in backticks)."""
    return re.sub(r"[^a-z0-9_\- ]", "", title.lower()).strip().replace(" ", "-")


def _unescape(text: str) -> str:
    """Help as written: the CLI escapes ``[`` for rich markup (``finegrain.cli.app.literal``)."""
    return text.replace("\\[", "[")


def _text(text: str) -> str:
    return _unescape(text).replace("\b", "").strip()


def _paragraphs(text: str) -> str:
    """Help paragraphs as Markdown paragraphs, every character shown as written."""
    return "\n\n".join(_escape(" ".join(p.split())) for p in re.split(r"\n\s*\n", text))


def _cell(text: str) -> str:
    return _escape(" ".join(_unescape(text).split())).replace("|", "\\|")


def _escape(text: str) -> str:
    """Markdown-inert text: no emphasis, no HTML, no links."""
    for ch in "\\`*_[]<>":
        text = text.replace(ch, "\\" + ch if ch not in "<>" else {"<": "&lt;", ">": "&gt;"}[ch])
    return text


# ---- the metrics ----------------------------------------------------------------------------------------

def metrics_markdown() -> str:
    """One row per registered metric: what it is, ``@k``, parameters, aggregation, other spellings."""
    aliases: dict[str, list[str]] = {}
    for alias, name in _ALIASES.items():
        aliases.setdefault(name, []).append(alias)
    rows = ["| Metric | Meaning | `@k` | Parameters | Aggregated by | trec_eval | ir_measures | Also read |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for entry in METRICS.entries():
        name = entry.name
        cutoff = metric_cutoff(name).value
        params = "; ".join(f"`{key}`: {_cell(p.describe())}" for key, p in metric_params(name).items()) or "-"
        trec = TREC_EVAL_MEASURES.get(name)
        irm = IR_MEASURES[name]
        also = ", ".join(f"`{a}`" for a in sorted(aliases.get(name, []))) or "-"
        rows.append(f"| `{name}` | {_cell(entry.help)} | {cutoff} | {params} "
                    f"| {metric_aggregation(name)} | {f'`{trec}`' if trec else '-'} | {f'`{irm}`' if irm else '-'} "
                    f"| {also} |")
    return "\n".join(rows) + "\n"


GENERATORS = {"cli": cli_markdown, "metrics": metrics_markdown}
