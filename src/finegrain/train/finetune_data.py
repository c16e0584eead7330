"""What :mod:`finegrain.train.finetune` trains on: the pairs file, the held-out split, hard negatives, batches.

* :func:`read_pairs` reads a pairs JSONL file (``finegrain gen-queries`` writes
  ``{"query", "passage", "passage_id", "style", "source"}``; ``{"query", "positive"}``
  and ``{"anchor", "positive"}`` are read too; ``passage_id`` follows the one id rule of
  :mod:`finegrain.io.ids`; an optional ``"negatives"`` list of passage texts, as ``finegrain distill``
  writes, gives the pair its own hard negatives; an optional ``"teacher_top"``, as ``finegrain distill
  --teacher-scores`` writes, gives a teacher's best passages and scores for a KL loss), failing with
  file:line on a bad record; its provenance sidecar is read by the one JSON reader;
* :func:`split_by_passage` holds out about ``fraction`` of the pairs, whole passages at a
  time (seeded), so that no passage is on both sides;
* :func:`mine_bm25_negatives` gives each pair the top BM25 passages of the training pool
  that are not a positive of its query (nor, avoiding false negatives, of its passage's group);
* :func:`batch_schedule` is the order of training batches, epoch after epoch, seeded: no
  text appears twice in a batch (ST's ``NoDuplicatesBatchSampler`` rule), so a passage
  shared by two pairs is never the other's false negative. With ``avoid_false_negatives`` the
  *known* false negatives are kept apart too: no text of a batch is a labelled positive of
  another pair's query (the same query paired with it elsewhere in the file), and no two texts of
  a batch belong to one group (``"group"`` of the pairs file: the other captions of one image).
"""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import iter_jsonl, read_json
from finegrain.io.checksum import sha256_of  # the one streaming file hash
from finegrain.io.ids import IdSyntax, id_error, id_problem
from finegrain.retrieve.bm25 import BM25
from finegrain.text import get_tokenizer

#: The column names read as (query, passage), in the order they are tried.
COLUMNS: tuple[tuple[str, str], ...] = (("query", "passage"), ("query", "positive"), ("anchor", "positive"))


@dataclass(frozen=True)
class Pair:
    """One training pair; ``key`` names the passage (its ``passage_id``, else its text) for the split;
    ``negatives`` are its hard negatives (from the file's ``"negatives"``, or mined), one column each;
    ``teacher`` is a teacher's best passages for the query, best first, as ``(text, score)``."""

    query: str
    passage: str
    key: str
    style: str | None
    line: int
    negatives: tuple[str, ...] = ()
    group: str | None = None
    teacher: tuple[tuple[str, float], ...] = ()

    def texts(self) -> tuple[str, ...]:
        return (self.query, self.passage, *self.negatives)


@dataclass(frozen=True)
class PairsFile:
    """A read pairs file: its pairs, sha256, and the ``PAIRS.jsonl.provenance.json`` sidecar when present."""

    path: Path
    pairs: tuple[Pair, ...]
    sha256: str
    provenance: Any

    def summary(self) -> dict[str, Any]:
        styles = Counter(p.style or "none" for p in self.pairs)
        return {"path": str(self.path), "sha256": self.sha256, "records": len(self.pairs),
                "passages": len({p.key for p in self.pairs}), "styles": dict(sorted(styles.items())),
                "provenance": self.provenance}


def read_pairs(path: str | Path) -> PairsFile:
    """The pairs of a JSONL file; errors name the file, the line, what was expected and what was found.

    A record may hold ``"negatives"``: a list of non-empty passage texts, none of them its own passage, none
    twice. Every record of a file holds the same number (a record without the key holds none): each negative
    is one column of the training batch, so a record with fewer cannot fill its row. A file that breaks this
    is an error naming the first line that differs; it is never trimmed or padded, since either would hide a
    file that was not written as meant (``finegrain distill`` writes a fixed number per record).

    A record may hold ``"teacher_top"``: ``{"texts": [...], "scores": [...]}`` (and ``"ids"``, not read), the
    teacher's best passages, best first, with finite scores that never rise down the list; records may hold
    different numbers of them.
    """
    path = Path(path)
    if not path.is_file():
        raise FinegrainError(f"pairs file {str(path)!r} does not exist",
                             "pass a JSONL file written by finegrain gen-queries, one {\"query\", \"passage\"} a line")
    pairs: list[Pair] = []
    first: tuple[int, int] | None = None  # (number of negatives, line) of the first record
    for n, obj in iter_jsonl(path):
        cols = next((c for c in COLUMNS if c[0] in obj and c[1] in obj), None)
        if cols is None:
            raise DataFormatError(path, n, 'an object with "query" and "passage" (or "positive"; or "anchor" and '
                                  '"positive")', f"keys {sorted(obj)}")
        query, passage = obj[cols[0]], obj[cols[1]]
        for name, value in ((cols[0], query), (cols[1], passage)):
            if not isinstance(value, str) or not value.strip():
                raise DataFormatError(path, n, f'"{name}" as a non-empty string', repr(value))
        pid, style = obj.get("passage_id"), obj.get("style")
        if isinstance(pid, int) and not isinstance(pid, bool):
            pid = str(pid)  # an integer id is its digits, as in every JSON-lines reader
        if pid is not None:
            problem = id_problem(pid, IdSyntax.JSON)  # the one id rule: a string, not blank, not over-long
            if problem is not None:
                raise id_error(path, n, pid, 'a "passage_id"', IdSyntax.JSON, problem)
        if style is not None and not isinstance(style, str):
            raise DataFormatError(path, n, '"style" as a string ("kw" or "sm")', repr(style))
        group = obj.get("group")
        if group is not None and (not isinstance(group, str) or not group.strip()):
            raise DataFormatError(path, n, '"group" as a non-empty string or null (the passage\'s sibling group)',
                                  repr(group))
        key = f"id:{pid}" if pid is not None else f"text:{passage}"
        negatives = _negatives(path, n, obj["negatives"], passage) if "negatives" in obj else ()
        if first is None:
            first = (len(negatives), n)
        elif len(negatives) != first[0]:
            raise DataFormatError(path, n, f'{first[0]} "negatives" as on line {first[1]} (every record holds the '
                                  'same number)', f"{len(negatives)}",
                                  "write the same number of negatives on every line, e.g. with finegrain distill "
                                  "--negatives N")
        teacher = _teacher_top(path, n, obj["teacher_top"]) if "teacher_top" in obj else ()
        pairs.append(Pair(query, passage, key, style, n, negatives, group=group, teacher=teacher))
    if not pairs:
        raise FinegrainError(f"pairs file {str(path)!r} has no records", "write one JSON object a line")
    return PairsFile(path, tuple(pairs), sha256_of(path), _sidecar(path))


def _negatives(path: Path, line: int, value: Any, passage: str) -> tuple[str, ...]:
    """A record's ``"negatives"``: a list of non-empty strings, not its own passage, none twice."""
    if not isinstance(value, list):
        raise DataFormatError(path, line, '"negatives" as a list of passage texts', _json(value))
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise DataFormatError(path, line, '"negatives" items as non-empty strings', _json(item))
        if item == passage:
            raise DataFormatError(path, line, '"negatives" other than the record\'s own passage',
                                  f"its passage {_json(item)} among them")
    if len(set(value)) != len(value):
        twice = next(x for x in value if value.count(x) > 1)
        raise DataFormatError(path, line, '"negatives" each given once', f"{_json(twice)} twice")
    return tuple(value)


def _teacher_top(path: Path, line: int, value: Any) -> tuple[tuple[str, float], ...]:
    """A record's ``"teacher_top"``: texts and finite scores, as many of each, best first."""
    expected = '"teacher_top" as {"texts": [passage texts], "scores": [numbers]}, best first'
    if not isinstance(value, dict) or not isinstance(value.get("texts"), list) or not isinstance(
            value.get("scores"), list):
        raise DataFormatError(path, line, expected, _json(value)[:200],
                              "write it with finegrain distill --teacher-scores N")
    texts, scores = value["texts"], value["scores"]
    if len(texts) != len(scores):
        raise DataFormatError(path, line, '"teacher_top" with as many "texts" as "scores"',
                              f"{len(texts)} texts, {len(scores)} scores")
    for t in texts:
        if not isinstance(t, str) or not t.strip():
            raise DataFormatError(path, line, '"teacher_top" texts as non-empty strings', _json(t))
    for x in scores:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise DataFormatError(path, line, '"teacher_top" scores as finite numbers', _json(x))
    if any(b > a for a, b in itertools.pairwise(scores)):
        raise DataFormatError(path, line, '"teacher_top" best first (scores never rising)', _json(scores)[:200])
    return tuple((t, float(x)) for t, x in zip(texts, scores, strict=True))


def _json(value: Any) -> str:
    """``value`` as the file spells it (the error then shows ``""`` for an empty string, ``null`` for None)."""
    return json.dumps(value, ensure_ascii=False)


def _sidecar(path: Path) -> Any:
    side = path.with_name(path.name + ".provenance.json")
    if not side.is_file():
        return None
    try:
        return read_json(side)[0]  # the one JSON reader: strict JSON, UTF-8, bounded nesting
    except DataFormatError as e:
        fix = f"{e.hint}; or remove the provenance sidecar" if e.hint else "fix or remove the provenance sidecar"
        raise DataFormatError(side, e.line, e.expected, e.found, fix) from None


def split_by_passage(pairs: Sequence[Pair], fraction: float, seed: int) -> tuple[tuple[Pair, ...], tuple[Pair, ...]]:
    """``(train, held out)``: whole passages, drawn in a seeded order until ``max(2, ceil(fraction * n))``
    pairs are held out (two at least: in-batch accuracy needs a negative). Nothing is held out when
    ``fraction`` is 0, there are fewer than 10 pairs or fewer than two passages."""
    keys = sorted({p.key for p in pairs})
    if fraction <= 0 or len(keys) < 2 or len(pairs) < 10:
        return tuple(pairs), ()
    want = max(2, math.ceil(fraction * len(pairs)))
    sizes = Counter(p.key for p in pairs)
    held: set[str] = set()
    count = 0
    for i in np.random.default_rng([seed, 1]).permutation(len(keys)):
        if count >= want or len(held) == len(keys) - 1:
            break
        held.add(keys[i])
        count += sizes[keys[i]]
    return tuple(p for p in pairs if p.key not in held), tuple(p for p in pairs if p.key in held)


def mine_bm25_negatives(pairs: Sequence[Pair], k: int, lang: str, *,
                        avoid_false_negatives: bool = False) -> tuple[tuple[Pair, ...], dict[str, Any]]:
    """Each pair with ``k`` negatives: the best BM25 passages of the pool (the pairs' passages) that are not a
    positive of its query, ties broken by pool order; passages scoring 0 fill up when fewer match. With
    ``avoid_false_negatives``, passages of a positive's group (another caption of the same image) are not
    negatives either.

    Returns the pairs and counts for the provenance.
    """

    pool = list(dict.fromkeys(p.passage for p in pairs))
    positives: dict[str, set[str]] = defaultdict(set)
    for p in pairs:
        positives[p.query].add(p.passage)
    if avoid_false_negatives:
        group_of = _groups_of_texts(pairs)
        members: dict[str, set[str]] = defaultdict(set)
        for text, g in group_of.items():
            members[g].add(text)
        for own in positives.values():
            for g in {group_of[t] for t in own if t in group_of}:
                own |= members[g]
    if len(pool) <= max(len(v) for v in positives.values()) + k - 1:
        raise FinegrainError(f"{len(pool)} passages are too few for {k} hard negative(s) a query",
                             "use more pairs, or a smaller --negatives-per-query")
    tok = get_tokenizer(lang)
    bm = BM25("okapi").index(tok.documents(pool), [str(i) for i in range(len(pool))])
    query_tokens = dict(zip(positives, tok.queries(list(positives)), strict=True))
    by_query: dict[str, tuple[str, ...]] = {}
    filled = 0
    for query, own in positives.items():
        scores = bm.scores(query_tokens[query])
        order = np.lexsort((np.arange(len(pool)), -scores))
        picked = [int(i) for i in order if pool[i] not in own][:k]
        filled += sum(1 for i in picked if scores[i] <= 0)
        by_query[query] = tuple(pool[i] for i in picked)
    out = tuple(replace(p, negatives=by_query[p.query]) for p in pairs)
    return out, {"method": "bm25", "variant": "okapi", "lang": lang, "per_query": k, "pool": len(pool),
                 "queries": len(by_query), "zero_score_fills": filled,
                 "excluded": "positives of the query" + (" and their groups" if avoid_false_negatives else "")}


def batch_schedule(pairs: Sequence[Pair], batch: int, seed: int, *,
                   avoid_false_negatives: bool = False) -> Iterator[list[int]]:
    """The training batches in order (indices into ``pairs``), without end: each epoch a seeded permutation,
    cut greedily into batches with no text twice (and, with ``avoid_false_negatives``, no known false
    negative: see the module docstring); a pair that would break the rule waits for a later batch of the
    same epoch. Batches of one pair (no negative) are dropped.

    Epoch ``e`` is a function of ``(seed, e)`` alone and is cut only when it is reached, so the batch of step
    ``s`` does not depend on how many steps a run has, and starting costs nothing however many it has. An
    epoch that forms no batch (its first pair shares a text with every other pair) is skipped; the first
    batch is an error when the first epoch forms none.
    """
    rule = _FalseNegatives(pairs) if avoid_false_negatives else None
    epoch = 0
    while True:
        formed = False
        for chosen in _epoch(pairs, batch, np.random.default_rng([seed, 2, epoch]).permutation(len(pairs)), rule):
            formed = True
            yield chosen
        if epoch == 0 and not formed:
            raise FinegrainError("no batch of two pairs without a repeated text"
                                 + (" or a known false negative" if rule else "") + " can be formed",
                                 "the pairs need at least two different queries and passages"
                                 + (" of different groups" if rule else ""))
        epoch += 1


def one_pass(pairs: Sequence[Pair], batch: int, seed: int, *, avoid_false_negatives: bool = False) -> list[list[int]]:
    """The batches of one seeded pass over ``pairs`` (the held-out pairs are scored this way), by the rule
    training batches follow."""
    rule = _FalseNegatives(pairs) if avoid_false_negatives else None
    return list(_epoch(pairs, batch, np.random.default_rng([seed, 3]).permutation(len(pairs)), rule))


class _FalseNegatives:
    """What each pair must not meet in a batch: the labelled positives of its query and the groups of its texts."""

    def __init__(self, pairs: Sequence[Pair]) -> None:
        positives: dict[str, set[str]] = defaultdict(set)
        for p in pairs:
            positives[p.query].add(p.passage)
        group_of = _groups_of_texts(pairs)
        self.positives = [frozenset(positives[p.query]) for p in pairs]
        self.groups = [frozenset(group_of[t] for t in p.texts() if t in group_of) for p in pairs]


def _groups_of_texts(pairs: Sequence[Pair]) -> dict[str, str]:
    """The group of each passage text that has one (a text given two groups keeps the first)."""
    found: dict[str, str] = {}
    for p in pairs:
        if p.group is not None:
            found.setdefault(p.passage, p.group)
    return found


def _epoch(pairs: Sequence[Pair], batch: int, order: np.ndarray,
           rule: _FalseNegatives | None = None) -> Iterator[list[int]]:
    remaining = [int(i) for i in order]
    while remaining:
        chosen: list[int] = []
        seen: set[str] = set()
        forbidden: set[str] = set()
        groups: set[str] = set()
        rest: list[int] = []
        for j, i in enumerate(remaining):
            texts = pairs[i].texts()
            ok = seen.isdisjoint(texts)
            if ok and rule is not None:
                ok = (forbidden.isdisjoint(texts) and seen.isdisjoint(rule.positives[i])
                      and groups.isdisjoint(rule.groups[i]))
            if ok:
                chosen.append(i)
                seen.update(texts)
                if rule is not None:
                    forbidden.update(rule.positives[i])
                    groups.update(rule.groups[i])
                if len(chosen) == batch:
                    rest.extend(remaining[j + 1:])
                    break
            else:
                rest.append(i)
        if len(chosen) < 2:
            return
        yield chosen
        remaining = rest
