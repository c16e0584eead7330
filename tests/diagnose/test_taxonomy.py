"""finegrain.diagnose.taxonomy: every DuReader Table 9 type on hand-made zh and en failures.

Each case is a query whose first-ranked passage is wrong; the expected tag is
the one a person assigns (for Chinese, the examples of DuReader-retrieval's
Table 9, with the paper's own type), never a value copied from the code's
output. The rule text must name the evidence, proportions must sum to one,
and ``finegrain eval`` must save the section.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.diagnose.taxonomy import (
    SCHEMA,
    TAGS,
    Taxonomy,
    _zh_int,
    analyse_taxonomy,
)
from finegrain.errors import FinegrainError
from finegrain.experiment.run import taxonomy_section
from finegrain.results.saved import SavedResults
from finegrain.settings import Settings
from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run

# (qid, query, wrong passage, relevant passage, expected tag, evidence the rule must show)
ZH_CASES = [
    # DuReader-retrieval Table 9, in the paper's order; its false-negative row (a passage in other words) has no
    # lexical rule, so the suspected false negative is a caption whose unjudged wrong passage holds every query term
    ("t9-entity", "淘宝修改实名认证", "响应国家规定,支付宝即将实施支付宝个人信息实名认证", "淘宝账号怎样修改实名信息",
     "entity_mismatch", ("淘宝", "支付宝")),
    ("t9-number", "最近有什么好听的歌2016", "音乐巴士2017好听的歌榜单收藏了你最需要的的好歌", "2016年最火的流行歌曲排行",
     "numerical_mismatch", ("2016", "2017")),
    ("t9-modifier", "吃完海鲜可以喝牛奶吗", "不可以。早晨喝牛奶,不科学。原因是", "海鲜和牛奶一起吃会腹泻",
     "modifier_mismatch", ("海鲜", "喝牛奶")),
    ("t9-syntax", "台北怎么去瑞芳", "从瑞芳回台北,乘火车1小时到达,可以使用悠游卡", "由台北出发可搭区间车前往瑞芳",
     "syntax_mismatch", ("台北", "瑞芳")),
    ("t9-typo", "ipone手机屏幕右上角有个圈是什么", "但是又不知道这些图标是怎么出现的。是什么东西,干什么用的",
     "屏幕上的小白点是iphone的辅助触控", "typo", ("ipone", "iphone")),
    ("t9-over", "wow邮件发错了怎么办", "还有个方法就是你登陆WOW然后都设置好后退出游戏", "魔兽世界寄错信件可以联系客服退回",
     "term_over_sensitivity", ("wow",)),
    # caption-style cases
    ("c-colour", "白猫", "一只黑猫坐在窗台上", "一只小白猫睡在沙发上", "modifier_mismatch", ("白猫", "黑猫")),
    ("c-colour2", "红色的汽车", "一辆蓝色的汽车停在路边", "一辆红色轿车", "modifier_mismatch", ("红色", "蓝色")),
    ("c-entity", "猫", "一只小狗在草地上奔跑", "一只白猫睡在沙发上", "entity_mismatch", ("猫", "小狗")),
    ("c-count", "两只猫", "一只猫躺在地毯上", "两只小猫在玩耍", "numerical_mismatch", ("两", "一")),
    ("c-passive", "猫被狗追", "一只猫在追一条狗", "小狗追着猫跑", "syntax_mismatch", ("猫", "狗")),
    ("c-pinyin", "山麦风景", "城市的夜景", "连绵的山脉风景", "typo", ("山麦", "山脉")),
    ("c-other", "日出", "一份打印的表格", "海上日出", "other", ()),
    ("c-fn", "海边日落", "海边的日落景色", "夕阳落入大海", "suspected_false_negative", ("海边", "日落")),
    # CapRetrieval Sec. 3 "taxonomy knowledge": the relevant passage names members of the query's category
    ("c-taxonomy", "海鲜", "一盘炒青菜和米饭", "餐桌上摆着螃蟹和生蚝", "taxonomy_miss", ("海鲜", "螃蟹")),
    ("c-taxonomy2", "水果", "超市的收银台", "切开的西瓜放在盘子里", "taxonomy_miss", ("水果", "西瓜")),
    ("c-taxonomy3", "家用电器", "一张木头餐桌", "厨房里的冰箱和微波炉", "taxonomy_miss", ("家用电器", "冰箱")),
]

EN_CASES = [
    ("e-entity", "cat", "A dog running on the beach.", "A kitten asleep on a chair.", "entity_mismatch", ("cat", "dog")),
    ("e-named", "Taobao real-name authentication", "In response to new rules, Alipay will soon implement real-name "
     "authentication.", "How to change the verified name on Taobao.", "entity_mismatch", ("taobao", "alipay")),
    ("e-number", "songs of 2016", "The best songs of 2017 in one list.", "Hit singles released in 2016.",
     "numerical_mismatch", ("2016", "2017")),
    ("e-words", "two cats", "One cat lying on a rug.", "A pair of kittens playing.", "numerical_mismatch", ("two", "one")),
    ("e-colour", "red car", "A blue car parked on the street.", "A crimson automobile in a garage.",
     "modifier_mismatch", ("red", "blue", "car")),
    ("e-syntax", "A dog bites a man", "A man bites a dog in the park.", "The dog attacked the man.",
     "syntax_mismatch", ("dog", "man")),
    ("e-passive", "cat chased by a dog", "A cat chasing a dog around the yard.", "A dog running after a cat.",
     "syntax_mismatch", ("cat", "dog")),
    ("e-typo", "ipone screen circle", "The phone screen shows icons.", "An iphone with a white dot.", "typo",
     ("ipone", "iphone")),
    ("e-over", "WOW mail sent by mistake", "Log in to WOW and then exit the game.",
     "Recalling a World of Warcraft letter.", "term_over_sensitivity", ("wow",)),
    ("e-all-terms", "garlic", "A garlic press next to a sink.", "Three bulbs of garlic.", "term_over_sensitivity",
     ("garlic",)),
    ("e-other", "sunrise", "A printed tax form.", "The sun rising over the sea.", "other", ()),
    ("e-fn", "dog on a beach", "A brown dog running on the beach.", "A puppy in the sand by the sea.",
     "suspected_false_negative", ("dog", "beach")),
    ("e-taxonomy", "fruit", "A supermarket checkout counter.", "A sliced watermelon on a plate.", "taxonomy_miss",
     ("fruit", "watermelon")),
    ("e-taxonomy2", "seafood", "A bowl of plain rice.", "Crabs and oysters on ice.", "taxonomy_miss",
     ("seafood", "crabs")),
    ("e-taxonomy3", "household appliance", "A wooden table.", "A refrigerator in a small kitchen.", "taxonomy_miss",
     ("household appliance", "refrigerator")),
]
EXTRA = {"zh": ["iphone手机屏幕", "山脉在远处", "山脉和河流"],
         "en": ["An iphone on a table, next to another iphone.", "I bought a lamp on Taobao yesterday.",
                "Prices on Taobao fall.", "Payments on Alipay rise.", "An advert about Alipay."]}


def _dataset(cases: list[tuple], extra: list[str]) -> tuple[Corpus, Queries, Qrels, Run]:
    docs, queries, qrels, run = [], [], {}, {}
    for qid, query, wrong, relevant, tag, _ in cases:
        docs += [Document(f"{qid}/w", wrong), Document(f"{qid}/r", relevant)]
        queries.append(Query(qid, query, type=tag.split("_")[0]))
        # the wrong passage is judged irrelevant, except for a suspected false negative: never judged
        qrels[qid] = {f"{qid}/r": 1} if tag == "suspected_false_negative" else {f"{qid}/r": 1, f"{qid}/w": 0}
        run[qid] = {f"{qid}/w": 2.0, f"{qid}/r": 1.0}  # the wrong passage first: a failure
    docs += [Document(f"extra{i}", t) for i, t in enumerate(extra)]
    return Corpus(docs), Queries(queries), Qrels.from_dict(qrels), Run.from_dict(run)


@pytest.fixture(scope="module", params=["zh", "en"])
def tagged(request: pytest.FixtureRequest) -> tuple[str, list[tuple], Taxonomy]:
    lang = request.param
    cases = ZH_CASES if lang == "zh" else EN_CASES
    corpus, queries, qrels, run = _dataset(cases, EXTRA[lang])
    return lang, cases, analyse_taxonomy(corpus, queries, qrels, run, lang=lang, k=10)


def test_every_case_gets_the_expected_tag_with_its_evidence(tagged: tuple[str, list[tuple], Taxonomy]) -> None:
    lang, cases, tax = tagged
    wrong = []
    for qid, query, _, _, tag, evidence in cases:
        f = tax.by_qid[qid]
        if f.tag != tag:
            wrong.append(f"{lang} {query!r}: expected {tag}, got {f.tag} ({f.rule})")
            continue
        for token in evidence:  # the evidence tokens are listed and named in the rule text
            assert token in f.evidence, (query, token, f.evidence)
            assert token.lower() in f.rule.lower(), (query, token, f.rule)
        assert f.rule and f.wrong_id == f"{qid}/w" and f.relevant_id == f"{qid}/r"
        assert f.kind == "outranked" and f.wrong_rank == 1 and f.relevant_rank == 2
        assert f.wrong_grade == (None if tag == "suspected_false_negative" else 0)
    assert not wrong, "\n".join(wrong)


def test_every_tag_is_covered_in_both_languages() -> None:
    for cases in (ZH_CASES, EN_CASES):
        assert {c[4] for c in cases} == set(TAGS)


def test_proportions_sum_to_one_overall_and_per_type(tagged: tuple[str, list[tuple], Taxonomy]) -> None:
    _, cases, tax = tagged
    body = tax.to_json_dict()
    assert body["schema"] == SCHEMA and body["n_failures"] == len(cases) == body["n_queries"]
    assert math.isclose(sum(body["proportions"].values()), 1.0)
    assert sum(body["counts"].values()) == len(cases)
    expected = {t: sum(c[4] == t for c in cases) for t in TAGS}
    assert body["counts"] == expected
    for g, row in body["by_type"].items():
        assert sum(row["counts"].values()) == row["n_failures"] > 0, g
        assert math.isclose(sum(row["proportions"].values()), 1.0), g
    json.dumps(body)  # JSON-able


def test_examples_carry_both_passages_and_the_rule(tagged: tuple[str, list[tuple], Taxonomy]) -> None:
    _, cases, tax = tagged
    body = tax.to_json_dict(max_examples=1)
    texts = {c[0]: (c[2], c[3]) for c in cases}
    for tag, items in body["examples"].items():
        assert len(items) == 1, tag
        x = items[0]
        assert x["tag"] == tag and x["rule"]
        assert (x["wrong_text"], x["relevant_text"]) == texts[x["qid"]]


def test_successes_are_not_failures_and_queries_without_relevant_are_skipped() -> None:
    corpus = Corpus([Document("a", "a white cat"), Document("b", "a black dog")])
    queries = Queries([Query("ok", "cat"), Query("miss", "dog"), Query("none", "bird"), Query("absent", "cat")])
    qrels = Qrels.from_dict({"ok": {"a": 1}, "miss": {"b": 1}, "none": {"a": 0}, "absent": {"a": 1}})
    run = Run.from_dict({"ok": {"a": 2.0, "b": 1.0}, "miss": {"a": 1.0}, "none": {"a": 1.0}})
    tax = analyse_taxonomy(corpus, queries, qrels, run, lang="en", k=1)
    assert set(tax.by_qid) == {"miss", "absent"}
    assert tax.by_qid["miss"].kind == "miss" and tax.by_qid["miss"].relevant_rank is None
    assert tax.by_qid["miss"].wrong_grade is None  # unjudged, not fully judged
    assert tax.by_qid["absent"].kind == "empty" and tax.by_qid["absent"].tag == "other"
    assert tax.skipped_no_relevant == ("none",) and tax.n_queries == 3


def test_deterministic_under_input_order() -> None:
    corpus, queries, qrels, run = _dataset(EN_CASES, EXTRA["en"])
    a = analyse_taxonomy(corpus, queries, qrels, run, lang="en").to_json_dict()
    shuffled = Corpus(list(reversed([corpus[d] for d in corpus])))
    b = analyse_taxonomy(shuffled, queries, qrels, run, lang="en").to_json_dict()
    assert a == b


def test_a_judged_or_fully_judged_wrong_passage_is_no_suspected_false_negative() -> None:
    corpus, queries, qrels, run = _dataset([c for c in EN_CASES if c[0] == "e-fn"], [])
    assert analyse_taxonomy(corpus, queries, qrels, run, lang="en").failures[0].tag == "suspected_false_negative"
    fully = analyse_taxonomy(corpus, queries, qrels, run, lang="en", fully_judged=True).failures[0]
    # every term, but judged: a real error; the relevant passage names a puppy, not a dog, so taxonomy_miss fires
    # first and the over-sensitivity is kept among the other rules that fire
    assert fully.tag == "taxonomy_miss" and "term_over_sensitivity" in fully.also and fully.wrong_grade == 0
    judged = Qrels.from_dict({"e-fn": {"e-fn/r": 1, "e-fn/w": 0}})
    assert analyse_taxonomy(corpus, queries, judged, run, lang="en").failures[0].tag == "taxonomy_miss"


def test_chinese_numerals() -> None:
    for text, value in [("两", 2), ("十五", 15), ("三百零五", 305), ("一万二千", 12000), ("二十", 20), ("十", 10)]:
        assert _zh_int(text) == value


def test_bad_input_is_one_clear_error() -> None:
    corpus, queries, qrels, run = _dataset(EN_CASES[:1], [])
    with pytest.raises(FinegrainError, match="taggers for 'zh' and 'en'"):
        analyse_taxonomy(corpus, queries, qrels, run, lang="fr")
    with pytest.raises(FinegrainError, match="k must be a positive integer"):
        analyse_taxonomy(corpus, queries, qrels, run, lang="en", k=0)
    with pytest.raises(FinegrainError, match="qrels must be a finegrain Qrels"):
        analyse_taxonomy(corpus, queries, {"q": {"d": 1}}, run, lang="en")  # type: ignore[arg-type]


def test_eval_writes_the_taxonomy_section(tmp_path: Path) -> None:
    out = tmp_path / "bm25"
    assert main(["eval", "--dataset", "embedded/captions-en", "--retriever", "bm25-okapi", "--out", str(out),
                 "--quiet"]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    tax = results["taxonomy"]
    assert tax["schema"] == SCHEMA and "skipped" not in tax, tax.get("skipped")
    typed = SavedResults.load(out).taxonomy  # the section reads back as the typed object, whole
    assert typed is not None and typed.analysed and typed.to_json() == tax
    assert set(tax["counts"]) == set(TAGS)
    # failures, counted independently from the saved run and qrels: the first-ranked item is not relevant
    run: dict[str, list[tuple[float, str]]] = {}
    for line in (out / "run.trec").read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, []).append((-float(score), doc))
    ds = load_dataset("embedded/captions-en", Settings.from_env())
    failed = set()
    for qid in ds.queries:
        rel = {d for d, g in ds.qrels.get(qid, {}).items() if g >= 1}
        if rel and (qid not in run or min(run[qid])[1] not in rel):
            failed.add(qid)
    assert set(tax["per_query"]) == failed and tax["n_failures"] == len(failed) > 0
    if failed:
        assert math.isclose(sum(v for v in tax["proportions"].values()), 1.0)
    assert all(f["rule"] for f in tax["per_query"].values())


def test_pipeline_guard_never_breaks_an_eval() -> None:
    from types import SimpleNamespace

    empty = Run.from_dict({})
    ds = SimpleNamespace(lang="en")
    assert taxonomy_section(ds, empty)["skipped"] == "the run is empty"
    run = Run.from_dict({"q": {"d": 1.0}})
    assert "no error-taxonomy tagger" in taxonomy_section(SimpleNamespace(lang="fr"), run)["skipped"]
    broken = SimpleNamespace(lang="en", corpus=None, queries=None, qrels=None, run=None, meta={})
    assert taxonomy_section(broken, run)["skipped"].startswith("error taxonomy failed")
