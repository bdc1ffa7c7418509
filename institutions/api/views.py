from __future__ import annotations

from django.utils.http import http_date
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics
from rest_framework.response import Response

from institutions.selectors import (
    INSTITUTION_ORDERING,
    institutions_listed,
    institutions_named,
)
from papers.api.serializers import PaperSerializer
from papers.selectors import (
    PAPER_ORDERING,
    paper_list_prefetch,
    papers_by_institution,
    papers_listed,
)
from wovepaper.lib.api.conditional import ConditionalGetMixin
from wovepaper.lib.api.pagination import KeysetPagination
from wovepaper.lib.api.schema import INSTITUTION_KEY, error_responses, query_params

from .lookups import institution_or_404
from .serializers import (
    InstitutionDetailSerializer,
    InstitutionListParamsSerializer,
    InstitutionSearchParamsSerializer,
    InstitutionSerializer,
)

INSTITUTION_PAGE = OpenApiResponse(
    InstitutionSerializer(many=True), description="A page of institutions."
)


class InstitutionPageView(ConditionalGetMixin, generics.ListAPIView):
    """Institutions, a keyset page at a time, most papers first."""

    serializer_class = InstitutionSerializer
    pagination_class = KeysetPagination
    ordering = INSTITUTION_ORDERING


@extend_schema_view(
    get=extend_schema(
        operation_id="institutions_list",
        summary="List institutions, most papers first",
        description="Institutions (ROR organisations) linked to papers on wovepaper, by papers.",
        parameters=[InstitutionListParamsSerializer],
        responses={200: INSTITUTION_PAGE, **error_responses(400, 404)},
        tags=["institutions"],
    )
)
class InstitutionListView(InstitutionPageView):
    def get_queryset(self):
        params = query_params(self.request, InstitutionListParamsSerializer)
        return institutions_listed(country=params.get("country") or "")


class InstitutionDetailView(ConditionalGetMixin, generics.GenericAPIView):
    serializer_class = InstitutionDetailSerializer

    @extend_schema(
        operation_id="institutions_retrieve",
        summary="One institution",
        description="An institution by id or ROR id. Answers `ETag` and `Last-Modified`.",
        parameters=[INSTITUTION_KEY],
        responses={
            200: OpenApiResponse(InstitutionDetailSerializer, description="The institution."),
            **error_responses(404),
        },
        tags=["institutions"],
    )
    def get(self, request, key: str):
        institution = institution_or_404(key)
        response = Response(self.get_serializer(institution).data)
        response["Last-Modified"] = http_date(institution.modified_at.timestamp())
        return response


@extend_schema_view(
    get=extend_schema(
        operation_id="institutions_papers",
        summary="Papers with an author at an institution, newest first",
        description="Papers where at least one author is listed at this institution.",
        parameters=[INSTITUTION_KEY],
        responses={
            200: OpenApiResponse(PaperSerializer(many=True), description="A page of papers."),
            **error_responses(400, 404),
        },
        tags=["institutions"],
    )
)
class InstitutionPapersView(ConditionalGetMixin, generics.ListAPIView):
    serializer_class = PaperSerializer
    pagination_class = KeysetPagination
    ordering = PAPER_ORDERING

    def get_queryset(self):
        institution = institution_or_404(self.kwargs["key"])
        return paper_list_prefetch(papers_by_institution(papers_listed(), institution.pk))


@extend_schema_view(
    get=extend_schema(
        operation_id="search_institutions",
        summary="Search institutions",
        description="Institutions whose name holds each word of `q`, case and accents aside (or "
        "whose ROR id is `q`), most papers first: the site's search, paged by cursor.",
        parameters=[InstitutionSearchParamsSerializer],
        responses={200: INSTITUTION_PAGE, **error_responses(400, 404)},
        tags=["search"],
    )
)
class InstitutionSearchView(InstitutionPageView):
    def get_queryset(self):
        params = query_params(self.request, InstitutionSearchParamsSerializer)
        # ROR lists about 120,000 organisations, so a substring scan of the names stays cheap
        # whatever the number of papers.
        return institutions_named(params["q"], or_ror_id=True)
