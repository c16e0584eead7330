"""Languages: the one :class:`Lang` type, parsing a user's language code, and the one detector.

finegrain speaks two languages, ``zh`` and ``en``. PhotoBench writes Chinese
``cn``; that spelling is mapped in its reader (:mod:`finegrain.io.photobench`)
and nowhere else.
"""

from __future__ import annotations

import re
from enum import StrEnum

from finegrain.errors import FinegrainError


class Lang(StrEnum):
    """A language finegrain tokenizes and plans queries in; compares equal to its code (``Lang.ZH == "zh"``)."""

    ZH = "zh"
    EN = "en"


LANGS: tuple[Lang, ...] = tuple(Lang)

# Other names users write for a language (lower-cased). "cn" is PhotoBench's file spelling, still accepted on
# input; finegrain itself writes "zh" (the PhotoBench reader maps its "cn" fields, io/photobench.py).
_ALIASES = {"cn": Lang.ZH, "zh-cn": Lang.ZH, "zh-hans": Lang.ZH, "chinese": Lang.ZH, "english": Lang.EN,
            "en-us": Lang.EN}

# CJK unified ideographs, extension A, and compatibility ideographs.
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def parse_lang(value: str | Lang) -> Lang:
    """The :class:`Lang` for ``value`` (``"zh"``, ``"en"``, ``"Chinese"``, ``"zh-CN"``, ...); a clear error otherwise."""
    if isinstance(value, Lang):
        return value
    if not isinstance(value, str):
        raise FinegrainError(f"language {value!r} is a {type(value).__name__}, not a string", "use 'zh' or 'en'")
    key = value.strip().lower()
    try:
        return Lang(key)
    except ValueError:
        pass
    if key in _ALIASES:
        return _ALIASES[key]
    raise FinegrainError(f"unknown language {value!r}", "use 'zh' or 'en'")


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Chinese (CJK) character."""
    return CJK.search(text) is not None


def detect_lang(text: str, *, min_share: float = 0.0) -> Lang:
    """``zh`` when more than ``min_share`` of the non-space characters of ``text`` are Chinese, else ``en``.

    ``min_share=0`` (the default) means any Chinese character makes a text ``zh``
    (a query: "杭州 2023" is zh); a whole collection is judged with a share, e.g.
    ``detect_lang(" ".join(query_texts), min_share=0.3)``.
    """
    if min_share <= 0:
        return Lang.ZH if has_cjk(text) else Lang.EN
    letters = [c for c in text if not c.isspace()]
    if not letters:
        return Lang.EN
    cjk = sum(1 for c in letters if CJK.match(c))
    return Lang.ZH if cjk / len(letters) > min_share else Lang.EN
