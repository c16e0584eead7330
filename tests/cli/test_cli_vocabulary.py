"""One CLI vocabulary: a short flag means one thing on every verb; shared options carry their short flag.

The command tree is walked through the click objects typer builds (not by
parsing help text), so a verb added later is checked without listing it here.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from finegrain.cli.app import build_cli
from finegrain.cli.main import main
from finegrain.cli.options import SHORT_FLAGS, VERB_SHORT_FLAGS
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
                if declared is not None:  # a verb that speaks another tool's flags, declared once
                    assert declared in longs, f"{short} on {' '.join(path)} is declared {declared}, is {longs}"
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
    from finegrain.cli.options import _lang

    assert _lang("zh") == "zh" and _lang("EN") == "en" and _lang(None) is None
    assert _lang("cn") == "zh"
    with pytest.raises(Exception, match="unknown language 'fr'"):
        _lang("fr")


def test_bad_lang_on_the_command_line_is_refused(tmp_path) -> None:
    code = main(["album", "search", str(tmp_path / "none.sqlite"), "a dog", "--lang", "fr"])
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
