"""The metric grammar: canonical keys, aliases, round trips and clear errors."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain.cli.main import main
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.metrics.spec import (
    MAX_CUTOFF,
    Cutoff,
    MetricSpec,
    metric_cutoff,
    metric_names,
    metric_params,
    parse_metric,
    parse_metrics,
)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("ndcg@10", "ndcg@10"),
        ("nDCG@10", "ndcg@10"),
        ("NDCG", "ndcg"),
        ("ndcg_cut_10", "ndcg@10"),
        ("ndcg_cut.10", "ndcg@10"),
        ("recall@50", "recall@50"),
        ("R@50", "recall@50"),
        ("recall_100", "recall@100"),
        ("precision@5", "precision@5"),
        ("P@5", "precision@5"),
        ("P_5", "precision@5"),
        ("P.5", "precision@5"),
        ("hit_rate@1", "hit_rate@1"),
        ("success@1", "hit_rate@1"),
        ("success_10", "hit_rate@10"),
        ("map@100", "map@100"),
        ("map_cut_100", "map@100"),
        ("AP", "map"),
        ("mrr@10", "mrr@10"),
        ("MRR@10", "mrr@10"),
        ("recip_rank", "mrr"),
        ("RR@10", "mrr@10"),
        ("Rprec", "r_precision"),
        ("r_precision", "r_precision"),
        ("median_rank", "median_rank"),
        ("MedR@100", "median_rank@100"),
        ("fail_rate", "fail_rate@1"),
        ("fail_rate@5", "fail_rate@5"),
        ("ndcg@10(rel=2)", "ndcg@10(rel=2)"),
        ("ndcg@10(rel=1)", "ndcg@10"),
        ("P(rel=2)@5", "precision@5(rel=2)"),
        (" ndcg @ 10 ( rel = 2 ) ", "ndcg@10(rel=2)"),
        ("reject_f1", "reject_f1"),
        ("reject_precision", "reject_precision"),
        ("reject_recall(rel=2)", "reject_recall(rel=2)"),
        ("set_precision", "set_precision"),
        ("set_recall@20", "set_recall@20"),
        ("set_f1", "set_f1"),
        ("set_F", "set_f1"),
        ("set_f2", "set_f2"),
        ("set_fbeta(beta=0.5)", "set_fbeta(beta=0.5)"),
        ("set_fbeta(beta=2.0)", "set_fbeta(beta=2)"),
        ("set_fbeta(rel=2, beta=3)", "set_fbeta(rel=2,beta=3)"),
        ("pair_precision", "pair_precision"),
        ("pair_f1@10", "pair_f1@10"),
    ],
)
def test_canonical_keys(text: str, key: str) -> None:
    spec = parse_metric(text)
    assert spec.key == key
    assert str(spec) == key
    assert parse_metric(key) == spec


def test_spec_fields_and_family() -> None:
    s = parse_metric("P(rel=2)@5")
    assert (s.name, s.k, s.rel, s.beta) == ("precision", 5, 2, None)
    assert s.family == "ranking"
    assert parse_metric("set_f1").family == "set"
    assert parse_metric("pair_recall").family == "pair"
    assert parse_metric("reject_f1").family == "reject"
    assert parse_metric(s) is s


def test_parse_metrics_splits_commas_outside_parentheses_and_drops_duplicates() -> None:
    specs = parse_metrics(["ndcg@10,nDCG@10, recall@50", "set_fbeta(beta=2,rel=2)", "P@5"])
    assert [s.key for s in specs] == ["ndcg@10", "recall@50", "set_fbeta(rel=2,beta=2)", "precision@5"]
    assert [s.key for s in parse_metrics("map,mrr@10")] == ["map", "mrr@10"]


def test_unknown_name_says_did_you_mean() -> None:
    with pytest.raises(UnknownNameError) as e:
        parse_metric("ndgc@10")
    assert "ndcg" in e.value.suggestions
    msg = str(e.value)
    assert "did you mean" in msg and "'ndgc'" in msg and "\n" not in msg


@pytest.mark.parametrize("text", ["recal@10", "hitrate_at@1", "mrrr", "rejectf1"])
def test_near_names_are_suggested(text: str) -> None:
    with pytest.raises(UnknownNameError) as e:
        parse_metric(text)
    assert e.value.suggestions, text


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("ndcg@0", "'0'"),
        ("ndcg@x", "'x'"),
        ("ndcg@-1", "'-1'"),
        ("ndcg@1.5", "'1.5'"),
        ("ndcg@", "''"),
        ("precision", "needs a cutoff"),
        ("r_precision@10", "takes no cutoff"),
        ("reject_f1@5", "takes no cutoff"),
        ("ndcg@10(rel=0)", "rel=0"),
        ("ndcg@10(rel=x)", "'x'"),
        ("ndcg@10(foo=1)", "'foo'"),
        ("ndcg@10(rel)", "'rel'"),
        ("ndcg@10(rel=2,rel=3)", "twice"),
        ("set_fbeta", "needs a beta"),
        ("set_fbeta(beta=-1)", "beta=-1"),
        ("set_fbeta(beta=zero)", "'zero'"),
        ("ndcg@10(beta=2)", "'beta'"),
        ("ndcg@10@5", "'10@5'"),
        ("", "cannot read"),
    ],
)
def test_bad_specs_name_the_value_and_the_fix(text: str, needle: str) -> None:
    with pytest.raises(FinegrainError) as e:
        parse_metric(text)
    assert not isinstance(e.value, UnknownNameError)
    assert needle in str(e.value)
    assert e.value.hint, "every spec error says how to fix it"


def test_direct_construction_is_validated() -> None:
    assert MetricSpec("ndcg", 10).key == "ndcg@10"
    with pytest.raises(UnknownNameError):
        MetricSpec("ndgc", 10)
    with pytest.raises(FinegrainError):
        MetricSpec("ndcg", 0)
    with pytest.raises(FinegrainError):
        MetricSpec("ndcg", True)  # type: ignore[arg-type]
    with pytest.raises(FinegrainError):
        MetricSpec("recall", 5, rel=0)
    with pytest.raises(FinegrainError):
        parse_metric(10)  # type: ignore[arg-type]
    with pytest.raises(FinegrainError):
        parse_metrics("  ,  ")


def test_specs_are_frozen_and_hashable() -> None:
    s = parse_metric("ndcg@10")
    with pytest.raises(AttributeError):
        s.k = 5  # type: ignore[misc]
    assert len({s, parse_metric("nDCG@10"), parse_metric("ndcg_cut_10")}) == 1


@st.composite
def specs(draw: st.DrawFn) -> MetricSpec:
    name = draw(st.sampled_from(metric_names()))
    if metric_cutoff(name) is Cutoff.NONE:
        k = None
    elif metric_cutoff(name) is Cutoff.REQUIRED:
        k = draw(st.integers(1, 1000))
    else:
        k = draw(st.none() | st.integers(1, 1000))
    rel = draw(st.integers(1, 5)) if "rel" in metric_params(name) else 1  # judged takes no rel
    beta = draw(st.floats(0.01, 100, allow_nan=False)) if name == "set_fbeta" else None
    return MetricSpec(name, k, rel, beta)


@given(specs())
def test_every_spec_round_trips_through_its_key(spec: MetricSpec) -> None:
    key = spec.key
    assert key == key.lower()
    again = parse_metric(key)
    assert again == spec and again.key == key
    assert parse_metric(key.upper()) == spec


# --------------------------------------------------------------------------- cutoffs: ASCII digits, a declared range


@pytest.mark.parametrize("text", [
    "set_f1@9223372036854775808", "ndcg@٣", "ndcg@１０", "ndcg@1_0", "ndcg@+10", "ndcg@1e1", "ndcg@0",
    f"ndcg@{MAX_CUTOFF + 1}", "ndcg@" + "9" * 5000, "P_٣", "ndcg_cut_１０", "recall.٣", "set_F.٣",
])
def test_cutoffs_are_ascii_digits_within_the_declared_range(text: str) -> None:
    with pytest.raises(FinegrainError) as e:
        parse_metric(text, trec_eval=True)
    assert repr(text)[:40] in str(e.value) and e.value.hint


def test_the_largest_cutoff_and_ascii_trec_spellings_still_read() -> None:
    assert parse_metric(f"ndcg@{MAX_CUTOFF}").k == MAX_CUTOFF
    assert parse_metric("ndcg@010").key == "ndcg@10"
    assert parse_metric("P_5").key == "precision@5" and parse_metric("ndcg_cut_10").key == "ndcg@10"
    with pytest.raises(FinegrainError, match="not a positive integer"):
        MetricSpec("ndcg", 2**63)  # from Python: the same range


@pytest.mark.parametrize(("text", "needle"), [
    ("ndcg@10(rel=٢)", "rel='٢' is not a whole number"),
    ("ndcg@10(rel=1_0)", "rel='1_0' is not a whole number"),
    ("ndcg@10(rel=99999999999999999999)", "outside the range"),
    ("set_fbeta(beta=1_0)", "beta='1_0' is not a finite number"),
    ("set_fbeta(beta=nan)", "beta='nan' is not a finite number"),
    ("set_fbeta(beta=1e200)", "beta=1e+200 is not a number <= 1000000"),  # beta**2 overflows: F is NaN
])
def test_metric_parameters_follow_the_number_grammar_and_their_ranges(text: str, needle: str) -> None:
    with pytest.raises(FinegrainError, match=re.escape(needle)):
        parse_metric(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(categories=("Nd",)), min_size=1, max_size=4))
def test_a_cutoff_is_read_only_from_ascii_digits(digits: str) -> None:
    if digits.isascii() and 1 <= int(digits) <= MAX_CUTOFF:
        assert parse_metric(f"ndcg@{digits}").k == int(digits)
    else:
        with pytest.raises(FinegrainError):
            parse_metric(f"ndcg@{digits}")


@pytest.mark.parametrize("metric", ["set_f1@9223372036854775808", "ndcg@٣", "ndcg@１０"])
def test_cli_refuses_a_bad_cutoff_with_one_line(metric: str, tmp_path, capsys) -> None:
    code = main(["eval", "-d", "embedded/captions-en", "-r", "bm25", "-m", metric, "-o", str(tmp_path / "o"), "-q"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: metric ") and "Traceback" not in err, err
    assert not (tmp_path / "o").exists()
