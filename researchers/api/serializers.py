"""Researcher resources: the figures stored on the record (maintained by matching), never
aggregated per request."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from papers.api.serializers import paper_api_url
from researchers.coauthors import coauthor_path
from researchers.models import Researcher
from researchers.page_figures import STAT_FIELDS
from wovepaper.lib.api.redirects import absolute_api_url, site_url
from wovepaper.lib.api.schema import QueryTextField


class ResearcherSerializer(serializers.ModelSerializer):
    name = serializers.CharField(source="display_name")
    url = serializers.SerializerMethodField(help_text="The researcher's page on the site.")
    api_url = serializers.SerializerMethodField()

    class Meta:
        model = Researcher
        fields = [
            "id",
            "name",
            "paper_count",
            "h_index",
            "citation_count",
            "works_count",
            "figures_source",
            "figures_updated_at",
            "url",
            "api_url",
        ]
        extra_kwargs = {
            "paper_count": {"help_text": "Papers on wovepaper attributed to this researcher."},
            "h_index": {"help_text": "h-index from `figures_source`; null if unknown."},
            "citation_count": {"help_text": "Citations over all works, from `figures_source`."},
            "works_count": {"help_text": "Works of every kind, from `figures_source`."},
            "figures_source": {
                "help_text": "Where h-index, citations and works came from "
                "(e.g. `s2`, `openalex`); empty if none yet."
            },
            "figures_updated_at": {"help_text": "When those figures were fetched."},
        }

    def get_url(self, obj: Researcher) -> str:
        return site_url(obj.get_absolute_url())

    def get_api_url(self, obj: Researcher) -> str:
        return absolute_api_url(self.context.get("request"), "api-researcher-detail", obj.pk)


class ExternalIdSerializer(serializers.Serializer):
    # A member named `source`: the metaclass takes declared fields off the class, so this never
    # hides Field.source.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        ["s2", "openalex", "orcid"], help_text="Semantic Scholar, OpenAlex or ORCID."
    )
    value = serializers.CharField()


class PaperRefSerializer(serializers.Serializer):
    arxiv_id = serializers.CharField()
    title = serializers.CharField()
    cited_by_count = serializers.IntegerField(allow_null=True)
    url = serializers.SerializerMethodField()
    api_url = serializers.SerializerMethodField()

    def get_url(self, obj) -> str:
        return site_url(obj.get_absolute_url())

    def get_api_url(self, obj) -> str:
        return paper_api_url(self.context.get("request"), obj.arxiv_id)


class CoauthorSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    count = serializers.IntegerField(help_text="Papers written together.")
    url = serializers.CharField()
    api_url = serializers.CharField()


class LinksSerializer(serializers.Serializer):
    papers = serializers.URLField(help_text="This researcher's papers in the API.")
    same_name = serializers.URLField(help_text="Other researchers with the same name.")
    feed_rss = serializers.URLField(help_text="RSS 2.0 feed of this researcher's new papers.")
    feed_atom = serializers.URLField(help_text="Atom feed of the same.")


class ResearcherDetailSerializer(ResearcherSerializer):
    external_ids = ExternalIdSerializer(many=True, help_text="Identities in the sources.")
    most_cited_paper = PaperRefSerializer(allow_null=True)
    coauthors = serializers.SerializerMethodField(help_text="The most frequent co-authors.")
    links = serializers.SerializerMethodField()

    class Meta(ResearcherSerializer.Meta):
        fields = [
            *ResearcherSerializer.Meta.fields,
            "name_key",
            "external_ids",
            # The page's figures, as page_figures computes them (paper_count is listed above).
            *(name for name in STAT_FIELDS if name not in ResearcherSerializer.Meta.fields),
            "modified_at",
            "links",
        ]
        extra_kwargs = {
            **ResearcherSerializer.Meta.extra_kwargs,
            "name_key": {"help_text": "The normalized name that same-name records share."},
            "position_counts": {
                "help_text": "Author position counts `{first, middle, last, "
                "sole}` over `position_basis` papers."
            },
            "position_basis": {
                "help_text": "Papers where every author is matched: the basis of `position_counts`."
            },
            "field_counts": {"help_text": "Papers here per arXiv category."},
            "cited_papers_count": {"help_text": "Papers here that have a citation count."},
            "citations_here": {"help_text": "Citations summed over those papers."},
        }

    @extend_schema_field(CoauthorSerializer(many=True))
    def get_coauthors(self, obj: Researcher) -> list[dict]:
        request = self.context.get("request")
        out = []
        for entry in obj.coauthors or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), int):
                continue
            path = coauthor_path(entry)
            out.append(
                {
                    "id": entry["id"],
                    "name": str(entry.get("name", "")),
                    "count": int(entry.get("count") or 0),
                    "url": site_url(path),
                    "api_url": absolute_api_url(request, "api-researcher-detail", entry["id"]),
                }
            )
        return out

    @extend_schema_field(LinksSerializer)
    def get_links(self, obj: Researcher) -> dict:
        request = self.context.get("request")
        return {
            "papers": absolute_api_url(request, "api-researcher-papers", obj.pk),
            "same_name": absolute_api_url(request, "api-researcher-same-name", obj.pk),
            "feed_rss": site_url(f"/researchers/{obj.pk}/feed.rss"),
            "feed_atom": site_url(f"/researchers/{obj.pk}/feed.atom"),
        }


class ResearcherSearchParamsSerializer(serializers.Serializer):
    q = QueryTextField(max_length=255, help_text="Words of the name (or parts), e.g. `yann le`.")
