"""The query-type predictor behind hybrid-routed (finegrain.retrieve.query.types): hand-made queries only."""

from __future__ import annotations

import math

import pytest

from finegrain.errors import FinegrainError
from finegrain.retrieve.query.types import PAPER_ROUTES, QueryTypePredictor, accuracy, features, route_of, units

PLAIN = ["猫", "狗", "汽车", "海滩", "苹果", "蛋糕", "cat", "dog", "beach"]
CONSTRAINED = ["白色的猫", "海边的日落", "桌子上的电脑", "睡觉的婴儿", "a white cat on a sofa", "a dog by the sea",
               "sunset on the beach"]


def _fitted() -> QueryTypePredictor:
    texts = PLAIN + CONSTRAINED
    types = ["singleton_object"] * len(PLAIN) + ["simple_condition"] * len(CONSTRAINED)
    return QueryTypePredictor.fit(texts, types)


def test_units_and_features() -> None:
    assert units("白色的猫") == ["白", "色", "的", "猫"]
    assert units("A White cat+dog") == ["a", "white", "cat", "+", "dog"]
    assert units("smart汽车") == ["smart", "汽", "车"]
    assert units("电脑，电视") == ["电", "脑", "，", "电", "视"]
    assert features("的猫") == ["u:的", "u:猫", "b:^|的", "b:的|猫", "b:猫|$", "len:2"]
    assert features("a " * 20)[-1] == "len:12"  # capped


def test_predicts_held_out_hand_made_queries() -> None:
    p = _fitted()
    assert p.classes == ("simple_condition", "singleton_object")
    assert p.predict(["鱼", "黑色的狗", "bird", "a red car on the road"]) == [
        "singleton_object", "simple_condition", "singleton_object", "simple_condition"]
    # the priors are the training frequencies; probabilities per class sum to 1 over the seen features
    assert math.exp(p.log_prior[1]) == pytest.approx(len(PLAIN) / (len(PLAIN) + len(CONSTRAINED)))
    assert p.n_train == len(PLAIN) + len(CONSTRAINED)


def test_prediction_reads_the_text_only_and_is_deterministic() -> None:
    p, q = _fitted(), _fitted()
    assert p.predict(CONSTRAINED + PLAIN) == q.predict(CONSTRAINED + PLAIN)
    # an untyped training query teaches nothing: same model
    r = QueryTypePredictor.fit([*PLAIN, *CONSTRAINED, "完全没见过"],
                               ["singleton_object"] * len(PLAIN) + ["simple_condition"] * len(CONSTRAINED) + [None])
    assert r.scores("红色的花") == p.scores("红色的花")
    # unseen units only: the prior decides
    assert p.predict_one("ж") == "singleton_object"


def test_fit_errors_name_the_problem() -> None:
    with pytest.raises(FinegrainError, match="no training query has a type"):
        QueryTypePredictor.fit(["猫"], [None])
    with pytest.raises(FinegrainError, match="2 texts for 1 types"):
        QueryTypePredictor.fit(["猫", "狗"], ["singleton_object"])


def test_routes() -> None:
    assert route_of("singleton_event") == "plain" and route_of("complex_condition") == "constrained"
    assert route_of("conjunction", "paper") == "constrained" and route_of("conjunction", "types") == "conjunction"
    assert route_of("my_type") == "my_type" and route_of(None) is None
    assert sorted(set(PAPER_ROUTES.values())) == ["constrained", "plain"] and len(PAPER_ROUTES) == 8
    with pytest.raises(FinegrainError, match="routes='coarse'"):
        route_of("conjunction", "coarse")


def test_accuracy_hand_computed() -> None:
    gold = {"a": "singleton_object", "b": "singleton_place", "c": "simple_condition", "d": None}
    pred = {"a": "singleton_object", "b": "singleton_object", "c": "conjunction", "d": "singleton_object"}
    acc = accuracy(gold, pred)
    assert acc.n == 3 and acc.correct == 1 and acc.route_correct == 3  # b: plain/plain, c: constrained/constrained
    assert acc.accuracy == pytest.approx(1 / 3) and acc.route_accuracy == 1.0
    assert acc.confusion["singleton_place"]["singleton_object"] == 1
    assert accuracy(gold, pred, "types").route_correct == 1
