"""The ``concepts`` fuzz target: the ground-truth and retrieved object files into ``finegrain concepts``
(query-agnostic), the scores checked against exact matchings solved here (see :mod:`.fuzz_inputs`).

WordNet itself (nltk's reader) is the reference for synset names and path similarity.
"""

from __future__ import annotations

import io
import itertools
import json
import math
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from finegrain.diagnose.concepts.objects import read_object_set
from finegrain.diagnose.concepts.report import local_report, render_local
from finegrain.lexicons.wordnet import wordnet
from finegrain.testing.fuzz import Files, Invalid, Target
from finegrain.testing.fuzz_reading import json_document

# --------------------------------------------------------------------------- object files into `concepts`

TD = 1.0
BOX_LIMIT, MIN_SIDE = 1e7, 1e-7  # the box rule of diagnose/concepts/objects.py, restated
_TOLERANCE = 1e-9
_MAX_SIDE = 14  # the most objects of one synset (or non-common synsets) the exact matching here takes


@cache
def _canonical(name: str) -> bool:
    """Whether ``name`` is the name of a WordNet 3.0 synset (its own name, not another way to reach it)."""
    try:
        return bool(wordnet().synset(name).name() == name)
    except Exception:  # any failure to find it: not a synset name
        return False


@cache
def _path_similarity(a: str, b: str) -> float:
    a, b = min(a, b), max(a, b)
    value = wordnet().synset(a).path_similarity(wordnet().synset(b))
    return 0.0 if value is None else float(value)


def _objects(data: bytes) -> list[tuple[str, float]]:
    doc = json_document(data)
    if not isinstance(doc, dict) or not isinstance(doc.get("objects"), list):
        raise Invalid("objects")
    out = []
    for item in doc["objects"]:
        if not isinstance(item, dict) or not isinstance(item.get("synset"), str) or "bbox" not in item:
            raise Invalid("object")
        box = item["bbox"]
        if not isinstance(box, list) or len(box) != 4 or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in box):
            raise Invalid("bbox")
        if any(isinstance(v, float) and not math.isfinite(v) for v in box):
            raise Invalid("bbox not finite")
        if any(abs(v) > BOX_LIMIT for v in box) or min(box[2], box[3]) < MIN_SIDE:
            raise Invalid("bbox range")
        if not _canonical(item["synset"]):
            raise Invalid("synset")
        out.append((item["synset"], float(box[2]) * float(box[3])))
    return out


class _Scores:
    """The expected scores: floats within a relative tolerance; SD binary, which depends on which of
    several optimal size matchings is taken, as the set of values the optimal matchings give."""

    def __init__(self, exact: tuple[Any, ...], floats: tuple[float | None, ...] | None,
                 binary: frozenset[float] | None) -> None:
        self.exact, self.floats, self.binary = exact, floats, binary  # floats None: not checked

    def __eq__(self, got: object) -> bool:
        if not isinstance(got, tuple) or len(got) != 3:
            return False
        exact, floats, binary = got
        if exact != self.exact:
            return False
        if self.floats is None:
            return True
        if len(floats) != len(self.floats):
            return False
        for a, b in zip(floats, self.floats, strict=True):
            if (a is None) != (b is None):
                return False
            if a is not None and b is not None and not math.isclose(a, b, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE):
                return False
        if self.binary is None:
            return binary is None
        return binary is not None and any(math.isclose(binary, b, abs_tol=_TOLERANCE) for b in self.binary)

    def __ne__(self, got: object) -> bool:
        return not self == got

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"({self.exact!r}, {self.floats!r}, one of {sorted(self.binary or ())!r})"


def _least_costs(cost: list[list[float]], flagged: Callable[[float], bool]) -> dict[int, float]:
    """Over every matching that pairs each node of the smaller side of ``cost`` (rows x columns): for each
    number ``k`` of matched pairs whose cost is ``flagged``, the least total cost of such a matching.

    Exact, by dynamic programming over the rows and the set of columns already taken.
    """
    if len(cost) > len(cost[0]):
        cost = [list(col) for col in zip(*cost, strict=True)]
    states: dict[int, dict[int, float]] = {0: {0: 0.0}}
    for row in cost:
        nxt: dict[int, dict[int, float]] = {}
        for mask, by_k in states.items():
            for j, c in enumerate(row):
                if mask >> j & 1:
                    continue
                slot = nxt.setdefault(mask | 1 << j, {})
                add = 1 if flagged(c) else 0
                for k, total in by_k.items():
                    if total + c < slot.get(k + add, math.inf):
                        slot[k + add] = total + c
        states = nxt
    out: dict[int, float] = {}
    for by_k in states.values():
        for k, total in by_k.items():
            out[k] = min(out.get(k, math.inf), total)
    return out


def concepts_reference(files: Files) -> _Scores:
    """CA, NCS, CE, SD and SD binary (:mod:`finegrain.diagnose.concepts.metrics`), the matchings solved
    exactly over every full matching."""
    gt, rt = _objects(files["gt.json"]), _objects(files["retrieved.json"])
    vg, vr = {s for s, _ in gt}, {s for s, _ in rt}
    common = vg & vr
    dg, dr = sorted(vg - common), sorted(vr - common)
    cg, cr = Counter(s for s, _ in gt), Counter(s for s, _ in rt)
    exact = (sum(abs(cg[u] - cr[u]) for u in common), tuple(sorted(common)), tuple(dg), tuple(dr))
    if max(len(dg), len(dr), *(max(cg[u], cr[u]) for u in common), 0) > _MAX_SIDE:
        return _Scores(exact, None, None)  # past what the exact matching here solves quickly: names and CE only
    ca = len(common) / len(vg) if vg else None
    ncs = None
    if dg and dr:
        least = _least_costs([[-_path_similarity(a, b) for b in dr] for a in dg], lambda c: False)
        ncs = -least[0] / min(len(dg), len(dr))
    sd = 0.0
    counts: list[set[int]] = []
    n_pairs = 0
    for u in sorted(common):
        ag, ar = [a for s, a in gt if s == u], [a for s, a in rt if s == u]
        least = _least_costs([[abs(x - y) / min(x, y) for y in ar] for x in ag], lambda da: da >= TD)
        low = min(least.values())
        sd += low / min(len(ag), len(ar))
        counts.append({k for k, total in least.items() if total <= low + _TOLERANCE * max(1.0, abs(low))})
        n_pairs += min(len(ag), len(ar))
    binary = None
    if n_pairs:
        binary = frozenset(sum(combo) / n_pairs for combo in itertools.product(*counts))
    return _Scores(exact, (ca, ncs, sd), binary)


def _concepts_load(p: Path) -> Any:
    """``finegrain concepts -g GT --retrieved R`` (query-agnostic, TD 1): the scores and the tables it prints."""
    from rich.console import Console  # rich renders the tables; the CLI prints them the same way

    gt = read_object_set(p / "gt.json")
    rt = read_object_set(p / "retrieved.json")
    report = local_report(gt, rt, None, td=TD)
    console = Console(file=io.StringIO(), width=120)
    for table in render_local(report):
        console.print(table)
    json.dumps(report.comparison.scores.to_dict(), allow_nan=False)  # what --json prints must be JSON
    c, s = report.comparison, report.comparison.scores
    return (s.ce, c.common, c.gt_only, c.retrieved_only), (s.ca, s.ncs, s.sd), s.sd_binary


def _concepts_seeds() -> tuple[dict[str, bytes], ...]:
    def objs(*rows: tuple[str, list[float]]) -> bytes:  # one object a line: line edits keep the JSON valid
        body = ",\n".join(json.dumps({"synset": s, "bbox": b}) for s, b in rows)
        return ('{"objects": [\n' + body + "\n]}\n").encode()

    zebra_gt = objs(("zebra.n.01", [10, 10, 50, 40]), ("zebra.n.01", [70, 12, 20, 20]), ("hill.n.01", [0, 0, 300, 80]),
                    ("tree.n.01", [200, 5, 30, 90]), ("sky.n.01", [0, 0, 640, 100]))
    zebra_rt = objs(("zebra.n.01", [5, 5, 60, 40]), ("grassland.n.01", [0, 100, 640, 200]),
                    ("grass.n.01", [0, 300, 100, 10]), ("zebra.n.01", [100, 50, 1e-7, 1e7]),
                    ("zebra.n.01", [-1e7, 1e7, 2.5, 0.4]))
    tiny_gt = objs(("dog.n.01", [0, 0, 1e-7, 1e-7]), ("dog.n.01", [1, 1, 1e7, 1e7]), ("man.n.01", [0.5, 0.5, 1, 1]))
    tiny_rt = objs(("dog.n.01", [0, 0, 2, 2]), ("car.n.01", [3, 3, 1, 1]))
    return ({"gt.json": zebra_gt, "retrieved.json": zebra_rt}, {"gt.json": tiny_gt, "retrieved.json": tiny_rt})


def concepts_target() -> Target:
    return Target("concepts", _concepts_seeds(), _concepts_load, concepts_reference)
