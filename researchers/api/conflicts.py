"""The conflict-of-interest check as an API endpoint (researchers.conflicts), with its own daily
quota per account (API_THROTTLE_RATES["conflicts"]), shared with the page."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from wovepaper.lib.api.schema import JSONIntegerField, JSONStringField, body_values, error_responses
from wovepaper.lib.api.throttles import UserRateThrottle

from .. import conflicts


class ConflictCheckThrottle(UserRateThrottle):
    scope = "conflicts"


class OverBudget(exceptions.APIException):
    """A check whose names expand past what one check may do (conflicts.OverBudget), refused
    before its work with the reason as the message."""

    status_code = 400
    default_code = "over_budget"
    default_detail = "This check is larger than one check may be."


class StringListField(serializers.ListField):
    """A JSON array of strings, refused whole (one flat message) when any item is not a string,
    as the schema's `array` of `string` says."""

    default_error_messages = {"not_strings": "Must be a list of strings."}

    def to_internal_value(self, data):
        if isinstance(data, list) and any(not isinstance(item, str) for item in data):
            self.fail("not_strings")
        return super().to_internal_value(data)


class ConflictInputSerializer(serializers.Serializer):
    paper = JSONStringField(
        required=False,
        allow_blank=True,
        max_length=64,
        help_text="A paper's arXiv id: its bylines, as matched, are the authors.",
    )
    authors = StringListField(
        child=JSONStringField(allow_blank=True),
        required=False,
        max_length=conflicts.MAX_AUTHORS,
        help_text="Instead of a paper: names, ORCID iDs or researcher page addresses.",
    )
    reviewers = StringListField(
        child=JSONStringField(allow_blank=True),
        min_length=1,
        max_length=conflicts.MAX_REVIEWERS,
        help_text="Candidate reviewers: names, ORCID iDs or researcher page addresses.",
    )
    years = JSONIntegerField(
        required=False,
        default=conflicts.DEFAULT_YEARS,
        min_value=1,
        max_value=conflicts.MAX_YEARS,
        help_text="Co-authorship and shared institutions within this many years.",
    )


class ConflictRecordSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    url = serializers.URLField()


class ConflictBylineSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The name as printed on the paper.")
    confidence = serializers.FloatField(
        allow_null=True, help_text="How sure matching is that this byline is this record."
    )
    method = serializers.CharField(help_text="How the byline was matched.")


class ConflictResolvedSerializer(serializers.Serializer):
    given = serializers.CharField()
    how = serializers.ChoiceField(choices=["orcid", "page", "name", "byline"])
    status = serializers.ChoiceField(
        choices=["resolved", "ambiguous", "unresolved"],
        help_text="ambiguous: several records share the name, and each is checked.",
    )
    note = serializers.CharField()
    confidence = serializers.FloatField(allow_null=True)
    method = serializers.CharField()
    records = ConflictRecordSerializer(many=True)


class ConflictNamedSerializer(serializers.Serializer):
    given = serializers.CharField()
    record = ConflictRecordSerializer()


def published_precision_field() -> serializers.ChoiceField:
    """How precise a paper's `published` is, as the papers' own API says it."""
    return serializers.ChoiceField(
        choices=["month"],
        allow_null=True,
        help_text=(
            "`month` where `published` is the first day of the month the arXiv identifier names "
            "(no source gives the day); null where arXiv gave the day."
        ),
    )


class ConflictSharedPaperSerializer(serializers.Serializer):
    arxiv_id = serializers.CharField()
    title = serializers.CharField()
    published = serializers.DateTimeField(allow_null=True)
    published_precision = published_precision_field()
    author_byline = ConflictBylineSerializer()
    reviewer_byline = ConflictBylineSerializer()


class ConflictInstitutionRefSerializer(serializers.Serializer):
    name = serializers.CharField()
    ror_id = serializers.CharField()
    url = serializers.URLField()


class ConflictInstitutionEvidenceSerializer(serializers.Serializer):
    arxiv_id = serializers.CharField(help_text="The newest paper in the window listing it.")
    published = serializers.DateTimeField(allow_null=True)
    published_precision = published_precision_field()
    byline = ConflictBylineSerializer(allow_null=True)
    set_by_researcher = serializers.BooleanField(
        help_text="The current affiliation the researcher set on their verified page."
    )


class ConflictSharedInstitutionSerializer(serializers.Serializer):
    institution = ConflictInstitutionRefSerializer()
    author_evidence = ConflictInstitutionEvidenceSerializer()
    reviewer_evidence = ConflictInstitutionEvidenceSerializer()


class ConflictFlagSerializer(serializers.Serializer):
    author = ConflictNamedSerializer()
    reviewer = ConflictNamedSerializer()
    same_record = serializers.BooleanField(help_text="The reviewer is one of the authors.")
    coauthored = ConflictSharedPaperSerializer(many=True)
    shared_institutions = ConflictSharedInstitutionSerializer(many=True)


class ConflictEarlierSerializer(serializers.Serializer):
    author = ConflictRecordSerializer()
    reviewer = ConflictRecordSerializer()
    papers = JSONIntegerField(help_text="Papers the two wrote together before `since`.")
    newest_year = JSONIntegerField(allow_null=True, help_text="The year of the newest of them.")


class ConflictPaperRefSerializer(serializers.Serializer):
    arxiv_id = serializers.CharField()
    title = serializers.CharField()


class ConflictReportSerializer(serializers.Serializer):
    years = JSONIntegerField()
    since = serializers.DateField()
    paper = ConflictPaperRefSerializer(allow_null=True)
    authors = ConflictResolvedSerializer(many=True)
    reviewers = ConflictResolvedSerializer(many=True)
    unresolved = serializers.ListField(
        child=serializers.CharField(), help_text="Names no record here answers to."
    )
    flags = ConflictFlagSerializer(many=True)
    earlier = ConflictEarlierSerializer(
        many=True,
        help_text=(
            "Author and reviewer records that wrote papers together before the window: not "
            "flagged, counted so that the window leaves nothing out without a word."
        ),
    )


class ConflictCheckApi(APIView):
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]
    throttle_classes = [*APIView.throttle_classes, ConflictCheckThrottle]

    @extend_schema(
        operation_id="conflicts_check",
        summary="Check candidate reviewers for conflicts of interest",
        description="Flags co-authorship within the last `years` (default 3) and shared "
        "institutions between a paper's authors (by arXiv id) or a list of authors, and the "
        "candidate reviewers, each with the papers and dates that show it and the match "
        "confidence of each byline involved. Names that no record answers to are listed as "
        "unresolved. A name given twice is checked once; a check whose names expand past its "
        "budget (author records × reviewer records, or their bylines in the window) is refused "
        "at once with `over_budget` and the reason. Signed-in accounts only "
        "(`Authorization: Token <key>` or a session); a daily quota per account (429 past it).",
        request=ConflictInputSerializer,
        responses={200: ConflictReportSerializer, **error_responses(400, 401, 403, 404, 413)},
        examples=[
            OpenApiExample(
                "A paper against two reviewers",
                value={"paper": "2108.04680", "reviewers": ["0000-0002-1825-0097", "Ada Lovelace"]},
                request_only=True,
            )
        ],
        tags=["conflicts"],
    )
    def post(self, request):
        data = body_values(request, ConflictInputSerializer)
        try:
            report = conflicts.conflict_check_request(
                arxiv_id=data.get("paper", ""),
                author_lines=data.get("authors", []),
                reviewer_lines=data["reviewers"],
                years=data["years"],
            )
        except conflicts.NoSuchPaper as exc:
            raise NotFound(str(exc)) from exc
        except conflicts.OverBudget as exc:
            raise OverBudget(str(exc)) from exc
        except conflicts.ConflictInputError as exc:
            raise ValidationError({"detail": [str(exc)]}) from exc
        body = conflicts.conflict_report_data(report, site=settings.SITE_URL)
        return Response(ConflictReportSerializer(body).data)
