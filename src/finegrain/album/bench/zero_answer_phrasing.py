"""Where an injected constraint's words go in a query, in the style of the query.

:func:`inject` adds the words of one constraint (a place, a year or month, a
person) to a PhotoBench query and returns the new text and the exact phrase it
inserted. PhotoBench queries are short search phrases ("photos in Tianjin",
"photos of Zhou Xiaowei and me"; "在天津市的照片", "我、小周的照片",
"有小李在内的照片", "2025年8月和明宇的照片"), so:

- English: a place or a time is appended ("... in Tokyo", "... in March 2024");
  a person is appended as "with X", or joined to the people already named after
  "with" ("photos with Chen Mingyu and Chenyang in 2025");
- Chinese: a time leads ("2024年3月在天津市的照片"); a place goes before the
  closing "的照片" / "的合照" / "拍的" ("我、小周在东京的照片"), or leads a query that
  starts with 有 ("在东京有小李在内的照片"), or closes a bare one with 拍的
  ("2025年1月在东京拍的"); a person follows the last person named, joined with 、
  when the query lists names with 、, else with 和 ("我、小周、晨阳的照片"), or goes
  before the closing words ("在天津市和晨阳的照片").

The caller plans the new text and checks that the planner reads the injected
constraint (and nothing else) from it; this module only writes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from finegrain.album.engine.plan.records import PersonMatch
from finegrain.errors import FinegrainError

PLACE, TIME, PERSON = "place", "time", "person"
ZH_ENDINGS = ("的照片", "的合照", "的相片", "的图片", "拍的")
_WITH_EN = re.compile(r"\bwith\b", re.IGNORECASE)


def inject(text: str, role: str, words: str, lang: str, people: Sequence[PersonMatch] = ()) -> tuple[str, str]:
    """``(new text, inserted phrase)`` for the constraint ``words`` of ``role`` (place, time or
    person) in the query ``text`` of language ``lang`` (``en`` or ``zh``); ``people``: the
    persons the planner found in ``text`` (a person joins them)."""
    if role not in (PLACE, TIME, PERSON):
        raise FinegrainError(f"unknown constraint role {role!r}", f"use one of {PLACE}, {TIME}, {PERSON}")
    if not words.strip():
        raise FinegrainError(f"no words to inject into {text!r}", "give the place, date or person to add")
    text = text.strip()
    if lang == "en":
        return _english(text, role, words, people)
    if lang == "zh":
        return _chinese(text, role, words, people)
    raise FinegrainError(f"unknown query language {lang!r}", "use 'en' or 'zh'")


def _last_mention(text: str, people: Sequence[PersonMatch]) -> int | None:
    """The end of the last person mention in ``text`` (None when no person is named)."""
    ends = [i + len(p.text) for p in people if (i := text.rfind(p.text)) >= 0]
    return max(ends) if ends else None


def _insert(text: str, at: int, phrase: str) -> str:
    return text[:at] + phrase + text[at:]


def _english(text: str, role: str, words: str, people: Sequence[PersonMatch]) -> tuple[str, str]:
    if role == PERSON:
        end = _last_mention(text, people)
        if end is not None and _WITH_EN.search(text[:end]):
            phrase = f"and {words}"
            return _insert(text, end, " " + phrase), phrase
        phrase = f"with {words}"
    else:
        phrase = f"in {words}"
    return f"{text} {phrase}", phrase


def _ending(text: str) -> int | None:
    """Where the closing words of a Chinese query begin (None without them)."""
    for end in ZH_ENDINGS:
        if text.endswith(end) and len(text) > len(end):
            return len(text) - len(end)
    return None


def _chinese(text: str, role: str, words: str, people: Sequence[PersonMatch]) -> tuple[str, str]:
    if role == TIME:
        return words + text, words
    at = _ending(text)
    if role == PLACE:
        phrase = f"在{words}"
        if text.startswith("有"):
            return phrase + text, phrase
        if at is not None:
            return _insert(text, at, phrase), phrase
        return text + phrase + "拍的", phrase + "拍的"
    end = _last_mention(text, people)
    if end is not None:
        phrase = ("、" if "、" in text else "和") + words
        return _insert(text, end, phrase), phrase
    phrase = f"和{words}"
    if at is not None:
        return _insert(text, at, phrase), phrase
    return text + phrase + "的照片", phrase + "的照片"
