"""Unknown mentions: a person or place the query names that the album does not have is a
typed ``Plan.unknown`` entry (with the vocabulary's did-you-mean), and still counts as a
face or metadata constraint instead of falling to visual (V)."""

from __future__ import annotations

from datetime import date

import pytest

from finegrain.album.engine.plan import AlbumVocabulary, PlaceKey, Plan, UnknownMention, plan_query
from finegrain.cli.main import main
from finegrain.errors import FinegrainError

HANGZHOU = PlaceKey("city", "杭州市")


@pytest.fixture(scope="module")
def vocab() -> AlbumVocabulary:
    return AlbumVocabulary.build(
        people={"1": ["me", "我"], "2": ["Xiaotong", "Little Li", "晓彤", "小李"], "3": ["Chenyang", "晨阳"]},
        places={"hangzhou": HANGZHOU, "杭州": HANGZHOU},
        known_places={"beijing": PlaceKey("province", "北京市"), "北京": PlaceKey("province", "北京市")},
        latest_date=date(2025, 11, 20),
    )


def unknown(plan: Plan) -> list[tuple[str, str]]:
    return [(u.kind, u.text) for u in plan.unknown]


@pytest.mark.parametrize(
    ("text", "kind", "name", "source"),
    [
        ("photos with Zoe", "person", "Zoe", "F"),
        ("me and Zoe", "person", "Zoe", "F"),
        ("Zoe's birthday party", "person", "Zoe", "VF"),
        ("photos in Paris", "place", "Paris", "M"),
        ("dinner in Hangzhou with Zoe", "person", "Zoe", "VMF"),
        ("和张伟的合照", "person", "张伟", "F"),
        ("我和王芳", "person", "王芳", "F"),
        ("在巴黎的照片", "place", "巴黎", "M"),
    ],
)
def test_a_name_the_album_lacks_is_an_unknown_mention(
    vocab: AlbumVocabulary, text: str, kind: str, name: str, source: str
) -> None:
    plan = plan_query(text, vocab)
    assert (kind, name) in unknown(plan)
    assert plan.source == source  # not V: the query is about a person or a place
    assert (f"{kind}: not in the album", name) in [(r.split(";")[0], m) for r, m in plan.explain()]
    assert [(u["kind"], u["text"]) for u in plan.to_dict()["unknown"]] == unknown(plan)


@pytest.mark.parametrize(
    "text",
    ["photos with Xiaotong", "me and Chenyang in Hangzhou", "photos in Beijing", "photos in May", "photos with May",
     "lunch at Disneyland with lots of food", "Christmas tree with lights", "和晓彤的合照", "在杭州拍的", "和猫的照片",
     "杭州秋日下午和猫互动", "准备虾仁和姜葱调味", "贵阳玩的时候在居民区迷路了"],
)
def test_known_names_times_and_things_are_not_unknown(vocab: AlbumVocabulary, text: str) -> None:
    assert plan_query(text, vocab).unknown == ()


def test_the_vocabularys_suggestion_is_carried(vocab: AlbumVocabulary) -> None:
    class Suggesting(AlbumVocabulary):
        def suggest_place(self, text: str) -> str | None:
            return "Hangzhou" if text == "Hangzou" else None

        def suggest_person(self, text: str) -> str | None:
            return "Xiaotong" if text == "Xiaotung" else None

    v = Suggesting(vocab.people, vocab.places, vocab.latest_date, known_places=vocab.known_places)
    assert plan_query("photos in Hangzou", v).unknown == (UnknownMention("place", "Hangzou", "Hangzhou"),)
    assert plan_query("photos with Xiaotung", v).unknown == (UnknownMention("person", "Xiaotung", "Xiaotong"),)
    assert ("place: not in the album; did you mean 'Hangzhou'?", "Hangzou") in plan_query("photos in Hangzou", v).explain()


def test_unknown_mention_kind_is_checked() -> None:
    with pytest.raises(FinegrainError, match="unknown mention kind 'thing'"):
        UnknownMention("thing", "x")
    assert UnknownMention.from_dict({"kind": "place", "text": "Paris"}) == UnknownMention("place", "Paris", None)
    with pytest.raises(FinegrainError, match="lacks 'text'"):
        UnknownMention.from_dict({"kind": "place"})


def test_cli_plan_names_the_unknown_person(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["album", "plan", "photos with Zoe", "--today", "2025-06-01"])
    out = capsys.readouterr().out
    assert code in (0, None) and "'Zoe' is not in the album" in out


def test_the_albums_own_event_words_are_event_words(vocab: AlbumVocabulary) -> None:
    import dataclasses

    plain = plan_query("hanfu parade photos", vocab)
    assert plain.event_words == ()
    own = plan_query("hanfu parade photos", dataclasses.replace(vocab, event_words=("hanfu parade",)))
    assert own.event_words == ("hanfu parade",) and ("event word", "hanfu parade") in own.explain()
