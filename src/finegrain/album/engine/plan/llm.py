"""An optional LLM query planner behind an OpenAI-compatible endpoint, falling back to the rules.

``plan_query_llm`` POSTs ``{base_url}/chat/completions`` with a system prompt that gives
the JSON schema of a plan and the album's vocabulary (people and places), parses the
reply's message content as JSON, validates it (pydantic; people must be album
nicknames, dates ISO with start <= end, source one of the seven labels), and resolves
names to person ids and place keys. The rules' own findings about the text (impossible
dates, people and places the album lacks, with a did-you-mean) are kept on the LLM's
plan. On any failure (network, timeout, HTTP status,
non-JSON, schema violation, unknown person) it returns the rule-based plan with
``planner="rules"`` and ``fallback_reason`` saying what went wrong, so a search never
fails because the LLM did.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from finegrain.album.engine.plan.records import SOURCE_TYPES, PersonMatch, PlaceKey, PlaceMatch, Plan, TimeRange
from finegrain.album.engine.plan.rules import _lang, plan_query
from finegrain.album.engine.plan.vocabulary import AlbumVocabulary
from finegrain.errors import FinegrainError
from finegrain.llm import LLMError, chat, check_url, json_content

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["source", "time_ranges", "places", "people", "event_words", "visual_text"],
    "properties": {
        "source": {"enum": list(SOURCE_TYPES)},
        "time_ranges": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["start", "end", "text"],
                "properties": {
                    "start": {"type": "string", "format": "date"},
                    "end": {"type": "string", "format": "date"},
                    "text": {"type": "string"},
                },
            },
        },
        "places": {"type": "array", "items": {"type": "string"}},
        "people": {"type": "array", "items": {"type": "string"}},
        "event_words": {"type": "array", "items": {"type": "string"}},
        "visual_text": {"type": "string"},
    },
}

_SYSTEM = """You turn a personal photo-album search query into a JSON plan. Reply with one JSON
object and nothing else, following this JSON schema:
{schema}
source: which information the query needs: V (what is visible), M (time or place metadata),
F (who is in the photo: faces), or a combination (VM, VF, MF, VMF).
time_ranges: inclusive ISO dates; relative words ("last summer") are relative to {latest}.
people: nicknames exactly as listed here (all must be present): {people}
places: place names as written in the query; known places: {places}
visual_text: what must be visible, without the time, place and people words."""


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """Where the OpenAI-compatible endpoint is: ``base_url`` (…/v1), ``model``, key and timeout."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 20.0

    def __post_init__(self) -> None:
        check_url(self.base_url, "LLM base URL")
        if self.timeout <= 0:
            raise FinegrainError(f"LLM timeout {self.timeout!r} must be positive", "give seconds, e.g. 20")


class _PlanError(Exception):
    """Why an LLM reply was not used."""


def plan_query_llm(text: str, vocab: AlbumVocabulary, config: LLMConfig, *, lang: str | None = None) -> Plan:
    """Plan ``text`` with the LLM; the rule-based plan (with ``fallback_reason``) on any failure."""
    lang = _lang(lang, text)
    fallback = plan_query(text, vocab, lang=lang)
    try:
        content = _ask(config, _messages(text, vocab))
        data = _parse_json(content)
        return _with_rule_checks(_to_plan(_validate(data), text, lang, vocab), fallback)
    except _PlanError as e:
        return replace(fallback, fallback_reason=f"LLM planner not used: {e}")


def _with_rule_checks(plan: Plan, rules: Plan) -> Plan:
    """The LLM's plan with the rules' facts about the query text kept: dates that name no calendar
    day and people or places the album does not have (with their did-you-mean). An unknown place
    the LLM passed through as a point of interest is dropped from its places, so the engine says
    "no place called ..." instead of searching it as visual text."""
    if not rules.unknown and not rules.impossible_times:
        return plan
    unknown_places = {" ".join(u.text.casefold().split()) for u in rules.unknown if u.kind == "place"}
    places = tuple(p for p in plan.places
                   if p.in_album or " ".join(p.text.casefold().split()) not in unknown_places)
    steps = (*plan.steps, *(("rules: unknown " + u.kind, u.text) for u in rules.unknown),
             *(("rules: impossible time", t.text) for t in rules.impossible_times))
    return replace(plan, places=places, unknown=rules.unknown, impossible_times=rules.impossible_times, steps=steps)


def _messages(text: str, vocab: AlbumVocabulary) -> list[dict[str, str]]:
    places = sorted({*vocab.places, *vocab.known_places})[:200]
    system = _SYSTEM.format(
        schema=json.dumps(PLAN_SCHEMA, ensure_ascii=False),
        latest=vocab.latest_date.isoformat(),
        people=", ".join(sorted(vocab.people)),
        places=", ".join(places),
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]


def _ask(config: LLMConfig, messages: list[dict[str, str]]) -> str:
    try:
        return chat(config.base_url, config.model, messages, api_key=config.api_key, timeout=config.timeout,
                    temperature=0, response_format={"type": "json_object"})
    except LLMError as e:
        raise _PlanError(str(e)) from e


def _parse_json(content: str) -> Any:
    try:
        return json_content(content)
    except LLMError as e:
        raise _PlanError(str(e)) from e


def _validate(data: Any) -> Any:
    try:
        from pydantic import BaseModel, ConfigDict, ValidationError  # noqa: PLC0415 (optional)
    except ImportError as e:
        raise _PlanError("pydantic is not installed (pip install pydantic) to validate the reply") from e

    class _Range(BaseModel):
        start: date
        end: date
        text: str = ""

    class _LLMPlan(BaseModel):
        model_config = ConfigDict(extra="forbid")
        source: str
        time_ranges: list[_Range]
        places: list[str]
        people: list[str]
        event_words: list[str]
        visual_text: str

    try:
        plan = _LLMPlan.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise _PlanError(f"the plan does not follow the schema: {where}: {first['msg']}") from e
    if plan.source not in SOURCE_TYPES:
        raise _PlanError(f"source {plan.source!r} is not one of {', '.join(SOURCE_TYPES)}")
    for r in plan.time_ranges:
        if r.end < r.start:
            raise _PlanError(f"time range {r.text!r} ends before it starts ({r.start} > {r.end})")
    return plan


def _to_plan(p: Any, text: str, lang: str, vocab: AlbumVocabulary) -> Plan:
    people = []
    for name in p.people:
        pid = vocab.people.get(" ".join(name.casefold().split()))
        if pid is None:
            raise _PlanError(f"person {name!r} is not a nickname of this album")
        people.append(PersonMatch(name, pid))
    places = []
    for name in p.places:
        key = " ".join(name.casefold().split())
        if key in vocab.places:
            places.append(PlaceMatch(name, vocab.places[key], True))
        elif key in vocab.known_places:
            places.append(PlaceMatch(name, vocab.known_places[key], False))
        else:
            places.append(PlaceMatch(name, PlaceKey("poi", name), False))
    ranges = tuple(TimeRange(r.start, r.end, r.text, "llm") for r in p.time_ranges)
    steps = [("llm: time", r.text) for r in ranges] + [("llm: person", x.text) for x in people]
    steps += [("llm: place", x.text) for x in places] + [("llm: event word", w) for w in p.event_words]
    if p.visual_text:
        steps.append(("llm: visual text", p.visual_text))
    steps.append(("llm: source type", p.source))
    return Plan(
        query=text,
        lang=lang,
        source=p.source,
        time_ranges=ranges,
        places=tuple(places),
        people=tuple(people),
        event_words=tuple(p.event_words),
        visual_text=p.visual_text,
        steps=tuple(steps),
        planner="llm",
    )
