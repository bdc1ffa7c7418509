"""Saved searches and their alerts, in the API. Session or token authentication."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from wovepaper.lib.api.errors import Conflict
from wovepaper.lib.api.pagination import numbered_page_parameters
from wovepaper.lib.api.schema import body_values, error_responses
from wovepaper.lib.api.signed_in import MeApiView, made_or_found_responses

from .. import saved_searches
from ..models import SavedSearch, SearchAlert
from .lists import LIBRARY_AUTH
from .serializers import (
    SavedSearchInputSerializer,
    SavedSearchPageSerializer,
    SavedSearchSerializer,
    SearchAlertPageSerializer,
    SearchAlertSerializer,
)

SEARCH_ID_PARAMETER = OpenApiParameter(
    "search_id", int, OpenApiParameter.PATH, description="The saved search's id."
)


def _own_search(request, search_id: int) -> SavedSearch:
    saved = SavedSearch.objects.filter(user=request.user, pk=search_id).first()
    if saved is None:
        raise NotFound("You have no saved search with this id.")
    return saved


class SavedSearchListApi(MeApiView):
    @extend_schema(
        operation_id="me_searches_list",
        summary="List your saved searches",
        description="Your saved searches, newest first, 50 a page (`page`, `page_size` up to "
        f"200; at most {saved_searches.SAVED_SEARCH_MAX} a reader). " + LIBRARY_AUTH,
        parameters=numbered_page_parameters("saved searches"),
        responses={200: SavedSearchPageSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def get(self, request):
        return self.numbered_page(
            SavedSearch.objects.filter(user=request.user).order_by("-created_at", "-id"),
            SavedSearchSerializer,
        )

    @extend_schema(
        operation_id="me_searches_create",
        summary="Save a search",
        description="Save a search as the search page would run it; new papers it finds are "
        "checked for each hour and announced once (in your feed, digest and alert feed). "
        "Saving the same search again answers the one saved (200); 409 past "
        f"{saved_searches.SAVED_SEARCH_MAX} searches.",
        request=SavedSearchInputSerializer,
        responses=made_or_found_responses(SavedSearchSerializer, 400, 401, 403, 409),
        tags=["me"],
    )
    def post(self, request):
        data = body_values(request, SavedSearchInputSerializer)
        before = SavedSearch.objects.filter(user=request.user).count()
        try:
            saved = saved_searches.saved_search_create(
                user=request.user,
                terms=saved_searches.SearchTerms(
                    query=data["query"],
                    mode=data.get("mode") or "hybrid",
                    category=data.get("category") or "",
                    date_from=data.get("date_from"),
                    date_to=data.get("date_to"),
                ),
            )
        except saved_searches.SavedSearchError as exc:
            raise Conflict(str(exc)) from exc
        made = SavedSearch.objects.filter(user=request.user).count() > before
        return self.made_or_found(saved, SavedSearchSerializer, made=made)


class SavedSearchDetailApi(MeApiView):
    @extend_schema(
        operation_id="me_searches_destroy",
        summary="Delete a saved search",
        description="The search goes with the alerts it found.",
        parameters=[SEARCH_ID_PARAMETER],
        responses={204: None, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def delete(self, request, search_id: int):
        saved_searches.saved_search_delete(saved=_own_search(request, search_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class SearchAlertListApi(MeApiView):
    @extend_schema(
        operation_id="me_searches_alerts_list",
        summary="List the papers a saved search found",
        description="The new papers the search announced, newest first, 50 a page (`page`, "
        "`page_size` up to 200). " + LIBRARY_AUTH,
        parameters=[SEARCH_ID_PARAMETER, *numbered_page_parameters("papers")],
        responses={200: SearchAlertPageSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def get(self, request, search_id: int):
        saved = _own_search(request, search_id)
        return self.numbered_page(
            SearchAlert.objects.filter(saved_search=saved)
            .select_related("paper")
            .order_by("-found_at", "-id"),
            SearchAlertSerializer,
        )
