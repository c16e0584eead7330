"""The saved results of the two probes: ``finegrain perturb`` and ``finegrain contrast``.

:class:`PerturbResults` is ``DIR/results.json`` of ``finegrain perturb``
(schema ``finegrain.perturb/1``): per perturbation family, where the best
relevant item moved (Table 4, :class:`RankChangeCounts`) and the paired
metric deltas with bootstrap intervals (Table 5, :class:`MetricDeltaCell`).
:class:`PerturbationRecord` is one line of ``perturbations.jsonl`` beside it.
:class:`ContrastResults` is ``DIR/results.json`` of ``finegrain contrast``
(schema ``finegrain.contrast/1``): FG-CDA per slice and direction, the CCD
ablation table, and (with ``--pool``) contrastive-pool retrieval.

Each is a :class:`~finegrain.results.schema.Saved` kind: the writers build
these objects and write :meth:`~finegrain.results.schema.Saved.to_json`, the
report reads them with :meth:`~finegrain.results.schema.Saved.read`, so a
damaged file fails on load with one error naming the file and the JSON path.
Field names are the JSON keys (an alias where a key is no Python name); a
section that files written by older versions lack has a default and is left
out of the JSON when it was not given.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import Field, Strict, ValidationInfo, field_validator

from finegrain.results.schema import Count, Flag, Int, Number, Saved, Share, Text

PERTURB_SCHEMA: Final = "finegrain.perturb/1"
CONTRAST_SCHEMA: Final = "finegrain.contrast/1"

Percent = Annotated[float, Strict(), Field(ge=0.0, le=100.0, allow_inf_nan=False)]
"""A percentage in [0, 100]."""
Rank = Annotated[int, Strict(), Field(ge=1)]
"""A 1-based rank."""
Confidence = Annotated[float, Strict(), Field(gt=0.0, lt=1.0, allow_inf_nan=False)]
"""The confidence level of an interval, in (0, 1)."""
Direction = Literal["text->text", "text->image", "image->text"]
"""What is scored against what in a contrastive pair: the query's modality, then the candidates'."""


# --------------------------------------------------------------------------- finegrain perturb


class RankPercents(Saved):
    """The shares of Table 4 in percent of the perturbed queries with a relevant item (None when there are none)."""

    lower: Percent | None
    higher: Percent | None
    same: Percent | None


class RankChangeCounts(Saved):
    """Table 4 for one family: the best relevant item moved lower / higher / stayed after the perturbation."""

    n_perturbed: Count
    lower: Count
    higher: Count
    same: Count
    n_no_relevant: Count
    n: Count  # perturbed queries with a relevant item: the denominator of ``percent``
    percent: RankPercents


class MetricDeltaCell(Saved):
    """Table 5 for one family and metric: means over the ``n`` paired queries, their difference and its CI,
    and the dataset-level value with the perturbed queries substituted (None: undefined)."""

    metric: Text
    n: Count
    original: Number | None
    perturbed: Number | None
    delta: Number | None
    ci_low: Number | None
    ci_high: Number | None
    dataset_original: Number | None
    dataset_perturbed: Number | None


class FamilyResults(Saved):
    """One perturbation family: how many queries it perturbed, Table 4, Table 5 per metric, and each perturbed
    query's best-relevant rank before and after (None: not retrieved, or no relevant item)."""

    n_perturbed: Count
    share_of_queries: Share
    rank_change: RankChangeCounts
    metrics: dict[str, MetricDeltaCell]
    best_relevant_rank: dict[str, tuple[Rank | None, Rank | None]]


class PlainProtocol(Saved):
    """What ``finegrain caption-corpus`` reports for the same dataset name and encoder."""

    recall_1: Share = Field(alias="recall@1")
    recall_5: Share = Field(alias="recall@5")
    recall_10: Share = Field(alias="recall@10")
    mrr_5: Share = Field(alias="mrr@5")
    mrr_10: Share = Field(alias="mrr@10")
    mrr: Share
    median_rank: Number
    fail_rate_1: Share = Field(alias="fail_rate@1")


class CaptionProtocol(Saved):
    """How a caption-corpus perturbation was run (only on ``caption-corpus:...`` datasets)."""

    name: Literal["caption-corpus"]
    description: Text
    plain_protocol: PlainProtocol
    ranks: Text
    perturbed_queries: Text


class DatasetProvenance(Saved):
    """The dataset perturbed; a caption corpus adds its source, sentence count and split (kept as written)."""

    name: Text
    source: Text | None = None
    lang: Text
    n_queries: Count
    n_documents: Count
    n_corpus_sentences: Count | None = None


class RetrieverProvenance(Saved):
    """The retriever's name and (for an encoder) its spec and model id; the rest of its configuration is kept
    as written."""

    name: Text
    encoder: Text | None = None
    model_id: Text | None = None


class PerturbBootstrap(Saved):
    n_resamples: Count
    confidence: Confidence
    method: Text
    seed: Int


class PerturbProvenance(Saved):
    """Where the perturbation results come from: the run's settings and the environment it ran in."""

    dataset: DatasetProvenance
    retriever: RetrieverProvenance
    families: list[Text]
    seed: Int
    color_threshold: Number
    corpus_colors: list[Text]
    negation_rules: list[Text]
    top_k: Count | None
    bootstrap: PerturbBootstrap
    n_retrieved_queries: Count
    finegrain_version: Text | None = None
    python: Text | None = None
    machine: dict[str, Any] | None = None
    command: Text | None = None
    created: Text | None = None
    retrieve_seconds: Number | None = None
    total_seconds: Number | None = None


class PerturbResults(Saved):
    """``results.json`` of ``finegrain perturb``: Tables 4 and 5 per family, with the run's provenance.

    ``original`` holds the unperturbed value of each metric; every family has
    a Table-5 cell for each of ``metrics``.
    """

    schema_: Literal["finegrain.perturb/1"] = Field(alias="schema")
    dataset: Text
    lang: Text
    retriever: Text
    n_queries: Count
    metrics: list[Text]
    confidence: Confidence
    original: dict[str, Number | None]
    families: dict[str, FamilyResults]
    protocol: CaptionProtocol | None = None
    provenance: PerturbProvenance

    @field_validator("families")
    @classmethod
    def _every_metric(cls, families: dict[str, FamilyResults], info: ValidationInfo) -> dict[str, FamilyResults]:
        for fam, e in families.items():
            missing = [m for m in info.data.get("metrics", ()) if m not in e.metrics]
            if missing:
                raise ValueError(f"a cell for every metric of 'metrics' in each family ({fam!r} has none for "
                                 f"{missing[0]!r})")
        return families


class PerturbationRecord(Saved):
    """One line of ``perturbations.jsonl``: ``perturbed`` is ``original`` with ``original[start:end]``
    (``word``) replaced by ``replacement``."""

    qid: Text
    family: Text
    original: Text
    perturbed: Text
    word: Text
    replacement: Text
    start: Count
    end: Count
    detail: dict[str, Any] | None = None

    @field_validator("end")
    @classmethod
    def _span_inside(cls, end: int, info: ValidationInfo) -> int:
        start, original = info.data.get("start"), info.data.get("original")
        if start is not None and original is not None and not start <= end <= len(original):
            raise ValueError(f"an offset from start ({start}) to the length of original ({len(original)})")
        return end


# --------------------------------------------------------------------------- finegrain contrast


class PairsSource(Saved):
    """Where the contrastive pairs come from; SugarCrepe adds its protocol and category mapping."""

    name: Text
    path: Text
    protocol: Text | None = None
    category_to_ccd: dict[str, Text] | None = None
    mapping_notes: dict[str, Text] | None = None
    n_pairs: Count


class ContrastEncoder(Saved):
    """The encoder spec as given and its model id; the rest of its configuration is kept as written."""

    spec: Text
    model_id: Text | None = None


class ContrastBootstrap(Saved):
    resamples: Count
    seed: Int | None
    confidence: Confidence
    unit: Text


class SliceAccuracy(Saved):
    """FG-CDA of one slice: ``n`` (pair, query) units of ``n_pairs`` pairs, ``correct`` of them (``ties``
    count as failures), the pair-bootstrap interval, FG-CDE = 1 - FG-CDA, the mean score margin."""

    name: Text
    n_pairs: Count
    n: Count
    correct: Count
    ties: Count
    fg_cda: Share
    fg_cda_ci: tuple[Share, Share]
    fg_cde: Share
    mean_margin: Number


class DirectionResults(Saved):
    """FG-CDA of one direction: overall, per category, per CCD category and per CCD group."""

    direction: Direction
    overall: SliceAccuracy
    by_category: list[SliceAccuracy]
    by_ccd_category: list[SliceAccuracy]
    by_ccd_group: list[SliceAccuracy]
    unmapped_units: Count


class AblationCell(Saved):
    """One cell of the ablation table (a row or column total has no ``sparse``); FG-CDA is None without units."""

    ccd_category: Text
    category: Text
    n_pairs: Count
    n: Count
    correct: Count
    fg_cda: Share | None
    sparse: Flag = False

    @field_validator("fg_cda")
    @classmethod
    def _defined_with_pairs(cls, fg_cda: float | None, info: ValidationInfo) -> float | None:
        if fg_cda is None and info.data.get("n_pairs"):
            raise ValueError("a number in [0, 1] since the cell has pairs")
        return fg_cda


class AblationTable(Saved):
    """CCD category (rows) x dataset category (columns) of one direction, with row and column totals."""

    direction: Direction
    rows: list[Text]
    columns: list[Text]
    groups: dict[str, Text]
    cells: list[list[AblationCell]]
    row_totals: list[AblationCell]
    column_totals: list[AblationCell]
    total: AblationCell
    min_pairs: Count
    ccd_with_data: list[Text]
    n_ccd_categories: Count

    @field_validator("cells")
    @classmethod
    def _cells_fill_the_table(cls, cells: list[list[AblationCell]],
                              info: ValidationInfo) -> list[list[AblationCell]]:
        rows, columns = info.data.get("rows"), info.data.get("columns")
        if rows is not None and columns is not None and (
                len(cells) != len(rows) or any(len(r) != len(columns) for r in cells)):
            raise ValueError(f"{len(rows)} rows of {len(columns)} cells (one per row and column)")
        return cells

    @field_validator("row_totals", "column_totals")
    @classmethod
    def _one_total_each(cls, totals: list[AblationCell], info: ValidationInfo) -> list[AblationCell]:
        of = info.data.get("rows" if info.field_name == "row_totals" else "columns")
        if of is not None and len(totals) != len(of):
            raise ValueError(f"{len(of)} totals (one per {'row' if info.field_name == 'row_totals' else 'column'})")
        return totals


class RecallAt(Saved):
    """R@k of one pool: ``hits`` of ``n`` units have a relevant candidate in the top ``k``."""

    k: Count
    hits: Count
    n: Count
    value: Share
    ci: tuple[Share, Share]


class PoolSetting(Saved):
    """One pool (without or with the negatives): its size and R@k under the key ``recall@k``."""

    __pydantic_extra__: dict[str, RecallAt] = Field(init=False)

    name: Text
    n_candidates: Count

    @property
    def recall(self) -> dict[str, RecallAt]:
        """``{"recall@k": R@k}`` for every k saved."""
        return dict(self.__pydantic_extra__ or {})


class RecallChange(Saved):
    """R@k with the negatives minus R@k without, its interval, and the units pushed out of the top k."""

    k: Count
    delta: Number
    ci: tuple[Number, Number]
    lost: Count


class PairCosine(Saved):
    """Mean cosine of the contrastive pairs of one slice, its interval over pairs, the smallest and largest."""

    name: Text
    n_pairs: Count
    mean: Number
    ci: tuple[Number, Number]
    min: Number
    max: Number


class PairCosines(Saved):
    overall: PairCosine
    by_category: list[PairCosine]
    by_ccd_category: list[PairCosine]


class PoolUnit(Saved):
    """One (item, query) unit: where its best relevant candidate ranks in each pool."""

    item: Text
    query: Text
    n_relevant: Count
    rank_without: Rank
    rank_with: Rank


class PoolDirection(Saved):
    """Contrastive-pool retrieval of one direction: both pools, the change per k, the pair cosines."""

    direction: Direction
    n_units: Count
    n_items: Count
    n_excluded_query_in_pool: Count
    without_negatives: PoolSetting
    with_negatives: PoolSetting
    change: dict[str, RecallChange]
    pair_cosine: PairCosines
    units: list[PoolUnit] | None = None


class ContrastPool(Saved):
    protocol: Text
    directions: list[PoolDirection]


class ContrastRecord(Saved):
    """One scored (pair, query) unit of a direction; ``query``, ``target`` and ``contrastive`` are texts or
    image paths as the direction says."""

    pair_id: Text
    category: Text
    ccd_category: Text | None
    query: Text
    target: Text
    contrastive: Text
    target_score: Number
    contrastive_score: Number
    correct: Flag


class ContrastResults(Saved):
    """``results.json`` of ``finegrain contrast``: FG-CDA per direction and slice, the ablation tables, and
    optionally the contrastive-pool retrieval and every scored unit."""

    schema_: Literal["finegrain.contrast/1"] = Field(alias="schema")
    tool: Text
    version: Text
    pairs: PairsSource
    encoder: ContrastEncoder
    bootstrap: ContrastBootstrap
    metric: Text
    directions: list[DirectionResults]
    skipped_directions: dict[Direction, Text]
    ablation: list[AblationTable] = []
    pool: ContrastPool | None = None
    records: dict[Direction, list[ContrastRecord]] | None = None


__all__ = [
    "CONTRAST_SCHEMA", "PERTURB_SCHEMA", "AblationCell", "AblationTable", "CaptionProtocol", "Confidence",
    "ContrastBootstrap",
    "ContrastEncoder", "ContrastPool", "ContrastRecord", "ContrastResults", "DatasetProvenance", "Direction",
    "DirectionResults", "FamilyResults", "MetricDeltaCell", "PairCosine", "PairCosines", "PairsSource",
    "PerturbBootstrap", "PerturbProvenance", "PerturbResults", "PerturbationRecord", "Percent", "PlainProtocol",
    "PoolDirection", "PoolSetting", "PoolUnit", "Rank", "RankChangeCounts", "RankPercents", "RecallAt",
    "RecallChange", "RetrieverProvenance", "SliceAccuracy",
]
