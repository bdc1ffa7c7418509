"""Paper resources. A paper in a list and a paper alone share fields; the detail adds the text
fields and each author's institutions. Objects arrive with their authorships prefetched
(papers.selectors), so serializing a page runs no queries of its own."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from papers.analysis import PARTS as ANALYSIS_PARTS
from papers.models import Authorship, Paper, PaperAnalysis
from wovepaper.lib.api.redirects import absolute_api_url, site_url
from wovepaper.lib.api.schema import QueryIntegerField, QueryTextField
from wovepaper.lib.identifiers import CATEGORY_CODE

# Category codes as arXiv writes them: "cs.LG", "math.AG", "hep-th", "astro-ph.CO".
CATEGORY_PATTERN = f"^{CATEGORY_CODE}$"
MAX_DB_ID = 2**63 - 1


def paper_api_url(request, arxiv_id: str) -> str:
    # Built on the list URL rather than reversed per paper: cheaper on a page of 100, and it
    # cannot fail on an id the URL pattern would not have produced.
    return absolute_api_url(request, "api-paper-list") + f"{arxiv_id}/"


class ResearcherRefSerializer(serializers.Serializer):
    """A researcher named in a byline or a list: enough to link to it."""

    id = serializers.IntegerField(source="pk")
    name = serializers.CharField(source="display_name")
    url = serializers.SerializerMethodField(help_text="The researcher's page on the site.")
    api_url = serializers.SerializerMethodField(help_text="This researcher in the API.")

    def get_url(self, obj) -> str:
        return site_url(obj.get_absolute_url())

    def get_api_url(self, obj) -> str:
        return absolute_api_url(self.context.get("request"), "api-researcher-detail", obj.pk)


class InstitutionRefSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    name = serializers.CharField()
    ror_id = serializers.CharField(allow_null=True, help_text="The bare ROR id, e.g. 042nb2s44.")
    country_code = serializers.CharField(help_text="ISO 3166-1 alpha-2, or empty.")
    url = serializers.SerializerMethodField()
    api_url = serializers.SerializerMethodField()

    def get_url(self, obj) -> str:
        return site_url(obj.get_absolute_url())

    def get_api_url(self, obj) -> str:
        return absolute_api_url(self.context.get("request"), "api-institution-detail", obj.pk)


class AuthorSerializer(serializers.ModelSerializer):
    researcher = serializers.SerializerMethodField(
        help_text="The matched researcher, or null where matching found none."
    )

    class Meta:
        model = Authorship
        fields = ["position", "name", "researcher"]

    @extend_schema_field(ResearcherRefSerializer(allow_null=True))
    def get_researcher(self, obj: Authorship) -> dict | None:
        researcher = obj.researcher
        if researcher is None:
            return None
        return ResearcherRefSerializer(researcher, context=self.context).data


class AuthorMatchSerializer(serializers.Serializer):
    """How matching linked a byline name to its researcher."""

    method = serializers.ChoiceField(
        source="match_method",
        choices=Authorship.MatchMethod.choices,
        help_text="How the name was paired with the source's author: exact, initials, "
        "nickname, reordered, family_variant, near_given, single_name, out_of_order, "
        "same_slot (the same place in the list and the same family name only), curator (an "
        "uncertain link a curator checked and confirmed).",
    )
    confidence = serializers.FloatField(
        source="match_confidence",
        allow_null=True,
        min_value=0.0,
        max_value=1.0,
        help_text="How sure matching is, from 0 to 1; below 0.8 the link is uncertain.",
    )
    uncertain = serializers.BooleanField(source="match_uncertain")


class AuthorDetailSerializer(AuthorSerializer):
    institutions = serializers.SerializerMethodField(
        help_text="Institutions listed for this author on this paper (from OpenAlex, with ROR)."
    )
    match = serializers.SerializerMethodField(
        help_text="How the researcher was matched; null where none is linked or where the "
        "link predates matching's record of it."
    )

    class Meta(AuthorSerializer.Meta):
        fields = ["position", "name", "affiliation", "researcher", "match", "institutions"]

    @extend_schema_field(AuthorMatchSerializer(allow_null=True))
    def get_match(self, obj: Authorship) -> dict | None:
        if obj.researcher_id is None or not obj.match_method:
            return None
        return AuthorMatchSerializer(obj).data

    @extend_schema_field(InstitutionRefSerializer(many=True))
    def get_institutions(self, obj: Authorship) -> list[dict]:
        # many=True gives a ReturnList; djangorestframework-stubs type every `data` a ReturnDict.
        return InstitutionRefSerializer(  # type: ignore[return-value]
            [link.institution for link in obj.institution_links.all()],
            many=True,
            context=self.context,
        ).data


class PaperAnalysisSerializer(serializers.Serializer):
    """How the analysis was made, and what it leaves out."""

    model = serializers.CharField(help_text="The language model that made it; empty for none.")
    prompt_version = serializers.CharField()
    analysed = serializers.DateTimeField(source="analysed_at")
    significance_reasons = serializers.CharField()
    missing = serializers.DictField(
        child=serializers.CharField(),
        help_text="Each analysis field left empty, with the reason (e.g. no model configured).",
    )
    tokens = serializers.IntegerField(allow_null=True, help_text="Tokens the model call used.")


def _analysis(paper: Paper):
    try:
        return paper.analysis
    except PaperAnalysis.DoesNotExist:
        return None


class PaperSerializer(serializers.ModelSerializer):
    arxiv_id = serializers.CharField(
        help_text="The arXiv identifier without version: `2401.01234` or old-style "
        "`astro-ph/9901001`."
    )
    categories = serializers.ListField(
        source="category_list",
        child=serializers.CharField(),
        help_text="arXiv categories, primary first.",
    )
    authors = AuthorSerializer(
        source="authorships",
        many=True,
        help_text="The byline in order, each name as written on arXiv.",
    )
    url = serializers.SerializerMethodField(help_text="The paper's page on the site.")
    api_url = serializers.SerializerMethodField()
    abs_url = serializers.URLField(help_text="The abstract page on arXiv.")
    pdf_url = serializers.URLField(help_text="The PDF on arXiv.")
    summary = serializers.SerializerMethodField(help_text="Empty until analysed by a model.")
    topics = serializers.SerializerMethodField()
    paper_type = serializers.SerializerMethodField(
        help_text="method, empirical study, survey, benchmark or dataset, theory, position, "
        "system or other; empty until analysed by a model."
    )
    research_field = serializers.SerializerMethodField()
    novelty = serializers.SerializerMethodField(help_text="What the paper claims is new.")
    significance_score = serializers.SerializerMethodField(help_text="1 to 10, or null.")
    analysed = serializers.SerializerMethodField(help_text="When it was analysed, or null.")
    analysis = serializers.SerializerMethodField(
        help_text="How the analysis was made and what it leaves out; null until analysed."
    )

    class Meta:
        model = Paper
        fields = [
            "arxiv_id",
            "version",
            "title",
            "authors",
            "abstract",
            "categories",
            "primary_category",
            "published",
            "published_precision",
            "record_source",
            "updated",
            "doi",
            "journal_ref",
            "cited_by_count",
            "is_withdrawn",
            "url",
            "api_url",
            "abs_url",
            "pdf_url",
            *ANALYSIS_PARTS,
            "analysed",
            "analysis",
        ]
        extra_kwargs = {
            "published": {
                "help_text": (
                    "When version 1 was submitted (UTC). Where no source gives the day "
                    "(`published_precision` is `month`), the first day of the month the arXiv "
                    "identifier names."
                )
            },
            "published_precision": {
                "help_text": (
                    "null when `published` is the day arXiv gives; `month` when only its month "
                    "is known, from the arXiv identifier (1301.3781: January 2013)."
                )
            },
            "record_source": {
                "help_text": (
                    "null when the title and authors are arXiv's own record; `s2` or `openalex` "
                    "when arXiv's record is not held yet and they are as that source lists them."
                )
            },
            "updated": {"help_text": "The last metadata change on arXiv."},
            "cited_by_count": {
                "help_text": "Citations, from Semantic Scholar or OpenAlex; null until matched."
            },
        }

    def get_url(self, obj: Paper) -> str:
        return site_url(obj.get_absolute_url())

    def get_api_url(self, obj: Paper) -> str:
        return paper_api_url(self.context.get("request"), obj.arxiv_id)

    def get_summary(self, obj: Paper) -> str:
        found = _analysis(obj)
        return found.summary if found else ""

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_topics(self, obj: Paper) -> list[str]:
        found = _analysis(obj)
        return list(found.topics) if found else []

    def get_paper_type(self, obj: Paper) -> str:
        found = _analysis(obj)
        return found.paper_type if found else ""

    def get_research_field(self, obj: Paper) -> str:
        found = _analysis(obj)
        return found.research_field if found else ""

    def get_novelty(self, obj: Paper) -> str:
        found = _analysis(obj)
        return found.novelty if found else ""

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_significance_score(self, obj: Paper) -> int | None:
        found = _analysis(obj)
        return found.significance_score if found else None

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_analysed(self, obj: Paper):
        found = _analysis(obj)
        return serializers.DateTimeField().to_representation(found.analysed_at) if found else None

    @extend_schema_field(PaperAnalysisSerializer(allow_null=True))
    def get_analysis(self, obj: Paper) -> dict | None:
        found = _analysis(obj)
        return PaperAnalysisSerializer(found).data if found else None


class PaperDetailSerializer(PaperSerializer):
    authors = AuthorDetailSerializer(source="authorships", many=True)

    class Meta(PaperSerializer.Meta):
        fields = [
            *PaperSerializer.Meta.fields,
            "comments",
            "report_no",
            "license",
            "submitter",
            "semantic_scholar_id",
            "openalex_id",
            "is_deleted",
            "modified_at",
        ]
        extra_kwargs = {
            **PaperSerializer.Meta.extra_kwargs,
            "modified_at": {"help_text": "When wovepaper last changed this record."},
        }


def category_param(help_text: str) -> serializers.RegexField:
    """The `category` query parameter of the paper list and the search: an arXiv category."""
    return serializers.RegexField(
        CATEGORY_PATTERN, max_length=32, required=False, help_text=help_text
    )


def published_params() -> tuple[serializers.DateField, serializers.DateField]:
    """The `published_from` and `published_to` query parameters of the paper list and the
    search: first-version dates, both days included."""
    return (
        serializers.DateField(
            required=False, help_text="Only papers first submitted on or after this date (UTC)."
        ),
        serializers.DateField(
            required=False, help_text="Only papers first submitted on or before this date (UTC)."
        ),
    )


class PaperFilterSerializer(serializers.Serializer):
    """Query parameters of the paper list."""

    category = category_param(
        "Only papers in this arXiv category (primary or cross-listed), e.g. `cs.LG`."
    )
    published_from, published_to = published_params()
    researcher = QueryIntegerField(
        min_value=1,
        max_value=MAX_DB_ID,
        required=False,
        help_text="Only papers by this researcher id.",
    )
    institution = QueryIntegerField(
        min_value=1,
        max_value=MAX_DB_ID,
        required=False,
        help_text="Only papers with an author at this institution id.",
    )


def day_start(value: date) -> datetime:
    return datetime.combine(value, time.min, tzinfo=UTC)


class PaperSearchParamsSerializer(serializers.Serializer):
    q = QueryTextField(max_length=500, help_text="Words to find in titles and abstracts.")
    category = category_param("Only papers in this arXiv category, e.g. `hep-th`.")
    published_from, published_to = published_params()
    sort = serializers.ChoiceField(
        ["relevance", "newest", "oldest", "cited"],
        default="relevance",
        help_text="Order of the results.",
    )
    mode = serializers.ChoiceField(
        ["hybrid", "keyword", "semantic"],
        default="hybrid",
        help_text="How `relevance` ranks: `keyword` (the words in titles and abstracts), "
        "`semantic` (closeness in meaning, by sentence embeddings), or `hybrid` (both, fused by "
        "reciprocal rank; the default). Date and citation sorts are exact in every mode.",
    )
    page = QueryIntegerField(
        min_value=1, max_value=500, default=1, help_text="Page number, from 1."
    )
    page_size = QueryIntegerField(
        min_value=1, max_value=100, default=20, help_text="Results per page, 1 to 100."
    )


SEARCH_MATCHES = ("words", "meaning", "id")


class PaperSearchResultSerializer(PaperSerializer):
    """A paper found, with why: it contains the words, or it is close to them in meaning.
    `context["found"]` maps each paper's pk to its (match, similarity)."""

    match = serializers.SerializerMethodField(
        help_text="`words`: the title, abstract or byline contains every word of `q` (what `count` "
        "counts); `meaning`: it does not, or was not asked to (`mode=semantic`), but is close "
        "to `q` in meaning (a query that means nothing here has none); `id`: `q` is nothing "
        "but this paper's arXiv id."
    )
    similarity = serializers.SerializerMethodField(
        help_text="Cosine similarity between the embeddings of `q` and of the paper's title "
        "and abstract, for a `meaning` match ranked by relevance; null otherwise."
    )

    class Meta(PaperSerializer.Meta):
        fields = [*PaperSerializer.Meta.fields, "match", "similarity"]

    @extend_schema_field(serializers.ChoiceField(SEARCH_MATCHES))
    def get_match(self, obj: Paper) -> str:
        return self.context["found"][obj.pk][0]

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_similarity(self, obj: Paper) -> float | None:
        similarity = self.context["found"][obj.pk][1]
        return None if similarity is None else round(similarity, 4)


class PaperSearchResponseSerializer(serializers.Serializer):
    count = serializers.IntegerField(
        help_text="Papers that contain the words (`mode=keyword` and `hybrid`), or papers above "
        "the similarity floor (`mode=semantic`, about that many), up to `count_is_capped`."
    )
    count_is_capped = serializers.BooleanField(
        help_text="True when there are more matches than `count` (counting stops there)."
    )
    did_you_mean = serializers.CharField(
        allow_null=True,
        help_text="`q` with its misspelt words corrected, when no paper contains every word of "
        "`q` (`count: 0`) and the corrected words are in some paper: a word that no title, "
        "abstract or byline writes, replaced by the word one letter away (left out, added, "
        "replaced or swapped) that the most papers write. Null otherwise.",
    )
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = PaperSearchResultSerializer(
        many=True,
        help_text="This page's papers that contain the words (`match: words`), then, on the "
        "first page of a hybrid search, up to `page_size` more that do not but are related by "
        "meaning (`match: meaning`), closest first. Every result of `mode=semantic` is a "
        "`meaning` match.",
    )


class CitedPaperSerializer(serializers.Serializer):
    """An archive paper at one end of a citation."""

    arxiv_id = serializers.CharField()
    title = serializers.CharField()
    published = serializers.DateTimeField(allow_null=True, help_text="Version 1's date.")
    url = serializers.SerializerMethodField(help_text="The paper's page on the site.")
    api_url = serializers.SerializerMethodField()

    def get_url(self, paper) -> str:
        return site_url(paper.get_absolute_url())

    def get_api_url(self, paper) -> str:
        return absolute_api_url(self.context.get("request"), "api-paper-detail", paper.arxiv_id)


class CitationFactsSerializer(serializers.Serializer):
    """What one source said of one citation, and when."""

    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=["s2", "openalex"], help_text="`s2` (Semantic Scholar) or `openalex`."
    )
    fetched_at = serializers.DateTimeField(help_text="When the source said so.")
    is_influential = serializers.BooleanField(
        allow_null=True, help_text="Semantic Scholar's flag; null where the source does not say."
    )
    intents = serializers.ListField(child=serializers.CharField())
    contexts = serializers.ListField(
        child=serializers.CharField(), help_text="The citing sentences, where known."
    )


class ReferenceSerializer(CitationFactsSerializer):
    """A work the paper cites, with the ids the source gave and its archive paper if any."""

    arxiv_id = serializers.CharField(source="cited_arxiv_id")
    doi = serializers.CharField(source="cited_doi")
    semantic_scholar_id = serializers.CharField(source="cited_s2_id")
    openalex_id = serializers.CharField(source="cited_openalex_id")
    title = serializers.CharField(
        source="cited_title", help_text="As the source gave it; empty where it gave none."
    )
    year = serializers.IntegerField(source="cited_year", allow_null=True)
    citation_count = serializers.IntegerField(
        source="cited_citation_count", allow_null=True, help_text="The source's count."
    )
    link = serializers.CharField(source="link_out", help_text="Where to look the work up.")
    paper = CitedPaperSerializer(
        source="cited_paper", allow_null=True, help_text="The archive paper, or null."
    )


class CitingSerializer(CitationFactsSerializer):
    """An archive paper citing this one, as one source said (a paper two sources name is
    listed once for each)."""

    paper = CitedPaperSerializer(source="citing_paper")


class CitationSourceSerializer(serializers.Serializer):
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=["s2", "openalex"],
        required=False,
        help_text="Only what this source said: `s2` (Semantic Scholar) or `openalex`.",
    )
