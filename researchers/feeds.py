"""A researcher's new papers, and the new papers citing theirs, as RSS 2.0 and Atom, so anyone
can follow them without an account."""

from __future__ import annotations

from django.http import Http404, HttpResponsePermanentRedirect
from django.shortcuts import get_object_or_404
from django.utils.feedgenerator import Atom1Feed

from papers.citations.lists import citing_paper_ids_of_researcher
from papers.feeds import FEED_SIZE, PaperFeed
from papers.models import Paper
from papers.selectors import paper_list_prefetch, papers_by_researcher, papers_listed
from wovepaper.lib.api.redirects import site_url

from .models import Researcher
from .selectors import researcher_survivor_id


class ResearcherFeed(PaperFeed):
    # The feed's address under /researchers/<id>/, before its extension.
    feed_name = "feed"

    def __call__(self, request, *args, **kwargs):
        survivor = researcher_survivor_id(kwargs["pk"])
        if survivor is None:
            raise Http404("No researcher with that id.")
        if survivor != kwargs["pk"]:
            return HttpResponsePermanentRedirect(self.path(survivor))
        return super().__call__(request, *args, **kwargs)

    def path(self, researcher_id: int) -> str:
        return f"/researchers/{researcher_id}/{self.feed_name}.{self.extension}"

    def get_object(self, request, pk: int) -> Researcher:
        return get_object_or_404(
            Researcher.objects.only("id", "display_name", "slug"), pk=pk, is_person=True
        )

    def title(self, researcher: Researcher) -> str:
        return f"wovepaper: papers by {researcher.display_name}"

    def description(self, researcher: Researcher) -> str:
        return f"New papers by {researcher.display_name}, newest first."

    def link(self, researcher: Researcher) -> str:
        return site_url(researcher.get_absolute_url())

    def feed_url(self, researcher: Researcher) -> str:
        return site_url(self.path(researcher.pk))

    def items(self, researcher: Researcher):
        papers = papers_by_researcher(papers_listed(), researcher.pk).order_by("-published", "-id")
        return paper_list_prefetch(papers)[:FEED_SIZE]


class ResearcherAtomFeed(ResearcherFeed):
    feed_type = Atom1Feed
    extension = "atom"

    def subtitle(self, researcher: Researcher) -> str:
        return self.description(researcher)


class ResearcherCitedByFeed(ResearcherFeed):
    """The archive's newest papers citing the researcher's papers (their own excluded)."""

    feed_name = "cited-by"

    def title(self, researcher: Researcher) -> str:
        return f"wovepaper: papers citing {researcher.display_name}"

    def description(self, researcher: Researcher) -> str:
        return (
            f"New papers of this archive citing papers by {researcher.display_name}, newest "
            "first, as Semantic Scholar and OpenAlex list them."
        )

    def items(self, researcher: Researcher):
        ids = citing_paper_ids_of_researcher(researcher.pk, limit=FEED_SIZE)
        found = {p.pk: p for p in paper_list_prefetch(Paper.objects.filter(pk__in=ids))}
        return [found[pk] for pk in ids if pk in found and not found[pk].is_deleted]


class ResearcherCitedByAtomFeed(ResearcherCitedByFeed):
    feed_type = Atom1Feed
    extension = "atom"

    def subtitle(self, researcher: Researcher) -> str:
        return self.description(researcher)
