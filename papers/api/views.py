from __future__ import annotations

from datetime import date

from django.db.models import QuerySet
from django.http import Http404
from django.utils.http import http_date
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from papers.converters import ArxivIdConverter
from papers.models import Citation, Paper
from papers.selectors import (
    PAPER_ORDERING,
    paper_list_prefetch,
    papers_by_category,
    papers_by_institution,
    papers_by_researcher,
    papers_listed,
    papers_with_bylines,
)
from papers.spelling import search_spelling
from wovepaper.lib.api.conditional import ConditionalGetMixin
from wovepaper.lib.api.pagination import KeysetPagination
from wovepaper.lib.api.schema import converter_path_parameter, error_responses, query_params
from wovepaper.lib.bounds import day_after
from wovepaper.lib.identifiers import arxiv_id_named
from wovepaper.lib.search import SearchPage

from .examples import paper_example, paper_search_example
from .lookups import searched_page
from .serializers import (
    CitationSourceSerializer,
    CitingSerializer,
    PaperDetailSerializer,
    PaperFilterSerializer,
    PaperSearchParamsSerializer,
    PaperSearchResponseSerializer,
    PaperSearchResultSerializer,
    PaperSerializer,
    ReferenceSerializer,
    day_start,
)

ARXIV_ID_PARAMETER = converter_path_parameter(
    "arxiv_id",
    ArxivIdConverter,
    description="An arXiv id, new-style (`2401.01234`) or old-style with its slash "
    "(`astro-ph/9901001`); a version suffix (`v2`) is accepted and ignored.",
    examples={"new-style": "0704.0001", "old-style": "astro-ph/9901001"},
)


def papers_in_range(
    papers: QuerySet[Paper], start: date | None, end: date | None, field: str = "published"
) -> QuerySet[Paper]:
    if start:
        papers = papers.filter(**{f"{field}__gte": day_start(start)})
    if (after_end := day_after(end)) is not None:
        papers = papers.filter(**{f"{field}__lt": day_start(after_end)})
    return papers


@extend_schema_view(
    get=extend_schema(
        operation_id="papers_list",
        summary="List papers, newest first",
        description="Every paper, newest first (by the date of version 1), optionally filtered. "
        "Filters combine. Paged with cursors: follow `next`.",
        parameters=[PaperFilterSerializer],
        responses={
            200: OpenApiResponse(PaperSerializer(many=True), description="A page of papers."),
            **error_responses(400, 404),
        },
        examples=[
            OpenApiExample(
                "a page", value=paper_example(), response_only=True, status_codes=["200"]
            )
        ],
        tags=["papers"],
    )
)
class PaperListView(ConditionalGetMixin, generics.ListAPIView):
    serializer_class = PaperSerializer
    pagination_class = KeysetPagination

    def filters(self) -> dict:
        if not hasattr(self, "_filters"):
            self._filters = query_params(self.request, PaperFilterSerializer)
        return self._filters

    def get_ordering(self) -> tuple[str, ...]:
        return ("-cat_published", "-id") if self.filters().get("category") else PAPER_ORDERING

    def get_queryset(self) -> QuerySet[Paper]:
        f = self.filters()
        papers = papers_listed()
        date_field = "published"
        if f.get("category"):
            papers = papers_by_category(papers, f["category"])
            date_field = "cat_published"
        papers = papers_in_range(papers, f.get("published_from"), f.get("published_to"), date_field)
        if f.get("researcher"):
            papers = papers_by_researcher(papers, f["researcher"])
        if f.get("institution"):
            papers = papers_by_institution(papers, f["institution"])
        return paper_list_prefetch(papers)


class PaperDetailView(ConditionalGetMixin, generics.RetrieveAPIView):
    serializer_class = PaperDetailSerializer

    def get_object(self) -> Paper:
        papers = Paper.objects.select_related("analysis").prefetch_related(
            "authorships__researcher", "authorships__institution_links__institution"
        )
        try:
            return papers.get(arxiv_id=self.kwargs["arxiv_id"])
        except Paper.DoesNotExist:
            raise Http404("No paper with that arXiv id.") from None

    @extend_schema(
        operation_id="papers_retrieve",
        summary="One paper",
        description="A paper by its arXiv id, with its byline (each author's matched researcher "
        "and institutions). Answers `ETag` and `Last-Modified`; send "
        "`If-None-Match` or `If-Modified-Since` to get 304 when unchanged.",
        parameters=[ARXIV_ID_PARAMETER],
        responses={
            200: OpenApiResponse(PaperDetailSerializer, description="The paper."),
            **error_responses(404),
        },
        examples=[
            OpenApiExample(
                "0704.0001",
                value=paper_example(detail=True),
                response_only=True,
                status_codes=["200"],
            )
        ],
        tags=["papers"],
    )
    def get(self, request, *args, **kwargs):
        paper = self.get_object()
        response = Response(self.get_serializer(paper).data)
        stamps = [paper.modified_at] + [
            a.researcher.modified_at for a in paper.authorships.all() if a.researcher is not None
        ]
        response["Last-Modified"] = http_date(max(stamps).timestamp())
        return response


def search_matches(
    found: SearchPage[Paper], *, by_meaning_alone: bool, by_id: bool = False
) -> dict:
    """Each paper's (match, similarity) on a search page: the word matches (every result of a
    semantic search is a meaning match, with its score when ranked by relevance), then the
    related ones, with theirs; `by_id`: the query named the one paper by its arXiv id."""
    if by_id:
        return {paper.pk: ("id", None) for paper in found.items}
    matches: dict[int, tuple[str, float | None]] = {}
    scores = found.scores if by_meaning_alone and found.scores else [None] * len(found.items)
    for paper, score in zip(found.items, scores, strict=True):
        matches[paper.pk] = ("meaning", score) if by_meaning_alone else ("words", None)
    for paper, similarity in zip(found.related, found.related_scores, strict=True):
        matches[paper.pk] = ("meaning", similarity)
    return matches


class PaperSearchView(ConditionalGetMixin, generics.GenericAPIView):
    serializer_class = PaperSearchResponseSerializer

    @extend_schema(
        operation_id="search_papers",
        summary="Search papers",
        description="Search over titles and abstracts by words, by meaning or both (`mode`), "
        "ranked by relevance (or sorted by date or citations). Paged by page number; counting "
        "stops at 10,000 matches (`count_is_capped`). `count` is of the papers that contain the "
        "words; a hybrid search's first page adds, after them, the papers related by meaning "
        "that do not (`match: meaning`, with their `similarity`), and only those above the "
        "site's similarity floor: a query that no paper contains and none is close to answers "
        "`count: 0` and no results. A semantic count is about that many. A `q` that is nothing "
        "but an arXiv id (`1706.03762`, `arXiv:1706.03762v5`, an arxiv.org address, arXiv's "
        "DOI) finds that paper alone when it is held (`match: id`), whatever the other "
        "parameters.",
        parameters=[PaperSearchParamsSerializer],
        responses={
            200: OpenApiResponse(
                PaperSearchResponseSerializer, description="A page of ranked results."
            ),
            **error_responses(400),
        },
        examples=[
            OpenApiExample(
                "diphoton",
                value={
                    "count": 1,
                    "count_is_capped": False,
                    "did_you_mean": None,
                    "next": None,
                    "previous": None,
                    "results": [paper_search_example()],
                },
                response_only=True,
                status_codes=["200"],
            )
        ],
        tags=["search"],
    )
    def get(self, request, *args, **kwargs):
        p = query_params(request, PaperSearchParamsSerializer)
        page, size = p["page"], p["page_size"]
        result = searched_page(p)
        papers = papers_with_bylines([*result.items, *result.related])
        found = search_matches(
            result,
            by_meaning_alone=p["mode"] == "semantic",
            by_id=arxiv_id_named(p["q"]) is not None,
        )
        url = request.build_absolute_uri()
        has_next = page * size < result.total and page < 500
        spelling = search_spelling(p["q"], result.total)
        return Response(
            {
                "count": result.total,
                "count_is_capped": result.total_is_capped,
                "did_you_mean": spelling.text if spelling else None,
                "next": replace_query_param(url, "page", page + 1) if has_next else None,
                "previous": replace_query_param(url, "page", page - 1) if page > 1 else None,
                "results": PaperSearchResultSerializer(
                    papers, many=True, context={"request": request, "found": found}
                ).data,
            }
        )


class _PaperCitationsView(ConditionalGetMixin, generics.ListAPIView):
    """A paper's citation edges, in the order they were written (the source's order), paged
    by keyset on the edge's id: one indexed range scan at any depth."""

    pagination_class = KeysetPagination
    ordering = ("id",)

    def paper(self) -> Paper:
        paper = Paper.objects.filter(arxiv_id=self.kwargs["arxiv_id"], is_deleted=False).first()
        if paper is None:
            raise Http404("No paper with that arXiv id.")
        return paper

    def source(self) -> str | None:
        return query_params(self.request, CitationSourceSerializer).get("source")

    def edges(self, **filters) -> QuerySet[Citation]:
        edges = Citation.objects.filter(**filters)
        source = self.source()
        return edges.filter(source=source) if source else edges


@extend_schema_view(
    get=extend_schema(
        operation_id="papers_references",
        summary="The works a paper cites",
        description="Each work the paper cites, as each source lists it (where Semantic "
        "Scholar and OpenAlex both list a work, once for each), with the ids the source gave, "
        "the archive paper it resolved to (or null), and when the source said so. OpenAlex "
        "gives ids only: its items have no title unless they are archive papers. Paged with "
        "cursors: follow `next`.",
        parameters=[ARXIV_ID_PARAMETER, CitationSourceSerializer],
        responses={
            200: OpenApiResponse(ReferenceSerializer(many=True), description="A page."),
            **error_responses(400, 404),
        },
        tags=["papers"],
    )
)
class PaperReferencesView(_PaperCitationsView):
    serializer_class = ReferenceSerializer

    def get_queryset(self) -> QuerySet[Citation]:
        return self.edges(citing_paper=self.paper()).select_related("cited_paper")


@extend_schema_view(
    get=extend_schema(
        operation_id="papers_citations",
        summary="The archive's papers citing a paper",
        description="Each paper of this archive that cites the paper, as each source said so "
        "(a paper both sources name is listed once for each). Citing works outside the archive "
        "are not listed; the paper's `cited_by_count` is the source's count of all of them. "
        "Paged with cursors: follow `next`.",
        parameters=[ARXIV_ID_PARAMETER, CitationSourceSerializer],
        responses={
            200: OpenApiResponse(CitingSerializer(many=True), description="A page."),
            **error_responses(400, 404),
        },
        tags=["papers"],
    )
)
class PaperCitationsView(_PaperCitationsView):
    serializer_class = CitingSerializer

    def get_queryset(self) -> QuerySet[Citation]:
        return self.edges(cited_paper=self.paper()).select_related("citing_paper")
