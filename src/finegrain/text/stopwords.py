"""Stop-word lists by name: ``en`` (the English list shipped with bm25s) and ``zh`` (function words, classifiers, pronouns)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from types import MappingProxyType

from finegrain.errors import UnknownNameError

ZH_STOPWORDS = frozenset(
    "的 地 得 了 着 过 在 是 有 被 把 和 与 及 以及 跟 同 或 或者 还有 并且 而且 一 一个 一只 一些 一张 一种 个 只 张 "  # noqa: SIM905
    "上 里 中 这 那 这个 那个 这些 那些 我 你 他 她 它 我们 你们 他们 们 吗 呢 吧 啊 关于 对于 有关 正在 进行".split()
)


def _english() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


_LISTS: Mapping[str, Callable[[], frozenset[str]]] = MappingProxyType({
    "en": _english,
    "zh": lambda: ZH_STOPWORDS,
})
STOPWORD_LISTS: tuple[str, ...] = tuple(_LISTS)


@cache
def stopwords(name: str) -> frozenset[str]:
    """The stop-word list called ``name`` (one of :data:`STOPWORD_LISTS`)."""
    if name not in _LISTS:
        raise UnknownNameError("stop-word list", name, STOPWORD_LISTS)
    return _LISTS[name]()
