"""Diagnosis: why a run fails -- tagged false negatives and false positives (:func:`analyse_errors`)."""

from finegrain.diagnose.errors import (
    TAGS,
    ErrorAnalysis,
    ErrorItem,
    Example,
    QueryErrors,
    analyse_errors,
)

__all__ = ["TAGS", "ErrorAnalysis", "ErrorItem", "Example", "QueryErrors", "analyse_errors"]
