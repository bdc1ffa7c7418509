# ruff: noqa: F811  (factory fixtures imported from tests/researchers/conftest.py)
"""Search by meaning as readers meet it: the search page's modes (hybrid the default), the API
and the markdown variant, similar papers with their reasons on paper pages, and researchers
working on similar things on researcher pages. Real model, real vectors, real index file."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.services import researcher_follow
from papers.models import Authorship
from papers.search import PAPERS
from papers.search.embedding_stage import embed_papers
from researchers.similar import FOLLOWED_LOOKED_AT
from tests.researchers.conftest import researcher_factory  # noqa: F401  (shared fixture)
from wovepaper.lib.search import backend_for

PAPERS_HERE = [
    (
        "Surface codes for quantum error correction",
        "We study logical error rates of surface codes under circuit noise for qubits.",
        ["quant-ph"],
        ["Ada Quantum", "Bo Qubit"],
    ),
    (
        "Decoding topological codes with neural networks",
        "A neural decoder for surface codes lowers the logical error rate of qubits.",
        ["quant-ph", "cs.LG"],
        ["Bo Qubit", "Cy Decoder"],
    ),
    (
        "Fault tolerance thresholds of color codes",
        "Threshold estimates for color codes protecting qubits against noise.",
        ["quant-ph"],
        ["Di Colour"],
    ),
    (
        "Dark matter halos of dwarf spheroidal galaxies",
        "Density profiles of dwarf galaxies constrain dark matter models.",
        ["astro-ph.GA"],
        ["Ed Galaxy"],
    ),
]


@pytest.fixture
def embedded(paper_factory):
    cache.clear()
    papers = [
        paper_factory(title=t, abstract=a, categories=c, authors=people)
        for t, a, c, people in PAPERS_HERE
    ]
    embed_papers([p.pk for p in papers], feed_index=False)
    backend_for(PAPERS, "semantic").rebuild()
    yield papers
    cache.clear()


def titles(html: str) -> list[str]:
    return re.findall(r'<h3><a href="/papers/[^"]+">([^<]+)</a></h3>', html)


def test_search_ranks_by_words_and_meaning_by_default_and_says_so(client, embedded):
    surface, decoding, colour, dark = embedded
    html = client.get("/search", {"q": "mistakes in quantum computers"}).content.decode()
    assert "Ranked by words and meaning together" in html
    assert '<option value="hybrid" selected>' in html
    found = titles(html)
    assert set(found[:3]) == {surface.title, decoding.title, colour.title}
    assert found[-1] == dark.title  # every paper is somewhat near: the galaxies come last

    words = client.get("/search", {"q": "mistakes in quantum computers", "mode": "keyword"})
    assert titles(words.content.decode()) == []  # no paper has these words

    meaning = client.get("/search", {"q": "galaxies", "mode": "semantic", "category": "quant-ph"})
    html = meaning.content.decode()
    assert "Ranked by meaning alone" in html and dark.title not in titles(html)


def test_api_and_markdown_take_the_mode(client, embedded):
    surface, decoding, colour, dark = embedded
    api = client.get("/api/v1/search/papers/", {"q": "how do galaxies hold together"})
    assert api.status_code == 200
    assert api.json()["results"][0]["title"] == dark.title
    keyword = client.get(
        "/api/v1/search/papers/", {"q": "how do galaxies hold together", "mode": "keyword"}
    )
    assert keyword.json()["results"] == []
    bad = client.get("/api/v1/search/papers/", {"q": "x", "mode": "telepathy"})
    assert bad.status_code == 400

    md = client.get(
        "/search", {"q": "how do galaxies hold together"}, HTTP_ACCEPT="text/markdown"
    ).content.decode()
    assert "Ranked by words and meaning together" in md
    assert dark.title in md.split("## Researchers")[0]
    assert "`mode`" in client.get("/search", HTTP_ACCEPT="text/markdown").content.decode()


def test_a_paper_page_lists_similar_papers_with_their_reasons(client, embedded):
    surface, decoding, colour, dark = embedded
    html = client.get(surface.get_absolute_url()).content.decode()
    section = html.split('id="similar-h"', 1)[1].split("</section>", 1)[0]
    listed = re.findall(r'<li><a href="([^"]+)">', section)
    assert listed[0] == decoding.get_absolute_url()
    assert surface.get_absolute_url() not in listed
    assert listed[-1] == dark.get_absolute_url()
    reason = section.split("</li>", 1)[0]
    assert "both about surface, codes" in reason  # title words first
    assert "shared authors: Bo Qubit" in reason
    assert "also in quant-ph" in reason

    md = client.get(surface.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert "## Similar papers" in md
    assert f"1. [{decoding.title}]" in md


def test_similar_papers_are_cached_until_the_index_changes(
    client, embedded, paper_factory, settings
):
    surface, *_ = embedded
    # The page cache off: the page itself is rendered every time (a cached page keeps other
    # records' parts up to PAGE_CACHE_SECONDS), so what is read here is the neighbours' cache.
    settings.PAGE_CACHE_SECONDS = 0
    client.get(surface.get_absolute_url())
    newcomer = paper_factory(
        title="Surface code decoders for quantum error correction",
        abstract="Decoding surface codes for qubits.",
        categories=["quant-ph"],
    )
    embed_papers([newcomer.pk], feed_index=False)
    # Not in the index yet: the cached neighbourhood stands.
    assert newcomer.title not in client.get(surface.get_absolute_url()).content.decode()
    backend_for(PAPERS, "semantic").index([newcomer.pk])  # the writer takes it
    assert newcomer.title in client.get(surface.get_absolute_url()).content.decode()


def test_a_paper_with_no_vector_shows_no_similar_section(client, paper_factory):
    paper = paper_factory(title="Not embedded yet")
    html = client.get(paper.get_absolute_url()).content.decode()
    assert 'id="similar-h"' not in html


def test_a_researcher_page_lists_researchers_working_on_similar_things(
    client, embedded, researcher_factory
):
    surface, decoding, colour, dark = embedded
    people = {}
    for paper in embedded:
        for authorship in Authorship.objects.filter(paper=paper):
            researcher = people.get(authorship.name) or researcher_factory(authorship.name)
            people[authorship.name] = researcher
            authorship.researcher = researcher
            authorship.save(update_fields=["researcher"])
    ada = people["Ada Quantum"]
    html = client.get(ada.get_absolute_url()).content.decode()
    section = html.split('id="similar-h"', 1)[1].split("</section>", 1)[0]
    names = re.findall(r'<a href="/researchers/[^"]+">([^<]+)</a>', section)
    # Ada's own paper is left out of the neighbours; the others' papers are all about codes.
    assert set(names[:3]) == {"Bo Qubit", "Cy Decoder", "Di Colour"}
    assert names[-1] == "Ed Galaxy"
    assert "Ada Quantum" not in names
    assert "1 paper close to this researcher&#x27;s work, e.g. “" in section
    md = client.get(ada.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert "## Working on similar things" in md


def _researchers_of(papers, researcher_factory) -> dict:
    people = {}
    for paper in papers:
        for authorship in Authorship.objects.filter(paper=paper):
            researcher = people.get(authorship.name) or researcher_factory(authorship.name)
            people[authorship.name] = researcher
            authorship.researcher = researcher
            authorship.save(update_fields=["researcher"])
    return people


def test_the_following_page_suggests_researchers_like_those_followed_and_says_which(
    client, embedded, researcher_factory, django_user_model
):
    people = _researchers_of(embedded, researcher_factory)
    reader = django_user_model.objects.create_user("reader", "r@example.org", "pw")
    researcher_follow(user=reader, researcher=people["Ada Quantum"])
    researcher_follow(user=reader, researcher=people["Cy Decoder"])
    client.force_login(reader)
    html = client.get("/following").content.decode()
    section = html.split('id="more-like-h"', 1)[1].split("</section>", 1)[0]
    names = re.findall(r'<a href="/researchers/[^"]+">([^<]+)</a>', section)
    # Neither followed researcher is suggested; the other code people come before galaxies.
    assert "Ada Quantum" not in names and "Cy Decoder" not in names
    assert set(names[:2]) == {"Bo Qubit", "Di Colour"}
    assert names[-1] == "Ed Galaxy"
    reasons = re.findall(r'<span class="small muted">([^<]+)</span>', section)
    assert len(reasons) == len(names)
    assert all(r.startswith(("Like Ada Quantum: ", "Like Cy Decoder: ")) for r in reasons)
    assert "close to their work, e.g. “" in reasons[0]

    md = client.get("/following", HTTP_ACCEPT="text/markdown").content.decode()
    assert "## More like the researchers you follow" in md
    assert "Bo Qubit" in md.split("## More like")[1]


def test_suggestions_cost_a_bounded_number_of_queries_however_many_are_followed(
    client, embedded, researcher_factory, django_user_model
):
    people = _researchers_of(embedded, researcher_factory)
    reader = django_user_model.objects.create_user("reader", "r@example.org", "pw")
    researcher_follow(user=reader, researcher=people["Ada Quantum"])
    client.force_login(reader)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/following").status_code == 200
        return len(captured)

    first, cached = queries(), queries()
    assert first - cached <= 2  # Ada's neighbours: her vectors, their authors; then cached
    for number in range(FOLLOWED_LOOKED_AT + 3):
        researcher_follow(user=reader, researcher=researcher_factory(f"Quiet Person {number}"))
    first_of_many, cached_of_many = queries(), queries()
    assert first_of_many - cached_of_many <= 2 * FOLLOWED_LOOKED_AT
    # The five looked at now are the newest follows, with no papers: nothing to suggest.
    assert cached_of_many <= cached


def test_the_words_only_link_keeps_the_query(client, embedded):
    html = client.get("/search", {"q": "mistakes in quantum computers"}).content.decode()
    link = re.search(r'<a href="([^"]*)">Words only</a>', html)
    assert link is not None, "hybrid search shows no 'Words only' link"
    href = link[1].replace("&amp;", "&")
    assert href.startswith("?q=") and "??" not in href
    assert "mode=keyword" in href
    assert (
        "mistakes in quantum computers"
        in client.get(href if href.startswith("/") else "/search" + href).content.decode()
    )
