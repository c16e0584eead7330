"""Error taxonomy of failed queries, after DuReader-retrieval Table 9 (Qiu et al., 2022, Sec. 3.6).

A query *fails* when an irrelevant item is ranked above every relevant one:
its first-ranked item is not relevant (``kind="miss"`` when no relevant item
is in the top ``k`` at all, ``"outranked"`` otherwise). Each failure is
explained by comparing three texts: the query, the **wrong** passage (the
first-ranked, irrelevant item) and the **relevant** passage (the relevant item
ranked highest; when none was retrieved, the highest grade then the smallest
id). The first rule that fires gives the failure its one tag, in this order:

1. ``typo`` -- a Latin-letter query word of 4+ letters occurs in no passage
   (en: nor its stem) nor in WordNet (when installed), while a corpus word with
   the same first letter and another stem is within optimal-string-alignment
   distance 1 (4-7 letters) or 2 (8+): "ipone" -> "iphone"; zh also a word of
   2+ Han characters found in no passage with the same toneless pinyin as a
   corpus word (needs ``pypinyin``; skipped without it).
2. ``numerical_mismatch`` -- a number of the query (digits, English number
   words, Chinese numerals before a measure word) is not in the wrong passage,
   which has another number (2016 vs 2017).
3. ``syntax_mismatch`` -- two query nouns linked by a verb, a passive or a
   direction word (from, to, 从 到 去 回 把 被), not coordinated, occur so linked
   in the wrong passage in the opposite role order ("A bites B" vs "B bites
   A"; 台北去瑞芳 vs 从瑞芳回台北); a passive marker between them (被; "-ed
   by") flips the order first, so 猫被狗追 and 狗追猫 agree.
4. ``entity_mismatch`` (named) -- a named entity of the query (jieba POS nr ns
   nt nz eng; English mixed case, all capitals, capitalised inside a sentence
   or mostly capitalised in the corpus) is absent from the wrong passage,
   which names another (淘宝 vs 支付宝).
5. ``modifier_mismatch`` -- the query's head is in the wrong passage but a
   modifier is not: replaced by a modifier of the same class (colour, size,
   age, material, shape, time, quantity, position, state; 白猫 vs 黑猫), by
   another modifier, or just absent (吃完海鲜 vs 早晨 before 喝牛奶).
6. ``entity_mismatch`` (head) -- a head of the query is absent from the wrong
   passage, which shares no other query noun and is about another noun of
   the same kind: same modifier class (sunrise / sunset), same small category
   (animal, person, vehicle), a shared character or 3-letter prefix (大蒜 /
   蒜薹), or a shared query modifier (red car / red bicycle). An unrelated
   passage (a "hub") is left to ``other``.
7. ``term_over_sensitivity`` -- the wrong passage shares query terms but not
   its head (noted when the relevant passage uses none of them: a
   paraphrase), or it holds every query term and is still judged irrelevant.
8. ``other`` -- none of the above (or nothing retrieved).

Heads: Chinese is head-final, so the last content word of each conjunct
(和 与 及 ... 、，) not a question word; English takes the last noun of the first
noun phrase of each conjunct (and, or, ","). Words are classed by small
built-in lexicons (modifier classes, number words, common verbs) plus jieba's
part-of-speech tags (zh) or simple suffix and case rules (en); no tagger model
is needed. Terms and presence come from :mod:`finegrain.diagnose.errors`
(``zh``: substring of the passage; ``en``: Porter stem among its stems).
Deterministic: fixed rule order, ties broken by position then text.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping
from itertools import pairwise
from dataclasses import dataclass
from functools import cache, cached_property
from types import MappingProxyType
from typing import Any

from finegrain.diagnose.errors import (
    _SEPARATORS,
    ZH_CONJUNCTIONS,
    ZH_STOPWORDS,
    _Matcher,
    _unique,
)
from finegrain.errors import FinegrainError
from finegrain.types import Corpus, Qrels, Queries, Run

SCHEMA = "finegrain.taxonomy/1"
UNTYPED = "untyped"
_EXAMPLE_CHARS = 300

# tag -> (description, share in DuReader-retrieval's manual analysis of 500 pairs, Table 9)
TAGS: Mapping[str, tuple[str, float]] = MappingProxyType({
    "entity_mismatch": ("the main entity of the query is replaced by a different one in the wrong passage", 0.39),
    "numerical_mismatch": ("a number, date or quantity of the query differs in the wrong passage", 0.05),
    "modifier_mismatch": ("the head is shared but a modifier of the query differs or is missing", 0.094),
    "syntax_mismatch": ("the same terms in another role or order (A bites B vs B bites A)", 0.01),
    "typo": ("a query word is a likely misspelling of a corpus word", 0.016),
    "term_over_sensitivity": ("the wrong passage shares surface terms but not the meaning", 0.21),
    "other": ("no rule fired", 0.082),
})

# ----------------------------------------------------------------------------- lexicons
_MOD_EN = {
    "colour": "red orange yellow green blue purple pink brown black white grey gray golden gold silver beige violet "
              "cyan magenta teal navy maroon turquoise crimson colorful colourful",
    "size": "big large small little tiny huge giant tall short long wide narrow thick thin fat slim massive mini",
    "age": "old young new ancient modern vintage elderly antique",
    "shape": "round square rectangular circular triangular oval flat curved straight",
    "material": "wooden metal metallic plastic glass leather stone brick concrete cotton wool steel iron paper",
    "state": "empty full open closed wet dry hot cold warm cool clean dirty broken busy quiet crowded sunny cloudy "
             "rainy snowy bright dark heavy light fresh ripe raw cooked frozen",
    "time": "morning evening night day daytime nighttime sunset sunrise winter summer spring autumn afternoon noon "
            "midnight",
    "quantity": "many several few multiple single both numerous lots",
    "position": "left right top bottom front back inside outside indoor outdoor upper lower middle center",
}
_MOD_ZH = {
    "colour": "红色 橙色 黄色 绿色 青色 蓝色 紫色 粉色 粉红色 棕色 褐色 黑色 白色 灰色 金色 银色 彩色 米色 黑白",
    "size": "大 小 巨大 大型 小型 微小 高大 矮小 高 矮 长 短 宽 窄 粗 细 胖 瘦 迷你",
    "age": "老 旧 新 年轻 古老 现代 复古 崭新 老旧",
    "shape": "圆形 方形 长方形 三角形 椭圆形 圆 方",
    "material": "木质 木制 金属 塑料 玻璃 皮革 石头 不锈钢 纸质 布",
    "state": "空 满 湿 干 热 冷 干净 脏 破旧 拥挤 安静 明亮 昏暗",
    "time": "早晨 早上 上午 中午 下午 傍晚 晚上 夜晚 夜间 白天 清晨 深夜 春天 夏天 秋天 冬天 春季 夏季 秋季 冬季 最近",
    "quantity": "多 许多 很多 一些 多个 单个 一群 成群 几个",
    "position": "左 右 左边 右边 上方 下方 前面 后面 室内 室外 户外 中间",
}
_ZH_MOD_CHARS = {"colour": "红橙黄绿青蓝紫粉棕褐黑白灰金银", "size": "大小", "age": "老新旧"}
EN_MODIFIERS = MappingProxyType({w: c for c, ws in _MOD_EN.items() for w in ws.split()})
ZH_MODIFIERS = MappingProxyType({w: c for c, ws in _MOD_ZH.items() for w in ws.split()})
_EN_NUMBERS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
_EN_NUMBERS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                    "ninety": 90, "hundred": 100, "thousand": 1000, "million": 10**6, "dozen": 12})
_EN_FUNCTION = frozenset(
    ["i", "me", "my", "we", "our", "you", "your", "he", "him", "his", "she", "her", "its", "them", "what", "which", "who", "whom", "whose", "how", "when", "where", "why", "here", "some", "any", "all", "each", "every", "other", "another", "do", "does", "did", "have", "has", "had", "can", "could", "would", "should", "may", "might", "must", "shall", "been", "being", "were", "am", "from", "up", "down", "out", "over", "under", "about", "above", "below", "between", "through", "during", "before", "after", "near", "very", "too", "also", "just", "only", "so", "than", "more", "most", "less", "much", "again", "s"])
_EN_VERBS = frozenset(
    ["sit", "stand", "hold", "lie", "lay", "walk", "run", "ride", "eat", "drink", "play", "look", "wear", "carry", "get", "go", "make", "take", "use", "bite", "chase", "catch", "throw", "fly", "swim", "jump", "climb", "sleep", "rest", "read", "write", "watch", "cut", "cook", "drive", "park", "wait", "talk", "smile", "laugh", "hang", "lean", "cross", "push", "pull", "kick", "hit", "feed", "pour", "fill", "open", "close", "serve", "sell", "buy", "build", "fix", "paint", "cover", "surround", "face", "point", "fall", "grow", "stare", "touch", "hug", "kiss", "sing", "dance", "travel", "visit", "reach", "leave", "come", "move", "turn", "pass", "follow", "lead", "place", "put", "send", "sent", "made", "took", "taken", "held", "sat", "stood", "ran", "rode", "ridden", "ate", "eaten", "drank", "wore", "worn", "got", "gone", "went", "came", "left", "hung", "flew", "flown", "swam", "caught", "threw", "thrown", "built", "bought", "sold", "seen", "saw", "shown", "given", "gave", "done", "did", "written", "drove", "driven", "fell", "fallen", "grew", "grown", "knew", "known", "spoke", "spoken", "stole", "stolen", "hid", "hidden", "lit"])
_EN_NOUN_ING = frozenset(["building", "painting", "ceiling", "wedding", "clothing", "morning", "evening", "ring", "king", "thing", "string", "parking", "sibling", "pudding", "bedding", "railing", "stuffing", "icing", "filling"])
_EN_NOUN_LY = frozenset(["family", "assembly", "butterfly", "dragonfly", "firefly", "anomaly", "monopoly", "italy", "supply", "rally"])
_EN_BOILERPLATE = frozenset(["image", "picture", "photo", "photograph", "scene", "show", "display", "depict", "feature", "view", "background", "content", "foreground", "visible", "seen", "appear", "text", "screenshot", "close-up", "closeup"])
_ZH_BOILERPLATE = frozenset(["图片", "图中", "图像", "照片", "画面", "显示", "展示", "背景", "看到", "场景", "这张", "一张", "其中", "图", "内容", "可见", "呈现"])
_ZH_QWORDS = frozenset(["什么", "怎么", "怎么办", "怎样", "如何", "哪", "哪里", "哪儿", "哪个", "哪些", "为什么", "为何", "多少", "吗", "呢", "是", "是否", "有没有", "能", "能否", "可以", "可", "会", "要", "需要", "请问", "求", "有个", "有"])
_ZH_NAME_POS = frozenset(["nr", "ns", "nt", "nz", "nrt", "nrfg", "eng"])
_ZH_NUM = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+(?=[个只张位名条头辆件本台把双对匹颗棵朵座栋间层岁年月日号分秒天周元块米斤克次场片枚根支])")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
_EN_WORD = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
_LATIN = re.compile(r"[a-z]+")
_COORD = re.compile(r"[、，,;；/&+]|\b(?:and|or)\b|和|与|及|以及|或", re.IGNORECASE)
_PASSIVE = re.compile(r"被|\b\w+(?:ed|en)\s+by\b", re.IGNORECASE)
_RELATION = re.compile(r"被|把|从|到|去|往|回|\b(?:from|to|towards|into|onto|by)\b", re.IGNORECASE)
_SENT_END = re.compile(r"[.!?。！？]")


# ----------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Failure:
    """One failed query with its tag, the rule that fired and the tokens it rests on."""

    qid: str
    query: str
    type: str | None
    kind: str  # "miss" (no relevant item in the top k) | "outranked" | "empty" (nothing retrieved)
    tag: str
    rule: str
    evidence: tuple[str, ...]
    also: tuple[str, ...]  # other tags whose rules fire too (later in the order)
    wrong_id: str | None
    wrong_rank: int | None
    wrong_grade: int | None
    relevant_id: str
    relevant_rank: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "kind": self.kind, "tag": self.tag, "rule": self.rule,
                "evidence": list(self.evidence), "also": list(self.also), "wrong_id": self.wrong_id,
                "wrong_rank": self.wrong_rank, "wrong_grade": self.wrong_grade, "relevant_id": self.relevant_id,
                "relevant_rank": self.relevant_rank}


@dataclass(frozen=True, eq=False)
class Taxonomy:
    """Tagged failures of a run; proportions are over failures (every failure has exactly one tag)."""

    lang: str
    k: int
    rel: int
    types: Mapping[str, str | None]  # analysed query (with a relevant item) -> its type
    failures: tuple[Failure, ...]
    skipped_no_relevant: tuple[str, ...]
    texts: Mapping[str, str]  # doc id -> text, for the examples' passages

    @property
    def n_queries(self) -> int:
        return len(self.types)

    @cached_property
    def by_qid(self) -> Mapping[str, Failure]:
        return MappingProxyType({f.qid: f for f in self.failures})

    def counts(self, failures: tuple[Failure, ...] | None = None) -> dict[str, int]:
        c = Counter(f.tag for f in (self.failures if failures is None else failures))
        return {t: c.get(t, 0) for t in TAGS}

    def proportions(self, failures: tuple[Failure, ...] | None = None) -> dict[str, float | None]:
        """Share of each tag among the failures (None for every tag when there is no failure)."""
        c = self.counts(failures)
        n = sum(c.values())
        return {t: (v / n if n else None) for t, v in c.items()}

    def by_type(self) -> dict[str, dict[str, Any]]:
        """``{type: {n_queries, n_failures, counts, proportions}}``, types sorted, ``"untyped"`` last."""
        n_q = Counter(UNTYPED if t is None else t for t in self.types.values())
        groups: dict[str, list[Failure]] = {}
        for f in self.failures:
            groups.setdefault(UNTYPED if f.type is None else f.type, []).append(f)
        names = sorted(set(n_q) | set(groups), key=lambda g: (g == UNTYPED, g))
        return {g: {"n_queries": n_q.get(g, 0), "n_failures": len(groups.get(g, ())),
                    "counts": self.counts(tuple(groups.get(g, ()))),
                    "proportions": self.proportions(tuple(groups.get(g, ())))} for g in names}

    def to_json_dict(self, *, max_examples: int = 5, per_query: bool = True) -> dict[str, Any]:
        """The ``"taxonomy"`` section of ``results.json`` (schema ``finegrain.taxonomy/1``): counts and
        proportions per tag, overall and per query type, the first ``max_examples`` failures of each tag
        (query order) with both passages' texts, and (``per_query``) every failure's tag, rule and evidence."""
        def clip(doc_id: str | None) -> str:
            text = self.texts.get(doc_id or "", "")
            return text if len(text) <= _EXAMPLE_CHARS else text[:_EXAMPLE_CHARS - 1] + "…"

        examples: dict[str, list[dict[str, Any]]] = {t: [] for t in TAGS}
        for f in self.failures:
            if len(examples[f.tag]) < max_examples:
                examples[f.tag].append({"qid": f.qid, "query": f.query, **f.to_dict(), "wrong_text": clip(f.wrong_id),
                                        "relevant_text": clip(f.relevant_id)})
        kinds = Counter(f.kind for f in self.failures)
        body: dict[str, Any] = {
            "schema": SCHEMA, "k": self.k, "rel": self.rel, "lang": self.lang,
            "tags": {t: {"description": d, "dureader_share": s} for t, (d, s) in TAGS.items()},
            "order": list(RULE_ORDER),
            "method": method_notes(self.lang),
            "n_queries": self.n_queries,
            "n_failures": len(self.failures),
            "n_skipped_no_relevant": len(self.skipped_no_relevant),
            "failure_kinds": {k: kinds.get(k, 0) for k in ("miss", "outranked", "empty")},
            "counts": self.counts(),
            "proportions": self.proportions(),
            "by_type": self.by_type(),
            "examples": examples,
        }
        if per_query:
            body["per_query"] = {f.qid: f.to_dict() for f in self.failures}
        return body


RULE_ORDER = ("typo", "numerical_mismatch", "syntax_mismatch", "entity_mismatch (named)", "modifier_mismatch",
              "entity_mismatch (head)", "term_over_sensitivity", "other")


def method_notes(lang: str) -> dict[str, str]:
    return {
        "failure": "the first-ranked item is not relevant (miss: no relevant item in the top k; outranked: the "
                   "first relevant item is lower); compared: the query, that wrong passage and the highest-ranked "
                   "relevant passage",
        "order": "first rule that fires: " + ", ".join(RULE_ORDER),
        "words": ("jieba part-of-speech words; presence = substring of the passage" if lang == "zh" else
                  "\\w words, Porter stems, suffix and case rules; presence = stem among the passage's stems"),
        "lexicons": "built-in modifier classes (colour, size, age, shape, material, state, time, quantity, "
                    "position), number words, common verbs; typo by edit distance over the corpus vocabulary"
                    + (" and same toneless pinyin (pypinyin)" if lang == "zh" else ""),
        "proportions": "over failed queries; one tag per failure (DuReader's shares include its 14.8% false "
                       "negatives, which no rule here detects)",
    }


# ----------------------------------------------------------------------------- text analysis


@dataclass(frozen=True)
class Term:
    """A content word: surface text, presence key (zh the word, en its stem), class and position."""

    text: str
    key: str
    cls: str  # num | mod | name | noun | verb
    sub: str  # modifier class, or the jieba POS tag
    pos: int  # character offset in the normalised text


@dataclass(frozen=True)
class _View:
    norm: str  # normalised text (zh: whitespace removed)
    terms: tuple[Term, ...]
    numbers: tuple[tuple[str, str], ...]  # (surface, value)
    heads: tuple[Term, ...]


def _num_value(s: str) -> str:
    if _DIGITS.fullmatch(s):
        v = float(s)
        return str(int(v)) if v.is_integer() else str(v)
    if s in _EN_NUMBERS:
        return str(_EN_NUMBERS[s])
    return str(_zh_int(s))


def _zh_int(s: str) -> int:
    """Chinese numerals to an integer: 两 -> 2, 十五 -> 15, 三百零五 -> 305, 一万二千 -> 12000."""
    digits = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
    units = {"十": 10, "百": 100, "千": 1000}
    total, section, num = 0, 0, 0
    for c in s:
        if c in digits:
            num = digits[c]
        elif c in units:
            section += (num or 1) * units[c]
            num = 0
        elif c in "万亿":
            total += (section + num) * (10_000 if c == "万" else 100_000_000)
            section, num = 0, 0
    return total + section + num


class _Analyzer:
    """Term views of texts and corpus statistics for one language (built once per analysis)."""

    def __init__(self, lang: str, corpus_texts: Mapping[str, str]) -> None:
        self.lang = lang
        self.m = _Matcher(lang)
        self.corpus_texts = corpus_texts
        self._views: dict[str, _View] = {}

    # -- corpus statistics (lazy) -------------------------------------------------

    @cached_property
    def _compact(self) -> list[str]:
        return ["".join(self.m._normalize(t).split()) for t in self.corpus_texts.values()]

    @cached_property
    def word_df(self) -> Counter[str]:
        """Document frequency of lower-cased Latin words (en: all words; zh: Latin runs)."""
        pat = _LATIN if self.lang == "zh" else re.compile(r"[a-z0-9]+")
        return Counter(w for t in self.corpus_texts.values() for w in set(pat.findall(t.lower())))

    @cached_property
    def capitalised(self) -> Mapping[str, float]:
        """en: per word, the share of its mid-sentence occurrences written with a capital letter."""
        cap, total = Counter(), Counter()
        for t in self.corpus_texts.values():
            for sent in _SENT_END.split(t):
                for w in _EN_WORD.findall(sent)[1:]:
                    total[w.lower()] += 1
                    cap[w.lower()] += w[0].isupper()
        return {w: cap[w] / n for w, n in total.items() if n >= 2}

    @cached_property
    def zh_vocab(self) -> Mapping[tuple[str, ...], tuple[str, ...]]:
        """zh: toneless pinyin -> corpus jieba words with that pinyin (built on first use)."""
        from pypinyin import lazy_pinyin

        words = sorted({w for toks in self.m.tok.documents(list(self.corpus_texts.values())) for w in toks
                        if len(w) >= 2 and all(_is_han(c) for c in w)})
        out: dict[tuple[str, ...], list[str]] = {}
        for w in words:
            out.setdefault(tuple(lazy_pinyin(w)), []).append(w)
        return {k: tuple(v) for k, v in out.items()}

    def df(self, key: str) -> int:
        if self.lang == "zh":
            return sum(key in t for t in self._compact)
        return self.stem_df.get(key, 0)

    @cached_property
    def stem_df(self) -> Counter[str]:
        return Counter(s for toks in self.m.tok.documents(list(self.corpus_texts.values())) for s in set(toks))

    # -- views -----------------------------------------------------------------------

    def view(self, text: str, cache_key: str | None = None) -> _View:
        if cache_key is not None and cache_key in self._views:
            return self._views[cache_key]
        v = self._zh_view(text) if self.lang == "zh" else self._en_view(text)
        if cache_key is not None:
            self._views[cache_key] = v
        return v

    def _zh_view(self, text: str) -> _View:
        from finegrain.retrieve.tokenize import _jieba

        _jieba()
        from jieba import posseg

        norm = "".join(self.m._normalize(text).split())
        terms: list[Term] = []
        groups: list[list[Term]] = [[]]
        pos = 0
        for w, flag in posseg.lcut(norm):
            at, pos = pos, pos + len(w)
            if w in ZH_CONJUNCTIONS or _SEPARATORS.fullmatch(w) or _SENT_END.fullmatch(w):
                groups.append([])
                continue
            if not any(c.isalnum() for c in w) or w in ZH_STOPWORDS or w in _ZH_QWORDS:
                continue
            if w in ZH_MODIFIERS:
                cls, sub = "mod", ZH_MODIFIERS[w]
            elif _ZH_NUM.match(w) or _DIGITS.fullmatch(w) or flag in ("m", "q"):
                cls, sub = "num", flag
            elif flag in _ZH_NAME_POS and len(w) >= 2:
                cls, sub = "name", flag
            elif flag[0] in "atbz" or flag in ("ad", "an", "f"):
                cls, sub = "mod", "time" if flag == "t" else "position" if flag == "f" else "adjective"
            elif flag[0] == "n" or flag in ("vn", "s", "j", "eng"):
                cls, sub = "noun", flag
            else:
                cls, sub = "verb", flag
            t = Term(w, w, cls, sub, at)
            terms.append(t)
            groups[-1].append(t)
        numbers = [(m.group(), _num_value(m.group())) for m in _DIGITS.finditer(norm)]
        numbers += [(m.group(), _num_value(m.group())) for m in _ZH_NUM.finditer(norm)]
        # head-final: the last word of each conjunct that is not a number or a lexicon modifier
        heads = [next((t for t in reversed(g) if t.cls != "num" and t.text not in ZH_MODIFIERS), None) for g in groups]
        return _View(norm, tuple(terms), tuple(numbers), tuple(_unique_terms(h for h in heads if h)))

    def _en_view(self, text: str) -> _View:
        norm = self.m._normalize(text)
        terms: list[Term] = []
        runs: list[list[list[Term]]] = [[[]]]  # conjunct -> noun-phrase runs -> terms
        words = list(_EN_WORD.finditer(text))
        prev_end_sentence = True
        for mt in words:
            w, low = mt.group(), mt.group().lower()
            first = prev_end_sentence
            prev_end_sentence = bool(_SENT_END.search(text[mt.end():mt.end() + 2]))
            if low in ("and", "or"):
                runs.append([[]])
                continue
            stems = self.m.tok.queries([low.replace("-", " ")])[0]
            if not stems or low in _EN_FUNCTION:
                runs[-1].append([])  # a function word ends a noun phrase
                continue
            cls, sub = self._en_class(w, low, first)
            for s in stems:
                t = Term(low, s, cls, sub, mt.start())
                terms.append(t)
                if cls == "verb":
                    runs[-1].append([])
                else:
                    runs[-1][-1].append(t)
            if re.match(r"\s*[,;/&]", text[mt.end():mt.end() + 2]):
                runs.append([[]])
        numbers = [(t.text, _num_value(t.text)) for t in terms if t.cls == "num"]
        heads = []
        for conj in runs:
            run = next((r for r in conj if any(t.cls in ("noun", "name") for t in r)), None)
            if run:
                heads.append([t for t in run if t.cls in ("noun", "name")][-1])
        if not heads:  # no noun ("Sunrise", "purple"): the last content word that is not a number
            heads = [t for t in terms if t.cls != "num"][-1:]
        return _View(norm, tuple(terms), tuple(numbers), tuple(_unique_terms(heads)))

    def _en_class(self, w: str, low: str, first_in_sentence: bool) -> tuple[str, str]:
        if _DIGITS.fullmatch(low) or low in _EN_NUMBERS:
            return "num", "number"
        if low in EN_MODIFIERS:
            return "mod", EN_MODIFIERS[low]
        if (any(c.isupper() for c in w[1:]) and any(c.islower() for c in w)) or (w.isupper() and len(w) >= 2) \
                or (w[0].isupper() and not first_in_sentence) or self.capitalised.get(low, 0.0) >= 2 / 3:
            return "name", "proper"
        if low.endswith(("ful", "ous", "less")):
            return "mod", "adjective"
        if low.endswith("ly") and len(low) >= 6 and low not in _EN_NOUN_LY:
            return "verb", "adverb"  # an adverb: neither a head nor a modifier of the head noun
        if low in _EN_VERBS or _verb_base(low) in _EN_VERBS or (
                low.endswith(("ing", "ed")) and len(low) > 5 and low not in _EN_NOUN_ING):
            return "verb", "verb"
        return "noun", "noun"

    def present(self, term: Term, doc_id: str, text: str) -> bool:
        return self.m.has_term(self.m.passage(doc_id, text), term.key)


@cache
def english_words() -> frozenset[str]:
    """The lemmas of WordNet's index files (``$FINEGRAIN_WORDNET`` or Debian's /usr/share/wordnet) plus their
    irregular forms; empty when WordNet is not installed (then any corpus-unknown word may be a typo)."""
    from finegrain.lexicons.wordnet import source_dir

    words: set[str] = set()
    for name in ("index.noun", "index.verb", "index.adj", "index.adv", "noun.exc", "verb.exc", "adj.exc"):
        try:
            with open(source_dir() / name, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if line[:1] != " ":
                        words.update(line.split(" ", 2)[:2] if name.endswith(".exc") else line.split(" ", 1)[:1])
        except OSError:
            continue
    return frozenset(words)


def _known_english(word: str) -> bool:
    words = english_words()
    forms = [word] + [word[: -len(suf)] + rep for suf, reps in _INFLECTIONS if word.endswith(suf) for rep in reps]
    return any(w in words for w in forms if len(w) >= 3)


_INFLECTIONS = (("s", ("",)), ("es", ("",)), ("ies", ("y",)), ("ed", ("", "e")), ("d", ("",)), ("ing", ("", "e")),
                ("er", ("", "e")), ("est", ("", "e")))


def _verb_base(w: str) -> str:
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 2:
            base = w[: len(w) - len(suffix)] + repl
            if base in _EN_VERBS:
                return base
            if base[-1:] == base[-2:-1] and base[:-1] in _EN_VERBS:  # running -> run
                return base[:-1]
            if base + "e" in _EN_VERBS:  # riding -> ride
                return base + "e"
    return w


_CATEGORIES = {
    "animal": "猫 狗 小狗 小猫 鸟 鱼 马 牛 羊 猪 兔 鸡 鸭 熊 虎 狮 象 猴 "
              "cat dog puppy kitten bird fish horse cow sheep pig rabbit chicken duck bear tiger lion elephant monkey",
    "person": "人 男人 女人 男孩 女孩 孩子 老人 学生 "
              "person man woman boy girl child kid people student",
    "vehicle": "车 汽车 火车 飞机 船 自行车 公交车 摩托车 "
               "car train plane airplane boat ship bicycle bike bus motorcycle truck",
}
_CATEGORY = {w: c for c, ws in _CATEGORIES.items() for w in ws.split()}


def _category(word: str) -> str | None:
    return _CATEGORY.get(word) or _CATEGORY.get(word.rstrip("s")) or (
        _CATEGORY.get(word[-1]) if word and _is_han(word[-1]) else None)


def _related_form(a: str, b: str, zh: bool) -> bool:
    """zh: a Han character in common (大蒜 / 蒜薹); en: a common prefix of 3+ letters (sunrise / sunset)."""
    if zh:
        return bool({c for c in a if _is_han(c)} & set(b))
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n >= 3


def _unique_terms(terms: Any) -> list[Term]:
    return list({t.key: t for t in reversed(list(terms))}.values())[::-1]


def _is_han(c: str) -> bool:
    return "CJK" in unicodedata.name(c, "")


def _osa(a: str, b: str) -> int:
    """Optimal string alignment distance (Levenshtein plus adjacent transpositions)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


# ----------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class _Case:
    q: _View
    w: _View
    r: _View
    wid: str
    wtext: str
    rid: str
    rtext: str


Finding = tuple[str, str, tuple[str, ...]]


def _join(terms: Any) -> str:
    return ", ".join(_unique(t.text if isinstance(t, Term) else str(t) for t in terms))


class _Rules:
    """The taggers; each returns ``(tag, rule, evidence)`` or None."""

    def __init__(self, a: _Analyzer, c: _Case) -> None:
        self.a, self.c, self.zh = a, c, a.lang == "zh"
        self.qkeys = {t.key for t in c.q.terms}

    def inw(self, t: Term) -> bool:
        return self.a.present(t, self.c.wid, self.c.wtext)

    def inr(self, t: Term) -> bool:
        return self.a.present(t, self.c.rid, self.c.rtext)

    def _new(self, t: Term) -> bool:
        """A passage term that is not a query term (nor, zh, inside or around one) and not caption boilerplate."""
        if t.key in self.qkeys or t.text in (_ZH_BOILERPLATE if self.zh else _EN_BOILERPLATE) \
                or (not self.zh and t.key in _EN_BOILERPLATE):
            return False
        return not (self.zh and any(t.text in q.text or q.text in t.text for q in self.c.q.terms))

    def typo(self) -> Finding | None:
        a, c = self.a, self.c
        words = _unique(w for t in c.q.terms for w in _LATIN.findall(t.text.lower()))
        for word in words:
            if len(word) < 4 or a.word_df.get(word, 0):
                continue
            lim = 1 if len(word) <= 7 else 2
            stem = (a.m.tok.queries([word])[0] or [word])[0] if not self.zh else word.rstrip("s")
            if (not self.zh and a.stem_df.get(stem, 0)) or _known_english(word):
                continue  # another form of a corpus word ("playing" with "plays"), or a dictionary word
            best = None
            for v, df in a.word_df.items():
                if abs(len(v) - len(word)) > lim or not v.isalpha() or v[0] != word[0]:
                    continue
                d = _osa(word, v)
                other = (a.m.tok.queries([v])[0] or [v])[0] if not self.zh else v.rstrip("s")
                if d <= lim and other != stem and (best is None or (d, -df, v) < best):
                    best = (d, -df, v)
            if best:
                d, df, v = best[0], -best[1], best[2]
                where = ", the relevant passage among them" if v in c.rtext.lower() else ""
                return ("typo", f"the query word {word!r} occurs in no passage; {v!r} (edit distance {d}) "
                                f"occurs in {df}{where}", (word, v))
        if self.zh:
            return self._pinyin_typo()
        return None

    def _pinyin_typo(self) -> Finding | None:
        try:
            from pypinyin import lazy_pinyin
        except ImportError:
            return None
        a = self.a
        for t in self.c.q.terms:
            if len(t.text) < 2 or not all(_is_han(ch) for ch in t.text) or a.df(t.text):
                continue
            cands = [v for v in a.zh_vocab.get(tuple(lazy_pinyin(t.text)), ()) if v != t.text]
            if cands:
                v = min(cands, key=lambda x: (-a.df(x), x))
                return ("typo", f"the query word {t.text} occurs in no passage; {v} has the same pinyin "
                                f"({' '.join(lazy_pinyin(v))}) and occurs in {a.df(v)}", (t.text, v))
        return None

    def numerical(self) -> Finding | None:
        q, w = self.c.q, self.c.w
        wvals = {v for _, v in w.numbers}
        for s, v in q.numbers:
            if w.numbers and v not in wvals:
                other = next(s2 for s2, v2 in w.numbers if v2 != v)
                return ("numerical_mismatch", f"the query number {s} is not in the wrong passage, which has {other}",
                        (s, other))
        return None

    def _first_pos(self, view: _View, t: Term) -> int | None:
        if self.zh:
            i = view.norm.find(t.key)
            return None if i < 0 else i
        return next((x.pos for x in view.terms if x.key == t.key), None)

    def _relation(self, view: _View, lo: int, hi: int) -> bool:
        """A verb, a passive marker or a direction word between two positions: the nouns have roles."""
        return bool(_RELATION.search(view.norm[lo:hi])) or any(
            t.cls == "verb" and lo <= t.pos < hi and t.sub not in ("x", "m") for t in view.terms)

    def syntax(self) -> Finding | None:
        q, w = self.c.q, self.c.w
        role = [t for t in q.terms if t.cls in ("noun", "name")]
        for x, y in pairwise(role):
            if x.key == y.key or x.text in y.text or y.text in x.text:
                continue
            between_q = q.norm[x.pos + len(x.text):y.pos]
            if _COORD.search(between_q) or not self._relation(q, x.pos + len(x.text), y.pos):
                continue
            px, py = self._first_pos(w, x), self._first_pos(w, y)
            if px is None or py is None or px == py:
                continue
            lo, hi = (px, py) if px < py else (py, px)
            first = x if px < py else y
            between_w = w.norm[lo + len(first.text):hi]
            if _COORD.search(between_w) or len(between_w) > 60 or not self._relation(w, lo + len(first.text), hi):
                continue
            passive_q, passive_w = bool(_PASSIVE.search(between_q)), bool(_PASSIVE.search(between_w))
            if (not passive_q) != ((px < py) ^ passive_w):
                note = lambda p: " (passive)" if p else ""
                return ("syntax_mismatch", f"the query has {x.text} … {y.text}{note(passive_q)}; the wrong passage "
                                           f"has them in the other role order{note(passive_w)}", (x.text, y.text))
        return None

    def named_entity(self) -> Finding | None:
        gone = [t for t in self.c.q.terms if t.cls == "name" and not self.inw(t)]
        other = [t for t in self.c.w.terms if t.cls == "name" and self._new(t)]
        if gone and other:
            return ("entity_mismatch", f"the query's named entity {gone[0].text} is absent from the wrong passage, "
                                       f"which names {other[0].text}", (gone[0].text, other[0].text))
        return None

    def modifier(self) -> Finding | None:
        c = self.c
        if self.zh:  # 白猫 vs 黑猫: one modifier character replaced on the same head
            for t in c.q.terms:
                if len(t.text) < 2 or t.cls == "mod" or self.inw(t):
                    continue
                for cls, chars in _ZH_MOD_CHARS.items():
                    if t.text[0] in chars:
                        for ch in chars:
                            if ch != t.text[0] and ch + t.text[1:] in c.w.norm:
                                return ("modifier_mismatch", f"{cls} modifier replaced on the head {t.text[1:]}: "
                                        f"{t.text} in the query, {ch + t.text[1:]} in the wrong passage",
                                        (t.text, ch + t.text[1:]))
        heads = c.q.heads
        if not heads or not all(self.inw(h) for h in heads):
            return None
        hk = {h.key for h in heads}
        missing = [t for t in c.q.terms if t.key not in hk and not self.inw(t)]
        if not missing:
            return None
        head = _join(heads)
        mods = [t for t in c.w.terms if t.cls == "mod" and self._new(t)]
        for m in missing:
            same = [x for x in mods if m.cls == "mod" and x.sub == m.sub]
            if same:
                return ("modifier_mismatch", f"the head {head} is shared; the query's {m.sub} modifier {m.text} "
                                             f"is replaced by {same[0].text}", (m.text, same[0].text, head))
        if mods:
            return ("modifier_mismatch", f"the head {head} is shared; the query's {_join(missing)} is absent and the "
                                         f"wrong passage has the modifier {mods[0].text} instead",
                    (*_unique(t.text for t in missing), mods[0].text, head))
        return ("modifier_mismatch", f"the head {head} is shared; the query's {_join(missing)} is absent from the "
                                     f"wrong passage", (*_unique(t.text for t in missing), head))

    def _replacement(self) -> Term | None:
        w = self.c.w
        if self.zh:
            for t in w.terms:
                nxt = w.norm[t.pos + len(t.text):t.pos + len(t.text) + 1]
                if t.cls in ("noun", "name") and self._new(t) and (not nxt or nxt not in "上里中旁边的内外下前后"):
                    return t
            return None
        return next((t for t in (*w.heads, *w.terms) if t.cls in ("noun", "name") and self._new(t)), None)

    def _same_class(self, head: Term) -> Term | None:
        """For a head that is a modifier word (sunrise): a passage word of the same class (sunset)."""
        return next((t for t in self.c.w.terms if t.cls == head.cls == "mod" and t.sub == head.sub
                     and self._new(t)), None)

    def head_entity(self) -> Finding | None:
        c = self.c
        gone = [h for h in c.q.heads if not self.inw(h)]
        if not gone or any(self.inw(t) for t in c.q.terms if t.cls not in ("mod", "num")):
            return None
        h = gone[0]
        x = self._same_class(h) or self._replacement()
        if x is None:
            return None
        context = [t for t in c.q.terms if t.cls in ("mod", "num") and self.inw(t)]
        why = ("the same modifier class" if x.cls == "mod" else f"shared context {_join(context)}" if context
               else "the same category" if _category(h.text) and _category(h.text) == _category(x.text)
               else "a shared word part" if _related_form(h.text, x.text, self.zh) else "")
        if not why:
            return None  # an unrelated passage (a hub), not a swapped entity: left to "other"
        return ("entity_mismatch", f"the query's head {h.text} is absent from the wrong passage, which is about "
                                   f"{x.text} instead ({why}; no other query noun shared)", (h.text, x.text))

    def over_sensitivity(self) -> Finding | None:
        c, a = self.c, self.a
        shared = [t for t in c.q.terms if self.inw(t)]
        if not shared:
            return None
        gone = [h for h in c.q.heads if not self.inw(h)]
        if gone or (not c.q.heads and len(shared) < len(c.q.terms)):
            rare = min(shared, key=lambda t: (a.df(t.key), t.pos))
            rule = (f"the wrong passage shares {_join(shared)} with the query (rarest: {rare.text}, in "
                    f"{a.df(rare.key)} of {len(a.corpus_texts)} passages)"
                    + (f" but not its head {_join(gone)}" if gone else ""))
            notr = [t for t in shared if not self.inr(t)]
            if notr:
                rule += f"; the relevant passage does not use {_join(notr)} (a paraphrase)"
            return "term_over_sensitivity", rule, tuple(_unique(t.text for t in shared))
        if len(shared) == len(c.q.terms):
            return ("term_over_sensitivity", f"the wrong passage contains every query term ({_join(shared)}) yet "
                                             "is judged irrelevant (or is an unjudged relevant passage)",
                    tuple(_unique(t.text for t in shared)))
        return None

    def all(self) -> list[Finding]:
        out = []
        for rule in (self.typo, self.numerical, self.syntax, self.named_entity, self.modifier, self.head_entity,
                     self.over_sensitivity):
            f = rule()
            if f is not None:
                out.append(f)
        return out

    def other_reason(self) -> str:
        if not self.c.q.terms:
            return "no rule fired: the query has no content word"
        if not any(self.inw(t) for t in self.c.q.terms):
            return ("no rule fired: the wrong passage shares no query word and nothing links its subject to the "
                    "query's head (an unrelated passage)")
        return "no rule fired"


def tag_failure(a: _Analyzer, q: _View, wrong: tuple[str, str], relevant: tuple[str, str]) -> tuple[Finding, tuple[str, ...]]:
    """The tag of one failure (first rule that fires) and the other tags whose rules fire too."""
    w = a.view(wrong[1], "d:" + wrong[0])
    r = a.view(relevant[1], "d:" + relevant[0])
    rules = _Rules(a, _Case(q, w, r, wrong[0], wrong[1], relevant[0], relevant[1]))
    found = rules.all()
    if not found:
        return ("other", rules.other_reason(), ()), ()
    first = found[0]
    return first, tuple(_unique(f[0] for f in found[1:] if f[0] != first[0]))


# ----------------------------------------------------------------------------- the analysis


def analyse_taxonomy(
    corpus: Corpus,
    queries: Queries,
    qrels: Qrels,
    run: Run,
    *,
    lang: str,
    k: int = 10,
    rel: int = 1,
    fully_judged: bool = False,
) -> Taxonomy:
    """Tag every failed query of ``run`` with one DuReader Table 9 error type (see the module docstring).

    Queries without an item of grade >= ``rel`` are skipped (listed); a query
    missing from the run, or with an empty ranking, fails with ``kind="empty"``
    and the tag ``other``. A retrieved item absent from the qrels is irrelevant
    (its grade None, or 0 when ``fully_judged``).
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise FinegrainError(f"k must be a positive integer, got {k!r}", "e.g. k=10")
    if lang not in ("zh", "en"):
        raise FinegrainError(f"the error taxonomy has taggers for 'zh' and 'en', not {lang!r}",
                             "pass lang='zh' or lang='en' (the dataset's language)")
    for what, obj, cls in (("corpus", corpus, Corpus), ("queries", queries, Queries),
                           ("qrels", qrels, Qrels), ("run", run, Run)):
        if not isinstance(obj, cls):
            raise FinegrainError(f"{what} must be a finegrain {cls.__name__}, got {type(obj).__name__}",
                                 "load it with finegrain.datasets.load_dataset or the finegrain.io readers")
    texts = {d: doc.text for d, doc in corpus.items()}
    a = _Analyzer(lang, texts)
    failures: list[Failure] = []
    skipped: list[str] = []
    types: dict[str, str | None] = {}
    for qid, query in queries.items():
        judged: Mapping[str, int] = qrels.get(qid, {})
        relevant = {d for d, g in judged.items() if g >= rel}
        if not relevant:
            skipped.append(qid)
            continue
        types[qid] = query.type
        ranking = run.ranked(qid) if qid in run else []
        if ranking and ranking[0] in relevant:
            continue
        rank_of = {d: i + 1 for i, d in enumerate(ranking)}
        ranked_rel = [d for d in ranking if d in relevant]
        rid = ranked_rel[0] if ranked_rel else min(relevant, key=lambda d: (-int(judged[d]), d))
        rrank = rank_of.get(rid)
        if not ranking:
            failures.append(Failure(qid, query.text, query.type, "empty", "other", "no rule fired: nothing retrieved",
                                    (), (), None, None, None, rid, None))
            continue
        wid = ranking[0]
        kind = "outranked" if rrank is not None and rrank <= k else "miss"
        grade = judged.get(wid, 0 if fully_judged else None)
        (tag, rule, evidence), also = tag_failure(a, a.view(query.text), (wid, texts.get(wid, "")),
                                                  (rid, texts.get(rid, "")))
        failures.append(Failure(qid, query.text, query.type, kind, tag, rule, evidence, also, wid, 1,
                                None if grade is None else int(grade), rid, rrank))
    used = {d for f in failures for d in (f.wrong_id, f.relevant_id) if d}
    return Taxonomy(lang, k, rel, MappingProxyType(types), tuple(failures), tuple(skipped),
                    MappingProxyType({d: texts.get(d, "") for d in sorted(used)}))
