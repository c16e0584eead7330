"""Query perturbation: colour distances, colour-in pool, WordNet antonyms, zh lexicons, determinism, Table 4/5 stats."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from finegrain.diagnose.perturb import colors
from finegrain.diagnose.perturb.antonyms import en_antonyms
from finegrain.diagnose.perturb.families import (
    FAMILIES,
    Context,
    build_perturbations,
    corpus_colors,
    make_context,
    parse_families,
    perturb,
)
from finegrain.diagnose.perturb.run import select_run
from finegrain.diagnose.perturb.stats import (
    best_relevant_ranks,
    metric_delta,
    rank_changes,
)
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.lexicons.wordnet import wordnet
from finegrain.types import Qrels, Run


def _rgb255(name: str) -> np.ndarray:
    """RGB of a colour name computed here, independently of finegrain (matplotlib's own lookup)."""
    from matplotlib import colors as mc

    key = name if name in mc.CSS4_COLORS else f"xkcd:{name}"
    return np.round(np.asarray(mc.to_rgb(key)) * 255.0)


def _dist(a: str, b: str) -> float:
    return float(np.sqrt(((_rgb255(a) - _rgb255(b)) ** 2).sum()))


# --------------------------------------------------------------------------- colours


@pytest.mark.parametrize("threshold", [100.0, 150.0, 300.0])
def test_colour_replacement_respects_threshold(threshold: float) -> None:
    ctx = Context("en", seed=0, color_threshold=threshold)
    seen = 0
    for seed in range(40):
        ctx = Context("en", seed=seed, color_threshold=threshold)
        for text in ("a red car", "Blue curtains", "the white cat on a grey sofa", "light blue dress"):
            p = perturb(f"q{seed}", text, "color-all", ctx)
            if p is None:
                continue
            seen += 1
            original = p.word.lower()
            new = p.replacement.lower()
            assert new in colors.en_color_words() and new != original
            assert _dist(original, new) >= threshold
            assert p.detail["rgb_distance"] == pytest.approx(_dist(original, new), abs=0.01)
            rebuilt = p.original[:p.start] + p.replacement + p.original[p.end:]
            assert re.sub(r"\ban?\b", "a", p.perturbed) == re.sub(r"\ban?\b", "a", rebuilt)  # "a olive" -> "an olive"
    assert seen > 100


def test_colour_choice_none_when_nothing_is_far_enough() -> None:
    rng = np.random.default_rng(0)
    # pink and hotpink are close; nothing is 400 away from grey (max distance from (128,128,128) is ~221)
    assert colors.choose("gray", {"black", "white", "red"}, rng, threshold=400.0) is None
    got = colors.choose("pink", {"hotpink", "black"}, rng, threshold=150.0)
    assert got is not None and got.replacement == "black"


def test_colour_words_are_colours_not_food() -> None:
    words = colors.en_color_words()
    assert {"red", "blue", "grey", "gray", "white", "light blue"} <= words
    assert not {"orange", "tomato", "chocolate", "dark", "baby poop green"} & words
    assert [s.word for s in colors.en_color_spans("An orange and a light blue cup")] == ["light blue"]


def test_color_in_uses_only_dataset_colours() -> None:
    corpus = ["A red bus on a white bridge.", "Two blue chairs.", "A tomato salad with an orange."]
    ctx = make_context("en", corpus, seed=0)
    assert ctx.corpus_colors == frozenset({"red", "white", "blue"})  # not tomato/orange: food here
    replacements = set()
    for seed in range(60):
        c = Context("en", seed=seed, color_threshold=150.0, corpus_colors=ctx.corpus_colors)
        p = perturb("q", "black dog", "color-in", c)
        assert p is not None
        replacements.add(p.replacement)
        assert _dist("black", p.replacement) >= 150.0
    assert replacements <= {"red", "white", "blue"}
    assert len(replacements) >= 2  # seeded draws, not one fixed answer
    # a query colour with no admissible dataset colour is not perturbed
    near = Context("en", seed=0, color_threshold=150.0, corpus_colors=frozenset({"red"}))
    assert perturb("q", "crimson scarf", "color-in", near) is None


def test_zh_colours_keep_form_and_corpus_pool() -> None:
    ctx = make_context("zh", ["一只白猫和一只黑狗。", "红色的汽车停在路边。", "西红柿炒鸡蛋和白菜。"])
    assert ctx.corpus_colors == frozenset({"white", "black", "red"})  # 西红柿 / 白菜 are blocked
    for seed in range(30):
        c = Context("zh", seed=seed, color_threshold=150.0, corpus_colors=ctx.corpus_colors)
        p = perturb("q", "灰猫", "color-in", c)
        assert p is not None and p.word == "灰" and p.replacement in {"白", "黑", "红"}
        q = perturb("q", "蓝色沙发", "color-in", c)
        assert q is not None and q.replacement in {"白色", "黑色", "红色"}
        assert _dist(q.detail["color"], q.detail["replacement_color"]) >= 150.0
    assert perturb("q", "西红柿", "color-all", Context("zh")) is None
    assert perturb("q", "大白菜", "color-all", Context("zh")) is None


# --------------------------------------------------------------------------- antonyms, sizes


def test_english_antonyms_come_from_wordnet() -> None:
    wn = wordnet()
    direct = {a.name() for s in wn.synsets("big", pos="a") for l in s.lemmas() if l.name() == "big" for a in l.antonyms()}
    assert direct and set(en_antonyms("big")) == direct and direct & {"small", "little"}
    assert "young" in en_antonyms("old") and "new" in en_antonyms("old")
    assert en_antonyms("table") == ()  # a noun
    assert en_antonyms("on") == ()  # a preposition WordNet also lists as an adjective
    for seed in range(10):
        p = perturb("q", "A big dog", "antonym", Context("en", seed=seed))
        assert p is not None and p.word == "big" and p.replacement in direct
        assert p.perturbed == f"A {p.replacement} dog"
    p = perturb("q", "There is a small house", "size", Context("en", seed=3))
    assert p is not None and p.replacement in {"large", "big", "enormous", "huge"}
    article = "an" if p.replacement[0] in "aeiou" else "a"
    assert p.perturbed == f"There is {article} {p.replacement} house"


@pytest.mark.parametrize(("family", "text", "expected"), [
    ("antonym", "白色的狗", {"黑色的狗"}),
    ("antonym", "关于买房的聊天记录", {"关于卖房的聊天记录"}),
    ("antonym", "高楼", {"矮楼", "低楼"}),
    ("size", "三只小狗", {"三只大狗"}),
    ("size", "巨大的蛋糕", {f"{w}的蛋糕" for w in ("微小", "细小", "矮小", "小型", "迷你", "袖珍")}),
    ("antonym", "微信功能更新", set()),  # 更新 (update) is not 新 (new)
    ("size", "大学", set()),  # university, not "big study"
    ("size", "小区里的大熊猫", set()),
    ("size", "小区里的大狗", {"小区里的小狗"}),
])
def test_zh_lexicon_swaps(family: str, text: str, expected: set[str]) -> None:
    got = {p.perturbed for seed in range(12) if (p := perturb("q", text, family, Context("zh", seed=seed)))}
    assert got <= expected and bool(got) == bool(expected)


# --------------------------------------------------------------------------- negation, typo, determinism


def _damerau(a: str, b: str) -> int:
    """Optimal string alignment distance (written here, independent of finegrain)."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


@pytest.mark.parametrize("lang,queries", [
    ("en", ["Coffee and milk tea", "There is alcohol on the table.", "A vehicle with words on the roof", "gym"]),
    ("zh", ["咖啡与奶茶", "桌子上有酒", "是一只猫", "健身房", "鱼"]),
])
def test_negation_and_typo_are_deterministic_with_a_seed(lang: str, queries: list[str]) -> None:
    pairs = [(f"q{i}", t) for i, t in enumerate(queries)]
    a = build_perturbations(pairs, ("negation", "typo"), Context(lang, seed=7))
    b = build_perturbations(reversed(pairs), ("negation", "typo"), Context(lang, seed=7))
    assert sorted(map(repr, a)) == sorted(map(repr, b))  # query order does not matter
    outs = {tuple(p.perturbed for p in build_perturbations(pairs, ("typo",), Context(lang, seed=s))) for s in range(8)}
    assert len(outs) > 1  # the seed matters for typos
    for p in a:
        assert p.perturbed != p.original
        if p.family == "typo":
            assert _damerau(p.original, p.perturbed) == 1


def test_negation_rules() -> None:
    ctx = Context("en")
    assert perturb("q", "There is alcohol on the table.", "negation", ctx).perturbed == "There is no alcohol on the table."
    assert perturb("q", "The mouse that is reading", "negation", ctx).perturbed == "The mouse that is not reading"
    assert perturb("q", "Park with a waterfall", "negation", ctx).perturbed == "Park without a waterfall"
    assert perturb("q", "Red car", "negation", ctx).perturbed == "no Red car"
    zh = Context("zh")
    assert perturb("q", "桌子上有酒", "negation", zh).perturbed == "桌子上没有酒"
    assert perturb("q", "所有的猫", "negation", zh).perturbed == "没有所有的猫"  # 所有 is not 有
    assert perturb("q", "白猫", "negation", zh).perturbed == "没有白猫"


def test_family_names() -> None:
    assert parse_families(None) == FAMILIES
    assert parse_families(["typo,antonym", "size"]) == ("antonym", "size", "typo")
    with pytest.raises(UnknownNameError, match="colour"):
        parse_families(["colour"])
    with pytest.raises(FinegrainError, match="language"):
        make_context("fr", [])


# --------------------------------------------------------------------------- Table 4 and Table 5


def test_rank_change_counts_on_a_hand_built_run() -> None:
    qrels = Qrels.from_dict({"a": {"d1": 1}, "b": {"d2": 2, "d3": 1}, "c": {"d4": 1}, "d": {"d1": 0}, "e": {"d9": 1}})
    run = Run.from_dict({
        "a": {"d1": 3.0, "d2": 2.0},            # best relevant at 1
        "a~x": {"d2": 3.0, "d1": 2.0},          # -> 2: lower
        "b": {"d1": 3.0, "d3": 2.0, "d2": 1.0},  # best relevant (d3) at 2
        "b~x": {"d2": 3.0},                     # -> 1: higher
        "c": {"d4": 1.0},                       # 1
        "c~x": {"d4": 5.0, "d5": 1.0},          # 1: same
        "d": {"d1": 1.0}, "d~x": {},            # no relevant item: not counted
        "e": {"d1": 1.0}, "e~x": {"d2": 1.0},   # not retrieved either way: same
    })
    qids = ["a", "b", "c", "d", "e"]
    orig = best_relevant_ranks(run, qrels, [(q, q) for q in qids])
    pert = best_relevant_ranks(run, qrels, [(f"{q}~x", q) for q in qids])
    np.testing.assert_array_equal(orig, [1, 2, 1, np.nan, np.inf])
    np.testing.assert_array_equal(pert, [2, 1, 1, np.nan, np.inf])
    rc = rank_changes(orig, pert)
    assert (rc.lower, rc.higher, rc.same, rc.n, rc.n_no_relevant, rc.n_perturbed) == (1, 1, 2, 4, 1, 5)
    assert rc.percents() == {"lower": 25.0, "higher": 25.0, "same": 50.0}


def test_metric_delta_matches_numpy() -> None:
    gen = np.random.default_rng(42)
    qids = [f"q{i}" for i in range(30)]
    orig = {q: float(v) for q, v in zip(qids, gen.random(30))}
    orig["q29"] = None  # undefined on the original side: left out of the pairs
    pert = {q: float(v) for q, v in zip(qids[:20], gen.random(20))}
    got = metric_delta("m", orig, pert, n_resamples=2000, seed=5, confidence=0.9)
    x = np.asarray([orig[q] for q in qids[:20]])
    y = np.asarray([pert[q] for q in qids[:20]])
    d = y - x
    means = d[np.random.default_rng(5).integers(0, 20, (2000, 20))].mean(axis=1)
    lo, hi = np.quantile(means, [0.05, 0.95])
    assert got.n == 20
    assert got.delta == pytest.approx(d.mean())
    assert (got.ci_low, got.ci_high) == (pytest.approx(lo), pytest.approx(hi))
    full = np.asarray([v for v in orig.values() if v is not None])
    assert got.dataset_original == pytest.approx(full.mean())
    substituted = dict(orig)
    substituted.update(pert)
    assert got.dataset_perturbed == pytest.approx(np.mean([v for v in substituted.values() if v is not None]))
    empty = metric_delta("m", orig, {})
    assert empty.n == 0 and empty.delta is None and empty.dataset_perturbed == pytest.approx(full.mean())


def test_select_run_renames_and_keeps_scores() -> None:
    run = Run.from_dict({"q1": {"a": 1.0, "b": 2.0}, "q1~t": {"c": 0.5}, "q2": {"b": 1.0}})
    sub = select_run(run, [("q1~t", "q1"), ("missing", "q3"), ("q2", "q2")])
    assert sub.to_dict() == {"q1": {"c": 0.5}, "q3": {}, "q2": {"b": 1.0}}
    assert sub.ranked("q1") == ["c"]


def test_corpus_colours_zh_and_en_agree_on_names() -> None:
    assert corpus_colors("en", ["a Light Blue kite"]) == frozenset({"light blue"})
    assert corpus_colors("zh", ["浅蓝色的风筝"]) == frozenset({"lightblue"})
    assert math.isclose(colors.distance("lightblue", "light blue"), _dist("lightblue", "light blue"))


def test_zh_typo_can_be_a_pinyin_homophone_from_the_corpus() -> None:
    from pypinyin import Style, lazy_pinyin

    corpus = ["一只小猫在草地上睡觉。", "一只小帽子放在桌上。", "猫咪和毛线球。", "睡觉的小孩。"]
    ctx = make_context("zh", corpus, seed=0)
    sound = {c: lazy_pinyin(c, style=Style.NORMAL)[0] for t in corpus for c in t if "\u4e00" <= c <= "\u9fff"}
    # independently: the corpus characters sharing 猫's toneless pinyin "mao" (帽 mao4, 毛 mao2)
    assert set(ctx.homophones["猫"]) == {c for c, s in sound.items() if s == "mao" and c != "猫"}
    seen = set()
    for seed in range(40):
        p = perturb("q1", "小猫睡觉", "typo", replace_seed(ctx, seed))
        seen.add(p.detail["op"])
        if p.detail["op"] == "homophone":
            assert len(p.perturbed) == len(p.original) and p.replacement in ctx.homophones[p.word]
            assert sound[p.replacement] == sound[p.word] and p.replacement != p.word
    assert "homophone" in seen and seen <= {"homophone", "swap", "delete"}


def replace_seed(ctx: Context, seed: int) -> Context:
    import dataclasses

    return dataclasses.replace(ctx, seed=seed)
