"""Did you mean: a search's misspelt words, corrected by the words papers write (#43).

A word of a search is misspelt here when no paper's title, abstract or byline writes it, it is
no word of English (`english_words`) and the keyword engine does not hold it either (by its
stemming). Its correction is the word one edit away (a letter left out, added or replaced, or
two neighbours swapped: Damerau-Levenshtein distance 1, which covers most typing mistakes) that
the most papers write, if at least SPELLING_MIN_PAPERS do; the corrected query is offered only
when it finds a paper with every word. Words shorter than SPELLING_MIN_LENGTH are left alone.

The vocabulary is counted over the whole archive ahead of time (`count_written_words`; a Celery
task once a day, in links that go on from the count's position, and a step of the demo), not
when a search is asked: a search looks up its own words, and only when one is written nowhere,
that word's edits, one indexed query for all of them. The settings were chosen on tuning sets
and reported on others by benchmarks/spelling.py (docs/search.md).
"""

from __future__ import annotations

import re
import string
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from functools import cache

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from wovepaper.lib.embeddings import minilm_tokenizer_file
from wovepaper.lib.identifiers import arxiv_id_named
from wovepaper.lib.search.base import MAX_WORDS

from .models import WRITTEN_WORD_LENGTH, Paper, WordCount, WrittenWord
from .search import paper_words_held, paper_words_written

# A run of letters: digits, hyphens and apostrophes separate words ("self-atention" holds
# "atention"), as they separate the engines' tokens.
WORD = re.compile(r"[^\W\d_]+")
# Counted words are at least this long: the shortest a word of SPELLING_MIN_LENGTH letters can
# be corrected to (a letter left out) is one shorter, and the settings do not go below 3.
COUNTED_LENGTH = 2
# At most this many of a query's misspelt words are corrected (each costs about 54 edits a
# letter, looked up in one query for all).
MAX_CORRECTED = 6
# Edits are made with these letters: arXiv's titles and abstracts are written in English,
# accents folded (`folded`).
_LETTERS = string.ascii_lowercase
# Parameters per statement: under SQLite's oldest limit (999) and PostgreSQL's.
_LOOKUP_CHUNK = 900


def folded(word: str) -> str:
    """A word as the vocabulary holds it: lower case, accents dropped ("Schrödinger":
    schrodinger), as the engines fold them."""
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def written_words(text: str) -> set[str]:
    """The distinct words a text writes, as the vocabulary counts them."""
    # Most words are ASCII already: lowering them is all their folding (a third of the count).
    words = (w.lower() if w.isascii() else folded(w) for w in WORD.findall(text))
    return {w for w in words if COUNTED_LENGTH <= len(w) <= WRITTEN_WORD_LENGTH and w.isalpha()}


def one_edit_away(word: str) -> set[str]:
    """Every string one edit from `word`: a letter left out, two neighbours swapped, a letter
    replaced or added (Norvig's candidates, with Damerau's transposition)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = [a + b[1:] for a, b in splits if b]
    swaps = [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1]
    replaces = [a + c + b[1:] for a, b in splits if b for c in _LETTERS if c != b[0]]
    inserts = [a + c + b for a, b in splits for c in _LETTERS]
    return set(deletes + swaps + replaces + inserts) - {word}


def papers_writing(words: Iterable[str], *, at_least: int = 1) -> dict[str, int]:
    """How many papers write each of `words` that at least `at_least` do. In SQL of its own: the
    ORM's `__in` prepares each of a misspelt word's ~650 edits apart, ten times the query's own
    time (3.6 against 0.3 ms, the sample)."""
    words = list(words)
    table = connection.ops.quote_name(WrittenWord._meta.db_table)
    found: dict[str, int] = {}
    with connection.cursor() as cursor:
        for start in range(0, len(words), _LOOKUP_CHUNK):
            chunk = words[start : start + _LOOKUP_CHUNK]
            if connection.vendor == "postgresql":
                # One array literal: psycopg adapting ~650 strings one by one took half again
                # as long as the query (1.4 against 0.9 ms at 1M papers).
                parameters: list = [_array_literal(chunk)]
                listed = "= ANY(%s::text[])"
            else:
                parameters, listed = list(chunk), f"IN ({', '.join(['%s'] * len(chunk))})"
            cursor.execute(
                f"SELECT word, papers FROM {table} WHERE word {listed} AND papers >= %s",
                [*parameters, at_least],
            )
            found.update(cursor.fetchall())
    return found


def _array_literal(words: list[str]) -> str:
    """PostgreSQL's text form of an array of these words, each quoted."""
    quoted = (w.replace("\\", "\\\\").replace('"', '\\"') for w in words)
    return "{" + ",".join(f'"{w}"' for w in quoted) + "}"


@dataclass(frozen=True)
class Spelling:
    """A query with its misspelt words corrected: `text` to search, and `parts`, the text in
    pieces with whether each is a correction (a page shows those in bold)."""

    text: str
    parts: tuple[tuple[str, bool], ...]


def _as_typed(correction: str, typed: str) -> str:
    """The correction in the case the reader typed the word in."""
    if typed.isupper() and len(typed) > 1:
        return correction.upper()
    if typed[:1].isupper():
        return correction[:1].upper() + correction[1:]
    return correction


@cache
def english_words() -> frozenset[str]:
    """Words of English: the whole words of the default encoder's WordPiece vocabulary (the
    tokenizer its package ships; about 21,700 of its 30,522 pieces), the most common words of
    the English Wikipedia and books it was built from. A search's word among them is no
    misspelling, whether or not a paper writes it ("towels", "skating")."""
    from tokenizers import Tokenizer

    pieces = Tokenizer.from_file(str(minilm_tokenizer_file())).get_vocab()
    return frozenset(p for p in pieces if p.isascii() and p.isalpha())


def misspelt_words(query: str) -> list[str]:
    """The query's words (folded) that are misspelt here: long enough to correct, no word of
    English (`english_words`), written by no paper, and not held by the keyword engine either
    (which holds an inflection of a word papers write: "eigenvector" where papers write
    "eigenvectors"). At most MAX_CORRECTED of them. A word that some paper writes is never
    misspelt. Papers misspell words too ("backround", in one paper of the sample), but also
    correcting the query's least written word, where a word one edit away is written by 3 to
    100 times as many papers, made no more right suggestions on the tuning sets and some wrong
    ones (benchmarks/spelling.py, 2026-12-07)."""
    english = english_words()
    looked_up = list(
        dict.fromkeys(
            w
            for w in (folded(m[0]) for m in WORD.finditer(query or "") if m[0].isalpha())
            if settings.SPELLING_MIN_LENGTH <= len(w) <= WRITTEN_WORD_LENGTH
            and w.isascii()
            and w not in english
        )
    )[:MAX_WORDS]
    if not looked_up:
        return []
    written = papers_writing(looked_up)
    unwritten = [w for w in looked_up if w not in written]
    held = set(paper_words_held(unwritten)) if unwritten else set()
    return [w for w in unwritten if w not in held][:MAX_CORRECTED]


def spelling_suggestion(query: str) -> Spelling | None:
    """The query with each misspelt word (`misspelt_words`) replaced by the word one edit away
    that the most papers write, if at least SPELLING_MIN_PAPERS do; None when no word is
    corrected, or when the corrected query finds no paper with every word. Four look-ups at
    most: the query's own words in the vocabulary and in the keyword engine, the edits of the
    misspelt ones in one query, and the corrected query's first match."""
    misspelt = misspelt_words(query)
    if not misspelt:
        return None
    typed = [m for m in WORD.finditer(query) if m[0].isalpha()]
    edits = {w: one_edit_away(w) for w in misspelt}
    counts = papers_writing(
        sorted(set().union(*edits.values())), at_least=settings.SPELLING_MIN_PAPERS
    )
    corrections: dict[str, str] = {}
    for word in misspelt:
        # The most written; among as many, the first in alphabetical order, so that the same
        # query always gets the same suggestion.
        best = min(
            (c for c in edits[word] if c in counts),
            key=lambda c: (-counts[c], c),
            default=None,
        )
        if best is not None:
            corrections[word] = best
    if not corrections:
        return None
    parts: list[tuple[str, bool]] = []
    position = 0
    for match in typed:
        correction = corrections.get(folded(match[0]))
        if correction is None:
            continue
        parts.append((query[position : match.start()], False))
        parts.append((_as_typed(correction, match[0]), True))
        position = match.end()
    parts.append((query[position:], False))
    kept = tuple((text, corrected) for text, corrected in parts if text)
    text = "".join(text for text, _ in kept).strip()
    # A suggestion is worth following only to papers: where a word of a made-up query ("vintor
    # quabe") lies one edit from a real one, the others still find nothing.
    if not paper_words_written([text]):
        return None
    return Spelling(text=text, parts=kept)


def search_spelling(query: str, total: int) -> Spelling | None:
    """The suggestion a search shows (the page, its markdown, the API): only where no paper
    holds every word (`total`, the papers that contain the words, is 0; by meaning, none is
    close), and never for an arXiv id, which is no words."""
    if total or arxiv_id_named(query):
        return None
    return spelling_suggestion(query)


def word_count_start() -> WordCount:
    """A new count: every word's count in progress back to 0. The last complete count
    (WrittenWord.papers) serves searches until this one is done."""
    now = timezone.now()
    with transaction.atomic():
        WordCount.objects.filter(finished_at__isnull=True).update(finished_at=now)
        WrittenWord.objects.exclude(counting=0).update(counting=0)
        return WordCount.objects.create(started_at=now, progressed_at=now)


def word_count_running(*, stale_after: float) -> WordCount | None:
    """The count in progress that has moved within `stale_after` seconds, if any."""
    since = timezone.now() - timedelta(seconds=stale_after)
    return (
        WordCount.objects.filter(finished_at__isnull=True, progressed_at__gte=since)
        .order_by("-pk")
        .first()
    )


def word_count_go_on(
    count: WordCount,
    *,
    batch_size: int = 2000,
    seconds: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> bool:
    """Count papers past `count.counted_through`, a batch at a time (each batch's counts and
    the new position in one transaction), for at most `seconds`; at the end of the papers make
    the count the vocabulary (words no paper writes any more leave it). Whether it is done;
    also False, at once, when another process has moved the count on meanwhile."""
    began = time.monotonic()
    read = 0
    while seconds is None or time.monotonic() - began < seconds:
        rows = list(
            Paper.objects.filter(pk__gt=count.counted_through, is_deleted=False)
            .order_by("pk")
            .values_list("pk", "title", "abstract", "authors")[:batch_size]
        )
        if not rows:
            with transaction.atomic():
                WrittenWord.objects.filter(counting=0).delete()
                # Only the words whose count moved: most of a day's are unchanged.
                WrittenWord.objects.exclude(papers=F("counting")).update(papers=F("counting"))
                count.finished_at = count.progressed_at = timezone.now()
                count.save(update_fields=["finished_at", "progressed_at"])
            return True
        counts: Counter[str] = Counter()
        for _, title, abstract, authors in rows:
            counts.update(written_words(f"{title} {abstract} {authors}"))
        with transaction.atomic():
            # A link delivered twice (its worker died after queueing the next) finds the count
            # moved on by the other and leaves it to that one.
            held = WordCount.objects.select_for_update().get(pk=count.pk)
            if held.counted_through != count.counted_through or held.finished_at:
                return False
            _add_to_count(counts)
            count.counted_through, count.progressed_at = rows[-1][0], timezone.now()
            count.save(update_fields=["counted_through", "progressed_at"])
        read += len(rows)
        if progress is not None:
            progress(read)
    return False


def count_written_words(
    *, batch_size: int = 2000, progress: Callable[[int], None] | None = None
) -> int:
    """Count, for every word that papers write, how many papers write it, all at once (the
    command, the demo; the Celery task goes in links of bounded length instead). Returns how
    many distinct words papers write."""
    word_count_go_on(word_count_start(), batch_size=batch_size, progress=progress)
    return WrittenWord.objects.count()


def _add_to_count(counts: Counter[str]) -> None:
    table = connection.ops.quote_name(WrittenWord._meta.db_table)
    # The same upsert on SQLite and PostgreSQL; Django's bulk_create can only overwrite.
    statement = (
        f"INSERT INTO {table} (word, papers, counting) VALUES (%s, 0, %s) "
        f"ON CONFLICT (word) DO UPDATE SET counting = {table}.counting + excluded.counting"
    )
    with connection.cursor() as cursor:
        cursor.executemany(statement, sorted(counts.items()))
