"""Contrastive discrimination: does the target score above a near-identical contrastive candidate?

Fine-Grained Contrastive Discrimination Accuracy (FG-CDA) of Wang et al.,
"Benchmarking the Fine-Grained Discriminability in Image-Text Retrieval via
Controlled Contrastive Differences" (CCD), Eq. 1::

    FG-CDA = sum_(i,j) sum_k 1[ S(q_k, target_i) > S(q_k, contrastive_j) ]
             / sum_(i,j) (number of queries of the pair)

i.e. the share of (pair, query) where the target is strictly more similar to
the query than the contrastive candidate is (a tie is a failure), and
FG-CDE = 1 - FG-CDA (the paper's Tables 6-9: "the sum of FG-CDE and FG-CDA
equals 100%"). Reported overall, per category, per CCD category and per CCD
top-level group (pooled over the (pair, query) units of the group's
categories), each with its counts and a bootstrap confidence interval that
resamples *pairs* (all queries of a pair go together, since they share the
candidates), see :func:`pair_bootstrap_ci`.

A :class:`ContrastPair` holds a target and its contrastive candidate as text
and/or image, the queries that describe the target, and a category. It gives
records in up to three directions:

- ``text->text``: each query text vs the target and contrastive *texts*
  (queries encoded as ``kind="query"``, candidates as ``kind="passage"``);
- ``text->image``: each query text (or the target text when the pair has no
  queries) vs the target and contrastive *images* (CCD's T2I);
- ``image->text``: the target image vs the target and contrastive texts
  (CCD's I2T; SugarCrepe's own protocol).

With an image encoder (``clip:PATH``) the default directions are the two
cross-modal ones the pairs support; with a text encoder, ``text->text``.

Categories follow CCD's two-level taxonomy (Table 5): entity type / attribute /
relation / emotion, scene type / attribute, event type / attribute, style &
presentation; a dataset may keep its own categories and map them onto the
taxonomy (:data:`SUGARCREPE_TO_CCD`). :mod:`.ablation` crosses the two (CCD
category x dataset category, pair counts and FG-CDA per cell, empty and sparse
cells kept visible).

:mod:`.pool` retrieves from a pool instead of a pair (CCD Tables 2 and 4):
R@1/R@5 with the targets alone and with every contrastive negative added, and
the cosine of each contrastive pair per category (CCD Fig. 5).
"""

from finegrain.diagnose.contrastive.ablation import (
    UNMAPPED,
    AblationCell,
    AblationTable,
    ablation_table,
)
from finegrain.diagnose.contrastive.categories import (
    CCD_CATEGORIES,
    CCD_GROUPS,
    GROUP_ORDER,
    SUGARCREPE_MAPPING_NOTES,
    SUGARCREPE_TO_CCD,
    canonical_ccd,
    ccd_group,
)
from finegrain.diagnose.contrastive.metrics import (
    Accuracy,
    DirectionReport,
    accuracy,
    pair_bootstrap_ci,
    report,
)
from finegrain.diagnose.contrastive.pool import (
    POOL_KS,
    PairCosine,
    PoolReport,
    PoolSetting,
    PoolUnit,
    RecallAt,
    RecallChange,
    best_relevant_ranks,
    pool_retrieval,
)
from finegrain.diagnose.contrastive.records import (
    DIRECTIONS,
    ContrastPair,
    ContrastRecord,
    Direction,
    default_directions,
    expand,
    make_pair,
)
from finegrain.diagnose.contrastive.run import ContrastOutcome, run_contrast
from finegrain.diagnose.contrastive.scoring import (
    ContrastScores,
    ImageEncoder,
    MemoEncoder,
    TextEncoder,
    score,
)

__all__ = [
    "POOL_KS",
    "UNMAPPED",
    "AblationCell",
    "AblationTable",
    "Accuracy",
    "CCD_CATEGORIES",
    "CCD_GROUPS",
    "ContrastOutcome",
    "ContrastPair",
    "ContrastRecord",
    "ContrastScores",
    "DIRECTIONS",
    "Direction",
    "DirectionReport",
    "GROUP_ORDER",
    "ImageEncoder",
    "MemoEncoder",
    "PairCosine",
    "PoolReport",
    "PoolSetting",
    "PoolUnit",
    "RecallAt",
    "RecallChange",
    "SUGARCREPE_MAPPING_NOTES",
    "SUGARCREPE_TO_CCD",
    "TextEncoder",
    "ablation_table",
    "accuracy",
    "best_relevant_ranks",
    "canonical_ccd",
    "ccd_group",
    "default_directions",
    "expand",
    "make_pair",
    "pair_bootstrap_ci",
    "pool_retrieval",
    "report",
    "run_contrast",
    "score",
]
