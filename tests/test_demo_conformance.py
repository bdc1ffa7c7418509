"""Every output of the whole demo, checked by the tools made for its format: the demo's 3,553
papers (the bundled sample and the recorded famous ones, undated, untitled references and all)
exported as BibTeX (pybtex, strict, and the LaTeX rule check), RIS (rispy) and CSL-JSON (the
official schema); the pages that show math, accents and special characters, every category's
feeds, researchers' and institutions' pages and feeds, for JSON-LD (pyld and schema.org's
vocabulary), feeds (feedparser and the formats' rules) and HTML (html5lib, no parse error)."""

from __future__ import annotations

import json
import re
from io import StringIO

import pybtex.errors
import pytest
import rispy
from django.core.management import call_command
from pybtex.database import parse_string

from institutions.models import Institution
from papers.citations.export import citation_entries, csl_items, to_bibtex, to_ris
from papers.models import Paper, PaperCategory
from researchers.models import Researcher
from tests.feed_conformance import conforming_feed
from tests.papers.test_citation_export import csl_errors
from tests.papers.test_citation_latex import latex_problems
from tests.test_html_conformance import parse_errors
from tests.test_site import jsonld_of, outside_schemaorg

# Pages read per kind: every paper whose title holds math, an accent or a special character,
# up to this many (the demo has about 260), and as many researchers.
PAGES = 300
_SPECIAL = re.compile(r"[$\\^_{}~&%#]|[^\x00-\x7f]")


@pytest.fixture
def demo(settings, monkeypatch):
    settings.SEMANTIC_SCHOLAR_API_URL = "http://127.0.0.1:9/s2"
    settings.OPENALEX_API_URL = "http://127.0.0.1:9/openalex"
    settings.ROR_API_URL = "http://127.0.0.1:9/ror"
    settings.SITE_URL = settings.SITE_URL
    monkeypatch.delenv("SITE_URL", raising=False)
    call_command("demo", no_serve=True, stdout=StringIO(), stderr=StringIO())


@pytest.mark.django_db(transaction=True)
def test_every_export_page_and_feed_of_the_demo_conforms(demo, client):
    papers = list(Paper.objects.order_by("arxiv_id"))
    assert len(papers) > 3500
    entries = citation_entries(papers)

    bibtex = to_bibtex(entries)
    pybtex.errors.set_strict_mode(True)
    assert len(parse_string(bibtex, "bibtex").entries) == len(papers)
    fields = re.findall(r"^  (?:title|journal|annote|note) = \{(.*)\},?$", bibtex, re.M)
    assert {f: p for f in fields if (p := latex_problems(f))} == {}
    assert len(rispy.loads(to_ris(entries))) == len(papers)
    items = csl_items(entries)
    assert csl_errors(items) == [] and json.dumps(items)

    special = [p for p in papers if _SPECIAL.search(p.title)][:PAGES]
    assert len(special) > 100
    researchers = list(
        Researcher.objects.filter(merged_into=None, is_person=True).order_by("-paper_count")[:PAGES]
    )
    pages = [
        "/",
        *(p.get_absolute_url() for p in special),
        *(r.get_absolute_url() for r in researchers[:100]),
        *(i.get_absolute_url() for i in Institution.objects.all()),
    ]
    problems: dict[str, list[str]] = {}
    for path in pages:
        response = client.get(path, follow=True)
        assert response.status_code == 200, path
        html = response.content
        found = parse_errors(html)
        for document in jsonld_of(html.decode()):
            found += outside_schemaorg(document)
        if found:
            problems[path] = found
    assert problems == {}

    codes = sorted(set(PaperCategory.objects.values_list("code", flat=True)))
    feeds = [f"/feeds/category/{code}.{kind}" for code in codes for kind in ("rss", "atom")]
    feeds += ["/feeds/latest.rss", "/feeds/latest.atom"]
    feeds += [f"/researchers/{r.pk}/feed.rss" for r in researchers]
    feeds += [f"/institutions/{i.pk}/feed.atom" for i in Institution.objects.all()]
    empty = []
    for path in feeds:
        response = client.get(path)
        assert response.status_code == 200, path
        if not conforming_feed(response.content).entries:
            empty.append(path)
    # A researcher or institution with papers here has items in its feed (the demo's were
    # empty while their papers had no date).
    assert not [p for p in empty if "/researchers/" in p or "/institutions/" in p]
