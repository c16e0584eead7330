"""Word lists and word-level helpers of the error taxonomy.

Modifier classes, number words and numerals, function words, common verbs,
caption boilerplate, small entity categories, WordNet's English word list, and
optimal-string-alignment edit distance. Data and pure functions only.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from types import MappingProxyType

from finegrain.lexicons.wordnet import source_dir

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
ZH_MOD_CHARS = {"colour": "红橙黄绿青蓝紫粉棕褐黑白灰金银", "size": "大小", "age": "老新旧"}
EN_MODIFIERS = MappingProxyType({w: c for c, ws in _MOD_EN.items() for w in ws.split()})
ZH_MODIFIERS = MappingProxyType({w: c for c, ws in _MOD_ZH.items() for w in ws.split()})
EN_NUMBERS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
EN_NUMBERS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                    "ninety": 90, "hundred": 100, "thousand": 1000, "million": 10**6, "dozen": 12})
EN_FUNCTION = frozenset(
    ["i", "me", "my", "we", "our", "you", "your", "he", "him", "his", "she", "her", "its", "them", "what", "which", "who", "whom", "whose", "how", "when", "where", "why", "here", "some", "any", "all", "each", "every", "other", "another", "do", "does", "did", "have", "has", "had", "can", "could", "would", "should", "may", "might", "must", "shall", "been", "being", "were", "am", "from", "up", "down", "out", "over", "under", "about", "above", "below", "between", "through", "during", "before", "after", "near", "very", "too", "also", "just", "only", "so", "than", "more", "most", "less", "much", "again", "s"])
EN_VERBS = frozenset(
    ["sit", "stand", "hold", "lie", "lay", "walk", "run", "ride", "eat", "drink", "play", "look", "wear", "carry", "get", "go", "make", "take", "use", "bite", "chase", "catch", "throw", "fly", "swim", "jump", "climb", "sleep", "rest", "read", "write", "watch", "cut", "cook", "drive", "park", "wait", "talk", "smile", "laugh", "hang", "lean", "cross", "push", "pull", "kick", "hit", "feed", "pour", "fill", "open", "close", "serve", "sell", "buy", "build", "fix", "paint", "cover", "surround", "face", "point", "fall", "grow", "stare", "touch", "hug", "kiss", "sing", "dance", "travel", "visit", "reach", "leave", "come", "move", "turn", "pass", "follow", "lead", "place", "put", "send", "sent", "made", "took", "taken", "held", "sat", "stood", "ran", "rode", "ridden", "ate", "eaten", "drank", "wore", "worn", "got", "gone", "went", "came", "left", "hung", "flew", "flown", "swam", "caught", "threw", "thrown", "built", "bought", "sold", "seen", "saw", "shown", "given", "gave", "done", "did", "written", "drove", "driven", "fell", "fallen", "grew", "grown", "knew", "known", "spoke", "spoken", "stole", "stolen", "hid", "hidden", "lit"])
EN_NOUN_ING = frozenset(["building", "painting", "ceiling", "wedding", "clothing", "morning", "evening", "ring", "king", "thing", "string", "parking", "sibling", "pudding", "bedding", "railing", "stuffing", "icing", "filling"])
EN_NOUN_LY = frozenset(["family", "assembly", "butterfly", "dragonfly", "firefly", "anomaly", "monopoly", "italy", "supply", "rally"])
EN_BOILERPLATE = frozenset(["image", "picture", "photo", "photograph", "scene", "show", "display", "depict", "feature", "view", "background", "content", "foreground", "visible", "seen", "appear", "text", "screenshot", "close-up", "closeup"])
ZH_BOILERPLATE = frozenset(["图片", "图中", "图像", "照片", "画面", "显示", "展示", "背景", "看到", "场景", "这张", "一张", "其中", "图", "内容", "可见", "呈现"])
ZH_QWORDS = frozenset(["什么", "怎么", "怎么办", "怎样", "如何", "哪", "哪里", "哪儿", "哪个", "哪些", "为什么", "为何", "多少", "吗", "呢", "是", "是否", "有没有", "能", "能否", "可以", "可", "会", "要", "需要", "请问", "求", "有个", "有"])
ZH_NAME_POS = frozenset(["nr", "ns", "nt", "nz", "nrt", "nrfg", "eng"])
ZH_NUM = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+(?=[个只张位名条头辆件本台把双对匹颗棵朵座栋间层岁年月日号分秒天周元块米斤克次场片枚根支])")
DIGITS = re.compile(r"\d+(?:\.\d+)?")
LATIN = re.compile(r"[a-z]+")
COORD = re.compile(r"[、，,;；/&+]|\b(?:and|or)\b|和|与|及|以及|或", re.IGNORECASE)
PASSIVE = re.compile(r"被|\b\w+(?:ed|en)\s+by\b", re.IGNORECASE)
RELATION = re.compile(r"被|把|从|到|去|往|回|\b(?:from|to|towards|into|onto|by)\b", re.IGNORECASE)
SENT_END = re.compile(r"[.!?。！？]")


def num_value(s: str) -> str:
    if DIGITS.fullmatch(s):
        v = float(s)
        return str(int(v)) if v.is_integer() else str(v)
    if s in EN_NUMBERS:
        return str(EN_NUMBERS[s])
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


@cache
def english_words() -> frozenset[str]:
    """The lemmas of WordNet's index files (``$FINEGRAIN_WORDNET`` or Debian's /usr/share/wordnet) plus their
    irregular forms; empty when WordNet is not installed (then any corpus-unknown word may be a typo)."""

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


def known_english(word: str) -> bool:
    words = english_words()
    forms = [word] + [word[: -len(suf)] + rep for suf, reps in _INFLECTIONS if word.endswith(suf) for rep in reps]
    return any(w in words for w in forms if len(w) >= 3)


_INFLECTIONS = (("s", ("",)), ("es", ("",)), ("ies", ("y",)), ("ed", ("", "e")), ("d", ("",)), ("ing", ("", "e")),
                ("er", ("", "e")), ("est", ("", "e")))


def verb_base(w: str) -> str:
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 2:
            base = w[: len(w) - len(suffix)] + repl
            if base in EN_VERBS:
                return base
            if base[-1:] == base[-2:-1] and base[:-1] in EN_VERBS:  # running -> run
                return base[:-1]
            if base + "e" in EN_VERBS:  # riding -> ride
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


def category(word: str) -> str | None:
    return _CATEGORY.get(word) or _CATEGORY.get(word.rstrip("s")) or (
        _CATEGORY.get(word[-1]) if word and is_han(word[-1]) else None)


def related_form(a: str, b: str, zh: bool) -> bool:
    """zh: a Han character in common (大蒜 / 蒜薹); en: a common prefix of 3+ letters (sunrise / sunset)."""
    if zh:
        return bool({c for c in a if is_han(c)} & set(b))
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n >= 3


def is_han(c: str) -> bool:
    return "CJK" in unicodedata.name(c, "")
