"""RSS 2.0 and Atom feeds of the newest papers: all of arXiv, per category, and citing a paper.

Each feed is three queries whatever the data size (the site, the papers by an indexed ordering,
their bylines). Text is escaped by the XML writer; characters XML cannot carry are dropped.
"""

from __future__ import annotations

import re

from django.contrib.syndication.views import Feed
from django.db.models import QuerySet
from django.http import Http404
from django.utils.feedgenerator import Atom1Feed, Rss201rev2Feed, SyndicationFeed
from django.utils.html import escape

from wovepaper.lib.api.redirects import site_url

from .citations.lists import citing_paper_ids
from .models import Paper
from .selectors import category_is_held, paper_list_prefetch, papers_by_category, papers_listed

FEED_SIZE = 50
# XML 1.0 allows tab, newline and carriage return below 0x20, and nothing else there.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_text(value: str) -> str:
    return _NOT_XML.sub("", value or "")


class PaperFeed(Feed):
    """What every paper feed shares: one item per paper, linking to its page."""

    feed_type: type[SyndicationFeed] = Rss201rev2Feed
    extension = "rss"

    def item_title(self, paper: Paper) -> str:
        return xml_text(" ".join(paper.title.split()))

    def item_description(self, paper: Paper) -> str:
        # Readers take an RSS description (and Atom's type="html" summary) as HTML; an abstract
        # is plain text, so its "<" and "&" are escaped once for HTML, then again for XML.
        return escape(xml_text(paper.abstract))

    def item_link(self, paper: Paper) -> str:
        return site_url(paper.get_absolute_url())

    def item_guid(self, paper: Paper) -> str:
        return site_url(paper.get_absolute_url())

    def item_pubdate(self, paper: Paper):
        # A paper known only from Semantic Scholar or OpenAlex has no arXiv date; RSS readers
        # need one per item to order and keep items, and the day this archive first held it is
        # when it appeared here.
        return paper.published or paper.created_at

    def item_updateddate(self, paper: Paper):
        return paper.modified_at

    def item_author_name(self, paper: Paper) -> str:
        names = [a.name for a in paper.authorships.all()] or [paper.authors]
        return xml_text(", ".join(names))

    def item_categories(self, paper: Paper) -> list[str]:
        return paper.category_list

    def item_enclosures(self, paper: Paper) -> list:
        return []

    def feed_copyright(self) -> str:
        return "Paper metadata from arXiv (CC0)."


class LatestPapersFeed(PaperFeed):
    title = "wovepaper: latest papers"
    description = "The newest papers on arXiv, as wovepaper indexes them."

    def link(self) -> str:
        return site_url("/")

    def feed_url(self) -> str:
        return site_url(f"/feeds/latest.{self.extension}")

    def items(self) -> QuerySet[Paper]:
        return paper_list_prefetch(papers_listed().order_by("-published", "-id"))[:FEED_SIZE]


class LatestPapersAtomFeed(LatestPapersFeed):
    feed_type = Atom1Feed
    extension = "atom"
    subtitle = LatestPapersFeed.description


class CategoryFeed(PaperFeed):
    def get_object(self, request, code: str) -> str:
        # A feed for any string would be an endless set of empty URLs: only categories we hold.
        if not category_is_held(code):
            raise Http404("No papers in that category.")
        return code

    def title(self, code: str) -> str:
        return f"wovepaper: latest papers in {code}"

    def description(self, code: str) -> str:
        return f"The newest arXiv papers in {code} (primary or cross-listed)."

    def link(self, code: str) -> str:
        return site_url(f"/search?category={code}")

    def feed_url(self, code: str) -> str:
        return site_url(f"/feeds/category/{code}.{self.extension}")

    def items(self, code: str) -> QuerySet[Paper]:
        papers = papers_by_category(papers_listed(), code)
        # cat_published: the category link's date, which papers_by_category annotates.
        papers = papers.order_by("-cat_published", "-id")  # type: ignore[misc]
        return paper_list_prefetch(papers)[:FEED_SIZE]


class CategoryAtomFeed(CategoryFeed):
    feed_type = Atom1Feed
    extension = "atom"

    def subtitle(self, code: str) -> str:
        return self.description(code)


class CitingPapersFeed(PaperFeed):
    """The archive's papers citing one paper, newest first (each once, whichever sources said
    so): a reader follows who cites a paper. Four queries: the others' three and the ids."""

    def get_object(self, request, arxiv_id: str) -> Paper:
        paper = Paper.objects.filter(arxiv_id=arxiv_id, is_deleted=False).first()
        if paper is None:
            raise Http404("paper not in the archive")
        return paper

    def title(self, paper: Paper) -> str:
        return xml_text(f"wovepaper: papers citing “{' '.join(paper.title.split())}”")

    def description(self, paper: Paper) -> str:
        return xml_text(
            f"The newest papers of this archive citing arXiv:{paper.arxiv_id}, as Semantic "
            "Scholar and OpenAlex list them."
        )

    def link(self, paper: Paper) -> str:
        return site_url(f"/papers/{paper.arxiv_id}/cited-by")

    def feed_url(self, paper: Paper) -> str:
        return site_url(f"/papers/{paper.arxiv_id}/cited-by.{self.extension}")

    def items(self, paper: Paper) -> list[Paper]:
        ids = citing_paper_ids(paper, sort="date", offset=0, limit=FEED_SIZE)
        found = {p.pk: p for p in paper_list_prefetch(Paper.objects.filter(pk__in=ids))}
        return [found[pk] for pk in ids if pk in found and not found[pk].is_deleted]


class CitingPapersAtomFeed(CitingPapersFeed):
    feed_type = Atom1Feed
    extension = "atom"

    def subtitle(self, paper: Paper) -> str:
        return self.description(paper)
