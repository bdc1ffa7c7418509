"""Pages with collaboration papers: real LHCb papers of 628 and 622 authors from the bundled
sample. Lists show a short byline with the page's researcher in place; the paper page keeps the
whole byline; and no page runs more queries because a byline is long."""

from __future__ import annotations

import gzip
import re
from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Follow
from institutions.models import AuthorshipInstitution, Institution
from papers.ingest.snapshot import parse_snapshot_line
from papers.ingest.upsert import papers_upsert
from papers.models import Authorship, Paper
from papers.search.postgres_documents import search_index_papers
from researchers.models import Researcher
from researchers.names import name_key

LHCB = ("1302.1213", "1302.1072")  # 628 and 622 authors; R. Lefèvre is 312th and 309th


@pytest.fixture
def small_world(paper_factory):
    """R. Lefèvre with one short paper, at an institution, followed by a reader."""
    lefevre = Researcher.objects.create(
        display_name="R. Lefèvre", name_key=name_key("R. Lefèvre"), paper_count=1
    )
    cnrs = Institution.objects.create(name="CNRS", country_code="FR", paper_count=1)
    paper = paper_factory(
        title="Amplitude of a small thing",
        authors=["Ana Short", "R. Lefèvre"],
        categories=["hep-ex"],
        published=datetime(2013, 1, 1, tzinfo=UTC),
    )
    _attach(Authorship.objects.filter(paper=paper, position=2), lefevre, cnrs)
    reader = get_user_model().objects.create_user("reader", "reader@example.org", "pw-12345678")
    Follow.objects.create(user=reader, researcher=lefevre)
    return {"researcher": lefevre, "institution": cnrs, "reader": reader}


def _attach(authorships, researcher, institution):
    for authorship in authorships:
        authorship.researcher = researcher
        authorship.save(update_fields=["researcher"])
        AuthorshipInstitution.objects.create(
            authorship=authorship, institution=institution, paper_id=authorship.paper_id
        )


def add_collaboration(sample_path, world) -> list[Paper]:
    with gzip.open(sample_path, "rt", encoding="utf-8") as lines:
        records = [parse_snapshot_line(line) for line in lines if line[8:17] in LHCB]
    _, changed = papers_upsert(records)
    # As the harvest's task would: PostgreSQL searches documents built after the write.
    search_index_papers(changed)
    _attach(
        Authorship.objects.filter(paper__arxiv_id__in=LHCB, keyname="Lefèvre"),
        world["researcher"],
        world["institution"],
    )
    return list(Paper.objects.filter(arxiv_id__in=LHCB))


def page_queries(client, url: str) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(queries), response.content.decode()


def list_pages(world) -> list[str]:
    return [
        "/",
        "/search?q=amplitude",
        world["researcher"].get_absolute_url(),
        world["institution"].get_absolute_url(),
        "/following",
    ]


@pytest.mark.django_db
def test_long_bylines_cost_no_extra_query_per_paper_on_list_pages(client, small_world, sample_path):
    client.force_login(small_world["reader"])
    before = {url: page_queries(client, url)[0] for url in list_pages(small_world)}
    papers = add_collaboration(sample_path, small_world)
    # Signed-in readers share cached pages too, and the links made above announce nothing to
    # the page cache: the pages are rendered afresh, to count what rendering them costs.
    cache.clear()
    assert sorted(p.authorships.count() for p in papers) == [622, 628]
    last_names = [
        p.authorships.order_by("-position").values_list("name", flat=True)[0] for p in papers
    ]
    for url in list_pages(small_world):
        count, html = page_queries(client, url)
        # One query more, whatever the number of long bylines: their lengths, read at once.
        assert count <= before[url] + 1, (url, before[url], count)
        assert count <= 16, url
        # No wall of names: the collaboration shows a handful of its 628, not its last ones.
        assert last_names and not any(name in html for name in last_names), url
        assert "and 624 more" in html or "and 625 more" in html, url


@pytest.mark.django_db
def test_a_list_shows_the_researcher_in_place_with_their_position(client, small_world, sample_path):
    add_collaboration(sample_path, small_world)
    html = client.get(small_world["researcher"].get_absolute_url()).content.decode()
    item = html[html.index('id="paper-13021213"') :]
    byline = re.search(r'<p class="paper-authors">(.*?)</p>', item, re.S)[1]
    first_three = list(
        Authorship.objects.filter(paper__arxiv_id="1302.1213", position__lte=3)
        .order_by("position")
        .values_list("name", flat=True)
    )
    assert byline.startswith(", ".join(first_three) + " … ")
    url = small_world["researcher"].get_absolute_url()
    assert f'<a href="{url}" class="focus">R. Lefèvre</a>' in byline
    assert "(312th of 628)" in byline
    assert "and 624 more" in byline  # 628 less three first names and Lefèvre
    assert byline.count(" … ") == 1


@pytest.mark.django_db
def test_the_paper_page_keeps_the_whole_byline_folded(
    client, small_world, sample_path, django_assert_max_num_queries
):
    add_collaboration(sample_path, small_world)
    paper = Paper.objects.get(arxiv_id="1302.1213")
    # The first view makes the paper's computed analysis (tasks inline, no model), once; the
    # bound is for every view after it.
    client.get(paper.get_absolute_url())
    # Two of them for similar papers: the vector index's version, this paper's vector.
    with django_assert_max_num_queries(6):
        html = client.get(paper.get_absolute_url()).content.decode()
    byline = html[html.index('id="authors"') : html.index('class="paper-links"')]
    assert byline.count('class="author"') == 628
    assert "<summary>Show the other 598 of 628 authors</summary>" in byline
    assert byline.index("R. Lefèvre") > byline.index("<details")
    # Each author with their page and institutions (one flat query for all of them).
    researcher, cnrs = small_world["researcher"], small_world["institution"]
    assert (
        f'<span class="author"><a href="{researcher.get_absolute_url()}">R. Lefèvre</a>'
        f'<span class="affil"> (<a href="{cnrs.get_absolute_url()}">CNRS</a>)</span></span>'
    ) in byline
    assert html.count('<meta name="citation_author" content="') == 628
