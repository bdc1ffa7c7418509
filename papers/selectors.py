"""Reads shared by pages, the API, feeds and tasks. Each runs a fixed number of queries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import connections, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import (
    F,
    Field,
    Model,
    Prefetch,
    QuerySet,
    prefetch_related_objects,
)
from django.db.models.functions import Lower, Substr

from . import registry
from .bylines import BYLINE_FULL, WRITTEN_SHOWN, BylineRow, byline_short
from .models import Authorship, Paper, PaperCategory


def listed(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """`papers` as a list page reads them: without the byline as written (a collaboration's
    runs to tens of kilobytes), which papers_with_short_bylines reads cut where a list shows
    it, for the papers no name was read from."""
    return papers.defer("authors")


def _bylines() -> Prefetch:
    return Prefetch(
        "authorships",
        queryset=Authorship.objects.select_related("researcher").order_by("position"),
    )


def paper_list_prefetch(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """Papers with their bylines and matched researchers, in one extra query for any page size,
    and their analyses (joined)."""
    return papers.select_related("analysis").prefetch_related(_bylines())


def papers_with_bylines(papers: Sequence[Paper] | Iterable[Paper]) -> list[Paper]:
    """The same prefetch for a list already loaded (e.g. search results in rank order)."""
    papers = list(papers)
    prefetch_related_objects(papers, _bylines(), "analysis")
    return papers


def papers_with_short_bylines(
    papers: Sequence[Paper] | Iterable[Paper], *, focus_ids: Iterable[int] = ()
) -> list[Paper]:
    """Papers for a list page, each with `byline` (a papers.bylines.Byline): the first names,
    the names of the `focus_ids` researchers wherever they stand, and the byline's length.

    One query for any number of papers and any byline length: the names shown (never the
    hundreds of a collaboration paper), the row at position BYLINE_FULL carrying its byline's
    length, read as its last position from the (paper, position) index only where a byline
    reaches that far. The names are read as plain values with their researcher's slug: a list
    links a researcher and shows nothing else of them (their row carries the co-author
    network, which was most of a search page's database time as model instances).
    """
    papers = list(papers)
    if not papers:
        return papers
    focus = sorted(set(focus_ids))
    rows: dict[int, list[BylineRow]] = {paper.pk: [] for paper in papers}
    lengths: dict[int, int] = {}
    path_for = registry.registered("researcher_path")
    connection = connections[router.db_for_read(Authorship)]
    with connection.cursor() as cursor:
        cursor.execute(*_short_byline_sql(connection, list(rows), focus))
        for paper_id, position, name, researcher_id, slug, last in cursor.fetchall():
            url = path_for(researcher_id, slug) if researcher_id is not None else ""
            rows[paper_id].append(BylineRow(paper_id, position, name, researcher_id, url))
            if last is not None:
                lengths[paper_id] = last
    # A list that left the byline as written unread (`listed`) reads it cut, in one query for
    # the papers no name was read from (few: a name is read from nearly every byline).
    unread = [p.pk for p in papers if not rows[p.pk] and "authors" in p.get_deferred_fields()]
    heads = {}
    if unread:
        cut = Substr("authors", 1, WRITTEN_SHOWN + 1)
        heads = dict(Paper.objects.filter(pk__in=unread).values_list("pk", cut))
    for paper in papers:
        total = lengths.get(paper.pk) or sum(
            1 for row in rows[paper.pk] if row.position <= BYLINE_FULL
        )
        written = ""
        if not rows[paper.pk]:
            written = heads[paper.pk] if paper.pk in heads else paper.authors[: WRITTEN_SHOWN + 1]
        byline = byline_short(rows[paper.pk], total, focus, written=written)
        paper.byline = byline  # type: ignore[attr-defined]  # an attribute for the templates
    return papers


def _short_byline_sql(
    connection: BaseDatabaseWrapper, paper_ids: list[int], focus: list[int]
) -> tuple[str, list[int]]:
    """The short bylines' query (papers_with_short_bylines): the names at positions up to
    BYLINE_FULL and the focus researchers', each with its researcher's slug, and at position
    BYLINE_FULL the byline's last position, from the (paper, position) index.

    Written as SQL: the same query built by the ORM (a Case over a Subquery, a join for the
    slug) took 1.10 ms to build and compile against 0.33 ms for the whole round trip at 1M
    papers, on every list page. Plain SQL that SQLite and PostgreSQL both run; names from the
    models' metadata."""
    quote = connection.ops.quote_name
    researcher = Authorship.researcher.field.related_model

    def column(model: type[Model], field_name: str) -> str:
        field = model._meta.get_field(field_name)
        return quote(str(field.column if isinstance(field, Field) else field_name))

    paper, position, name, researcher_id = (
        column(Authorship, f) for f in ("paper", "position", "name", "researcher")
    )
    researcher_key = column(researcher, str(researcher._meta.pk.name))
    slug = column(researcher, "slug")
    authorships, researchers = quote(Authorship._meta.db_table), quote(researcher._meta.db_table)
    shown = f"a.{position} <= %s"
    if focus:
        shown = f"({shown} OR a.{researcher_id} IN ({', '.join(['%s'] * len(focus))}))"
    sql = (
        f"SELECT a.{paper}, a.{position}, a.{name}, a.{researcher_id}, r.{slug},"
        f" CASE WHEN a.{position} = %s THEN (SELECT b.{position} FROM {authorships} b"
        f" WHERE b.{paper} = a.{paper} ORDER BY b.{position} DESC LIMIT 1) END"
        f" FROM {authorships} a"
        f" LEFT JOIN {researchers} r ON r.{researcher_key} = a.{researcher_id}"
        f" WHERE {shown} AND a.{paper} IN ({', '.join(['%s'] * len(paper_ids))})"
        f" ORDER BY a.{paper}, a.{position}"
    )
    return sql, [BYLINE_FULL, BYLINE_FULL, *focus, *paper_ids]


def paper_for_page(arxiv_id: str) -> Paper | None:
    """One paper with its byline, matched researchers (and whom they were merged into) and the
    institutions of each author (`authorship.institutions`): three queries whatever the byline
    length. The institutions are read in one flat query and handed out here: a nested prefetch
    built a queryset per author, most of a 628-author page's time."""
    paper = (
        Paper.objects.filter(arxiv_id=arxiv_id)
        .select_related("analysis")
        .prefetch_related(
            Prefetch(
                "authorships",
                queryset=Authorship.objects.select_related(
                    "researcher", "researcher__merged_into"
                ).order_by("position"),
            )
        )
        .first()
    )
    if paper is None:
        return None
    institutions = registry.registered("authorship_institutions")(paper.pk)
    for authorship in paper.authorships.all():
        # For the page: each authorship's institutions, read in one query above.
        authorship.institutions = institutions.get(authorship.pk, [])  # type: ignore[attr-defined]
    return paper


def papers_by_doi(dois: Iterable[str], papers: QuerySet[Paper] | None = None) -> dict[str, Paper]:
    """The papers that DOIs name, by each DOI folded to lower case: those whose doi is that
    DOI (the partial lower(doi) index), then those whose doi field lists it among several (the
    partial index of such papers, read whole: they are few). Two queries."""
    wanted = {doi.lower() for doi in dois if doi}
    if not wanted:
        return {}
    held = papers if papers is not None else Paper.objects.all()
    found: dict[str, Paper] = {}
    # The lower(doi) index is partial (no empty DOIs): the query says so to be able to use it.
    equal = held.exclude(doi="").annotate(doi_lower=Lower("doi")).filter(doi_lower__in=wanted)
    for one in equal:
        found.setdefault(one.doi.lower(), one)
    if missing := wanted - set(found):
        for several in held.filter(doi__contains=" "):
            for doi in several.doi_list:
                if doi.lower() in missing:
                    found.setdefault(doi.lower(), several)
    return found


def paper_named(arxiv_id: str) -> Paper | None:
    """The paper with this arXiv id, when we hold it and have not deleted it (one query): what
    a search for the id alone leads to."""
    found = papers_for_citation(arxiv_ids=[arxiv_id])
    return found[0] if found else None


def papers_for_citation(*, arxiv_ids: list[str]) -> list[Paper]:
    """The papers with these arXiv ids that we hold and have not deleted, in the order asked
    (one query; their names are read by papers.citations.export)."""
    by_id = {p.arxiv_id: p for p in Paper.objects.filter(arxiv_id__in=arxiv_ids, is_deleted=False)}
    return [by_id[i] for i in arxiv_ids if i in by_id]


def papers_newest(*, limit: int, offset: int = 0) -> list[Paper]:
    """The newest papers on arXiv that we hold, with bylines (one index range scan)."""
    return papers_with_short_bylines(
        listed(Paper.objects.filter(is_deleted=False)).order_by("-published", "-id")[
            offset : offset + limit
        ]
    )


def category_is_held(code: str) -> bool:
    """Whether any paper we hold is listed in category `code` (one index probe)."""
    return PaperCategory.objects.filter(code=code).exists()


def papers_in_category(*, code: str, offset: int, limit: int) -> list[Paper]:
    """The newest papers listed in a category, through the (code, -published) index."""
    ids = list(
        PaperCategory.objects.filter(code=code)
        .order_by("-published", "-paper_id")
        .values_list("paper_id", flat=True)[offset : offset + limit]
    )
    by_id = listed(Paper.objects.all()).in_bulk(ids)
    return papers_with_short_bylines(by_id[i] for i in ids if i in by_id)


# The order of paper lists in the API (keyset-paged) and of the pages' newest-first lists.
PAPER_ORDERING = ("-published", "-id")


def papers_listed() -> QuerySet[Paper]:
    """Papers that lists, feeds and the API show: not deleted upstream, and dated (lists are
    ordered by date, newest first)."""
    return Paper.objects.filter(is_deleted=False, published__isnull=False)


def papers_by_category(papers: QuerySet[Paper], code: str) -> QuerySet[Paper]:
    """Papers listed in a category, annotated with `cat_published`: PaperCategory's copy of the
    paper's date, so that ordering by it walks the (code, -published) index; ordering by the
    paper's own column would sort the whole category."""
    return papers.filter(category_links__code=code).annotate(
        cat_published=F("category_links__published")
    )


def papers_by_institution(papers: QuerySet[Paper], institution_id: int) -> QuerySet[Paper]:
    return papers.filter(id__in=registry.registered("institution_paper_ids")(institution_id))


def papers_by_researcher(papers: QuerySet[Paper], researcher_id: int) -> QuerySet[Paper]:
    return papers.filter(
        id__in=Authorship.objects.filter(researcher_id=researcher_id).values("paper_id")
    )
