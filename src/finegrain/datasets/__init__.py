"""Named datasets and folders in a known format, each a (corpus, queries, qrels, meta).

>>> from finegrain.datasets import load_dataset
>>> ds = load_dataset("embedded/captions-en")   # ships with finegrain, needs no data root
>>> len(ds.corpus), len(ds.queries)
(80, 37)
"""

from finegrain.datasets.registry import (
    DEFAULT_DATASET,
    Dataset,
    DatasetInfo,
    dataset_names,
    detect_format,
    list_datasets,
    load_dataset,
    load_folder,
)

__all__ = [
    "DEFAULT_DATASET",
    "Dataset",
    "DatasetInfo",
    "dataset_names",
    "detect_format",
    "list_datasets",
    "load_dataset",
    "load_folder",
]
