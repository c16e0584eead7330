"""Real ``finegrain perturb`` and ``finegrain contrast`` folders made by the commands on cheap inputs.

- ``perturb``: bm25-okapi on the embedded English captions (every family);
- ``caption``: ``caption-corpus:flickr8k/test`` on a five-image Flickr8k folder written here, with the
  bag-of-words encoder of :mod:`dense_fakes` in place of MiniLM (the saved ``protocol`` section);
- ``contrast``: a small pairs file with the same fake encoder, ``--pool`` (pool, ablation and records).

Plus helpers to edit one value of a saved JSON file by its path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dense_fakes import BagOfWordsEncoder
from finegrain.cli.main import main
from finegrain.diagnose.perturb import caption_corpus
from finegrain.retrieve.dense.encoders import registry

PAIRS = [
    {"id": "a1", "category": "add_att", "target": "a red car on the road", "contrastive": "a red car on the green road",
     "queries": ["red car parked", "a red car"], "ccd_category": "entity attribute"},
    {"id": "a2", "category": "add_att", "target": "a green door", "contrastive": "a green wooden door",
     "queries": ["green door", "the door is green"], "ccd_category": "entity attribute"},
    {"id": "b1", "category": "swap_obj", "target": "dog chases cat", "contrastive": "cat chases dog",
     "queries": ["a dog chases a cat"], "ccd_category": "event attribute"},
    {"id": "c1", "category": "odd", "target": "two apples on a plate", "contrastive": "two pears on a plate",
     "queries": ["two apples", "apples on a plate"]},
]
CAPTIONS = {
    "1.jpg": ["a red dog runs on grass", "dog running grass", "brown dog on a lawn", "dog plays outside"],
    "2.jpg": ["a big man surfs a wave", "surfer riding wave", "man with surfboard", "surfing man"],
    "3.jpg": ["a small girl rides a white bike", "girl with bicycle", "child riding bike", "bike girl"],
    "4.jpg": ["a black dog sits on grass", "black dog", "a dog sitting", "dog on the grass"],
    "5.jpg": ["an old man smiles", "elderly man", "man smiling", "a happy old man"],
}
KINDS = ("perturb", "caption", "contrast")


def make_probe_folders(base: Path) -> dict[str, Path]:
    """The three folders under ``base``, by kind."""
    pairs = base / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(p) + "\n" for p in PAIRS), encoding="utf-8")
    flickr = base / "data" / "flickr8k"
    flickr.mkdir(parents=True)
    (flickr / "Flickr8k.token.txt").write_text(
        "".join(f"{im}#{k}\t{c}\n" for im, caps in CAPTIONS.items() for k, c in enumerate(caps)), encoding="utf-8")
    (flickr / "Flickr_8k.testImages.txt").write_text("".join(f"{im}\n" for im in CAPTIONS), encoding="utf-8")
    out = {kind: base / kind for kind in KINDS}
    assert main(["perturb", "--dataset", "embedded/captions-en", "--retriever", "bm25-okapi", "--resamples", "200",
                 "--out", str(out["perturb"]), "-q"]) == 0
    with pytest.MonkeyPatch.context() as mp:
        fake = lambda spec, **kw: BagOfWordsEncoder(64, model_id=f"fake/{spec}")  # noqa: E731
        mp.setattr(registry, "get_encoder", fake)
        mp.setattr(caption_corpus, "get_encoder", fake)
        mp.setenv("FINEGRAIN_DATA", str(base / "data"))
        mp.setenv("FINEGRAIN_CACHE", str(base / "cache"))
        assert main(["perturb", "--dataset", "caption-corpus:flickr8k/test", "--retriever", "minilm",
                     "--family", "color-all,size,negation", "--resamples", "200", "--out", str(out["caption"]),
                     "-q"]) == 0
        assert main(["contrast", "--pairs", str(pairs), "--encoder", "bow", "--pool", "--no-cache",
                     "--resamples", "200", "--out", str(out["contrast"]), "-q"]) == 0
    return out


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


Path_ = tuple[str | int, ...]
DELETE = object()  # as the new value: remove the key


def edited(data: Any, path: Path_, value: Any) -> Any:
    """A deep copy of ``data`` with the value at ``path`` replaced by ``value`` (or removed: :data:`DELETE`)."""
    out = json.loads(json.dumps(data))
    *head, last = path
    node = out
    for key in head:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return out


def dotted(path: Path_) -> str:
    """The JSON path as an error names it."""
    return ".".join(str(p) for p in path)


# One-value edits of a written results.json: (folder, JSON path, new value, the path the error names ("": the
# edited one), how the error starts to show what it found). Each is one error on load.
EDITS: list[tuple[str, Path_, Any, str, str]] = [
    ("perturb", ("families", "antonym", "metrics", "ndcg@10", "ci_low"), "0.1", "", '"0.1"'),
    ("perturb", ("n_queries",), "3", "", '"3"'),
    ("perturb", ("n_queries",), 3.0, "", "3.0"),
    ("perturb", ("n_queries",), -1, "", "-1"),
    ("perturb", ("families", "typo", "rank_change", "lower"), True, "", "true"),
    ("perturb", ("families", "negation", "share_of_queries"), 1.5, "", "1.5"),
    ("perturb", ("families", "negation", "rank_change", "percent", "same"), 157.6, "", "157.6"),
    ("perturb", ("families", "antonym", "best_relevant_rank", "q29"), [0, 1], "families.antonym.best_relevant_rank.q29.0",
     "0"),
    ("perturb", ("confidence",), 1.0, "", "1.0"),
    ("perturb", ("provenance",), DELETE, "", "nothing"),
    ("perturb", ("families", "typo", "rank_change", "n"), DELETE, "", "nothing"),
    ("perturb", ("families", "antonym", "rank_change"), [], "", "[]"),
    ("perturb", ("families",), [], "", "[]"),
    ("perturb", ("metrics",), "ndcg@10", "", '"ndcg@10"'),
    ("perturb", ("families", "typo", "metrics", "mrr"), DELETE, "families", "{"),
    ("caption", ("protocol", "plain_protocol", "recall@1"), "0.3", "", '"0.3"'),
    ("caption", ("protocol", "plain_protocol", "median_rank"), DELETE, "", "nothing"),
    ("caption", ("protocol", "name"), "other", "", '"other"'),
    ("contrast", ("pairs", "n_pairs"), "twelve", "", '"twelve"'),
    ("contrast", ("bootstrap", "resamples"), 200.0, "", "200.0"),
    ("contrast", ("bootstrap", "confidence"), 0, "", "0"),
    ("contrast", ("directions", 0, "overall", "fg_cda"), 83.6, "", "83.6"),
    ("contrast", ("directions", 0, "overall", "fg_cda_ci"), [0.5], "directions.0.overall.fg_cda_ci.1", "nothing"),
    ("contrast", ("directions", 0, "by_category"), {}, "", "{}"),
    ("contrast", ("directions", 0, "overall"), [], "", "[]"),
    ("contrast", ("directions", 0, "direction"), "sideways", "", '"sideways"'),
    ("contrast", ("directions", 0, "unmapped_units"), DELETE, "", "nothing"),
    ("contrast", ("ablation", 0, "cells", 0, 0, "n_pairs"), -1, "", "-1"),
    ("contrast", ("ablation", 0, "cells", 0), [], "ablation.0.cells", "[["),
    ("contrast", ("ablation", 0, "row_totals", 1, "fg_cda"), None, "", "null"),  # entity attribute: has pairs
    ("contrast", ("pool", "directions", 0, "change", "recall@1", "delta"), "x", "", '"x"'),
    ("contrast", ("pool", "directions", 0, "without_negatives", "recall@1", "value"), 2, "", "2"),
    ("contrast", ("pool", "directions", 0, "units", 0, "rank_with"), 0, "", "0"),
    ("contrast", ("records", "text->text", 0, "correct"), "yes", "", '"yes"'),
    ("contrast", ("records", "text->text", 0, "target_score"), None, "", "null"),
]
