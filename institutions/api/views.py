from __future__ import annotations

from django.db.models import Q
from django.http import Http404
from django.utils.http import http_date
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.response import Response

from institutions.models import Institution
from institutions.selectors import ROR_ID, institution_get
from papers.api.serializers import PaperSerializer
from papers.api.views import PAPER_ORDERING
from papers.selectors import (
    paper_list_prefetch,
    papers_by_institution,
    papers_listed,
)
from wovepaper.lib.api.conditional import ConditionalGetMixin
from wovepaper.lib.api.converters import InstitutionKeyConverter
from wovepaper.lib.api.pagination import KeysetPagination
from wovepaper.lib.api.schema import error_responses, query_values
from wovepaper.lib.text import folded_words

from .serializers import (
    InstitutionDetailSerializer,
    InstitutionListParamsSerializer,
    InstitutionSearchParamsSerializer,
    InstitutionSerializer,
)

INSTITUTION_ORDERING = ("-paper_count", "id")

INSTITUTION_KEY = OpenApiParameter(
    "key",
    # The URL converter's own pattern: the schema admits exactly the keys the route does.
    {"type": "string", "pattern": f"^(?:{InstitutionKeyConverter.regex})$"},
    OpenApiParameter.PATH,
    description="An institution id (as in `/institutions/<id>-<slug>`) or its bare ROR id.",
    examples=[OpenApiExample("id", value="1"), OpenApiExample("ROR id", value="042nb2s44")],
)


INSTITUTION_PAGE = OpenApiResponse(
    InstitutionSerializer(many=True), description="A page of institutions."
)


def institution_or_404(key: str) -> Institution:
    institution = institution_get(key)
    if institution is None:
        raise Http404("No institution with that id or ROR id.")
    return institution


class InstitutionPageView(ConditionalGetMixin, generics.ListAPIView):
    """Institutions, a keyset page at a time, most papers first."""

    serializer_class = InstitutionSerializer
    pagination_class = KeysetPagination
    ordering = INSTITUTION_ORDERING


class InstitutionListView(InstitutionPageView):
    def get_queryset(self):
        params = InstitutionListParamsSerializer(
            data=query_values(self.request, InstitutionListParamsSerializer)
        )
        params.is_valid(raise_exception=True)
        institutions = Institution.objects.all()
        if params.validated_data.get("country"):
            institutions = institutions.filter(
                country_code=params.validated_data["country"].upper()
            )
        return institutions

    @extend_schema(
        operation_id="institutions_list",
        summary="List institutions, most papers first",
        description="Institutions (ROR organisations) linked to papers on wovepaper, by papers.",
        parameters=[InstitutionListParamsSerializer],
        responses={200: INSTITUTION_PAGE, **error_responses(400, 404)},
        tags=["institutions"],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


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


class InstitutionPapersView(ConditionalGetMixin, generics.ListAPIView):
    serializer_class = PaperSerializer
    pagination_class = KeysetPagination
    ordering = PAPER_ORDERING

    def get_queryset(self):
        institution = institution_or_404(self.kwargs["key"])
        return paper_list_prefetch(papers_by_institution(papers_listed(), institution.pk))

    @extend_schema(
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
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class InstitutionSearchView(InstitutionPageView):
    def get_queryset(self):
        params = InstitutionSearchParamsSerializer(
            data=query_values(self.request, InstitutionSearchParamsSerializer)
        )
        params.is_valid(raise_exception=True)
        q = params.validated_data["q"]
        if not q:
            return Institution.objects.none()
        # ROR lists about 120,000 organisations, so a substring scan of the names stays cheap
        # whatever the number of papers.
        match = Q(folded_name__contains=folded_words(q))
        if ROR_ID.match(q.lower()):
            match |= Q(ror_id=q.lower())
        return Institution.objects.filter(match)

    @extend_schema(
        operation_id="search_institutions",
        summary="Search institutions",
        description="Institutions whose name contains `q`, case and accents aside (or whose ROR "
        "id is `q`), most papers first.",
        parameters=[InstitutionSearchParamsSerializer],
        responses={200: INSTITUTION_PAGE, **error_responses(400, 404)},
        tags=["search"],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)
