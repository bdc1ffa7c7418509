"""Byline entries that name no person: the rule set, in one place.

arXiv bylines carry affiliations, places and notes among the names ("J. Doe, Department of
Astronomy, Manchester, UK", "..., for the ATLAS Collaboration", "et al."), and Semantic
Scholar's author lists carry pieces of affiliations as authors ("A. Building", "UK.",
"Socorro", "J. B. C. F. Astrophysics"). `entry_kind` says what one entry is, `list_kinds` what
each entry of a whole list is (one rule needs its neighbours). The rules, in the order applied:

1. NOTE: the entry stands for unnamed people or says who signs for whom: "et al", "and others",
   "136 additional authors", "for the ATLAS Collaboration", "on behalf of the ...". A note is
   never an authorship.
2. COLLABORATION: the entry names a group ("The BABAR Collaboration", "LHCb collaboration",
   "Gemini Team"): one of the collective words below. It may stay an authorship, marked as not
   a person.
3. AFFILIATION: the entry holds a word of institutions, departments, buildings or addresses
   ("University", "Department", "Observatory", "Building", "Road"), a science's name
   ("Astronomy", "Astrophysics", "Physics"), a company form ("GmbH", "Inc."), or a word that
   opens with a digit (postcodes, street numbers: "BN1 9QH", "96 Euston Road").
4. PLACE: the whole entry is a country or a country's abbreviation ("UK.", "U.S.A.", "Usa",
   "Sweden."), or a US state's two-letter code in capitals ("NM"); an entry that opens with
   "USA" or "UK" and goes on ("Usa Google DeepMind") is the next address, an AFFILIATION.
5. PLACE by context (lists only): a one-word entry that follows an affiliation or a place in
   the same list is the rest of that address ("..., Jodrell Bank Observatory, Macclesfield,
   Cheshire", "Socorro, Nm"), and so is "U. <word>" there, Semantic Scholar's shortening of
   "University of <word>" ("A. Building, U. Manchester, UK."). A one-word entry elsewhere may
   be a mononym ("Ariando") and stays a person.
6. Address dump (a source's author list only, such as Semantic Scholar's): from three
   affiliations or places in a row on, every entry is part of the addresses ("...,
   Observatory, Socorro, Nm, U.S.A., ..., B. Hill, Edinburgh"): Semantic Scholar appends the
   authors' addresses after its authors, pieces of which look like names ("B. Hill", "H. Mary").
   Not for arXiv bylines, where people follow addresses ("A. Smith, Dept. of X, Univ. Y, UK,
   B. Jones").

Words are matched whole and case-folded, so a family name that merely contains one ("Labadie",
"Deppe", "Hall") is untouched. Some words are family names too and are left out on purpose:
"Hall", "Street", "Labs", "Field", "House" (R. N. Manchester, P. B. Hall and Oliver Labs are
people); a one-word place only counts by rule 5. What the rules miss is listed with the
hand-checked sample in docs/bylines.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from wovepaper.lib.text import fold

PERSON = "person"
COLLABORATION = "collaboration"
NOTE = "note"
AFFILIATION = "affiliation"
PLACE = "place"

COLLECTIVE = frozenset(
    {
        "collaboration",
        "collaborations",
        "consortium",
        "consortia",
        "team",
        "group",
        "panel",
        "committee",
        "organization",
        "organisation",
        "association",
        "society",
        "network",
        "initiative",
        "survey",
        "project",
    }
)
# A collective word in the plural: the entry names several groups, so the one before it (split
# from it at "and") is one of them.
COLLECTIVE_PLURAL = frozenset({"collaborations", "consortia", "teams", "groups", "projects"})
# Institutions, their parts, buildings and addresses, and the sciences departments are named
# after, in the languages arXiv bylines use most.
INSTITUTIONAL = frozenset(
    {
        "university",
        "universities",
        "univ",
        "universite",
        "universites",
        "universitat",
        "universita",
        "universidad",
        "universidade",
        "universiteit",
        "uniwersytet",
        "institute",
        "institutes",
        "institut",
        "instituto",
        "istituto",
        "inst",
        "department",
        "dept",
        "departamento",
        "dipartimento",
        "departement",
        "laboratory",
        "laboratories",
        "laboratoire",
        "laboratorio",
        "lab",
        "observatory",
        "observatoire",
        "observatorio",
        "osservatorio",
        "sternwarte",
        "center",
        "centre",
        "centro",
        "zentrum",
        "faculty",
        "facultad",
        "fakultat",
        "school",
        "college",
        "academy",
        "academia",
        "akademie",
        "hospital",
        "clinic",
        "foundation",
        "division",
        "facility",
        "agency",
        "ministry",
        "building",
        "buildings",
        "road",
        "avenue",
        "strasse",
        "campus",
        "physics",
        "physik",
        "physique",
        "fisica",
        "astronomy",
        "astronomia",
        "astrophysics",
        "astrofisica",
        "mathematics",
        "matematica",
        "mathematik",
        "chemistry",
        "sciences",
        "science",
        "engineering",
        "technology",
        "research",
        "gmbh",
        "inc",
        "ltd",
        "corp",
        "llc",
        "cnrs",
        "infn",
        "inaf",
    }
)
# Countries as affiliations write them (names, and the abbreviations bylines use); an entry
# that is one of these and nothing else is a place.
COUNTRIES = frozenset(
    {
        "usa",
        "us",
        "u s a",
        "u s",
        "united states",
        "united states of america",
        "america",
        "uk",
        "u k",
        "united kingdom",
        "england",
        "scotland",
        "wales",
        "ireland",
        "great britain",
        "canada",
        "mexico",
        "brazil",
        "argentina",
        "chile",
        "colombia",
        "peru",
        "france",
        "germany",
        "deutschland",
        "italy",
        "italia",
        "spain",
        "espana",
        "portugal",
        "netherlands",
        "the netherlands",
        "holland",
        "belgium",
        "switzerland",
        "austria",
        "sweden",
        "norway",
        "denmark",
        "finland",
        "iceland",
        "poland",
        "czech republic",
        "czechia",
        "slovakia",
        "hungary",
        "romania",
        "bulgaria",
        "greece",
        "turkey",
        "russia",
        "russian federation",
        "ukraine",
        "belarus",
        "serbia",
        "croatia",
        "slovenia",
        "estonia",
        "latvia",
        "lithuania",
        "israel",
        "iran",
        "egypt",
        "south africa",
        "nigeria",
        "india",
        "pakistan",
        "bangladesh",
        "china",
        "p r china",
        "pr china",
        "taiwan",
        "hong kong",
        "japan",
        "korea",
        "south korea",
        "republic of korea",
        "singapore",
        "malaysia",
        "thailand",
        "vietnam",
        "indonesia",
        "philippines",
        "australia",
        "new zealand",
        "saudi arabia",
        "armenia",
        "kazakhstan",
        "uzbekistan",
    }
)
US_STATE_CODES = frozenset(
    "al ak az ar ca co ct de fl ga hi id il in ia ks ky la me md ma mi mn ms mo mt ne nv nh nj "
    "nm ny nc nd oh ok or pa ri sc sd tn tx ut vt va wa wv wi wy dc".split()
)
_TOKEN = re.compile(r"[a-z0-9]+")
_COUNTRY_PREFIXES = frozenset({"usa", "uk", "u.s.a", "u.k"})
_NOBODY = frozenset({("et", "al"), ("and", "others"), ("others",), ("al", "et"), ("etal",)})
# A note's opening words: "for the ATLAS Collaboration", "on behalf of ...", "representing".
_NOTE_START = re.compile(r"^\W*(?:for|on\s+behalf\s+of|representing)\b", re.IGNORECASE)
_ADDITIONAL = re.compile(r"\badditional\s+authors?\b|\bauthors?\s+not\s+shown\b", re.IGNORECASE)


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(fold(text))


@lru_cache(maxsize=100_000)
def entry_kind(name: str) -> str:
    """What one byline or source entry names, by rules 1-4 (the module's docstring)."""
    text = " ".join((name or "").split())
    tokens = _tokens(text)
    if not tokens:
        return NOTE
    if (
        tuple(tokens) in _NOBODY
        or tokens[-2:] == ["et", "al"]
        or _ADDITIONAL.search(text)
        or _NOTE_START.match(text)
    ):
        return NOTE
    words = set(tokens)
    if words & COLLECTIVE:
        return COLLABORATION
    # A word that opens with a digit: a postcode or a street number ("BN1 9QH", "96 Euston
    # Road", "E-46980"). A digit after letters may be a footnote mark ("Smith1") and is left.
    if words & INSTITUTIONAL or any(t[0].isdigit() for t in tokens):
        return AFFILIATION
    joined = " ".join(tokens)
    # A state's code only in capitals: "Ma", "De" and "La" alone are more often name pieces.
    if joined in COUNTRIES or (joined in US_STATE_CODES and text.rstrip(".").isupper()):
        return PLACE
    # "Usa Google DeepMind", "UK Laboratoire AIM": the country that ended the previous address.
    words_written = text.split()
    if len(words_written) > 1 and words_written[0].rstrip(".").lower() in _COUNTRY_PREFIXES:
        return AFFILIATION
    return PERSON


# Rule 6: in a source's author list, this many affiliations or places in a row start the
# address dump that runs to the list's end.
DUMP_RUN = 3


def _names_groups(text: str) -> bool:
    """Whether `text` holds a collective word in the plural. Every byline entry of an import
    comes here: a substring test rules out nearly all of them before the tokens are read."""
    # Only for ASCII: the tokens are read after folding (unidecode), which the test must match.
    if text.isascii() and not any(word in text.lower() for word in COLLECTIVE_PLURAL):
        return False
    return bool(COLLECTIVE_PLURAL & set(_tokens(text)))


def list_kinds(names: Sequence[str], *, source_list: bool = False) -> list[str]:
    """`entry_kind` of each entry of one list, with rule 5: a one-word entry right after an
    affiliation or a place (or after such a one-word entry) is a place; rule 7: an entry right
    before a collaboration named in the plural is a collaboration too ("Keck Array and BICEP2
    Collaborations: P. Ade", split at its "and"); and, for a source's author list
    (`source_list`), rule 6: from DUMP_RUN affiliations or places in a row on, every entry is
    part of the address."""
    kinds: list[str] = []
    for index, name in enumerate(names):
        kind = entry_kind(name)
        if kind == PERSON and kinds and kinds[-1] in (AFFILIATION, PLACE):
            tokens = _tokens(name)
            if len(tokens) == 1:
                kind = PLACE
            elif len(tokens) == 2 and name.lstrip().startswith("U."):
                kind = AFFILIATION
        following = names[index + 1] if index + 1 < len(names) else ""
        if kind == PERSON and _names_groups(following.partition(":")[0]):
            kind = COLLABORATION
        kinds.append(kind)
    if source_list:
        run = 0
        for index, kind in enumerate(kinds):
            run = run + 1 if kind in (AFFILIATION, PLACE) else 0
            if run == DUMP_RUN:
                kinds[index:] = [k if k != PERSON else AFFILIATION for k in kinds[index:]]
                break
    return kinds


def is_person(name: str) -> bool:
    """True when the entry, read alone, may name a person (rules 1-4)."""
    return entry_kind(name) == PERSON


def note_runs_to_end(name: str) -> bool:
    """True for a note that opens with "for"/"on behalf of": what follows it in the byline is
    the rest of the note ("for the RBC and UKQCD Collaborations", "for the ATLAS, CDF, CMS, D0
    collaborations")."""
    return bool(_NOTE_START.match(name or ""))


def names_a_group(text: str) -> bool:
    """True when the text holds a collective word ("for the ALICE Collaboration")."""
    return bool(COLLECTIVE & set(_tokens(text)))
