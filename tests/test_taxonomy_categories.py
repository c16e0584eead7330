"""The taxonomy_miss lexicons (finegrain.diagnose.taxonomy.categories): the Chinese category lexicon built
from the extended Tongyici Cilin plus a hand table, WordNet hyponyms for English, and the rule's edges."""

from __future__ import annotations

from pathlib import Path

from finegrain.diagnose.taxonomy import analyse_taxonomy
from finegrain.diagnose.taxonomy.categories import en_members, member_in, zh_categories
from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run

DATA = Path(__file__).resolve().parents[1] / "src/finegrain/diagnose/taxonomy/data"


def test_zh_lexicon_has_the_papers_examples_and_is_well_formed() -> None:
    cats = zh_categories()
    assert {"螃蟹", "生蚝"} <= set(cats["海鲜"])  # CapRetrieval Sec. 3: 海鲜 -> 螃蟹, 生蚝
    assert "西瓜" in cats["水果"] and "白菜" in cats["蔬菜"] and "冰箱" in cats["家电"]
    assert "叉烧" in cats["烧腊"]  # "Cantonese-style roasted meats" -> "char siu"
    for head, members in cats.items():
        assert members and head not in members, head
        assert not any(head in m for m in members), head  # a member holding the head names the head itself
    lines = (DATA / "zh_categories.tsv").read_text(encoding="utf-8").splitlines()
    assert all(len(x.split("\t")) == 3 for x in lines[1:])
    prov = (DATA / "PROVENANCE.md").read_text(encoding="utf-8")
    assert "Cilin" in prov and "research use" in prov and "build_zh_categories.py" in prov


def test_zh_member_in_passage_order_and_whole_words_for_one_character() -> None:
    assert member_in("zh", "海鲜", "餐桌上摆着螃蟹和生蚝", ["餐桌", "摆着", "螃蟹", "生蚝"]) == "螃蟹"
    assert member_in("zh", "海鲜", "生蚝和螃蟹", ["生蚝", "螃蟹"]) == "生蚝"
    assert "桃" in zh_categories()["水果"]
    assert member_in("zh", "水果", "桃花开了", ["桃花", "开"]) is None  # 桃 only inside 桃花: not the fruit
    assert member_in("zh", "水果", "一个桃", ["一个", "桃"]) == "桃"
    assert member_in("zh", "不是类别的词", "螃蟹", ["螃蟹"]) is None


def test_en_wordnet_hyponyms() -> None:
    assert "watermelon" in en_members("fruit") and "fruit" not in en_members("fruit")
    assert "ice_cream" in en_members("dessert")  # multiword lemmas joined with "_"
    assert member_in("en", "fruit", "A sliced watermelon on a plate.") == "watermelon"
    assert member_in("en", "dessert", "Two scoops of ice cream.") == "ice cream"
    assert member_in("en", "seafood", "Crabs and oysters on ice.") == "crabs"  # plural, first in passage order
    assert member_in("en", "fruit", "A red car.") is None
    assert en_members("xyzzyq") == frozenset()


def _one(lang: str, query: str, wrong: str, relevant: str) -> str:
    corpus = Corpus([Document("w", wrong), Document("r", relevant)])
    tax = analyse_taxonomy(corpus, Queries([Query("q", query)]), Qrels.from_dict({"q": {"r": 1, "w": 0}}),
                           Run.from_dict({"q": {"w": 2.0, "r": 1.0}}), lang=lang)
    return tax.failures[0].tag


def test_rule_needs_the_category_absent_from_the_relevant_passage() -> None:
    assert _one("zh", "水果", "超市的收银台", "切开的西瓜") == "taxonomy_miss"
    assert _one("zh", "水果", "超市的收银台", "水果店里切开的西瓜") != "taxonomy_miss"  # names the category itself
    assert _one("en", "fruit", "A supermarket checkout.", "A sliced watermelon.") == "taxonomy_miss"
    assert _one("en", "fruit", "A supermarket checkout.", "Fruit stall with a sliced watermelon.") != "taxonomy_miss"
    assert _one("en", "fruit", "A supermarket checkout.", "A red bicycle.") != "taxonomy_miss"  # no member at all


def test_capretrieval_zh_saves_taxonomy_miss(tmp_path: Path, with_data_root: Path) -> None:
    """The F12 floor: an eval of capretrieval/zh saves the taxonomy_miss class, with hand-checkable examples."""
    import json

    from finegrain.cli.main import main

    assert main(["eval", "-d", "capretrieval/zh", "-r", "bm25-okapi", "-m", "ndcg@10", "-o", str(tmp_path),
                 "--quiet"]) == 0
    tax = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["taxonomy"]
    assert "taxonomy_miss" in tax["tags"] and tax["counts"]["taxonomy_miss"] > 0
    for ex in tax["examples"]["taxonomy_miss"]:
        cat, member = ex["evidence"]
        assert member in zh_categories()[cat] and member in ex["relevant_text"] and cat not in ex["relevant_text"]
