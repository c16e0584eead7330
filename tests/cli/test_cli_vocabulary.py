"""One CLI vocabulary: a short flag means one thing on every verb; shared options carry their short flag.

The command tree is walked through the click objects typer builds (not by
parsing help text), so a verb added later is checked without listing it here.
"""

from __future__ import annotations

import inspect
import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from finegrain.cli.app import VERBS, build_cli
from finegrain.cli.main import main
from finegrain.cli.options import SHORT_FLAGS, VERB_SHORT_FLAGS, _lang
from finegrain.text.lang import LANGS


def _commands(cmd: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    subs = getattr(cmd, "commands", None)
    if subs:
        for name, sub in subs.items():
            yield from _commands(sub, (*path, name))
    else:
        yield path, cmd


def _options(cmd: Any) -> Iterator[Any]:
    for p in cmd.params:
        if getattr(p, "param_type_name", "") == "option":
            yield p


@pytest.fixture(scope="module")
def tree() -> list[tuple[tuple[str, ...], Any]]:
    return list(_commands(typer.main.get_command(build_cli())))


def test_the_walk_sees_every_verb(tree) -> None:
    paths = {" ".join(p) for p, _ in tree}
    assert {"eval", "evaluate", "compare", "report", "perturb", "list", "album search", "album eval"} <= paths
    assert len(paths) >= 16


def test_each_short_flag_means_one_thing_across_verbs(tree) -> None:
    meanings: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    where: dict[str, list[str]] = defaultdict(list)
    for path, cmd in tree:
        for opt in _options(cmd):
            flags = [*opt.opts, *opt.secondary_opts]
            longs = tuple(sorted(f for f in flags if f.startswith("--")))
            for short in (f for f in flags if re.fullmatch(r"-[A-Za-z]", f)):
                declared = VERB_SHORT_FLAGS.get(" ".join(path), {}).get(short)
                if declared is not None:  # another tool's letter on its verb: hidden, the letter alone
                    assert opt.hidden and not longs, f"{short} on {' '.join(path)} must be a hidden compat letter"
                    continue
                meanings[short].add(longs)
                where[short].append(" ".join(path))
    assert meanings, "no short flags found: the walk is broken"
    for short, longs in meanings.items():
        assert short in SHORT_FLAGS, f"{short} ({where[short]}) is not in the vocabulary (cli/options.py SHORT_FLAGS)"
        canonical = SHORT_FLAGS[short]
        for names in longs:
            assert canonical in names, f"{short} means {names} somewhere in {where[short]}, elsewhere {canonical}"
        # and every spelling of it is one option: the same long names wherever it appears
        assert len(longs) == 1 or all(canonical in n for n in longs), (short, longs)


def test_verb_flags_are_declared_and_used(tree) -> None:
    verbs = {" ".join(path): cmd for path, cmd in tree}
    for verb, flags in VERB_SHORT_FLAGS.items():
        opts = {o for opt in _options(verbs[verb]) for o in (*opt.opts, *opt.secondary_opts)}
        for short, long in flags.items():
            assert {short, long} <= opts, (verb, short, long)
            shown = {o for opt in _options(verbs[verb]) if not opt.hidden for o in (*opt.opts, *opt.secondary_opts)}
            assert short not in shown, f"{verb} --help shows {short}, which means {SHORT_FLAGS[short]} elsewhere"
            assert short in SHORT_FLAGS, "an exception is to a flag the vocabulary gives another meaning"


def test_shared_options_carry_their_short_flag_everywhere(tree) -> None:
    by_long = {long: short for short, long in SHORT_FLAGS.items()}
    for path, cmd in tree:
        for opt in _options(cmd):
            flags = [*opt.opts, *opt.secondary_opts]
            for long in flags:
                if long in by_long:
                    assert by_long[long] in flags, f"{' '.join(path)}: {long} without {by_long[long]}"


def test_metric_options_are_the_shared_repeatable_one(tree) -> None:
    for path, cmd in tree:
        for opt in _options(cmd):
            if "-m" in opt.opts:
                assert set(opt.opts) >= {"--metric", "--metrics", "-m"}, path
                assert opt.multiple, f"{' '.join(path)}: -m must be repeatable"


def test_language_is_lang_zh_en_everywhere(tree) -> None:
    seen = 0
    for path, cmd in tree:
        for opt in _options(cmd):
            if "lang" in opt.name or any("lang" in f for f in opt.opts):
                seen += 1
                assert opt.opts[:2] == ["--lang", "-l"], path
                assert opt.metavar == "zh|en", path
                assert "cn" not in (opt.help or "").replace("cnn", ""), f"{' '.join(path)}: 'cn' leaks into --help"
    assert seen >= 5
    assert LANGS == ("zh", "en")


def test_lang_accepts_zh_and_cn_only_as_deprecated_alias() -> None:
    assert _lang("zh") == "zh" and _lang("EN") == "en" and _lang(None) is None
    assert _lang("cn") == "zh"
    with pytest.raises(Exception, match="unknown language 'fr'"):
        _lang("fr")


def test_bad_lang_on_the_command_line_is_refused(tmp_path) -> None:
    code = main(["album", "search", "-c", str(tmp_path / "none.sqlite"), "a dog", "--lang", "fr"])
    assert code == 2


@pytest.mark.parametrize("columns", ["80"])
def test_every_verb_help_renders_in_80_columns(tree, columns: str) -> None:
    runner = CliRunner()
    app = build_cli()
    for path, cmd in tree:
        res = runner.invoke(app, [*path, "--help"], env={"COLUMNS": columns, "TERM": "dumb"})
        assert res.exit_code == 0, (path, res.output)
        width = max(len(line) for line in res.output.splitlines())
        assert width <= int(columns), f"{' '.join(path)} --help is {width} wide"
        for opt in _options(cmd):
            if opt.hidden:
                continue
            for flag in (f for f in opt.opts if f in SHORT_FLAGS or f in SHORT_FLAGS.values()):
                assert flag in res.output, f"{' '.join(path)} --help does not show {flag}"


def test_version_flag() -> None:
    res = CliRunner().invoke(build_cli(), ["--version"])
    assert res.exit_code == 0 and res.output.startswith("finegrain ")


# --------------------------------------------------------------------------- one spelling per concept

# concept -> (the parameter names a verb may give it, its one spelling, spellings retired from every verb)
CONCEPTS: dict[str, tuple[set[str], tuple[str, ...], tuple[str, ...]]] = {
    "the 'now' of relative dates": ({"today", "now"}, ("--today",), ("--now",)),
    "how many results are kept or shown": ({"top_k", "top", "run_depth"}, ("--top-k", "-k"), ("--top", "--run-depth")),
    "the album catalog": ({"catalog"}, ("--catalog", "-c"), ()),
    "cross-validation folds": ({"cv"}, ("--cv",), ()),
    "the metric cross-validation maximises": ({"cv_metric"}, ("--cv-metric",), ()),
    "a fusion's parts tuned by cross-validation too": ({"cv_parts"}, ("--cv-parts",), ()),
    "the seed of a random choice": ({"seed"}, ("--seed",), ()),
    "KEY=VALUE options of a registered entry": ({"options"}, ("--set", "-s"), ("--weights", "--norm", "--rrf-k")),
    "items per batch": ({"batch_size", "batch"}, ("--batch-size",), ("--batch",)),
    "no embedding cache": ({"no_cache"}, ("--no-cache",), ()),
    "no progress bars": ({"quiet"}, ("--quiet", "-q"), ()),
    "JSON on stdout": ({"as_json"}, ("--json",), ()),
    "the dataset": ({"dataset"}, ("--dataset", "-d"), ()),
    "the output": ({"out"}, ("--out", "-o"), ()),
    "the language": ({"lang"}, ("--lang", "-l"), ()),
}


def _flags(p: Any) -> tuple[str, ...]:
    return tuple(sorted([*p.opts, *p.secondary_opts]))


@pytest.mark.parametrize("concept", list(CONCEPTS))
def test_one_spelling_per_concept_on_every_verb(tree, concept: str) -> None:
    names, spelling, retired = CONCEPTS[concept]
    seen = []
    for path, cmd in tree:
        verb = " ".join(path)
        for p in cmd.params:
            if p.hidden:
                continue
            kind = getattr(p, "param_type_name", "")
            if p.name in names:
                seen.append(verb)
                assert kind == "option", f"{verb}: {concept} is the argument {p.name.upper()}, not {spelling[0]}"
                assert _flags(p) == tuple(sorted(spelling)), f"{verb}: {concept} is {_flags(p)}, not {spelling}"
            elif kind == "option":
                declared = VERB_SHORT_FLAGS.get(verb, {})  # a verb that speaks another tool's flags says so
                mine = {f for f in set(_flags(p)) & set(spelling) if declared.get(f) not in _flags(p)}
                assert not mine, f"{verb}: {sorted(mine)} means {p.name}, elsewhere {concept}"
            if kind == "option":
                old = set(_flags(p)) & set(retired)
                assert not old, f"{verb}: {sorted(old)} is retired; write {spelling[0]}"
    assert seen, f"no verb has {concept}: the table is stale"


def test_every_hidden_parameter_is_a_retired_spelling_that_names_its_successor(tree) -> None:
    """Hidden parameters are retired spellings, or another tool's letters declared in VERB_SHORT_FLAGS."""
    hidden = 0
    for path, cmd in tree:
        visible = {f for p in cmd.params if not p.hidden for f in _flags(p)}
        letters = VERB_SHORT_FLAGS.get(" ".join(path), {})
        for p in (p for p in cmd.params if p.hidden):
            if tuple(_flags(p)) in {(letter,) for letter in letters}:
                assert letters[_flags(p)[0]] in visible and letters[_flags(p)[0]] in (p.help or ""), (path, p.help)
                continue
            hidden += 1
            assert (p.help or "").startswith("Retired: write "), (path, p.name, p.help)
            assert any(f in p.help for f in visible), f"{' '.join(path)}: {p.help!r} names no option of the verb"
    assert hidden >= 12


def test_every_verb_that_shows_progress_takes_quiet(tree) -> None:
    functions = {path: fn for path, fn in VERBS}
    progress = set()
    for path, cmd in tree:
        source = inspect.getsource(functions[" ".join(path)])
        if "show_progress" in source or "quiet=quiet" in source:
            progress.add(" ".join(path))
            quiet = [p for p in cmd.params if p.name == "quiet"]
            assert quiet and _flags(quiet[0]) == ("--quiet", "-q"), f"{' '.join(path)} shows progress without -q"
            assert quiet[0].help == "No progress bars.", path
    assert {"eval", "perturb", "triage", "contrast", "caption-corpus", "overlap", "train", "album index",
            "album import-photobench"} <= progress


def test_every_verb_that_encodes_takes_no_cache(tree) -> None:
    """A verb that builds a retriever or reads the embedding cache can be told to leave the cache alone."""
    functions = {path: fn for path, fn in VERBS}
    encoding = set()
    for path, cmd in tree:
        source = inspect.getsource(functions[" ".join(path)])
        if any(s in source for s in ("retriever_options(", "EmbeddingCache", "cache=")):
            encoding.add(" ".join(path))
            assert any(p.name == "no_cache" and not p.hidden for p in cmd.params), f"{' '.join(path)} has no --no-cache"
    assert {"eval", "perturb", "triage", "contrast", "caption-corpus", "overlap"} <= encoding


def test_retired_spellings_still_work_with_one_warning(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["album", "plan", "photos last summer", "--today", "2024-01-05", "--json"]) == 0
    new = capsys.readouterr()
    assert main(["album", "plan", "photos last summer", "--now", "2024-01-05", "--json"]) == 0
    old = capsys.readouterr()
    assert old.out == new.out and '"2023-06-01"' in new.out  # last summer, counted from 2024-01-05
    assert new.err == ""
    assert old.err.splitlines() == ["warning: --now is retired, write --today (--now stops working in the next release)"]
    assert main(["album", "plan", "photos last summer", "--now", "2024-01-05", "--today", "2024-01-05"]) == 2
    assert "given twice" in capsys.readouterr().err


def test_the_catalog_is_an_option_and_the_old_argument_still_reads(tmp_path, capsys) -> None:
    missing = str(tmp_path / "none.sqlite")
    assert main(["album", "search", "-c", missing, "a dog"]) == 2
    new = capsys.readouterr().err.splitlines()
    assert main(["album", "search", missing, "a dog"]) == 2  # album search CATALOG QUERY, the retired form
    old = capsys.readouterr().err.splitlines()
    assert new == [line for line in old if not line.startswith("warning:")] and missing in new[0]
    assert old[0] == ("warning: the CATALOG argument is retired, write -c CATALOG (the CATALOG argument stops "
                      "working in the next release)")
    for verb in (["album", "search", "a dog"], ["album", "people"], ["album", "serve"]):
        assert main(verb) == 2
        assert capsys.readouterr().err.splitlines() == [
            "error: no catalog given (pass -c CATALOG (a file from 'album index', or a postgresql:// URL))"]
    assert main(["album", "people", missing, "-c", missing]) == 2
    assert "-c CATALOG and the CATALOG argument are the same option, given twice" in capsys.readouterr().err


def test_usage_lines_leave_out_retired_parameters() -> None:
    runner = CliRunner()
    for verb in (["album", "search"], ["album", "people"], ["album", "serve"]):
        res = runner.invoke(build_cli(), [*verb, "--help"], env={"COLUMNS": "80", "TERM": "dumb"})
        usage = next(line for line in res.output.splitlines() if "Usage:" in line)
        assert "legacy" not in usage.lower() and "[]" not in usage and "catalog" not in usage.lower(), usage
        assert "Retired" not in res.output


def test_help_shows_square_brackets_as_written() -> None:
    runner = CliRunner()
    app = build_cli()
    cases = ((["eval", "--help"], "finegrain[ray]"), (["album", "postgres", "--help"], "finegrain[postgres]"))
    for args, literal in cases:
        res = runner.invoke(app, args, env={"COLUMNS": "200", "TERM": "dumb"})
        assert res.exit_code == 0 and literal in res.output, (args, res.output)
