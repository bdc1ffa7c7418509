"""GET /api/v1/researchers/<id>/identity/: why the site says who this researcher is.

The sources' records side by side with where they disagree, the same-name records with the
evidence and the verdict so far, and the public history of curators' decisions (what and when;
who is never shown)."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response

from researchers.curation import identity
from researchers.models import Researcher
from wovepaper.lib.api.conditional import ConditionalGetMixin
from wovepaper.lib.api.redirects import site_url
from wovepaper.lib.api.schema import error_responses

from .views import MERGED, RESEARCHER_ID, ResearcherResourceMixin


class RecordRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    url = serializers.URLField()


class SourceRecordSerializer(serializers.Serializer):
    # A member named `source`: the metaclass takes declared fields off the class, so this never
    # hides Field.source.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=["s2", "openalex", "orcid"], help_text="Semantic Scholar, OpenAlex or ORCID."
    )
    value = serializers.CharField(help_text="The source's id for this person.")
    url = serializers.CharField(help_text="The source's page for the id.")
    origin = serializers.CharField(help_text="How the id came to this record.")
    linked_at = serializers.DateTimeField(allow_null=True)
    name = serializers.CharField(help_text="The source's name for the person; empty if unknown.")
    h_index = serializers.IntegerField(allow_null=True)
    citation_count = serializers.IntegerField(allow_null=True)
    works_count = serializers.IntegerField(allow_null=True)
    fetched_at = serializers.DateTimeField(
        allow_null=True, help_text="When the source gave these figures; null: not fetched yet."
    )


class DisagreementSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["conflict", "figures", "names"])
    text = serializers.CharField()
    other = RecordRefSerializer(allow_null=True)
    paper = serializers.CharField(allow_null=True, help_text="The paper's arXiv id, if any.")


class SameNameSerializer(serializers.Serializer):
    record = RecordRefSerializer()
    verdict = serializers.ChoiceField(choices=["distinct", "undecided"])
    evidence_for = serializers.ListField(child=serializers.CharField())
    evidence_against = serializers.ListField(child=serializers.CharField())


class HistorySerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["merge", "split", "move", "distinct"])
    at = serializers.DateTimeField()
    text = serializers.CharField()
    undone = serializers.BooleanField()
    records = RecordRefSerializer(many=True)


class IdentitySerializer(serializers.Serializer):
    sources = SourceRecordSerializer(many=True)
    disagreements = DisagreementSerializer(many=True)
    same_name = SameNameSerializer(many=True)
    history = HistorySerializer(many=True)


def _ref(record: Researcher | None) -> dict | None:
    if record is None:
        return None
    return {
        "id": record.pk,
        "name": record.display_name,
        "url": site_url(record.get_absolute_url()),
    }


def researcher_identity_data(researcher: Researcher) -> dict:
    panel = identity.researcher_identity_panel(researcher)
    return {
        "sources": [
            {
                "source": r.source,
                "value": r.value,
                "url": r.url,
                "origin": r.origin,
                "linked_at": r.linked_at,
                "name": r.name,
                "h_index": r.h_index,
                "citation_count": r.citation_count,
                "works_count": r.works_count,
                "fetched_at": r.fetched_at,
            }
            for r in panel.records
        ],
        "disagreements": [
            {
                "kind": d["kind"],
                "text": d["text"],
                "other": _ref(d.get("other")),
                "paper": d["paper"].arxiv_id if d.get("paper") else None,
            }
            for d in panel.disagreements
        ],
        "same_name": [
            {
                "record": _ref(item.record),
                "verdict": item.verdict,
                "evidence_for": item.evidence.evidence_for(),
                "evidence_against": item.evidence.evidence_against(),
            }
            for item in identity.researcher_same_name_explained(researcher)
        ],
        "history": [
            {
                "action": h.action,
                "at": h.at,
                "text": h.text,
                "undone": h.undone,
                "records": [_ref(r) for r in h.records],
            }
            for h in identity.researcher_public_history(researcher)
        ],
    }


class ResearcherIdentityView(ResearcherResourceMixin, ConditionalGetMixin, generics.GenericAPIView):
    serializer_class = IdentitySerializer

    @extend_schema(
        operation_id="researchers_identity_retrieve",
        summary="Why this is one researcher",
        description="The sources' records of this researcher side by side (with their figures "
        "and dates, and how each id came to the record), where the sources disagree, the "
        "same-name records with the evidence for and against one person and the verdict so "
        "far, and the public history of curators' merges, splits and moves (who made them is "
        "not published). A merged id answers 301 to the surviving record.",
        parameters=[RESEARCHER_ID],
        responses={
            200: OpenApiResponse(IdentitySerializer, description="The identity evidence."),
            301: MERGED,
            **error_responses(404),
        },
        tags=["researchers"],
    )
    def get(self, request, pk: int):
        researcher = self.live_or_moved(request, Researcher.objects.filter(pk=pk).first())
        if isinstance(researcher, HttpResponse):
            return researcher
        return Response(IdentitySerializer(researcher_identity_data(researcher)).data)
