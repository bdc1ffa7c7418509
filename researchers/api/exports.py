"""A researcher's papers as one citation file through the API, as `/researchers/<id>/cite.bib`
serves it on the site."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound

from papers.api.exports import (
    EXPORT_FORMATS_TEXT,
    EXTENSION_PARAMETER,
    CitationExportApiView,
    export_responses,
)
from papers.citations.export import citation_response
from researchers import selectors
from researchers.views import CITATION_EXPORT_MAX
from wovepaper.lib.api.redirects import permanent_redirect

from .views import MERGED, RESEARCHER_ID


class ResearcherCitationApi(CitationExportApiView):
    @extend_schema(
        operation_id="researchers_cite",
        summary="A researcher's papers as BibTeX, RIS or CSL-JSON",
        description=f"The researcher's papers, newest first, at most {CITATION_EXPORT_MAX:,} "
        "(the newest), as one citation file, as `/researchers/<id>/cite.<extension>` on the "
        "site. A merged id answers 301 to the surviving record's export. " + EXPORT_FORMATS_TEXT,
        parameters=[RESEARCHER_ID, EXTENSION_PARAMETER],
        responses={**export_responses(404), 301: MERGED},
        tags=["researchers"],
    )
    def get(self, request, pk: int, extension: str):
        researcher, merged = selectors.researcher_resolve(pk)
        if researcher is None:
            raise NotFound("No researcher with that id.")
        if merged:
            return permanent_redirect(
                reverse("api-researcher-cite", args=[researcher.pk, extension]), request
            )
        papers, cut_note = selectors.researcher_citation_export(
            researcher, limit=CITATION_EXPORT_MAX
        )
        return citation_response(
            papers, extension=extension, filename=f"researcher-{researcher.pk}", cut_note=cut_note
        )
