"""Why the album engine answered as it did: a typed :class:`Outcome`, rendered in the user's language.

The engine (:func:`finegrain.album.engine.search`) ends every search with one
:class:`OutcomeKind`: it found photos, or it abstains for one stated cause (no such
person or place in the album, no photo in that time, nothing satisfies all
constraints together, the visual part cannot be checked, an impossible date ...).
:func:`render` is the one place that turns an outcome into a sentence, in English
or Chinese, so evaluation can count causes and a page can translate them. A
did-you-mean suggestion renders as "did you mean X?" / "您是不是要找「X」？".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from finegrain.errors import FinegrainError

RENDER_LANGS = ("en", "zh")


class OutcomeKind(str, Enum):
    """Why a search ended as it did (the values are the stable names saved in results)."""

    FOUND = "found"
    FOUND_VISUAL_UNCHECKED = "found_visual_unchecked"  # the hard-constraint set; visual part not checked
    NO_SUCH_PERSON = "no_such_person"  # the query names a person the album does not have
    NO_SUCH_PLACE = "no_such_place"  # the query names a place the album (and the gazetteers) do not have
    NO_PHOTO_AT_PLACE = "no_photo_at_place"  # a real place, but no photo of the album was taken there
    NO_PHOTO_IN_TIME = "no_photo_in_time"
    NO_PHOTO_WITH_PEOPLE = "no_photo_with_people"  # the person has no photo, or the people none together
    NO_PHOTO_IN_EVENT = "no_photo_in_event"
    EMPTY_TOGETHER = "empty_together"  # each constraint matches photos, but not all of them together
    VISUAL_UNCHECKABLE = "visual_uncheckable"  # no caption/image embeddings (or encoder) to check the visual part
    VISUAL_BELOW_THRESHOLD = "visual_below_threshold"
    IMPOSSIBLE_DATE = "impossible_date"
    NOTHING_TO_SEARCH = "nothing_to_search"  # the query names no time, place, person or visual content
    TOOLS_DISABLED = "tools_disabled"  # every constraint needs a tool switched off (tool ablation)

    @property
    def found(self) -> bool:
        return self in (OutcomeKind.FOUND, OutcomeKind.FOUND_VISUAL_UNCHECKED)


class ConstraintKind(str, Enum):
    """What a constraint named in an outcome is about."""

    TIME = "time"
    PLACE = "place"
    EVENT = "event"
    PERSON = "person"
    PEOPLE = "people"  # several people, all in the same photo
    VISUAL = "visual"


class VisualGap(str, Enum):
    """Why the visual part of a query could not be checked."""

    NO_EMBEDDINGS = "no_embeddings"  # the catalog stores no caption or image embeddings
    NO_ENCODER = "no_encoder"  # it stores some, but no text encoder was given
    NO_MODEL_EMBEDDINGS = "no_model_embeddings"  # none of the given encoder's model
    NO_VISUAL_TEXT = "no_visual_text"


@dataclass(frozen=True, slots=True)
class Constraint:
    """A constraint an outcome names: its ``kind`` and the query's ``text`` for it."""

    kind: ConstraintKind
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "text": self.text}


@dataclass(frozen=True, slots=True)
class Outcome:
    """The typed end of a search.

    ``details``: the constraints the outcome is about (the failing one; the pair whose
    intersection is empty; what matched; the visual text). ``suggestion``: the album's
    nearest name for an unknown person or place. ``count``: photos found. ``note``: the
    planner's or tool's own words (why a date is impossible, the encoder's model).
    ``gap``: why the visual part could not be checked. ``best`` / ``threshold``: the
    best visual score and the visual threshold, when scored.
    """

    kind: OutcomeKind
    details: tuple[Constraint, ...] = ()
    suggestion: str | None = None
    count: int = 0
    note: str | None = None
    gap: VisualGap | None = None
    best: float | None = None
    threshold: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, OutcomeKind):
            raise FinegrainError(f"outcome kind {self.kind!r} is not an OutcomeKind",
                                 f"use one of {', '.join(k.value for k in OutcomeKind)}")

    def about(self, kind: ConstraintKind) -> tuple[Constraint, ...]:
        """The details of one constraint kind."""
        return tuple(c for c in self.details if c.kind is kind)

    def render(self, lang: str = "en") -> str:
        return render(self, lang)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "details": [c.to_dict() for c in self.details],
            "suggestion": self.suggestion,
            "count": self.count,
            "note": self.note,
            "gap": None if self.gap is None else self.gap.value,
            "best": self.best,
            "threshold": self.threshold,
        }


# --------------------------------------------------------------------------- rendering

_LABEL = {
    "en": {ConstraintKind.TIME: "time {}", ConstraintKind.PLACE: "place {}", ConstraintKind.EVENT: "event {}",
           ConstraintKind.PERSON: "person {}", ConstraintKind.PEOPLE: "people {} (all together)",
           ConstraintKind.VISUAL: "visual part {!r}"},
    "zh": {ConstraintKind.TIME: "时间「{}」", ConstraintKind.PLACE: "地点「{}」", ConstraintKind.EVENT: "事件「{}」",
           ConstraintKind.PERSON: "人物「{}」", ConstraintKind.PEOPLE: "人物「{}」（同时出现）",
           ConstraintKind.VISUAL: "画面内容「{}」"},
}
_AND = {"en": " and ", "zh": "和"}
_GAP = {
    "en": {VisualGap.NO_EMBEDDINGS: "the catalog has no caption or image embeddings",
           VisualGap.NO_ENCODER: "no text encoder given for the catalog's embeddings ({})",
           VisualGap.NO_MODEL_EMBEDDINGS: "the catalog has no caption or image embeddings of model {!r}",
           VisualGap.NO_VISUAL_TEXT: "no visual text to search"},
    "zh": {VisualGap.NO_EMBEDDINGS: "相册没有图像描述或图像向量",
           VisualGap.NO_ENCODER: "没有给出相册向量（{}）的文本编码器",
           VisualGap.NO_MODEL_EMBEDDINGS: "相册没有模型 {} 的图像描述或图像向量",
           VisualGap.NO_VISUAL_TEXT: "没有要搜索的画面内容"},
}
_SUGGEST = {"en": "; did you mean {}?", "zh": "；您是不是要找「{}」？"}


def render(outcome: Outcome, lang: str = "en") -> str:
    """``outcome`` as one sentence in ``lang`` (``en`` or ``zh``; ``cn`` is read as ``zh``)."""
    lang = "zh" if lang == "cn" else lang
    if lang not in RENDER_LANGS:
        raise FinegrainError(f"cannot render an outcome in {lang!r}", f"use one of {', '.join(RENDER_LANGS)}")
    text = _RENDERERS[outcome.kind](outcome, lang)
    if outcome.suggestion:
        text += _SUGGEST[lang].format(outcome.suggestion)
    return text


def label(c: Constraint, lang: str = "en") -> str:
    """One constraint in words ("place Yantian District", "地点「盐田区」")."""
    return _LABEL["zh" if lang == "cn" else lang][c.kind].format(c.text)


def _labels(cs: tuple[Constraint, ...], lang: str) -> str:
    return _AND[lang].join(label(c, lang) for c in cs)


def _hard(o: Outcome) -> tuple[Constraint, ...]:
    return tuple(c for c in o.details if c.kind is not ConstraintKind.VISUAL)


def _visual(o: Outcome) -> str:
    v = o.about(ConstraintKind.VISUAL)
    return v[0].text if v else ""


def _gap(o: Outcome, lang: str) -> str:
    gap = o.gap or VisualGap.NO_EMBEDDINGS
    return _GAP[lang][gap].format(o.note or "")


def _found(o: Outcome, lang: str) -> str:
    hard, visual = _hard(o), _visual(o)
    if visual and o.threshold is not None:
        if lang == "zh":
            among = f"在满足{_labels(hard, lang)}的照片中，" if hard else ""
            return f"{among}{o.count} 张照片的画面内容「{visual}」得分不低于 {o.threshold:.2f}"
        among = f" among {_labels(hard, lang)}" if hard else ""
        return f"{o.count} photos score at least {o.threshold:.2f} for {visual!r}{among}"
    if lang == "zh":
        return f"{o.count} 张照片符合{_labels(hard, lang)}"
    return f"matched {_labels(hard, lang)}"


def _found_unchecked(o: Outcome, lang: str) -> str:
    hard, visual = _hard(o), _visual(o)
    if lang == "zh":
        return f"{o.count} 张照片符合{_labels(hard, lang)}；画面内容「{visual}」未核对：{_gap(o, lang)}"
    return f"matched {_labels(hard, lang)}; visual part {visual!r} not checked: {_gap(o, lang)}"


def _no_such(what_en: str, what_zh: str) -> Callable[[Outcome, str], str]:
    def r(o: Outcome, lang: str) -> str:
        names = [c.text for c in o.details]
        if lang == "zh":
            return "相册里没有叫" + "、".join(f"「{n}」" for n in names) + f"的{what_zh}"
        return f"no {what_en} called " + ", ".join(repr(n) for n in names) + " in the album"
    return r


def _no_photo(o: Outcome, lang: str) -> str:
    if lang == "zh":
        return f"没有照片符合{_labels(o.details, lang)}"
    return f"no photo matches {_labels(o.details, lang)}"


def _no_photo_at_place(o: Outcome, lang: str) -> str:
    if lang == "zh":
        return f"相册里没有在{_labels(o.details, lang)}拍的照片"
    return f"no photo matches {_labels(o.details, lang)}: the album has no photo taken there"


def _together(o: Outcome, lang: str) -> str:
    if lang == "zh":
        return f"没有照片同时符合{_labels(o.details, lang)}"
    return f"no photo matches {_labels(o.details, lang)} together"


def _uncheckable(o: Outcome, lang: str) -> str:
    hard, visual = _hard(o), _visual(o)
    if not hard:
        if lang == "zh":
            return f"无法回答画面内容「{visual}」的查询：{_gap(o, lang)}"
        return f"visual query {visual!r} cannot be answered: {_gap(o, lang)}"
    if lang == "zh":
        return f"{o.count} 张照片符合{_labels(hard, lang)}，但无法核对画面内容「{visual}」：{_gap(o, lang)}"
    return f"matched {_labels(hard, lang)}, but visual part {visual!r} cannot be checked: {_gap(o, lang)}"


def _below(o: Outcome, lang: str) -> str:
    best = "none" if o.best is None else f"{o.best:.2f}"
    limit = "none" if o.threshold is None else f"{o.threshold:.2f}"
    if lang == "zh":
        return f"画面内容「{_visual(o)}」的最高得分 {best} 低于阈值 {limit}"
    return f"best visual score {best} < threshold {limit} for {_visual(o)!r}"


def _impossible(o: Outcome, lang: str) -> str:
    times = [c.text for c in o.details]
    if lang == "zh":
        return "没有照片能符合时间" + "、".join(f"「{t}」" for t in times) + "：日历上没有这一天"
    why = f": {o.note}" if o.note else ""
    return "no photo can match time " + ", ".join(repr(t) for t in times) + why


def _nothing(o: Outcome, lang: str) -> str:
    if lang == "zh":
        return "查询没有提到时间、地点、人物或画面内容"
    return "the query names no time, place, person or visual content"


def _disabled(o: Outcome, lang: str) -> str:
    tools = o.note or "-"
    if lang == "zh":
        return f"查询的条件都需要未启用的工具（已启用：{tools}）"
    return f"every constraint of the query needs a tool that is switched off (enabled: {tools})"


_RENDERERS: dict[OutcomeKind, Callable[[Outcome, str], str]] = {
    OutcomeKind.FOUND: _found,
    OutcomeKind.FOUND_VISUAL_UNCHECKED: _found_unchecked,
    OutcomeKind.NO_SUCH_PERSON: _no_such("person", "人"),
    OutcomeKind.NO_SUCH_PLACE: _no_such("place", "地点"),
    OutcomeKind.NO_PHOTO_AT_PLACE: _no_photo_at_place,
    OutcomeKind.NO_PHOTO_IN_TIME: _no_photo,
    OutcomeKind.NO_PHOTO_WITH_PEOPLE: _no_photo,
    OutcomeKind.NO_PHOTO_IN_EVENT: _no_photo,
    OutcomeKind.EMPTY_TOGETHER: _together,
    OutcomeKind.VISUAL_UNCHECKABLE: _uncheckable,
    OutcomeKind.VISUAL_BELOW_THRESHOLD: _below,
    OutcomeKind.IMPOSSIBLE_DATE: _impossible,
    OutcomeKind.NOTHING_TO_SEARCH: _nothing,
    OutcomeKind.TOOLS_DISABLED: _disabled,
}
