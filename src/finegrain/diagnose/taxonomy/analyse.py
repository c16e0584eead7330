"""Tag every failed query of a run (the entry point of :mod:`finegrain.diagnose.taxonomy`)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from finegrain.diagnose.errors import check_run_inputs
from finegrain.diagnose.taxonomy.records import Failure, Taxonomy
from finegrain.diagnose.taxonomy.rules import tag_failure
from finegrain.diagnose.taxonomy.text import Analyzer
from finegrain.errors import FinegrainError
from finegrain.types import Corpus, Qrels, Queries, Run


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
    """Tag every failed query of ``run`` with one DuReader Table 9 error type (see the package docstring).

    Queries without an item of grade >= ``rel`` are skipped (listed); a query
    missing from the run, or with an empty ranking, fails with ``kind="empty"``
    and the tag ``other``. A retrieved item absent from the qrels is irrelevant
    (its grade None, or 0 when ``fully_judged``); an unjudged one holding every query term is tagged
    ``suspected_false_negative``.
    """
    check_run_inputs(corpus, queries, qrels, run, k)
    if lang not in ("zh", "en"):
        raise FinegrainError(f"the error taxonomy has taggers for 'zh' and 'en', not {lang!r}",
                             "pass lang='zh' or lang='en' (the dataset's language)")
    texts = {d: doc.text for d, doc in corpus.items()}
    a = Analyzer(lang, texts)
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
                                                  (rid, texts.get(rid, "")), wrong_judged=grade is not None)
        failures.append(Failure(qid, query.text, query.type, kind, tag, rule, evidence, also, wid, 1,
                                None if grade is None else int(grade), rid, rrank))
    used = {d for f in failures for d in (f.wrong_id, f.relevant_id) if d}
    return Taxonomy(lang, k, rel, MappingProxyType(types), tuple(failures), tuple(skipped),
                    MappingProxyType({d: texts.get(d, "") for d in sorted(used)}))
