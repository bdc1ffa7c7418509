from __future__ import annotations

from django.core.validators import RegexValidator
from django.urls import reverse
from rest_framework import serializers

from papers.converters import ArxivIdConverter
from wovepaper.lib.api.pagination import NumberedPageSerializer
from wovepaper.lib.api.redirects import request_url
from wovepaper.lib.api.schema import NO_NUL, JSONStringField
from wovepaper.lib.identifiers import CATEGORY_CODE

from ..models import ReadingList, SavedPaper, SavedSearch, SearchAlert
from ..notes import NOTE_MAX_CHARS
from ..saved_searches import saved_search_label


def arxiv_id_input() -> JSONStringField:
    """A paper named by its arXiv id in a request body: the id the site's routes take."""
    return JSONStringField(
        max_length=64,
        validators=[RegexValidator(f"^(?:{ArxivIdConverter.regex})$", "Must be an arXiv id.")],
        help_text="The paper's arXiv id (`2401.01234`, `astro-ph/9901001`; a version suffix is "
        "ignored).",
    )


class ReadingListSerializer(serializers.ModelSerializer):
    shared = serializers.BooleanField(
        source="is_shared", read_only=True, help_text="Whether the list can be read by link."
    )
    share_url = serializers.SerializerMethodField(
        help_text="The read-only link anyone can read the list at (not its notes), or null."
    )
    paper_count = serializers.IntegerField(read_only=True, help_text="Papers in the list.")

    class Meta:
        model = ReadingList
        fields = ["id", "name", "shared", "share_url", "paper_count", "created_at"]

    def get_share_url(self, reading_list: ReadingList) -> str | None:
        if not reading_list.share_token:
            return None
        path = reverse("accounts:shared_list", args=[reading_list.share_token])
        return request_url(self.context, path)


class ReadingListPageSerializer(NumberedPageSerializer):
    count = serializers.IntegerField(help_text="How many lists you have.")
    results = ReadingListSerializer(many=True)


# A name has a letter, digit or sign in it: blanks alone are no name. No NUL anywhere
# (wovepaper.lib.api.schema.NO_NUL): the schema says both.


_NAMED = RegexValidator(r"^[^\x00]*[^\s\x00][^\x00]*$", "Needs a letter, digit or sign.")


class ReadingListInputSerializer(serializers.Serializer):
    name = JSONStringField(
        max_length=100, validators=[_NAMED], help_text="The list's name, unique among yours."
    )


class ReadingListChangeSerializer(serializers.Serializer):
    name = JSONStringField(
        max_length=100, required=False, validators=[_NAMED], help_text="A new name."
    )
    shared = serializers.BooleanField(
        required=False,
        help_text="true gives the list a read-only link (kept if it has one); false makes it "
        "private again, and its link stops working for good.",
    )


# A paper a row of the reader's library holds (`row.paper`): its arXiv id, its title and its
# page here. A comment, not a docstring: the schema would give it to every subclass.
class PaperLinkSerializer(serializers.Serializer):
    arxiv_id = serializers.CharField(source="paper.arxiv_id", read_only=True)
    title = serializers.CharField(source="paper.title", read_only=True)
    url = serializers.SerializerMethodField(help_text="The paper's page here.")

    def get_url(self, row) -> str:
        return request_url(self.context, row.paper.get_absolute_url())


class SavedPaperSerializer(PaperLinkSerializer, serializers.ModelSerializer):
    saved_at = serializers.DateTimeField(source="created_at", read_only=True)

    class Meta:
        model = SavedPaper
        fields = ["arxiv_id", "title", "url", "saved_at", "note", "note_updated_at"]


class SavedPaperPageSerializer(NumberedPageSerializer):
    count = serializers.IntegerField(help_text="How many papers the list holds.")
    results = SavedPaperSerializer(many=True)


class SavePaperInputSerializer(serializers.Serializer):
    arxiv_id = arxiv_id_input()
    note = JSONStringField(
        required=False,
        allow_blank=True,
        max_length=NOTE_MAX_CHARS,
        validators=[NO_NUL],
        help_text="Your note.",
    )


class NoteInputSerializer(serializers.Serializer):
    note = JSONStringField(
        allow_blank=True,
        max_length=NOTE_MAX_CHARS,
        validators=[NO_NUL],
        help_text="The note, replacing the one held; empty removes it.",
    )


class SavedSearchSerializer(serializers.ModelSerializer):
    name = serializers.SerializerMethodField(help_text="How the search is named on pages.")
    alerts_url = serializers.SerializerMethodField(help_text="The papers this search found.")

    class Meta:
        model = SavedSearch
        fields = [
            "id",
            "query",
            "mode",
            "category",
            "date_from",
            "date_to",
            "name",
            "created_at",
            "checked_at",
            "alerts_url",
        ]

    def get_name(self, saved: SavedSearch) -> str:
        return saved_search_label(saved)

    def get_alerts_url(self, saved: SavedSearch) -> str:
        path = reverse("accounts_api:search_alerts", args=[saved.pk])
        return request_url(self.context, path)


class SavedSearchPageSerializer(NumberedPageSerializer):
    count = serializers.IntegerField(help_text="How many searches you saved.")
    results = SavedSearchSerializer(many=True)


class SavedSearchInputSerializer(serializers.Serializer):
    query = JSONStringField(
        max_length=300, validators=[_NAMED], help_text="The words, as on the search page."
    )
    mode = serializers.ChoiceField(
        choices=["hybrid", "keyword", "semantic"],
        required=False,
        default="hybrid",
        help_text="By words and meaning (default), words only, or meaning only (alerts only "
        "above the search page's similarity floor).",
    )
    category = JSONStringField(
        required=False,
        allow_blank=True,
        max_length=32,
        validators=[RegexValidator(f"^(?:{CATEGORY_CODE})?$")],
        help_text="An arXiv category code such as `cs.LG`.",
    )
    date_from = serializers.DateField(required=False, allow_null=True, help_text="First day.")
    date_to = serializers.DateField(required=False, allow_null=True, help_text="Last day.")


class SearchAlertSerializer(PaperLinkSerializer, serializers.ModelSerializer):
    class Meta:
        model = SearchAlert
        fields = ["arxiv_id", "title", "url", "found_at"]


class SearchAlertPageSerializer(NumberedPageSerializer):
    count = serializers.IntegerField(help_text="How many papers the search found.")
    results = SearchAlertSerializer(many=True)


class RecommendationSerializer(PaperLinkSerializer):
    score = serializers.FloatField(
        help_text="Cosine similarity to the closest saved paper, less half the similarity to "
        "the closest paper marked not relevant."
    )
    closest_arxiv_id = serializers.CharField(
        source="closest.arxiv_id", help_text="The saved paper it is closest to."
    )
    closest_title = serializers.CharField(source="closest.title")


class NotRelevantSerializer(PaperLinkSerializer):
    marked_at = serializers.DateTimeField(source="created_at")


class NotRelevantPageSerializer(NumberedPageSerializer):
    count = serializers.IntegerField(help_text="How many papers you marked not relevant.")
    results = NotRelevantSerializer(many=True)


class NotRelevantInputSerializer(serializers.Serializer):
    arxiv_id = arxiv_id_input()


class RecommendationListSerializer(serializers.Serializer):
    results = RecommendationSerializer(many=True)
