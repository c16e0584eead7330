"""The engine's typed outcome: each kind, its rendering in en / zh, did-you-mean, and the tool ablation.

Plans are built by hand (a fixed planner), so the outcome logic is tested apart from the rule planner;
the catalog is the small synthetic one of ``album_search_fixtures`` (photo i taken 2024-03-01 + i days,
odd i in Hangzhou, even i in Shanghai, Anna (id 2) in every 4th, photo 0 = the kite, in Hangzhou with Anna).
"""

from __future__ import annotations

import json
import re
from datetime import date

import pytest

from album_search_fixtures import KITE
from finegrain.album.engine.catalog.sqlite import SqliteCatalog
from finegrain.album.engine.outcome import (
    Constraint,
    ConstraintKind,
    Outcome,
    OutcomeKind,
    VisualGap,
    label,
    render,
)
from finegrain.album.engine.photobench import import_photobench
from finegrain.album.engine.plan import (
    LLMConfig,
    PersonMatch,
    PlaceKey,
    PlaceMatch,
    Plan,
    TimeRange,
    UnknownMention,
    plan_query_llm,
)
from finegrain.album.engine.plan.records import ImpossibleTime
from finegrain.album.engine.search import search
from finegrain.album.engine.tools import parse_tools, restrict_plan, tools_label
from finegrain.errors import FinegrainError
from llm_stub import chat_server

HANGZHOU = PlaceMatch("Hangzhou", PlaceKey("city", "杭州市"))
SHANGHAI = PlaceMatch("Shanghai", PlaceKey("city", "上海市"))
ANNA = PersonMatch("Anna", "2")
CJK = re.compile(r"[\u4e00-\u9fff]")


def _plan(**kw) -> Plan:
    kw.setdefault("source", "M")
    return Plan(query=kw.pop("query", "q"), lang=kw.pop("lang", "en"), **kw)


def _run(store, plan: Plan, **kw):
    return search(store, plan.query, planner=lambda q, v, lang: plan, **kw)


def _days(a: int, b: int) -> TimeRange:
    return TimeRange(date(2024, 3, a), date(2024, 3, b), f"March {a}-{b}", "test")


# --------------------------------------------------------------------------- rendering


def _one_of_each() -> list[Outcome]:
    place = (Constraint(ConstraintKind.PLACE, "Hangzhou"),)
    visual = (Constraint(ConstraintKind.VISUAL, "red kite"),)
    return [
        Outcome(OutcomeKind.FOUND, place, count=3),
        Outcome(OutcomeKind.FOUND_VISUAL_UNCHECKED, place + visual, count=3, gap=VisualGap.NO_EMBEDDINGS),
        Outcome(OutcomeKind.NO_SUCH_PERSON, (Constraint(ConstraintKind.PERSON, "Zoe"),), suggestion="Zoë"),
        Outcome(OutcomeKind.NO_SUCH_PLACE, (Constraint(ConstraintKind.PLACE, "Yantain"),), suggestion="Yantian District"),
        Outcome(OutcomeKind.NO_PHOTO_AT_PLACE, (Constraint(ConstraintKind.PLACE, "Paris"),)),
        Outcome(OutcomeKind.NO_PHOTO_IN_TIME, (Constraint(ConstraintKind.TIME, "May 2019"),)),
        Outcome(OutcomeKind.NO_PHOTO_WITH_PEOPLE, (Constraint(ConstraintKind.PEOPLE, "Anna, Bo"),)),
        Outcome(OutcomeKind.NO_PHOTO_IN_EVENT, (Constraint(ConstraintKind.EVENT, "wedding"),)),
        Outcome(OutcomeKind.EMPTY_TOGETHER, (*place, Constraint(ConstraintKind.PERSON, "Anna"))),
        Outcome(OutcomeKind.VISUAL_UNCHECKABLE, visual, gap=VisualGap.NO_MODEL_EMBEDDINGS, note="e5"),
        Outcome(OutcomeKind.VISUAL_BELOW_THRESHOLD, visual, best=0.12, threshold=0.3),
        Outcome(OutcomeKind.IMPOSSIBLE_DATE, (Constraint(ConstraintKind.TIME, "February 30"),), note="no such day"),
        Outcome(OutcomeKind.NOTHING_TO_SEARCH),
        Outcome(OutcomeKind.TOOLS_DISABLED, place, note="V,F"),
    ]


def test_every_kind_renders_in_both_languages_and_differently() -> None:
    outcomes = _one_of_each()
    assert {o.kind for o in outcomes} == set(OutcomeKind)
    for lang in ("en", "zh"):
        texts = [render(o, lang) for o in outcomes]
        assert all(texts) and len(set(texts)) == len(texts)
        assert all(bool(CJK.search(t)) == (lang == "zh") for t in texts)
    assert render(outcomes[0], "cn") == render(outcomes[0], "zh")


def test_a_suggestion_is_a_did_you_mean_in_the_users_language() -> None:
    o = Outcome(OutcomeKind.NO_SUCH_PLACE, (Constraint(ConstraintKind.PLACE, "Yantain"),), suggestion="Yantian District")
    assert render(o, "en") == "no place called 'Yantain' in the album; did you mean Yantian District?"
    assert render(o, "zh") == "相册里没有叫「Yantain」的地点；您是不是要找「Yantian District」？"
    assert "did you mean" not in render(Outcome(OutcomeKind.NO_SUCH_PLACE, o.details), "en")


def test_outcome_records_are_frozen_and_checked() -> None:
    o = Outcome(OutcomeKind.FOUND, count=1)
    with pytest.raises(AttributeError):
        o.count = 2  # type: ignore[misc]
    with pytest.raises(FinegrainError, match="not an OutcomeKind"):
        Outcome("found")  # type: ignore[arg-type]
    with pytest.raises(FinegrainError, match="cannot render an outcome in 'fr'"):
        render(o, "fr")
    assert o.to_dict()["kind"] == "found" and label(Constraint(ConstraintKind.TIME, "May"), "zh") == "时间「May」"


# --------------------------------------------------------------------------- the engine's outcomes


def test_unknown_place_abstains_with_did_you_mean(captioned) -> None:
    store, _ = captioned
    plan = _plan(query="photos in Yantain", unknown=(UnknownMention("place", "Yantain", "Yantian District"),))
    r = _run(store, plan)
    assert r.abstained and r.photo_ids == frozenset()
    assert r.outcome.kind is OutcomeKind.NO_SUCH_PLACE and r.outcome.suggestion == "Yantian District"
    assert "did you mean Yantian District?" in r.reason and "embeddings" not in r.reason
    assert r.to_dict()["outcome"]["kind"] == "no_such_place"


def test_unknown_person_in_chinese(captioned) -> None:
    store, _ = captioned
    plan = _plan(query="佐伊的照片", lang="zh", source="F",
                 unknown=(UnknownMention("person", "佐伊", None), UnknownMention("place", "巴黎", "巴中")))
    r = _run(store, plan)
    assert r.outcome.kind is OutcomeKind.NO_SUCH_PERSON and r.outcome.suggestion is None
    assert r.reason == "相册里没有叫「佐伊」的人"


def test_a_person_with_no_photo_there_is_named(captioned) -> None:
    store, _ = captioned
    r = _run(store, _plan(source="MF", places=(HANGZHOU,), people=(PersonMatch("Bo", "99"),)))
    assert r.outcome.kind is OutcomeKind.NO_PHOTO_WITH_PEOPLE
    assert r.outcome.details == (Constraint(ConstraintKind.PERSON, "Bo"),)
    r = _run(store, _plan(time_ranges=(TimeRange(date(2019, 1, 1), date(2019, 1, 31), "January 2019", "t"),)))
    assert r.outcome.kind is OutcomeKind.NO_PHOTO_IN_TIME and r.reason == "no photo matches time January 2019"


def test_the_pair_that_empties_the_set_is_named(captioned) -> None:
    store, _ = captioned
    # March 2-3 = photos 1 (Hangzhou) and 2 (Shanghai), neither with Anna; Hangzhou and Anna meet on the kite
    r = _run(store, _plan(source="MF", time_ranges=(_days(2, 3),), places=(HANGZHOU,), people=(ANNA,)))
    assert r.abstained and r.outcome.kind is OutcomeKind.EMPTY_TOGETHER
    assert [c.kind for c in r.outcome.details] == [ConstraintKind.TIME, ConstraintKind.PERSON]
    assert r.reason == "no photo matches time March 2-3 and person Anna together"
    # March 1-3 meets Shanghai (photo 2) and Anna (photo 0); Shanghai meets Anna (photo 4): only all three fail
    r = _run(store, _plan(source="MF", time_ranges=(_days(1, 3),), places=(SHANGHAI,), people=(ANNA,)))
    assert r.outcome.kind is OutcomeKind.EMPTY_TOGETHER and len(r.outcome.details) == 3


def test_impossible_date_and_nothing_to_search(captioned) -> None:
    store, _ = captioned
    r = _run(store, _plan(lang="zh", impossible_times=(ImpossibleTime("2月30日", "February has no 30th"),)))
    assert r.outcome.kind is OutcomeKind.IMPOSSIBLE_DATE and r.reason.startswith("没有照片能符合时间「2月30日」")
    r = _run(store, _plan(source="V"))
    assert r.outcome.kind is OutcomeKind.NOTHING_TO_SEARCH and r.abstained


def test_found_with_visual_and_below_threshold(captioned) -> None:
    store, enc = captioned
    r = _run(store, _plan(source="VM", places=(HANGZHOU,), visual_text="red kite beach"), encoder=enc)
    assert r.outcome.kind is OutcomeKind.FOUND and KITE in r.photo_ids and r.outcome.threshold is not None
    assert r.outcome.count == len(r.photo_ids) and r.reason.endswith("for 'red kite beach' among place Hangzhou")
    r = _run(store, _plan(source="V", visual_text="zebra"), encoder=enc, visual_threshold=0.99)
    assert r.outcome.kind is OutcomeKind.VISUAL_BELOW_THRESHOLD and r.abstained
    r = _run(store, _plan(source="VM", places=(HANGZHOU,), visual_text="red kite"))  # no encoder given
    assert r.outcome.kind is OutcomeKind.VISUAL_UNCHECKABLE and r.outcome.gap is VisualGap.NO_ENCODER
    assert r.outcome.note == enc.model_id and enc.model_id in r.reason


# --------------------------------------------------------------------------- tool ablation


def test_parse_tools() -> None:
    assert parse_tools("M,F") == {"M", "F"} == parse_tools("T_M+T_F") == parse_tools(["f", "m"])
    assert parse_tools(None) == {"V", "M", "F"} and tools_label({"F", "V"}) == "V,F"
    with pytest.raises(FinegrainError, match="unknown tool 'S'"):
        parse_tools("V,S")
    with pytest.raises(FinegrainError, match="unknown tool"):
        parse_tools(" , ")


def test_restrict_plan_drops_the_constraints_of_disabled_tools() -> None:
    plan = _plan(source="VMF", places=(HANGZHOU,), people=(ANNA, PersonMatch("selfie", "1")), roles=("friends",),
                 visual_text="kite", unknown=(UnknownMention("person", "Zoe"),))
    assert restrict_plan(plan, "VMF") is plan
    m = restrict_plan(plan, {"M"})
    assert m.places == (HANGZHOU,) and m.people == () and m.visual_text == "" and m.roles == () and m.unknown == ()
    f = restrict_plan(plan, {"V", "F"})
    assert f.places == () and f.people == plan.people and f.unknown == plan.unknown
    assert ("tools V,F: dropped place", "Hangzhou") in f.explain()


def test_the_engine_runs_only_the_enabled_tools(captioned) -> None:
    store, enc = captioned
    plan = _plan(source="VMF", places=(HANGZHOU,), people=(ANNA,), visual_text="red kite")
    mf = _run(store, plan, encoder=enc, tools="M,F")  # V off: Hangzhou with Anna, visual part dropped
    assert mf.photo_ids == {KITE} and mf.outcome.kind is OutcomeKind.FOUND
    m = _run(store, plan, encoder=enc, tools="M")
    assert m.photo_ids == store.ids_at_place("杭州市") and "person" not in m.reason
    f_only = _run(store, _plan(places=(HANGZHOU,)), tools="F")
    assert f_only.abstained and f_only.outcome.kind is OutcomeKind.TOOLS_DISABLED
    assert f_only.outcome.details == (Constraint(ConstraintKind.PLACE, "Hangzhou"),) and "enabled: F" in f_only.reason


# --------------------------------------------------------------------------- the LLM planner keeps the rules' findings


def test_an_llm_plan_keeps_the_unknown_place_and_its_suggestion(album_dir, tmp_path) -> None:
    pytest.importorskip("pydantic")
    # an LLM that passes the typo'd place through as a place name
    plan = {"source": "M", "time_ranges": [], "places": ["Yantain"], "people": [], "event_words": [], "visual_text": ""}
    with chat_server(lambda _query: json.dumps(plan)) as url, SqliteCatalog(tmp_path / "a.sqlite") as store:
        config = LLMConfig(url, "stub")
        import_photobench(album_dir, store, lang="en")
        r = search(store, "photos in Yantain", planner=lambda q, v, lang: plan_query_llm(q, v, config, lang=lang))
    assert r.plan.planner == "llm" and r.plan.places == ()
    assert ("rules: unknown place", "Yantain") in r.plan.explain()
    assert r.outcome.kind is OutcomeKind.NO_SUCH_PLACE and "did you mean Yantian District?" in r.reason
