"""The reader's lists and saved papers with their notes, in the API: list, make, rename, share,
delete; save, note, remove; a list as a citation file. Session or token authentication."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from papers.api.exports import (
    EXPORT_FORMATS_TEXT,
    EXTENSION_PARAMETER,
    ErrorsAsJson,
    export_responses,
)
from papers.api.lookups import held_paper
from papers.api.views import ARXIV_ID_PARAMETER
from papers.citations.export import citation_response
from papers.converters import normalize_old_style
from wovepaper.lib.api.errors import Conflict
from wovepaper.lib.api.pagination import numbered_page_parameters
from wovepaper.lib.api.schema import body_values, error_responses
from wovepaper.lib.api.signed_in import MeApiView, made_or_found_responses

from .. import exporting, lists, notes
from ..exporting import LIST_EXPORT_MAX
from ..models import ReadingList, SavedPaper
from .serializers import (
    NoteInputSerializer,
    ReadingListChangeSerializer,
    ReadingListInputSerializer,
    ReadingListPageSerializer,
    ReadingListSerializer,
    SavedPaperPageSerializer,
    SavedPaperSerializer,
    SavePaperInputSerializer,
)

LIST_ID_PARAMETER = OpenApiParameter(
    "list_id", int, OpenApiParameter.PATH, description="The list's id (from the list of lists)."
)


LIBRARY_AUTH = (
    "Authenticate with `Authorization: Token <key>` (create the key in your account settings) "
    "or a browser session."
)


def _own_list(request, list_id: int) -> ReadingList:
    found = lists.reading_lists_with_counts(user=request.user).filter(pk=list_id).first()
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
        f"(`page`, `page_size` up to 200; a reader has at most {lists.LIBRARY_MAX_LISTS}). "
        + LIBRARY_AUTH,
        parameters=numbered_page_parameters("lists"),
        responses={200: ReadingListPageSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def get(self, request):
        return self.numbered_page(
            lists.reading_lists_with_counts(user=request.user), ReadingListSerializer
        )

    @extend_schema(
        operation_id="me_lists_create",
        summary="Make a reading list",
        description="A new, private list. 409 when you already have a list of this name, or "
        f"{lists.LIBRARY_MAX_LISTS} lists.",
        request=ReadingListInputSerializer,
        responses={201: ReadingListSerializer, **error_responses(400, 401, 403, 409)},
        tags=["me"],
    )
    def post(self, request):
        payload = body_values(request, ReadingListInputSerializer)
        try:
            made = lists.reading_list_create(user=request.user, name=payload["name"])
        except lists.LibraryError as exc:
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
        change = body_values(request, ReadingListChangeSerializer)
        if "name" in change:
            try:
                lists.reading_list_rename(reading_list=reading_list, name=change["name"])
            except lists.LibraryError as exc:
                raise Conflict(str(exc)) from exc
        if change.get("shared") is True:
            lists.reading_list_share(reading_list=reading_list)
        elif change.get("shared") is False:
            lists.reading_list_unshare(reading_list=reading_list)
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
        lists.reading_list_delete(reading_list=_own_list(request, list_id))
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
        papers, cut_note, notes = exporting.reading_list_citation_export(
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
        return self.numbered_page(
            lists.saved_papers(reading_list=_own_list(request, list_id)), SavedPaperSerializer
        )

    @extend_schema(
        operation_id="me_lists_papers_create",
        summary="Save a paper in one of your lists",
        description="Save the paper with this arXiv id, with a note if given. 201 when it was "
        "new to the list, 200 when it was there already (a given note then replaces its note); "
        "404 when no paper with this id is held here.",
        parameters=[LIST_ID_PARAMETER],
        request=SavePaperInputSerializer,
        responses=made_or_found_responses(SavedPaperSerializer, 400, 401, 403, 404),
        tags=["me"],
    )
    def post(self, request, list_id: int):
        reading_list = _own_list(request, list_id)
        payload = body_values(request, SavePaperInputSerializer)
        paper = held_paper(payload["arxiv_id"])
        existed = lists.saved_paper_of_user(
            user=request.user, reading_list_id=reading_list.pk, paper_id=paper.pk
        )
        saved = lists.paper_save(user=request.user, paper=paper, reading_list=reading_list)
        if "note" in payload:
            saved = notes.saved_paper_note_set(saved=saved, note=payload["note"])
        return self.made_or_found(saved, SavedPaperSerializer, made=not existed)


def _own_saved(request, list_id: int, arxiv_id: str) -> SavedPaper:
    saved = lists.saved_paper_by_arxiv_id(
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
        payload = body_values(request, NoteInputSerializer)
        saved = notes.saved_paper_note_set(saved=saved, note=payload["note"])
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
        lists.paper_unsave(
            user=request.user, paper_id=saved.paper_id, reading_lists=[saved.reading_list]
        )
        return Response(status=status.HTTP_204_NO_CONTENT)
