"""The signed-in user's follows (list, follow, unfollow) and library (lists, saved papers,
notes, sharing). Session or token authentication."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from papers.api.exports import (
    EXPORT_FORMATS_TEXT,
    EXTENSION_PARAMETER,
    ErrorsAsJson,
    export_responses,
)
from papers.api.views import ARXIV_ID_PARAMETER
from papers.citations.export import citation_response
from papers.converters import ArxivIdConverter, normalize_old_style
from papers.selectors import papers_for_citation
from researchers.models import Researcher
from wovepaper.lib.api.errors import Conflict
from wovepaper.lib.api.pagination import NumberedPagination, numbered_page_parameters
from wovepaper.lib.api.schema import error_responses
from wovepaper.lib.api.signed_in import MeApiView

from .. import alerts, recommendations, selectors, services
from ..library_views import LIST_EXPORT_MAX
from ..models import ReadingList, SavedPaper, SavedSearch, SearchAlert
from .serializers import (
    FollowInputSerializer,
    FollowPageSerializer,
    FollowSerializer,
    NoteInputSerializer,
    NotRelevantInputSerializer,
    NotRelevantPageSerializer,
    NotRelevantSerializer,
    ReadingListChangeSerializer,
    ReadingListInputSerializer,
    ReadingListPageSerializer,
    ReadingListSerializer,
    RecommendationListSerializer,
    SavedPaperPageSerializer,
    SavedPaperSerializer,
    SavedSearchInputSerializer,
    SavedSearchPageSerializer,
    SavedSearchSerializer,
    SavePaperInputSerializer,
    SearchAlertPageSerializer,
    SearchAlertSerializer,
)


class FollowListApi(MeApiView):
    @extend_schema(
        summary="List the researchers you follow",
        description="The signed-in user's follows, newest first, 50 a page (`page`, `page_size` "
        "up to 200). Authenticate with `Authorization: Token <key>` (create the key in your "
        "account settings) or a browser session.",
        parameters=numbered_page_parameters("follows"),
        responses={200: FollowPageSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def get(self, request):
        paginator = NumberedPagination()
        page = paginator.paginate_queryset(
            selectors.follows_for_user(user=request.user), request, view=self
        )
        data = FollowSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        summary="Follow a researcher",
        description="Follow the researcher with this id; a merged record's id follows the record "
        "it was merged into. Answers 201 for a new follow and 200 when you already followed them.",
        request=FollowInputSerializer,
        responses={
            201: FollowSerializer,
            200: FollowSerializer,
            **error_responses(400, 401, 403, 404),
        },
        tags=["me"],
    )
    def post(self, request):
        payload = FollowInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        researcher = Researcher.objects.filter(pk=payload.validated_data["researcher"]).first()
        if researcher is None:
            # A well-formed id that names no one: not found, as for any other unknown id.
            raise NotFound("No researcher with this id.")
        try:
            existed = selectors.is_following(user=request.user, researcher=researcher)
            follow = services.researcher_follow(user=request.user, researcher=researcher)
        except services.FollowError as exc:
            raise ValidationError({"researcher": [str(exc)]}) from exc
        return Response(
            FollowSerializer(follow, context={"request": request}).data,
            status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED,
        )


class FollowDetailApi(MeApiView):
    @extend_schema(
        summary="Unfollow a researcher",
        description="Stop following the researcher with this id. 404 when you do not follow them.",
        parameters=[
            OpenApiParameter(
                "researcher_id", int, OpenApiParameter.PATH, description="The researcher's id."
            )
        ],
        responses={204: None, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def delete(self, request, researcher_id: int):
        researcher = get_object_or_404(Researcher, pk=researcher_id)
        if not services.researcher_unfollow(user=request.user, researcher=researcher):
            raise NotFound("You do not follow this researcher.")
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- the library -------------------------------------------------------------------------------

LIST_ID_PARAMETER = OpenApiParameter(
    "list_id", int, OpenApiParameter.PATH, description="The list's id (from the list of lists)."
)
LIBRARY_AUTH = (
    "Authenticate with `Authorization: Token <key>` (create the key in your account settings) "
    "or a browser session."
)


def _own_list(request, list_id: int) -> ReadingList:
    found = selectors.reading_lists_with_counts(user=request.user).filter(pk=list_id).first()
    if found is None:
        raise NotFound("You have no list with this id.")
    return found


def _list_body(request, reading_list: ReadingList) -> dict:
    return ReadingListSerializer(reading_list, context={"request": request}).data


class ReadingListListApi(MeApiView):
    @extend_schema(
        operation_id="me_lists_list",
        summary="List your reading lists",
        description="Your lists of saved papers, oldest first, with their sizes; 50 a page "
        f"(`page`, `page_size` up to 200; a reader has at most {services.LIBRARY_MAX_LISTS}). "
        + LIBRARY_AUTH,
        parameters=numbered_page_parameters("lists"),
        responses={200: ReadingListPageSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def get(self, request):
        paginator = NumberedPagination()
        page = paginator.paginate_queryset(
            selectors.reading_lists_with_counts(user=request.user), request, view=self
        )
        data = ReadingListSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        operation_id="me_lists_create",
        summary="Make a reading list",
        description="A new, private list. 409 when you already have a list of this name, or "
        f"{services.LIBRARY_MAX_LISTS} lists.",
        request=ReadingListInputSerializer,
        responses={201: ReadingListSerializer, **error_responses(400, 401, 403, 409)},
        tags=["me"],
    )
    def post(self, request):
        payload = ReadingListInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            made = services.reading_list_create(
                user=request.user, name=payload.validated_data["name"]
            )
        except services.LibraryError as exc:
            raise Conflict(str(exc)) from exc
        return Response(
            _list_body(request, _own_list(request, made.pk)), status=status.HTTP_201_CREATED
        )


class ReadingListDetailApi(MeApiView):
    @extend_schema(
        operation_id="me_lists_retrieve",
        summary="Read one of your lists",
        description="The list's name, size and sharing. " + LIBRARY_AUTH,
        parameters=[LIST_ID_PARAMETER],
        responses={200: ReadingListSerializer, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def get(self, request, list_id: int):
        return Response(_list_body(request, _own_list(request, list_id)))

    @extend_schema(
        operation_id="me_lists_update",
        summary="Rename, share or unshare a list",
        description="`name` renames the list (409 when you have another list of that name); "
        "`shared: true` gives it a read-only link (`share_url`), `shared: false` makes it "
        "private again and the link stops working.",
        parameters=[LIST_ID_PARAMETER],
        request=ReadingListChangeSerializer,
        responses={200: ReadingListSerializer, **error_responses(400, 401, 403, 404, 409)},
        tags=["me"],
    )
    def patch(self, request, list_id: int):
        reading_list = _own_list(request, list_id)
        payload = ReadingListChangeSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        change = payload.validated_data
        if "name" in change:
            try:
                services.reading_list_rename(reading_list=reading_list, name=change["name"])
            except services.LibraryError as exc:
                raise Conflict(str(exc)) from exc
        if change.get("shared") is True:
            services.reading_list_share(reading_list=reading_list)
        elif change.get("shared") is False:
            services.reading_list_unshare(reading_list=reading_list)
        return Response(_list_body(request, _own_list(request, list_id)))

    @extend_schema(
        operation_id="me_lists_destroy",
        summary="Delete a list",
        description="The list goes with its saved papers and notes; its link stops working.",
        parameters=[LIST_ID_PARAMETER],
        responses={204: None, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def delete(self, request, list_id: int):
        services.reading_list_delete(reading_list=_own_list(request, list_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ReadingListCitationApi(MeApiView):
    content_negotiation_class = ErrorsAsJson

    @extend_schema(
        operation_id="me_lists_cite",
        summary="One of your lists as BibTeX, RIS or CSL-JSON",
        description="The list's papers, saved last first, at most "
        f"{LIST_EXPORT_MAX:,} (those saved last), as one citation file, as "
        "`/me/library/<id>/cite.<extension>` on the site, with your notes (BibTeX `annote`, "
        "RIS `N1`, CSL-JSON `note`). " + EXPORT_FORMATS_TEXT,
        parameters=[LIST_ID_PARAMETER, EXTENSION_PARAMETER],
        responses=export_responses(401, 403, 404),
        tags=["me"],
    )
    def get(self, request, list_id: int, extension: str):
        reading_list = _own_list(request, list_id)
        papers, cut_note, notes = selectors.reading_list_citation_export(
            reading_list, limit=LIST_EXPORT_MAX
        )
        response = citation_response(
            papers, extension=extension, filename=f"list-{list_id}", cut_note=cut_note, notes=notes
        )
        # Private, unlike the public exports citation_response is made for.
        response["Cache-Control"] = "private, no-store"
        return response


class SavedPaperListApi(MeApiView):
    @extend_schema(
        operation_id="me_lists_papers_list",
        summary="List the papers in one of your lists",
        description="The list's papers with your notes, saved last first, 50 a page (`page`, "
        "`page_size` up to 200). " + LIBRARY_AUTH,
        parameters=[LIST_ID_PARAMETER, *numbered_page_parameters("papers")],
        responses={200: SavedPaperPageSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def get(self, request, list_id: int):
        paginator = NumberedPagination()
        page = paginator.paginate_queryset(
            selectors.saved_papers(reading_list=_own_list(request, list_id)), request, view=self
        )
        data = SavedPaperSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        operation_id="me_lists_papers_create",
        summary="Save a paper in one of your lists",
        description="Save the paper with this arXiv id, with a note if given. 201 when it was "
        "new to the list, 200 when it was there already (a given note then replaces its note); "
        "404 when no paper with this id is held here.",
        parameters=[LIST_ID_PARAMETER],
        request=SavePaperInputSerializer,
        responses={
            201: SavedPaperSerializer,
            200: SavedPaperSerializer,
            **error_responses(400, 401, 403, 404),
        },
        tags=["me"],
    )
    def post(self, request, list_id: int):
        reading_list = _own_list(request, list_id)
        payload = SavePaperInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        arxiv_id = normalize_old_style(
            ArxivIdConverter().to_python(payload.validated_data["arxiv_id"])
        )
        found = papers_for_citation(arxiv_ids=[arxiv_id])
        if not found:
            raise NotFound("No paper with this arXiv id is held here.")
        existed = selectors.saved_paper_of_user(
            user=request.user, reading_list_id=reading_list.pk, paper_id=found[0].pk
        )
        saved = services.paper_save(user=request.user, paper=found[0], reading_list=reading_list)
        if "note" in payload.validated_data:
            saved = services.saved_paper_note_set(saved=saved, note=payload.validated_data["note"])
        return Response(
            SavedPaperSerializer(saved, context={"request": request}).data,
            status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED,
        )


def _own_saved(request, list_id: int, arxiv_id: str) -> SavedPaper:
    saved = selectors.saved_paper_by_arxiv_id(
        user=request.user, reading_list_id=list_id, arxiv_id=normalize_old_style(arxiv_id)
    )
    if saved is None:
        raise NotFound("This paper is not in this list of yours.")
    return saved


class SavedPaperDetailApi(MeApiView):
    @extend_schema(
        operation_id="me_lists_papers_retrieve",
        summary="Read a saved paper and your note",
        description="One paper in one of your lists, with your note. " + LIBRARY_AUTH,
        parameters=[LIST_ID_PARAMETER, ARXIV_ID_PARAMETER],
        responses={200: SavedPaperSerializer, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def get(self, request, list_id: int, arxiv_id: str):
        saved = _own_saved(request, list_id, arxiv_id)
        return Response(SavedPaperSerializer(saved, context={"request": request}).data)

    @extend_schema(
        operation_id="me_lists_papers_update",
        summary="Write your note on a saved paper",
        description="Replace the note (an empty one removes it).",
        parameters=[LIST_ID_PARAMETER, ARXIV_ID_PARAMETER],
        request=NoteInputSerializer,
        responses={200: SavedPaperSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def patch(self, request, list_id: int, arxiv_id: str):
        saved = _own_saved(request, list_id, arxiv_id)
        payload = NoteInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        saved = services.saved_paper_note_set(saved=saved, note=payload.validated_data["note"])
        return Response(SavedPaperSerializer(saved, context={"request": request}).data)

    @extend_schema(
        operation_id="me_lists_papers_destroy",
        summary="Take a paper out of a list",
        description="The paper leaves this list, with your note on it.",
        parameters=[LIST_ID_PARAMETER, ARXIV_ID_PARAMETER],
        responses={204: None, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def delete(self, request, list_id: int, arxiv_id: str):
        saved = _own_saved(request, list_id, arxiv_id)
        services.paper_unsave(
            user=request.user, paper_id=saved.paper_id, reading_lists=[saved.reading_list]
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- saved searches ----------------------------------------------------------------------------

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
        f"200; at most {alerts.SAVED_SEARCH_MAX} a reader). " + LIBRARY_AUTH,
        parameters=numbered_page_parameters("saved searches"),
        responses={200: SavedSearchPageSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def get(self, request):
        paginator = NumberedPagination()
        page = paginator.paginate_queryset(
            SavedSearch.objects.filter(user=request.user).order_by("-created_at", "-id"),
            request,
            view=self,
        )
        data = SavedSearchSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        operation_id="me_searches_create",
        summary="Save a search",
        description="Save a search as the search page would run it; new papers it finds are "
        "checked for each hour and announced once (in your feed, digest and alert feed). "
        "Saving the same search again answers the one saved (200); 409 past "
        f"{alerts.SAVED_SEARCH_MAX} searches.",
        request=SavedSearchInputSerializer,
        responses={
            201: SavedSearchSerializer,
            200: SavedSearchSerializer,
            **error_responses(400, 401, 403, 409),
        },
        tags=["me"],
    )
    def post(self, request):
        payload = SavedSearchInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        before = SavedSearch.objects.filter(user=request.user).count()
        try:
            saved = alerts.saved_search_create(
                user=request.user,
                terms=alerts.SearchTerms(
                    query=data["query"],
                    mode=data.get("mode") or "hybrid",
                    category=data.get("category") or "",
                    date_from=data.get("date_from"),
                    date_to=data.get("date_to"),
                ),
            )
        except alerts.SavedSearchError as exc:
            raise Conflict(str(exc)) from exc
        made = SavedSearch.objects.filter(user=request.user).count() > before
        return Response(
            SavedSearchSerializer(saved, context={"request": request}).data,
            status=status.HTTP_201_CREATED if made else status.HTTP_200_OK,
        )


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
        alerts.saved_search_delete(saved=_own_search(request, search_id))
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
        paginator = NumberedPagination()
        page = paginator.paginate_queryset(
            SearchAlert.objects.filter(saved_search=saved)
            .select_related("paper")
            .order_by("-found_at", "-id"),
            request,
            view=self,
        )
        data = SearchAlertSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)


class RecommendationListApi(MeApiView):
    @extend_schema(
        operation_id="me_lists_recommendations_list",
        summary="Papers like one of your lists",
        description="New papers (of the last RECOMMENDATION_DAYS days) closest in meaning to the "
        "list's papers, best first, at most 10, each with the saved paper it is closest to; "
        "papers marked not relevant on the site are left out and push their neighbours down. "
        + LIBRARY_AUTH,
        parameters=[LIST_ID_PARAMETER],
        responses={200: RecommendationListSerializer, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def get(self, request, list_id: int):
        found = recommendations.list_recommendations(reading_list=_own_list(request, list_id))
        data = RecommendationListSerializer({"results": found}, context={"request": request}).data
        return Response(data)


# --- "not relevant" ----------------------------------------------------------------------------

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
        paginator = NumberedPagination()
        page = paginator.paginate_queryset(
            selectors.recommendation_dismissals(user=request.user), request, view=self
        )
        data = NotRelevantSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        operation_id="me_not_relevant_create",
        summary="Mark a paper not relevant",
        description=NOT_RELEVANT_TEXT + " 201 when newly marked, 200 when it was already; 404 "
        "when no paper with this id is held here. Undo with DELETE "
        "`/api/v1/me/not-relevant/<arxiv id>/`.",
        request=NotRelevantInputSerializer,
        responses={
            201: NotRelevantSerializer,
            200: NotRelevantSerializer,
            **error_responses(400, 401, 403, 404),
        },
        tags=["me"],
    )
    def post(self, request):
        payload = NotRelevantInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        arxiv_id = normalize_old_style(
            ArxivIdConverter().to_python(payload.validated_data["arxiv_id"])
        )
        found = papers_for_citation(arxiv_ids=[arxiv_id])
        if not found:
            raise NotFound("No paper with this arXiv id is held here.")
        created = services.recommendation_dismiss(user=request.user, paper=found[0])
        marked = selectors.recommendation_dismissals(user=request.user).get(paper=found[0])
        return Response(
            NotRelevantSerializer(marked, context={"request": request}).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


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
        if not found or not services.recommendation_undismiss(
            user=request.user, paper_id=found[0].pk
        ):
            raise NotFound("You did not mark this paper not relevant.")
        return Response(status=status.HTTP_204_NO_CONTENT)
