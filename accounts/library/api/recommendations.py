"""Papers like a list and the "not relevant" marks, in the API. Session or token authentication."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from papers.api.lookups import held_paper
from papers.api.views import ARXIV_ID_PARAMETER
from papers.converters import normalize_old_style
from papers.selectors import papers_for_citation
from wovepaper.lib.api.pagination import numbered_page_parameters
from wovepaper.lib.api.schema import body_values, error_responses
from wovepaper.lib.api.signed_in import MeApiView, made_or_found_responses

from .. import recommendations
from .lists import LIBRARY_AUTH, LIST_ID_PARAMETER, _own_list
from .serializers import (
    NotRelevantInputSerializer,
    NotRelevantPageSerializer,
    NotRelevantSerializer,
    RecommendationListSerializer,
)


class RecommendationListApi(MeApiView):
    @extend_schema(
        operation_id="me_lists_recommendations_list",
        summary="Papers like one of your lists",
        description="New papers (of the last RECOMMENDATION_DAYS days; where the archive is a "
        "sample with nothing harvested lately, as the demo's, any paper it holds) closest in "
        "meaning to the list's papers, best first, at most 10, each with the saved paper it is "
        "closest to; papers marked not relevant on the site are left out and push their "
        "neighbours down. " + LIBRARY_AUTH,
        parameters=[LIST_ID_PARAMETER],
        responses={200: RecommendationListSerializer, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def get(self, request, list_id: int):
        found = recommendations.list_recommendations(reading_list=_own_list(request, list_id))
        data = RecommendationListSerializer({"results": found}, context={"request": request}).data
        return Response(data)


NOT_RELEVANT_TEXT = (
    "A paper marked not relevant is never recommended to you again, and papers close to it in "
    "meaning rank lower in every list's recommendations (by half their similarity to it), as "
    'the site\'s "Not relevant" button does.'
)


class NotRelevantListApi(MeApiView):
    @extend_schema(
        operation_id="me_not_relevant_list",
        summary="List the papers you marked not relevant",
        description="Newest first, 50 a page (`page`, `page_size` up to 200). "
        + NOT_RELEVANT_TEXT
        + " "
        + LIBRARY_AUTH,
        parameters=numbered_page_parameters("papers"),
        responses={200: NotRelevantPageSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def get(self, request):
        return self.numbered_page(
            recommendations.recommendation_dismissals(user=request.user), NotRelevantSerializer
        )

    @extend_schema(
        operation_id="me_not_relevant_create",
        summary="Mark a paper not relevant",
        description=NOT_RELEVANT_TEXT + " 201 when newly marked, 200 when it was already; 404 "
        "when no paper with this id is held here. Undo with DELETE "
        "`/api/v1/me/not-relevant/<arxiv id>/`.",
        request=NotRelevantInputSerializer,
        responses=made_or_found_responses(NotRelevantSerializer, 400, 401, 403, 404),
        tags=["me"],
    )
    def post(self, request):
        payload = body_values(request, NotRelevantInputSerializer)
        paper = held_paper(payload["arxiv_id"])
        created = recommendations.recommendation_dismiss(user=request.user, paper=paper)
        marked = recommendations.recommendation_dismissals(user=request.user).get(paper=paper)
        return self.made_or_found(marked, NotRelevantSerializer, made=created)


class NotRelevantDetailApi(MeApiView):
    @extend_schema(
        operation_id="me_not_relevant_destroy",
        summary='Take back a "not relevant"',
        description="The paper may be recommended again and no longer pushes its neighbours "
        "down. 404 when you had not marked it.",
        parameters=[ARXIV_ID_PARAMETER],
        responses={204: None, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def delete(self, request, arxiv_id: str):
        found = papers_for_citation(arxiv_ids=[normalize_old_style(arxiv_id)])
        if not found or not recommendations.recommendation_undismiss(
            user=request.user, paper_id=found[0].pk
        ):
            raise NotFound("You did not mark this paper not relevant.")
        return Response(status=status.HTTP_204_NO_CONTENT)
