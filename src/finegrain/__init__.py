"""finegrain: retrieval evaluation, diagnosis and search that gets the details right.

The Python API a ranx / ir_measures user can guess::

    from finegrain import Qrels, Run, evaluate, compare, fuse, load_dataset

    run = Run.from_file("run.trec"); run.save("run.json")   # TREC, BEIR .tsv, ranx JSON, Parquet, run.jsonl
    ev = evaluate(qrels, run, ["ndcg@10", "recall@100"])   # dicts, DataFrames, ranx/ir_measures objects, paths
    print(ev); ev.to_dict(); ev.per_query("ndcg@10"); ev.to_dataframe(); ev.save("out/run")
    print(compare(qrels, runs=[run, other], metrics=["ndcg@10"]))   # or compare([ev1, ev2]); .to_latex()

Only the core types are imported here; ``evaluate``, ``compare``, ``fuse``,
``load_dataset`` and ``pool`` load their modules on first use.

This root stands above every layer, so it also fills the hooks through which a
low type reaches a higher layer (:mod:`finegrain.hooks`): ``Run.from_file`` /
``Run.save`` the readers and writers of :mod:`finegrain.io`, ``Evaluation.save``
the results schema of :mod:`finegrain.results`. Each hook gets a loader from the
lazy table below; nothing is imported before its first call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from finegrain import hooks
from finegrain._lazy import lazy_exports
from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run
from finegrain.version import __version__

__all__ = [
    "Corpus", "Document", "Evaluation", "Qrels", "Queries", "Query", "Run", "SavedResults", "__version__", "compare",
    "evaluate", "fuse", "load_dataset", "pool",
]

if TYPE_CHECKING:
    from finegrain.build.pool import pool
    from finegrain.compare import compare
    from finegrain.datasets.registry import load_dataset
    from finegrain.evaluate.evaluate import evaluate
    from finegrain.evaluate.result import Evaluation
    from finegrain.results.saved import SavedResults
    from finegrain.retrieve.fusion.methods import fuse

# ``evaluate`` is the module itself (``finegrain.evaluate`` is callable); see finegrain._lazy
__getattr__, __dir__ = lazy_exports(__name__, {
    ".evaluate": "evaluate", ".evaluate.result": "Evaluation", ".compare": "compare",
    ".retrieve.fusion.methods": "fuse", ".datasets.registry": "load_dataset", ".build.pool": "pool",
    ".results.saved": "SavedResults",
})

_providers, _ = lazy_exports(__name__, {".io.formats": "TABLE_IO", ".results.saved": "SavedResults"})
hooks.TABLE_IO.fill(lambda: _providers("TABLE_IO"))
hooks.SAVED_RESULTS.fill(lambda: _providers("SavedResults"))
