from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from django.urls import reverse
from django.utils.http import http_date
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.response import Response

from institutions.api.views import INSTITUTION_KEY
from institutions.models import AuthorshipInstitution
from institutions.selectors import institution_get
from papers.api.serializers import PaperSerializer
from papers.api.views import PAPER_ORDERING
from papers.models import Authorship
from papers.selectors import (
    paper_list_prefetch,
    papers_by_researcher,
    papers_listed,
)
from researchers.models import Researcher
from researchers.names import name_key
from researchers.selectors import researcher_survivor_id
from wovepaper.lib.api.conditional import ConditionalGetMixin
from wovepaper.lib.api.pagination import KeysetPagination
from wovepaper.lib.api.redirects import permanent_redirect
from wovepaper.lib.api.schema import error_responses, query_values

from .serializers import (
    ResearcherDetailSerializer,
    ResearcherSearchParamsSerializer,
    ResearcherSerializer,
)

RESEARCHER_ORDERING = ("-paper_count", "id")

RESEARCHER_ID = OpenApiParameter(
    "id",
    int,
    OpenApiParameter.PATH,
    description="A researcher id, as in `/researchers/<id>-<slug>`.",
)
MERGED = OpenApiResponse(
    description="This id was merged into another record: `Location` is the same resource of "
    "the surviving record (merge chains are followed to the end)."
)


def researchers_listed() -> QuerySet[Researcher]:
    return Researcher.objects.filter(merged_into__isnull=True)


class ResearcherResourceMixin:
    """Sub-resources of one researcher: 404 for an unknown id, 301 for a merged one."""

    def merged_redirect(self, request, researcher_id: int) -> HttpResponse | None:
        survivor = researcher_survivor_id(researcher_id)
        if survivor is None:
            raise Http404("No researcher with that id.")
        if survivor == researcher_id:
            return None
        url = reverse(request.resolver_match.url_name, args=[survivor])
        return permanent_redirect(url, request)


class ResearcherListView(ConditionalGetMixin, generics.ListAPIView):
    serializer_class = ResearcherSerializer
    pagination_class = KeysetPagination
    ordering = RESEARCHER_ORDERING

    def get_queryset(self):
        return researchers_listed()

    @extend_schema(
        operation_id="researchers_list",
        summary="List researchers, most papers first",
        description="Every researcher record (merged records excluded), by papers on wovepaper.",
        responses={
            200: OpenApiResponse(
                ResearcherSerializer(many=True), description="A page of researchers."
            ),
            **error_responses(400, 404),
        },
        tags=["researchers"],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class ResearcherDetailView(ResearcherResourceMixin, ConditionalGetMixin, generics.GenericAPIView):
    serializer_class = ResearcherDetailSerializer

    @extend_schema(
        operation_id="researchers_retrieve",
        summary="One researcher",
        description="A researcher with the figures shown on their page. Answers `ETag` and "
        "`Last-Modified`. A merged id answers 301 to the surviving record.",
        parameters=[RESEARCHER_ID],
        responses={
            200: OpenApiResponse(ResearcherDetailSerializer, description="The researcher."),
            301: MERGED,
            **error_responses(404),
        },
        tags=["researchers"],
    )
    def get(self, request, pk: int):
        researcher = (
            Researcher.objects.select_related("most_cited_paper")
            .prefetch_related("external_ids")
            .filter(pk=pk)
            .first()
        )
        if researcher is None:
            raise Http404("No researcher with that id.")
        if researcher.merged_into_id is not None:
            return self.merged_redirect(request, pk)
        response = Response(self.get_serializer(researcher).data)
        stamps = [researcher.modified_at]
        if researcher.most_cited_paper is not None:
            stamps.append(researcher.most_cited_paper.modified_at)
        response["Last-Modified"] = http_date(max(stamps).timestamp())
        return response


class ResearcherPapersView(ResearcherResourceMixin, ConditionalGetMixin, generics.ListAPIView):
    serializer_class = PaperSerializer
    pagination_class = KeysetPagination
    ordering = PAPER_ORDERING

    def get_queryset(self):
        return paper_list_prefetch(papers_by_researcher(papers_listed(), self.kwargs["pk"]))

    @extend_schema(
        operation_id="researchers_papers",
        summary="A researcher's papers, newest first",
        description="Papers attributed to this researcher by matching, newest first. A merged "
        "id answers 301 to the surviving record's papers.",
        parameters=[RESEARCHER_ID],
        responses={
            200: OpenApiResponse(PaperSerializer(many=True), description="A page of papers."),
            301: MERGED,
            **error_responses(400, 404),
        },
        tags=["researchers"],
    )
    def get(self, request, pk: int):
        redirect = self.merged_redirect(request, pk)
        return redirect or super().get(request, pk=pk)


class ResearcherSameNameView(ResearcherResourceMixin, ConditionalGetMixin, generics.ListAPIView):
    serializer_class = ResearcherSerializer
    pagination_class = KeysetPagination
    ordering = RESEARCHER_ORDERING

    def get_queryset(self):
        name_key = self.name_key
        if not name_key:
            return Researcher.objects.none()
        return researchers_listed().filter(name_key=name_key).exclude(pk=self.kwargs["pk"])

    @extend_schema(
        operation_id="researchers_same_name",
        summary="Other researchers with the same name",
        description="Separate records that share this researcher's normalized name (`name_key`)."
        " Records are never merged only because their names match.",
        parameters=[RESEARCHER_ID],
        responses={
            200: OpenApiResponse(
                ResearcherSerializer(many=True), description="A page of researchers."
            ),
            301: MERGED,
            **error_responses(400, 404),
        },
        tags=["researchers"],
    )
    def get(self, request, pk: int):
        # One read for both: is the record live, and which name do the others share?
        row = Researcher.objects.filter(pk=pk).values_list("merged_into_id", "name_key").first()
        if row is None:
            raise Http404("No researcher with that id.")
        merged_into, self.name_key = row
        if merged_into is not None:
            return self.merged_redirect(request, pk)
        return super().get(request, pk=pk)


class ResearcherSearchView(ConditionalGetMixin, generics.ListAPIView):
    serializer_class = ResearcherSerializer
    pagination_class = KeysetPagination
    ordering = RESEARCHER_ORDERING

    def get_queryset(self):
        params = ResearcherSearchParamsSerializer(
            data=query_values(self.request, ResearcherSearchParamsSerializer)
        )
        params.is_valid(raise_exception=True)
        key = name_key(params.validated_data["q"])
        if not key:
            return Researcher.objects.none()
        # A prefix match on the indexed name_key (PostgreSQL adds a pattern-ops index for it).
        return researchers_listed().filter(name_key__startswith=key)

    @extend_schema(
        operation_id="search_researchers",
        summary="Search researchers by name",
        description="Researchers whose normalized name starts with `q` (case and accents "
        "ignored), most papers first.",
        parameters=[ResearcherSearchParamsSerializer],
        responses={
            200: OpenApiResponse(
                ResearcherSerializer(many=True), description="A page of researchers."
            ),
            **error_responses(400, 404),
        },
        tags=["search"],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class InstitutionResearchersView(ConditionalGetMixin, generics.ListAPIView):
    serializer_class = ResearcherSerializer
    pagination_class = KeysetPagination
    ordering = RESEARCHER_ORDERING

    def get_queryset(self):
        institution = institution_get(self.kwargs["key"])
        if institution is None:
            raise Http404("No institution with that id or ROR id.")
        authorships = Authorship.objects.filter(
            id__in=AuthorshipInstitution.objects.filter(institution=institution).values(
                "authorship_id"
            )
        )
        return researchers_listed().filter(id__in=authorships.values("researcher_id"))

    @extend_schema(
        operation_id="institutions_researchers",
        summary="Researchers at an institution",
        description="Researchers with at least one paper listing this institution, most papers "
        "first.",
        parameters=[INSTITUTION_KEY],
        responses={
            200: OpenApiResponse(
                ResearcherSerializer(many=True), description="A page of researchers."
            ),
            **error_responses(400, 404),
        },
        tags=["institutions"],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)
