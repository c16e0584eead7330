"""The plan of a query as chips, and a query without one chip's constraint.

:func:`plan_chips` turns a :class:`~finegrain.album.engine.plan.Plan` into ``{"kind", "label", "title"}``
chips (time, place, people, event, visual), one per constraint; :func:`drop_constraint` is what
the x on a chip does: the query without the words the planner read that constraint from.
"""

from __future__ import annotations

import re
from typing import Any

from finegrain.errors import FinegrainError

__all__ = ["drop_constraint", "plan_chips"]


def plan_chips(plan: Any, people_names: dict[str, str] | None = None) -> list[dict[str, str]]:
    """The plan as chips ``{"kind", "label", "title"}``: time, place, people, event, visual.

    One chip per (kind, label): a constraint the plan holds twice (a season read as two
    ranges, "2023 winter") shows once, its titles joined with " or "."""
    chips = _raw_chips(plan, people_names or {})
    merged: dict[tuple[str, str], dict[str, str]] = {}
    for chip in chips:
        key = (chip["kind"], chip["label"].strip().lower())
        if key in merged:
            if chip["title"] not in merged[key]["title"].split(" or "):
                merged[key]["title"] += " or " + chip["title"]
        else:
            merged[key] = dict(chip)
    return list(merged.values())


def _raw_chips(plan: Any, names: dict[str, str]) -> list[dict[str, str]]:
    if plan is None:
        return []
    chips: list[dict[str, str]] = []
    for t in getattr(plan, "time_ranges", ()):
        span = f"{t.start:%m-%d}..{t.end:%m-%d} every year" if t.every_year else f"{t.start}..{t.end}"
        if t.hours:
            span += f", {t.hours[0]:02d}h-{t.hours[1]:02d}h"
        chips.append({"kind": "time", "label": t.text, "title": f"{span} ({t.rule})"})
    for t in getattr(plan, "impossible_times", ()):
        chips.append({"kind": "time", "label": t.text, "title": f"no such date: {t.reason}"})
    for p in getattr(plan, "places", ()):
        title = f"{p.place.level}: {p.place.name}" + ("" if p.in_album else " (no photos there)")
        chips.append({"kind": "place", "label": p.text, "title": title})
    for p in getattr(plan, "people", ()):
        name = names.get(p.person_id, p.person_id)
        chips.append({"kind": "people", "label": p.text, "title": f"person {name} ({p.person_id})"})
    for group in getattr(plan, "people_any", ()):
        if group.constrains:
            chips.append({"kind": "people", "label": group.text, "title": group.describe()})
    for role in getattr(plan, "roles", ()):
        chips.append({"kind": "people", "label": role, "title": "a role the album does not resolve"})
    for word in getattr(plan, "event_words", ()):
        chips.append({"kind": "event", "label": word, "title": "event word"})
    visual = getattr(plan, "visual_text", "")
    if visual:
        chips.append({"kind": "visual", "label": visual, "title": "matched against captions and images"})
    return chips


_CONNECTOR_EN = re.compile(
    r"(?i)(?:^|\s)(?:in|at|from|during|on|of|with|and|near|around|since|taken in|taken at|taken on)(?:\s+(?:the|a|an|my))?\s*$")
_CONNECTOR_ZH = re.compile(r"(?:在|于|和|跟|与|同)\s*$")
# words that ask for photos without constraining them: a query left with only these is empty
_FILLER = re.compile(r"(?i)\b(?:all|my|the|a|of|show|find|me\s+all|photos?|pictures?|pics?|images?|shots?)\b|"
                     r"(?:所有的?|全部的?|的?照片|的?相片|的?图片)")


def drop_constraint(query: str, label: str) -> str:
    """``query`` without the words of the chip ``label`` (and the connector right before them:
    "in", "from", "with", 在, 和 ...), whitespace tidied. The chip's label is the text the planner
    read the constraint from; a label that is not one span of the query (a visual chip made of
    the words left over) loses each of its words. Raises :class:`FinegrainError` when nothing of
    ``label`` is in ``query``."""
    text = label.strip()
    if not text:
        raise FinegrainError("without= is empty", "pass the label of a chip of this query, e.g. without=2023")
    at = query.lower().find(text.lower())
    if at >= 0:
        before, after = query[:at], query[at + len(text):]
        m = _CONNECTOR_EN.search(before) or _CONNECTOR_ZH.search(before)
        if m:
            before = before[: m.start()]
        if not before.strip() or _CONNECTOR_ZH.search(before) is None and re.search(r"[\u3400-\u9fff]$", text):
            after = re.sub(r"^\s*的", "", after)  # 薇薇的照片 without 薇薇 -> 照片
        out = f"{before} {after}"
    else:
        out = query
        for word in text.split():
            out, n = re.subn(rf"(?i)(?<!\w){re.escape(word)}(?!\w)", " ", out, count=1)
            if n == 0 and word.lower() in out.lower():
                k = out.lower().find(word.lower())
                out = out[:k] + " " + out[k + len(word):]
        if out == query:
            raise FinegrainError(
                f"the chip {label!r} is not part of the query {query!r}",
                "pass without= with the label of one of this query's chips, or edit the query",
            )
    out = re.sub(r"\s+", " ", out).strip(" ,;，、")
    while (m := _CONNECTOR_EN.search(out) or _CONNECTOR_ZH.search(out)) is not None:  # a connector left dangling
        out = out[: m.start()].rstrip(" ,;，、")
    rest = _FILLER.sub(" ", out)
    return "" if not re.search(r"\w", rest) else out
