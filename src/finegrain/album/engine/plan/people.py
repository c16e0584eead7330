"""People named by role or kinship: one table of role words per language.

Albums name people "Dad", "Mom", "wife", "honey", "Nephew", "宝宝", "老婆"; queries name
them by role as well ("kids at the beach", "feeding the baby", "爸妈在公园"). Both go
through the tables here: a role word (:data:`ROLE_WORDS_EN`, :data:`ROLE_WORDS_ZH`) implies
a :class:`Role`, a kin relation to the album's owner (child, partner, parent, grandparent,
grandchild, sibling, nephew or niece, other relative) with a gender when the word has one. The album's
vocabulary gives each person the roles of their nicknames ("Dad" -> a father) and the
roles the user stated (:meth:`~finegrain.album.engine.plan.vocabulary.AlbumVocabulary.build`,
``roles=``; in a catalog, a kinship nickname such as ``album people --name p5=son``); the
planner then reads a role word in a query as "any person of the album in that role".

When no person of the album is known in a word's role, most words describe what is seen
("kids", "a baby", "parents", "family", "honey") and stay visual; the plan says that nobody
is known in the role. The words that name one relative and were already social roles of
the planner ("mom", "dad", "my wife", "boyfriend", "sister", "grandma", 妈妈, 老公, 姐妹)
stay social roles, as "friends" does: that person is in the face graph whether or not the
album has named them.

Nothing here is about one album: the words are general kinship words of each language.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from finegrain.errors import FinegrainError

KINS = ("child", "partner", "parent", "grandparent", "grandchild", "sibling", "nibling", "relative")
FAMILY = "family"  # any kin relation
KIDS = "kids"  # a word for the family's young ones ("the kids", "孩子们"): children, grandchildren, nephews, nieces
GENDERS = ("m", "f")

# the kin words of the plan's explanation ("no person in the album is known as a child")
_KIN_NOUN = {"child": "child", "partner": "partner", "parent": "parent", "grandparent": "grandparent",
             "grandchild": "grandchild", "sibling": "sibling", "nibling": "nephew or niece", "relative": "relative",
             FAMILY: "family member", KIDS: "child"}
_KIN_NOUN_ZH = {"child": "孩子", "partner": "伴侣", "parent": "父母", "grandparent": "祖辈", "grandchild": "孙辈",
                "sibling": "兄弟姐妹", "nibling": "侄甥", "relative": "亲戚", FAMILY: "家人", KIDS: "孩子"}
_YOUNG = ("child", "grandchild", "nibling")


@dataclass(frozen=True, slots=True)
class Role:
    """A kin relation to the album's owner (``kin``: one of :data:`KINS`, or ``family`` for any)
    and a gender (``m``, ``f``, or None when the word has none: "kid", "partner")."""

    kin: str
    gender: str | None = None

    def __post_init__(self) -> None:
        if self.kin not in (*KINS, FAMILY, KIDS):
            raise FinegrainError(f"unknown kin relation {self.kin!r}", f"use one of {', '.join(KINS)}")
        if self.gender is not None and self.gender not in GENDERS:
            raise FinegrainError(f"unknown gender {self.gender!r} of role {self.kin!r}", "use 'm', 'f' or None")

    def accepts(self, other: Role) -> bool:
        """Whether a person known in role ``other`` answers to this role word: the same kin
        (any kin for ``family``; ``kids``, "the kids", takes the family's children, grandchildren,
        nephews and nieces) and no contrary gender ("son" accepts a "baby", not a "daughter")."""
        if other.kin in (FAMILY, KIDS):
            return False
        kin_ok = self.kin == FAMILY or self.kin == other.kin or self.kin == KIDS and other.kin in _YOUNG
        return kin_ok and (self.gender is None or other.gender is None or self.gender == other.gender)

    def noun(self, lang: str = "en") -> str:
        return (_KIN_NOUN_ZH if lang == "zh" else _KIN_NOUN)[self.kin]


@dataclass(frozen=True, slots=True)
class RoleWord:
    """A word of the role table: the ``role`` it implies, and what it is when no person of the
    album is known in that role: visual (``visual``: a kind of person seen as such, "kids") or
    a social role that needs the face graph (one relative, "mom", "my wife", as "friends")."""

    word: str
    role: Role
    visual: bool


def _table(rows: Iterable[tuple[str, str, str | None, bool]]) -> Mapping[str, RoleWord]:
    out: dict[str, RoleWord] = {}
    for words, kin, gender, visual in rows:
        for w in words.split("|"):
            if w in out:
                raise FinegrainError(f"role word {w!r} is listed twice", "list each word once")
            out[w] = RoleWord(w, Role(kin, gender), visual)
    return MappingProxyType(out)


V, S = True, False  # visual when nobody has the role (a kind of person, seen as such) | a social role
ROLE_WORDS_EN = _table((
    ("kid|kids|children|little ones", KIDS, None, V),
    ("child|little one|toddler|toddlers|baby|babies|infant|newborn", "child", None, V),
    ("son|sons", "child", "m", V),
    ("daughter|daughters", "child", "f", V),
    ("parents|folks|mom and dad", "parent", None, V),
    ("mommy|mummy|mama|momma", "parent", "f", V),
    ("mom|mum|mother", "parent", "f", S),
    ("daddy|papa", "parent", "m", V),
    ("dad|father", "parent", "m", S),
    ("grandparents|grandparent", "grandparent", None, V),
    ("granny|nana|grandmother", "grandparent", "f", V),
    ("grandma", "grandparent", "f", S),
    ("grandfather|granddad|grandad|gramps", "grandparent", "m", V),
    ("grandpa", "grandparent", "m", S),
    ("grandkids|grandkid|grandchildren|grandchild", "grandchild", None, V),
    ("grandson|grandsons", "grandchild", "m", V),
    ("granddaughter|granddaughters", "grandchild", "f", V),
    ("siblings|sibling|sis", "sibling", None, V),
    ("sister|sisters", "sibling", "f", S),
    ("brother|brothers|bros", "sibling", "m", S),
    ("wife|girlfriend", "partner", "f", S),
    ("husband|boyfriend", "partner", "m", S),
    ("hubby", "partner", "m", V),
    ("missus", "partner", "f", V),
    ("partner", "partner", None, S),
    ("spouse|honey|darling|sweetheart|babe|bae|fiance|fiancee|other half", "partner", None, V),
    ("nephew|nephews", "nibling", "m", V),
    ("niece|nieces", "nibling", "f", V),
    ("uncle", "relative", "m", V),
    ("aunt|auntie|aunty", "relative", "f", V),
    ("cousin", "relative", None, S),
    ("cousins|relatives|in-laws", "relative", None, V),
    ("family|families|whole family|family members", FAMILY, None, V),
))
ROLE_WORDS_ZH = _table((
    ("孩子|孩子们|小孩|小孩子|小孩们|小朋友|小朋友们|孩子们儿", KIDS, None, V),
    ("宝宝|宝贝|小宝|宝贝儿|婴儿|幼儿", "child", None, V),
    ("儿子", "child", "m", V),
    ("女儿|闺女", "child", "f", V),
    ("爸妈|父母|爸爸妈妈|双亲", "parent", None, V),
    ("妈妈", "parent", "f", S),
    ("老妈|我妈|母亲|妈咪", "parent", "f", V),
    ("爸爸", "parent", "m", S),
    ("老爸|我爸|父亲|爹地", "parent", "m", V),
    ("爷爷奶奶|姥姥姥爷|外公外婆|祖父母", "grandparent", None, V),
    ("奶奶", "grandparent", "f", S),
    ("姥姥|外婆|祖母", "grandparent", "f", V),
    ("爷爷", "grandparent", "m", S),
    ("姥爷|外公|祖父", "grandparent", "m", V),
    ("孙子|外孙", "grandchild", "m", V),
    ("孙女|外孙女", "grandchild", "f", V),
    ("姐姐|妹妹|姐妹", "sibling", "f", S),
    ("哥哥|弟弟|兄弟", "sibling", "m", S),
    ("老婆|女朋友|女友", "partner", "f", S),
    ("媳妇|妻子|太太", "partner", "f", V),
    ("老公|男朋友|男友", "partner", "m", S),
    ("丈夫", "partner", "m", V),
    ("对象", "partner", None, S),
    ("亲爱的|爱人|伴侣", "partner", None, V),
    ("侄子|外甥", "nibling", "m", V),
    ("侄女|外甥女", "nibling", "f", V),
    ("叔叔|舅舅|伯伯|姑父|姨父", "relative", "m", V),
    ("阿姨|姑姑|舅妈|婶婶|姨妈|伯母", "relative", "f", V),
    ("表姐|表妹", "relative", "f", S),
    ("表哥|表弟|堂哥|堂弟", "relative", "m", V),
    ("堂姐|堂妹", "relative", "f", V),
    ("亲戚|亲人", "relative", None, V),
    ("一家人|家人|全家|全家福|一家三口|一家四口|家里人", FAMILY, None, V),
))
ROLE_WORDS = {"en": ROLE_WORDS_EN, "zh": ROLE_WORDS_ZH}
_POSSESSIVE = ("my ", "our ", "the ", "我的", "我们的", "我家")


def role_word(name: str) -> RoleWord | None:
    """The role-table entry a name or nickname is ("Dad", "my wife", "老婆", "我家宝宝"), else None."""
    key = " ".join(name.casefold().split())
    for lang_table in (ROLE_WORDS_EN, ROLE_WORDS_ZH):
        if key in lang_table:
            return lang_table[key]
    for prefix in _POSSESSIVE:
        if key.startswith(prefix) and len(key) > len(prefix):
            return role_word(key[len(prefix):])
    return None


def parse_role(text: str) -> Role:
    """A role the user states for a person: a kin name ("child", "parent", "partner", ...) or any
    role word of either table ("son", "mom", "宝宝"); an error naming the value otherwise."""
    key = " ".join(str(text).casefold().split())
    if key in KINS:
        return Role(key)
    found = role_word(key)
    if found is not None and found.role.kin != FAMILY:
        return _as_person(found.role)
    raise FinegrainError(
        f"unknown role {text!r} for a person",
        f"use a kin relation ({', '.join(KINS)}) or a role word such as son, daughter, mom, dad, wife, 宝宝, 妈妈",
    )


def _as_person(role: Role) -> Role:
    """A role a person holds: a word for the young ones ("kid") makes a child."""
    return Role("child", role.gender) if role.kin == KIDS else role


def roles_of(names: Iterable[str], stated: Iterable[str | Role] = ()) -> tuple[Role, ...]:
    """The roles of a person: those of their role-word nicknames, then the stated ones."""
    out: list[Role] = []
    for name in names:
        found = role_word(name)
        if found is not None and found.role.kin != FAMILY:
            out.append(_as_person(found.role))
    out.extend(r if isinstance(r, Role) else parse_role(r) for r in stated)
    return tuple(dict.fromkeys(out))


def people_in_role(role: Role, roles: Mapping[str, Iterable[Role]]) -> tuple[str, ...]:
    """The person ids (sorted as given) known in a role that ``role`` accepts."""
    return tuple(pid for pid, rs in roles.items() if any(role.accepts(r) for r in rs))
