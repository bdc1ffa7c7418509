from __future__ import annotations

from datetime import datetime
from urllib.parse import urlsplit

import pytest
from django.core.cache import cache
from django.test import override_settings
from django.urls import resolve
from lxml import etree

from institutions.models import Institution
from papers.models import Paper
from researchers.models import Researcher

pytestmark = pytest.mark.django_db

NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def schemas(fixtures_dir):
    load = lambda name: etree.XMLSchema(etree.parse(str(fixtures_dir / "sitemaps" / name)))  # noqa: E731
    return {"index": load("siteindex.xsd"), "urlset": load("sitemap.xsd")}


@pytest.fixture
def site_data(paper_factory):
    papers = [paper_factory() for _ in range(7)]
    papers.append(paper_factory(arxiv_id="hep-th/9901001", slug="an-old-one"))
    gone = paper_factory(is_deleted=True)
    survivor = Researcher.objects.create(display_name="Ada Lovelace")
    merged = Researcher.objects.create(display_name="A. Lovelace", merged_into=survivor)
    institution = Institution.objects.create(name="University of Cambridge", ror_id="013meh722")
    return {
        "papers": papers,
        "gone": gone,
        "survivor": survivor,
        "merged": merged,
        "institution": institution,
    }


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def path_and_query(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def fetch_all(client, schemas) -> tuple[list[str], list[str]]:
    """Validate the index and every file it lists; return the file URLs and the page URLs."""
    response = client.get("/sitemap.xml")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/xml")
    index = etree.fromstring(response.content)
    schemas["index"].assertValid(index)
    files = index.xpath("//s:sitemap/s:loc/text()", namespaces=NS)
    locations = []
    for url in files:
        assert url.startswith("http://127.0.0.1:8000/sitemap-")
        page = client.get(path_and_query(url))
        assert page.status_code == 200, url
        urlset = etree.fromstring(body(page))
        schemas["urlset"].assertValid(urlset)
        locations += urlset.xpath("//s:url/s:loc/text()", namespaces=NS)
    return files, locations


@override_settings(SITEMAP_PAGE_SIZE=3)
def test_sitemap_index_and_files_validate_and_list_every_page_once(client, schemas, site_data):
    files, locations = fetch_all(client, schemas)
    expected = {
        f"http://127.0.0.1:8000{obj.get_absolute_url()}"
        for obj in [*site_data["papers"], site_data["survivor"], site_data["institution"]]
    }
    listed = [
        loc
        for loc in locations
        if "/papers/" in loc or "/researchers/" in loc or "/institutions/" in loc
    ]
    assert sorted(listed) == sorted(expected)  # no deleted paper, no merged researcher
    assert len(locations) == len(set(locations))
    assert "http://127.0.0.1:8000/developers" in locations
    # Eight papers at three ids per file: every file holds at most three URLs.
    paper_files = [f for f in files if "sitemap-papers" in f]
    assert len(paper_files) >= 3
    for url in paper_files:
        urlset = etree.fromstring(body(client.get(path_and_query(url))))
        assert 1 <= len(urlset.xpath("//s:url", namespaces=NS)) <= 3


@override_settings(SITEMAP_PAGE_SIZE=3)
def test_sitemap_lastmod_is_modified_at(client, schemas, site_data):
    paper = site_data["papers"][0]
    page = (paper.pk - 1) // 3 + 1
    urlset = etree.fromstring(body(client.get(f"/sitemap-papers.xml?p={page}")))
    entries = {
        u.findtext("s:loc", namespaces=NS): u.findtext("s:lastmod", namespaces=NS)
        for u in urlset.xpath("//s:url", namespaces=NS)
    }
    lastmod = entries[f"http://127.0.0.1:8000{paper.get_absolute_url()}"]
    assert datetime.fromisoformat(lastmod) == paper.modified_at.replace(microsecond=0)


@override_settings(SITEMAP_PAGE_SIZE=3)
def test_empty_id_ranges_get_no_file_and_answer_404(client, schemas, paper_factory):
    first = paper_factory()
    paper_factory(id=first.pk + 30)  # as if upserts had burned the ids between
    assert Paper.objects.count() == 2
    files, locations = fetch_all(client, schemas)
    assert len([f for f in files if "sitemap-papers" in f]) == 2
    empty_page = (first.pk + 5) // 3 + 2
    assert client.get(f"/sitemap-papers.xml?p={empty_page}").status_code == 404
    assert client.get("/sitemap-papers.xml?p=abc").status_code == 404
    assert client.get("/sitemap-papers.xml?p=0").status_code == 404
    assert client.get("/sitemap-nothing.xml").status_code == 404


def test_sitemap_file_runs_a_fixed_number_of_queries(
    client, paper_factory, django_assert_max_num_queries, settings
):
    papers = [paper_factory() for _ in range(40)]
    # Page 1 holds them all whatever ids the tests before took (PostgreSQL's sequences are not
    # rolled back: past 50,000 they were on page 2).
    settings.SITEMAP_PAGE_SIZE = max(p.pk for p in papers)
    client.get("/sitemap-papers.xml?p=1")  # the Site row is cached after the first request
    with django_assert_max_num_queries(2):
        response = client.get("/sitemap-papers.xml?p=1")
        content = body(response)  # streamed: the queries run while the body is read
    assert content.count(b"<url>") == 40
    with django_assert_max_num_queries(4):
        client.get("/sitemap.xml")


def test_every_sitemap_url_resolves_to_a_page(client, schemas, site_data):
    """Every URL in the sitemap is a model's get_absolute_url (checked above); here each one must
    resolve to a page that answers 200 directly, without a redirect: a sitemap lists canonical
    URLs only."""
    _, locations = fetch_all(client, schemas)
    kinds = set()
    for location in locations:
        path = urlsplit(location).path
        resolve(path)  # raises Resolver404 for a URL no page serves
        response = client.get(path)
        assert response.status_code == 200, path
        kinds.add(path.strip("/").split("/", 1)[0])
    assert {"papers", "researchers", "institutions"} <= kinds


def test_robots_txt_points_at_the_sitemap(client, db):
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert "Sitemap: http://127.0.0.1:8000/sitemap.xml" in response.content.decode()


def test_favicon_ico_leads_to_the_sites_icon(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    icon = client.get(response["Location"])
    assert icon.status_code == 200
    assert b"<svg" in b"".join(icon.streaming_content)
