"""WordNet 3.0 for nltk, built from the Debian packages ``wordnet-base`` + ``wordnet-sense-index``.

nltk's reader wants a folder ``corpora/wordnet`` with the database files and a ``lexnames``
file, which Debian does not ship. :func:`wordnet` copies the files from ``/usr/share/wordnet``
(or ``$FINEGRAIN_WORDNET``) once into ``<cache>/nltk_data/corpora/wordnet``, writes
``lexnames``, and returns nltk's ``WordNetCorpusReader`` over it. Nothing is downloaded.
"""

from __future__ import annotations

import os
import shutil
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

from finegrain.errors import FinegrainError, MissingDependencyError
from finegrain.settings import default_cache_dir

SOURCE_ENV = "FINEGRAIN_WORDNET"
DEBIAN_DIR = Path("/usr/share/wordnet")

# The database files nltk's WordNetCorpusReader opens (index.sense is optional but used for sense keys).
_REQUIRED = ("data.noun", "data.verb", "data.adj", "data.adv",
             "index.noun", "index.verb", "index.adj", "index.adv",
             "noun.exc", "verb.exc", "adj.exc", "adv.exc")
_OPTIONAL = ("index.sense", "cntlist.rev")

# WordNet 3.0 lexicographer files, in file-number order (lexnames(5WN)).
LEXNAMES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather", "adj.ppl",
)
_SYNTACTIC_CATEGORY = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


def lexnames_text() -> str:
    """The ``lexnames`` file: ``NN<TAB>name<TAB>category`` per line."""
    return "".join(
        f"{i:02d}\t{name}\t{_SYNTACTIC_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES)
    )


def source_dir() -> Path:
    env = os.environ.get(SOURCE_ENV)
    return Path(env) if env else DEBIAN_DIR


def prepare(source: Path | None = None, cache_dir: Path | None = None) -> Path:
    """Build (once) and return the nltk data root holding ``corpora/wordnet``."""
    src = source or source_dir()
    root = (cache_dir or default_cache_dir()) / "nltk_data"
    target = root / "corpora" / "wordnet"
    if (target / "lexnames").is_file() and all((target / f).is_file() for f in _REQUIRED):
        return root
    missing = [f for f in _REQUIRED if not (src / f).is_file()]
    if missing:
        raise FinegrainError(
            f"WordNet files missing in {str(src)!r}: {', '.join(missing[:4])}"
            + (" ..." if len(missing) > 4 else ""),
            "install the Debian packages wordnet-base and wordnet-sense-index "
            "(bash scripts/install-system-deps.sh), or set "
            f"{SOURCE_ENV} to a folder with the WordNet 3.0 database files",
        )
    tmp = target.with_name(f"wordnet.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in _REQUIRED + _OPTIONAL:
        if (src / name).is_file():
            shutil.copyfile(src / name, tmp / name)
    (tmp / "lexnames").write_text(lexnames_text(), encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)  # atomic within one filesystem: a half-copied folder is never used
    return root


@lru_cache(maxsize=1)
def wordnet() -> Any:
    """nltk's WordNet reader over the local copy (``wn.synset("dog.n.01")``, ``wn.synsets("red")``)."""
    try:
        import nltk.data
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError as e:
        raise MissingDependencyError("nltk", "probes") from e
    root = prepare()
    if str(root) not in nltk.data.path:  # nltk only opens corpora under its data path
        nltk.data.path.append(str(root))
    class Reader(WordNetCorpusReader):  # type: ignore[misc,valid-type]
        def map_wn(self, version: str = "wordnet") -> None:
            # nltk maps the Open Multilingual WordNet's 3.0 ids onto the loaded WordNet by reading
            # index.sense twice (slow); this *is* WordNet 3.0 and there is no OMW, so nothing to map.
            return None

    with warnings.catch_warnings():  # "multilingual functions are not available": no OMW, by design
        warnings.simplefilter("ignore", UserWarning)
        return Reader(str(root / "corpora" / "wordnet"), None)
