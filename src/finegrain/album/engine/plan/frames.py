"""Request frames: the words of a query that ask for photos and say nothing about what they show.

"everything from Lyon", "whatever I snapped in Berlin", "pictures featuring Anna", "shots with
Ben in them", "Anna and Ben in the same picture", "our time in Xi'an"; "广州那边的照片",
"看看2017年的照片", "小林出镜的照片", "2017这一年的所有照片", "在西安的日子": once the planner has
matched the place, the time and the people, what is left frames the request. Left in the visual
residue, such words turn a metadata or face query into a visual one (M -> VM, F -> VF) and are
searched as if they were something to see.

A word of the residue frames the request when

- it is in the language's small lexicon of photo-request words (request verbs such as "show",
  "featuring", 翻翻, 出镜, 包含, 留下; quantifiers such as "everything", "all", 所有, 全部, 全年;
  place and time deixis such as 那边, 当天; phrases such as "in the same photo", 同框), or
- its part of speech is a closed class that never names something seen: in English a pronoun
  ("what", "whatever", "them", "itself"), determiner, auxiliary, conjunction, particle or numeral
  (spaCy's ``en_core_web_sm``, tagged on the whole query); in Chinese a pronoun (那边, 这), numeral
  (一年, 全年), measure word, particle, preposition, conjunction or modal (jieba).

Open classes (nouns, verbs, adjectives, and English adverbs and prepositions: "outside",
"upstairs") and negations ("not", "no", 不, 没) are content. A residue with one content word stays
visual ("Anna in the same outfit" keeps "same outfit"), and its visual text keeps its closed-class
words too ("two cats", "三花猫"): the part of speech decides only whether anything visual is left,
the lexicon's words leave the visual text. Without spaCy or jieba only the lexicons count.
"""

from __future__ import annotations

import re
from functools import lru_cache

from finegrain.errors import MissingDependencyError
from finegrain.text.segment import pos_spans
from finegrain.train.rules import spacy_english

__all__ = ["REQUEST_WORDS_EN", "REQUEST_WORDS_ZH", "blank_closed_words", "blank_request_words", "chinese_content_spans"]

REQUEST_WORDS_EN = (
    # quantifiers and pronouns over the photos themselves
    "everything", "anything", "whatever", "what", "all", "both", "whole", "entire", "every",
    "them", "it", "itself", "themselves", "us", "we", "you", "they", "there", "here", "very", "just", "only",
    # request verbs and photo nouns the stop words do not hold
    "showing", "featuring", "featured", "contain", "contains", "containing", "appear", "appears", "appearing",
    "starring", "find", "see", "browse", "want", "have", "has", "got", "photograph", "photographs", "photographed",
    "pictured", "snap", "snaps", "snapshot", "snapshots", "memories", "moments", "stuff", "things", "ones",
    "about", "regarding", "related", "whenever", "wherever",
    # a stay somewhere: "during our stay in Xi'an", "the days we spent in Lyon"
    "stay", "stayed", "staying", "spent", "spend",
)
# phrases whose words are visual elsewhere ("same outfit"): only the whole phrase frames the request
_PHRASES_EN = re.compile(
    r"\b(?:(?:in|on)\s+(?:the\s+|one\s+)?same\s+(?:photo|picture|pic|shot|frame|image|snap)s?"
    r"|in\s+(?:the\s+)?(?:frame|shot|picture|photo)"
    r"|on\s+camera|show\s+me|give\s+me|camera\s+roll|look(?:ing)?\s+back(?:\s+(?:at|on))?)\b",
    re.IGNORECASE,
)
_WORDS_EN = re.compile(r"\b(?:" + "|".join(sorted(REQUEST_WORDS_EN, key=len, reverse=True)) + r")\b", re.IGNORECASE)
# spaCy's universal tags of closed classes that never name something seen
_CLOSED_EN = frozenset({"PRON", "DET", "AUX", "CCONJ", "SCONJ", "PART", "NUM", "PUNCT", "SYM"})
# closed-class words that still say what is (not) seen: a negation
_NEGATION_EN = frozenset({"not", "no", "n't", "never", "none", "nobody"})

REQUEST_WORDS_ZH = (
    # place and time deixis: "广州那边", "2019年国庆当天"
    "那边", "这边", "那里", "这里", "那儿", "这儿", "一带", "附近", "当天", "当日", "那天", "那一天", "这一天",
    # quantifiers over the photos and over a year
    "所有", "全部", "全年", "整年", "一整年", "这一年", "那一年",
    # request verbs: browse, find, show
    "翻翻", "翻一翻", "翻看", "看看", "看一看", "看一下", "瞧瞧", "找找", "找一找", "找一下", "找出", "帮我", "给我",
    "想看", "出镜", "入镜", "露脸", "出现", "包含", "包括", "含有", "同框", "同一张", "拍到", "留下", "留下来", "记录",
    "留影", "留念", "存下", "相册", "合集", "集锦", "回忆", "东西", "有关", "相关",
    # a stay somewhere: "在西安的日子", "在成都的时光", "在成都那会儿"
    "日子", "时光", "那段时间", "时间", "那会儿", "那阵子", "那时候", "那时",
)
# jieba's flags of closed classes: pronoun, numeral, measure word, particle, preposition,
# conjunction, modal, interjection, onomatopoeia (not adverbs, which jieba gives to verbs such as
# 互动, nor time words, which include visible ones: 白天, 黄昏)
_CLOSED_ZH = frozenset("rmqupcyeo")
_NEGATION_ZH = ("不", "没", "无", "别", "非", "未")


def blank_request_words(residue: str, text: str, lang: str) -> str:
    """``residue`` (``text`` with matched characters blanked, same length) with the lexicon's
    request words and phrases blanked too: they are no part of what the photo shows."""
    if lang == "en":
        spans = [m.span() for pattern in (_PHRASES_EN, _WORDS_EN) for m in pattern.finditer(residue)]
    else:
        words = _chinese_words(text)
        bounds = None if words is None else {0, *(e for _s, e, _f in words)}
        # a lexicon word counts where it is whole jieba words (anywhere without jieba)
        spans = [m.span() for m in _lexicon_zh().finditer(residue)
                 if bounds is None or (m.start() in bounds and m.end() in bounds)]
    return _blank(residue, text, spans)


def blank_closed_words(residue: str, text: str, lang: str) -> str:
    """``residue`` with the words whose part of speech is a closed class blanked (module
    docstring): what is left holds the residue's content words. The planner asks this only
    whether a residue is visual; the visual text it searches keeps these words ("two cats")."""
    if lang == "en":
        spans = [(s, e) for s, e, pos in _english_tags(text)
                 if pos in _CLOSED_EN and text[s:e].casefold() not in _NEGATION_EN]
    else:
        spans = [(s, e) for s, e, flag in _chinese_words(text) or ()
                 if flag[:1] in _CLOSED_ZH and flag != "eng" and not text[s:e].startswith(_NEGATION_ZH)]
    return _blank(residue, text, spans)


# jieba's flags of content words: nouns (names included: jieba tags 雪山 nr), time nouns (圆月),
# set phrases (年夜饭, 日落时分), adjectives, place words (海边), idioms
_CONTENT_ZH = frozenset("ntlasi")


def chinese_content_spans(residue: str, text: str, stop: tuple[str, ...]) -> list[tuple[int, int]]:
    """Spans of Chinese content words of two or more characters that ``residue`` still holds whole:
    a stop word inside one is part of the word (月 in 月饼 and 圆月, 和 in 和服, 后 in 后院), not a
    function word. A stop word itself (时候, 照片) or a word made only of one-character stop words
    (年前) is no content word; a word holding no stop word needs no keeping and is left out.
    Empty without jieba."""
    singles = {w for w in stop if len(w) == 1}
    return [(s, e) for s, e, flag in _chinese_words(text) or ()
            if e - s >= 2 and flag[:1] in _CONTENT_ZH and flag != "eng" and residue[s:e] == text[s:e]
            and text[s:e] not in stop and not all(c in singles for c in text[s:e])
            and any(w in text[s:e] for w in stop)]


def _blank(residue: str, text: str, spans: list[tuple[int, int]]) -> str:
    """``residue`` with each span blanked whose characters it still holds."""
    if len(residue) != len(text):
        raise ValueError("the residue must be the query text with matched characters blanked")
    out = list(residue)
    for s, e in spans:
        if residue[s:e] == text[s:e]:
            out[s:e] = " " * (e - s)
    return "".join(out)


@lru_cache(maxsize=1)
def _lexicon_zh() -> re.Pattern[str]:
    return re.compile("|".join(re.escape(w) for w in sorted(REQUEST_WORDS_ZH, key=len, reverse=True)))


@lru_cache(maxsize=4096)
def _english_tags(text: str) -> tuple[tuple[int, int, str], ...]:
    """``(start, end, universal POS)`` of each spaCy token of ``text``; empty without spaCy."""
    try:
        doc = spacy_english()(text)
    except (MissingDependencyError, ImportError, OSError):
        return ()
    return tuple((tok.idx, tok.idx + len(tok), tok.pos_) for tok in doc)


@lru_cache(maxsize=4096)
def _chinese_words(text: str) -> tuple[tuple[int, int, str], ...] | None:
    """``(start, end, jieba flag)`` of each word of ``text``; None without jieba."""
    try:
        return tuple((s, e, flag) for s, e, _w, flag in pos_spans(text))
    except MissingDependencyError:
        return None
