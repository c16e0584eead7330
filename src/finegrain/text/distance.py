"""String edit distance: one optimal-string-alignment (restricted Damerau–Levenshtein) function
for every caller (the album's did-you-mean, the error taxonomy's typo rule)."""

from __future__ import annotations


def osa_distance(a: str, b: str, limit: int | None = None) -> int:
    """Optimal-string-alignment (restricted Damerau–Levenshtein) distance between ``a`` and ``b``.

    With ``limit``, any distance above it is reported as ``limit + 1`` (a cheaper early stop)."""
    if a == b:
        return 0
    if limit is not None and abs(len(a) - len(b)) > limit:
        return limit + 1
    n, m = len(a), len(b)
    prev2: list[int] = []
    prev = list(range(m + 1))
    for i in range(1, n + 1):
        cur = [i] + [0] * m
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            best = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                best = min(best, prev2[j - 2] + 1)
            cur[j] = best
        if limit is not None and min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    d = prev[m]
    return d if limit is None or d <= limit else limit + 1
