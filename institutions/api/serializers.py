"""Institution resources (ROR organisations linked through OpenAlex authorships)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from institutions.models import Institution
from wovepaper.lib.api.redirects import absolute_api_url, site_url
from wovepaper.lib.api.schema import QueryTextField


class InstitutionSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField(help_text="The institution's page on the site.")
    api_url = serializers.SerializerMethodField()
    ror_url = serializers.CharField(help_text="https://ror.org/<ror_id>, or empty.")

    class Meta:
        model = Institution
        fields = [
            "id",
            "name",
            "ror_id",
            "ror_url",
            "openalex_id",
            "country_code",
            "type",
            "researcher_count",
            "paper_count",
            "url",
            "api_url",
        ]
        extra_kwargs = {
            "ror_id": {"help_text": "The bare ROR id, e.g. `042nb2s44`; null if unknown."},
            "country_code": {"help_text": "ISO 3166-1 alpha-2 code, or empty."},
            "type": {"help_text": "ROR organisation type, e.g. `education`, `facility`."},
            "researcher_count": {"help_text": "Researchers on wovepaper listed at it."},
            "paper_count": {"help_text": "Papers on wovepaper with an author listed at it."},
        }

    def get_url(self, obj: Institution) -> str:
        return site_url(obj.get_absolute_url())

    def get_api_url(self, obj: Institution) -> str:
        return absolute_api_url(self.context.get("request"), "api-institution-detail", obj.pk)


class InstitutionLinksSerializer(serializers.Serializer):
    papers = serializers.URLField()
    researchers = serializers.URLField()


class InstitutionDetailSerializer(InstitutionSerializer):
    other_names = serializers.ListField(
        child=serializers.CharField(), help_text="Acronyms, aliases and labels from ROR."
    )
    links = serializers.SerializerMethodField()

    class Meta(InstitutionSerializer.Meta):
        fields = [*InstitutionSerializer.Meta.fields, "other_names", "modified_at", "links"]

    @extend_schema_field(InstitutionLinksSerializer)
    def get_links(self, obj: Institution) -> dict:
        request = self.context.get("request")
        return {
            "papers": absolute_api_url(request, "api-institution-papers", obj.pk),
            "researchers": absolute_api_url(request, "api-institution-researchers", obj.pk),
        }

    def to_representation(self, obj: Institution) -> dict:
        data = super().to_representation(obj)
        # Stored from ROR as a JSON list; anything else there is not a name list.
        data["other_names"] = (
            [str(n) for n in obj.other_names] if isinstance(obj.other_names, list) else []
        )
        return data


class InstitutionListParamsSerializer(serializers.Serializer):
    country = serializers.RegexField(
        r"^[A-Za-z]{2}$", required=False, help_text="Only institutions in this country (ISO code)."
    )


class InstitutionSearchParamsSerializer(serializers.Serializer):
    q = QueryTextField(max_length=255, help_text="Part of the name, or an exact ROR id.")
