"""People's names in the catalog (both stores): aliases in any language are added, replaced and merged."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

import pytest

from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.records import FaceOccurrence, Person, Photo
from finegrain.cli.main import main
from finegrain.errors import FinegrainError, UnknownNameError


@pytest.fixture
def store(catalog_target):
    with open_catalog(catalog_target) as s:
        for name in ("a", "b", "c"):
            s.put_photo(Photo(f"{name}.jpg", f"/p/{name}.jpg", 1, 1.0, name, datetime(2023, 3, 1), None, None, None))
        s.set_faces("a.jpg", [FaceOccurrence("a.jpg", "p1", None, 0), FaceOccurrence("a.jpg", "p2", None, 1)])
        s.set_faces("b.jpg", [FaceOccurrence("b.jpg", "p2", None, 0)])
        s.set_faces("c.jpg", [FaceOccurrence("c.jpg", "p3", None, 0)])
        s.put_person(Person("p1", ("Weiwei", "Vivi")))
        s.put_person(Person("p2", ("Mum",), is_me=True))
        s.put_person(Person("p3"))
        yield s


def test_add_person_names_keeps_existing_aliases_in_order_and_dedups(store):
    assert store.add_person_names("p1", ["薇薇", " vivi ", "薇薇", "Wei"]) == Person("p1", ("Weiwei", "Vivi", "薇薇", "Wei"))
    assert store.get_person("p1").names == ("Weiwei", "Vivi", "薇薇", "Wei")
    assert store.add_person_names("p3", ["Dad"]).names == ("Dad",)  # an unnamed cluster gets its first name


def test_name_person_still_replaces(store):
    assert store.name_person("p1", ["薇薇"]) == Person("p1", ("薇薇",))


def test_add_person_names_refuses_unknown_people_and_empty_names(store):
    with pytest.raises(UnknownNameError, match="did you mean 'p1'"):
        store.add_person_names("p11", ["x"])
    with pytest.raises(FinegrainError, match="no name given for person 'p1'"):
        store.add_person_names("p1", [" ", ""])
    assert store.get_person("p1").names == ("Weiwei", "Vivi")


def test_merge_people_moves_faces_and_names_and_keeps_me(store):
    merged = store.merge_people("p1", ["p2", "p3"])
    assert merged == Person("p1", ("Weiwei", "Vivi", "Mum"), is_me=True)
    assert [p.id for p in store.people()] == ["p1"]
    assert store.ids_with_person("p1") == {"a.jpg", "b.jpg", "c.jpg"}
    assert store.person_photo_counts() == {"p1": 3}
    assert {f.person_id for f in store.faces()} == {"p1"}


def test_merge_people_refuses_unknown_ids_and_changes_nothing(store):
    with pytest.raises(UnknownNameError, match="'p9'"):
        store.merge_people("p1", ["p2", "p9"])
    with pytest.raises(UnknownNameError, match="'p7'"):
        store.merge_people("p7", ["p2"])
    with pytest.raises(FinegrainError, match="nothing to merge into person 'p1'"):
        store.merge_people("p1", ["p1"])
    assert [p.id for p in store.people()] == ["p1", "p2", "p3"]
    assert store.ids_with_person("p2") == {"a.jpg", "b.jpg"}


def test_a_catalog_written_before_aliases_reads_and_gains_aliases(tmp_path):
    """An old catalog (people.names a JSON list of one-language names) needs no migration."""
    path = tmp_path / "old.sqlite"
    with open_catalog(path) as s:
        s.put_person(Person("7", ("Weiwei",)))
    db = sqlite3.connect(path)
    assert json.loads(db.execute("SELECT names FROM people").fetchone()[0]) == ["Weiwei"]
    db.close()
    with open_catalog(path, create=False) as s:
        assert s.add_person_names("7", ["薇薇"]).names == ("Weiwei", "薇薇")


# ---------------------------------------------------------------- the CLI: album people


def _cli(args, capsys):
    code = main(["album", "people", "-c", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def catalog(store, catalog_target):
    return str(catalog_target)  # a file or a postgresql:// URL


def test_cli_name_adds_aliases_and_keeps_the_english_ones(catalog, capsys):
    code, out, err = _cli([catalog, "--name", "p1=薇薇,Wei"], capsys)
    assert code == 0 and "Weiwei, Vivi, 薇薇, Wei" in out and "warning" not in err


def test_cli_replace_replaces_and_warns_naming_the_removed_aliases(catalog, capsys):
    code, out, err = _cli([catalog, "--name", "p1=薇薇,Vivi", "--replace"], capsys)
    assert code == 0 and "薇薇, Vivi" in out and "Weiwei" not in out
    assert "warning" in err and "Weiwei" in err and "Vivi" not in err.split("names")[1].split("of person")[0]


def test_cli_merge_and_its_errors(catalog, capsys):
    code, out, _ = _cli([catalog, "--merge", "p1,p3"], capsys)
    assert code == 0 and "merged p3 into p1" in out
    code, _, err = _cli([catalog, "--merge", "p1"], capsys)
    assert code != 0 and "--merge 'p1' is not INTO,FROM" in err
    code, _, err = _cli([catalog, "--merge", "p1,p9"], capsys)
    assert code != 0 and "'p9'" in err
    code, _, err = _cli([catalog, "--name", "p1"], capsys)
    assert code != 0 and "CLUSTER_ID=NAME" in err
