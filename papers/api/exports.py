"""Citation exports through the API: the same files the site's `cite.bib|.ris|.json` URLs serve,
for a paper and a search here (a researcher's papers and a reader's list live with their apps),
reachable with a token as well as a session and counted by the API's throttles."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.views import APIView

from papers.citations.export import CITATION_FORMATS, citation_response
from papers.converters import normalize_old_style
from wovepaper.lib.api.schema import error_responses, query_params

from .lookups import held_paper, searched_page
from .serializers import PaperSearchParamsSerializer
from .views import ARXIV_ID_PARAMETER

EXTENSION_PARAMETER = OpenApiParameter(
    "extension",
    str,
    OpenApiParameter.PATH,
    enum=list(CITATION_FORMATS),
    description="The file's format: `bib` (BibTeX), `ris` (RIS) or `json` (CSL-JSON).",
)
EXPORT_FORMATS_TEXT = (
    "BibTeX entries are `@misc` for a preprint and `@article` once a journal reference or DOI "
    "is known, with arXiv's `eprint`, `archivePrefix` and `primaryClass` either way; keys are "
    "stable and unique within the file. The body is the file itself (`Content-Disposition: "
    "attachment`); an export cut short says so in `X-Export-Note` (and in the file, except "
    "CSL-JSON). Errors answer JSON like every other operation. Anonymous, or with "
    "`Authorization: Token <key>` or a session (then your account's rate applies)."
)


def export_responses(*errors: int) -> dict:
    """The 200 in each of the three formats, then the JSON errors."""
    text = OpenApiResponse(OpenApiTypes.STR, description="The citation file.")
    csl = OpenApiResponse(
        {"type": "array", "items": {"type": "object", "additionalProperties": True}},
        description="The citation file: an array of CSL-JSON items.",
    )
    return {
        (200, CITATION_FORMATS["bib"].content_type): text,
        (200, CITATION_FORMATS["ris"].content_type): text,
        (200, CITATION_FORMATS["json"].content_type): csl,
        **error_responses(*errors),
    }


class ErrorsAsJson(BaseContentNegotiation):
    """The file's type is the URL's extension, whatever `Accept` asks; what DRF renders itself
    (the errors: 400, 404, 429) is always the API's JSON error body. DRF's own negotiation would
    answer 406 to a client asking `Accept: application/x-bibtex`, the very type it gets."""

    def select_parser(self, request, parsers):
        return parsers[0]

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class CitationExportApiView(APIView):
    # Token first: its WWW-Authenticate header makes a refused token a 401, as elsewhere.
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    content_negotiation_class = ErrorsAsJson


class PaperCitationApi(CitationExportApiView):
    @extend_schema(
        operation_id="papers_cite",
        summary="A paper's citation as BibTeX, RIS or CSL-JSON",
        description="The paper's citation file, as `/papers/<arxiv id>/cite.<extension>` on "
        "the site. " + EXPORT_FORMATS_TEXT,
        parameters=[ARXIV_ID_PARAMETER, EXTENSION_PARAMETER],
        responses=export_responses(404),
        tags=["papers"],
    )
    def get(self, request, arxiv_id: str, extension: str):
        arxiv_id = normalize_old_style(arxiv_id)
        return citation_response(
            [held_paper(arxiv_id)],
            extension=extension,
            filename=f"arxiv-{arxiv_id.replace('/', '-')}",
        )


class PaperSearchCitationApi(CitationExportApiView):
    @extend_schema(
        operation_id="search_papers_cite",
        summary="A page of search results as BibTeX, RIS or CSL-JSON",
        description="The papers that `/api/v1/search/papers/` lists for the same parameters "
        "(that page's matches, then, on a hybrid search's first page, the papers related by "
        "meaning), in its order, as one citation file. " + EXPORT_FORMATS_TEXT,
        parameters=[EXTENSION_PARAMETER, PaperSearchParamsSerializer],
        responses=export_responses(400, 404),
        tags=["search"],
    )
    def get(self, request, extension: str):
        result = searched_page(query_params(request, PaperSearchParamsSerializer))
        return citation_response(
            [*result.items, *result.related], extension=extension, filename="search"
        )
