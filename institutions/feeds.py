"""An institution's new papers (those with an author at it) as RSS 2.0 and Atom."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils.feedgenerator import Atom1Feed

from papers.feeds import FEED_SIZE, PaperFeed
from papers.selectors import paper_list_prefetch, papers_by_institution, papers_listed
from wovepaper.lib.api.redirects import site_url

from .models import Institution


class InstitutionFeed(PaperFeed):
    def get_object(self, request, pk: int) -> Institution:
        return get_object_or_404(Institution.objects.only("id", "name", "slug"), pk=pk)

    def title(self, institution: Institution) -> str:
        return f"wovepaper: papers from {institution.name}"

    def description(self, institution: Institution) -> str:
        return f"New papers with an author at {institution.name}, newest first."

    def link(self, institution: Institution) -> str:
        return site_url(institution.get_absolute_url())

    def feed_url(self, institution: Institution) -> str:
        return site_url(f"/institutions/{institution.pk}/feed.{self.extension}")

    def items(self, institution: Institution):
        papers = papers_by_institution(papers_listed(), institution.pk)
        return paper_list_prefetch(papers.order_by("-published", "-id"))[:FEED_SIZE]


class InstitutionAtomFeed(InstitutionFeed):
    feed_type = Atom1Feed
    extension = "atom"

    def subtitle(self, institution: Institution) -> str:
        return self.description(institution)
