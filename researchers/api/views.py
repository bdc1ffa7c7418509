from __future__ import annotations

from django.http import Http404, HttpResponse
from django.urls import reverse
from django.utils.http import http_date
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics
from rest_framework.response import Response

from institutions.api.lookups import institution_or_404
from papers.api.serializers import PaperSerializer
from papers.selectors import (
    PAPER_ORDERING,
    paper_list_prefetch,
    papers_by_researcher,
    papers_listed,
)
from researchers.models import Researcher
from researchers.selectors import (
    RESEARCHER_ORDERING,
    researcher_get,
    researcher_merge_and_name,
    researcher_survivor_id,
    researchers_linked_to_institution,
    researchers_named,
    researchers_public,
    researchers_sharing_name,
)
from wovepaper.lib.api.conditional import ConditionalGetMixin
from wovepaper.lib.api.pagination import KeysetPagination
from wovepaper.lib.api.redirects import permanent_redirect
from wovepaper.lib.api.schema import INSTITUTION_KEY, error_responses, query_params

from .serializers import (
    ResearcherDetailSerializer,
    ResearcherSearchParamsSerializer,
    ResearcherSerializer,
)

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

    def live_or_moved(self, request, researcher: Researcher | None) -> Researcher | HttpResponse:
        """`researcher` when it is a live record to answer with; the 301 to its survivor when
        it was merged; a 404 when there is no record."""
        if researcher is None:
            raise Http404("No researcher with that id.")
        if researcher.merged_into_id is not None:
            return self.merged_redirect(request, researcher.pk) or researcher
        return researcher


RESEARCHER_PAGE = OpenApiResponse(
    ResearcherSerializer(many=True), description="A page of researchers."
)


class ResearcherPageView(ConditionalGetMixin, generics.ListAPIView):
    """Researchers, a keyset page at a time, most papers first."""

    serializer_class = ResearcherSerializer
    pagination_class = KeysetPagination
    ordering = RESEARCHER_ORDERING


@extend_schema_view(
    get=extend_schema(
        operation_id="researchers_list",
        summary="List researchers, most papers first",
        description="Every researcher record (merged records excluded), by papers on wovepaper.",
        responses={200: RESEARCHER_PAGE, **error_responses(400, 404)},
        tags=["researchers"],
    )
)
class ResearcherListView(ResearcherPageView):
    def get_queryset(self):
        return researchers_public()


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
        researcher = self.live_or_moved(request, researcher_get(pk))
        if isinstance(researcher, HttpResponse):
            return researcher
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


class ResearcherSameNameView(ResearcherResourceMixin, ResearcherPageView):
    def get_queryset(self):
        return researchers_sharing_name(self.name_key, exclude=self.kwargs["pk"])

    @extend_schema(
        operation_id="researchers_same_name",
        summary="Other researchers with the same name",
        description="Separate records that share this researcher's normalized name (`name_key`)."
        " Records are never merged only because their names match.",
        parameters=[RESEARCHER_ID],
        responses={200: RESEARCHER_PAGE, 301: MERGED, **error_responses(400, 404)},
        tags=["researchers"],
    )
    def get(self, request, pk: int):
        # One read for both: is the record live, and which name do the others share?
        row = researcher_merge_and_name(pk)
        if row is None:
            raise Http404("No researcher with that id.")
        merged_into, self.name_key = row
        if merged_into is not None:
            return self.merged_redirect(request, pk)
        return super().get(request, pk=pk)


@extend_schema_view(
    get=extend_schema(
        operation_id="search_researchers",
        summary="Search researchers by name",
        description="Researchers whose name holds each word of `q` (case and accents ignored), "
        "most papers first: the site's search, paged by cursor.",
        parameters=[ResearcherSearchParamsSerializer],
        responses={200: RESEARCHER_PAGE, **error_responses(400, 404)},
        tags=["search"],
    )
)
class ResearcherSearchView(ResearcherPageView):
    def get_queryset(self):
        return researchers_named(query_params(self.request, ResearcherSearchParamsSerializer)["q"])


@extend_schema_view(
    get=extend_schema(
        operation_id="institutions_researchers",
        summary="Researchers at an institution",
        description="Researchers with at least one paper listing this institution, most papers "
        "first.",
        parameters=[INSTITUTION_KEY],
        responses={200: RESEARCHER_PAGE, **error_responses(400, 404)},
        tags=["institutions"],
    )
)
class InstitutionResearchersView(ResearcherPageView):
    def get_queryset(self):
        return researchers_linked_to_institution(institution_or_404(self.kwargs["key"]))
