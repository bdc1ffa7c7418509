"""The public pages in Debian's Chromium at desktop and phone widths.

The bundled sample of real arXiv metadata is imported; a researcher is attached to his place
in two LHCb papers of 628 and 622 authors, and two researchers get 20 and 200 co-authors (names
from the sample's bylines) for the co-author graph. Each page is checked for horizontal
overflow, a height bound, TeX shown as MathML, and kept as a screenshot in test-artifacts/.

Height bounds (px): the large-collaboration researcher page under 3,000 at 1280 px wide; the
search page (20 results with abstracts) under 6,000 at 1280 and 12,000 at 390; every other page
under 4,500 at 1280 and under 10,000 at 390.
"""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from accounts.models import Follow
from institutions.models import AuthorshipInstitution, Institution
from papers.ingest.importing import snapshot_import
from papers.mathtext import formula_html, segments
from papers.models import Authorship, Paper
from researchers.models import Researcher
from researchers.names import name_key
from researchers.page_figures import researchers_update_stats

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
WIDTHS = (1280, 390)
# Side cards that a phone shows after the page's papers.
SIDE_CARDS_LAST = ".cards-last > aside .card"
SIDE_CARDS_PAGES = ("home", "researcher-collaboration", "institution")
# The researcher pages carry the identity panel, same-name evidence and public history (#15)
# beside the co-author list: 5,000 px at 1280 leaves room for them.
MAX_HEIGHT = {1280: 5000, 390: 10_000}
SEARCH_MAX_HEIGHT = {1280: 6000, 390: 12_000}
# /developers lists every feature a reader has with its page and API paths (wovepaper.features)
# before the API's own reference: as long as the search page.
LONG_PAGES = {"search", "developers"}
COLLABORATION_MAX_HEIGHT = 3000  # at 1280 px


def _make_researcher(name: str, **fields) -> Researcher:
    return Researcher.objects.create(display_name=name, name_key=name_key(name), **fields)


def _coauthor_world(hub_name: str, names: list[str], papers: list[Paper]) -> Researcher:
    """`hub` matched on `papers`, each of its other names matched to a researcher record."""
    hub = _make_researcher(hub_name)
    records = {n: _make_researcher(n) for n in names}
    for paper in papers:
        for a in paper.authorships.all():
            a.researcher = hub if a.position == 1 else records.get(a.name)
            a.save(update_fields=["researcher"])
    researchers_update_stats([hub.pk])
    hub.refresh_from_db()
    return hub


@pytest.fixture
def site(transactional_db, sample_path, paper_factory):
    snapshot_import(sample_path)
    # R. Lefèvre, 312th of 628 and 309th of 622 on two LHCb papers, at CNRS.
    lefevre = _make_researcher("R. Lefèvre", paper_count=2)
    cnrs = Institution.objects.create(name="CNRS", country_code="FR", paper_count=2)
    for a in Authorship.objects.filter(
        paper__arxiv_id__in=["1302.1213", "1302.1072"], keyname="Lefèvre"
    ):
        a.researcher = lefevre
        a.save(update_fields=["researcher"])
        AuthorshipInstitution.objects.create(authorship=a, institution=cnrs, paper_id=a.paper_id)
    researchers_update_stats([lefevre.pk])
    # Co-author graphs: real names from the sample's short bylines, on papers of four to six
    # authors (papers made here, so the graph has the shape asked of it).
    pool = []
    with gzip.open(sample_path, "rt", encoding="utf-8") as lines:
        for line in lines:
            for keyname, forenames, *_ in json.loads(line)["authors_parsed"][:6]:
                name = f"{forenames} {keyname}".strip()
                if name not in pool and 5 < len(name) < 30:
                    pool.append(name)
            if len(pool) > 260:
                break
    graphs = {}
    for hub_name, size, per_paper in (("Hana Twenty", 20, 3), ("Ivo Twohundred", 200, 5)):
        names = pool[:size]
        pool = pool[size:]
        cycle = itertools.cycle(names)
        papers = [
            paper_factory(
                title=f"Joint work number {n} on $\\mathbb{{Z}}_{n + 2}$-graded modules",
                authors=[hub_name, *(next(cycle) for _ in range(per_paper))],
                categories=["math.RA"],
            )
            for n in range(size * 2 // per_paper + 4)
        ]
        graphs[size] = _coauthor_world(hub_name, names, papers)
    reader = get_user_model().objects.create_user("reader", "reader@example.org", "pw-123456789")
    Follow.objects.create(user=reader, researcher=lefevre)
    return {"lefevre": lefevre, "cnrs": cnrs, "graphs": graphs}


def _unconverted_formulas(text: str) -> list[str]:
    """Delimited formulas still visible as source although they convert."""
    return [
        source
        for source, tex, display in segments(text)
        if tex and source != tex and formula_html(tex, display) is not None
    ]


def test_public_pages_at_desktop_and_phone_widths(live_server, browser, site):
    ARTIFACTS.mkdir(exist_ok=True)
    pages = {
        "home": ("/", False),
        "search": ("/search?q=mixing", True),
        "paper": (Paper.objects.get(arxiv_id="1302.1317").get_absolute_url(), True),
        "paper-628-authors": (Paper.objects.get(arxiv_id="1302.1213").get_absolute_url(), False),
        "researcher-collaboration": (site["lefevre"].get_absolute_url(), True),
        "researcher-20-coauthors": (site["graphs"][20].get_absolute_url(), True),
        "researcher-200-coauthors": (site["graphs"][200].get_absolute_url(), True),
        "institution": (site["cnrs"].get_absolute_url(), True),
        # Names once broke letter by letter there, and the table widened a phone's page.
        "institutions": ("/institutions", False),
        "category": ("/categories/hep-ex", True),
        "papers": ("/papers", False),
        # Its commands and URLs once widened a phone's page by 498 px.
        "developers": ("/developers", False),
        "about": ("/about", False),
    }
    heights = {}
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.set_default_timeout(20_000)
        for name, (path, has_tex) in pages.items():
            response = page.goto(live_server.url + path)
            assert response.status == 200, path
            metrics = page.evaluate(
                "() => ({scroll: document.documentElement.scrollWidth, view: innerWidth,"
                " height: document.documentElement.scrollHeight})"
            )
            assert metrics["scroll"] <= metrics["view"], (name, width, metrics)
            if name in SIDE_CARDS_PAGES:
                assert page.locator(SIDE_CARDS_LAST).count(), name
            if width < 860 and page.locator(SIDE_CARDS_LAST).count():
                # On one column the papers come before the side cards, not 1,600-3,600 px down.
                tops = page.evaluate(
                    "() => [document.querySelector('.paper-item'),"
                    f" document.querySelector('{SIDE_CARDS_LAST}')]"
                    ".map(e => e ? e.getBoundingClientRect().top + scrollY : null)"
                )
                if tops[0] is not None:
                    assert tops[0] < tops[1], (name, width, tops)
            if width > 860 and name in SIDE_CARDS_PAGES:
                # The cards come after the papers in the page, and still take the left column,
                # below the page's heading.
                card, paper, h1 = page.evaluate(
                    f"() => ['{SIDE_CARDS_LAST}', '.paper-item', 'main h1']"
                    ".map(s => document.querySelector(s).getBoundingClientRect().toJSON())"
                )
                assert card["left"] < paper["left"], (name, width, card, paper)
                assert h1["bottom"] < card["top"], (name, width, h1, card)
            heights[(name, width)] = metrics["height"]
            text = page.inner_text("main")
            assert _unconverted_formulas(text) == [], (name, width)
            if has_tex:
                assert page.locator("main math").count() > 0, (name, width)
            page.screenshot(path=str(ARTIFACTS / f"pages-{name}-{width}.png"), full_page=True)
        page.close()
    print("page heights:", heights)
    too_tall = {
        (name, width): h
        for (name, width), h in heights.items()
        if h >= (SEARCH_MAX_HEIGHT if name in LONG_PAGES else MAX_HEIGHT)[width]
    }
    assert too_tall == {}
    assert heights[("researcher-collaboration", 1280)] < COLLABORATION_MAX_HEIGHT


def test_graph_lists_every_coauthor_and_draws_the_first(live_server, browser, site):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    for size in (20, 200):
        page.goto(live_server.url + site["graphs"][size].get_absolute_url())
        page.locator(".network").screenshot(path=str(ARTIFACTS / f"pages-graph-{size}.png"))
    hub = site["graphs"][200]
    drawn = page.locator(".network a circle").count()
    listed = page.locator("ul.coauthors li").count()
    assert drawn == 24
    assert listed == len(hub.coauthors) >= 150
    # Co-authors who wrote together are joined, not only to the researcher in the middle.
    assert page.locator(".network .links path").count() > 0
    # The rest of the list folds away until asked for.
    assert not page.locator("details.coauthors-rest ul").is_visible()
    page.click("details.coauthors-rest summary")
    assert page.locator("details.coauthors-rest ul").is_visible()


def test_phone_menu_opens_and_closes(live_server, browser, site):
    page = browser.new_page(viewport={"width": 390, "height": 800})
    page.goto(live_server.url + "/")
    toggle = page.locator(".nav-toggle")
    assert toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false"
    assert not page.locator(".nav-menu a[href='/researchers']").is_visible()
    nav_height = page.evaluate("() => document.querySelector('.topbar').offsetHeight")
    assert nav_height < 130, nav_height
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    assert page.locator(".nav-menu a[href='/researchers']").is_visible()
    page.screenshot(path=str(ARTIFACTS / "pages-menu-open-390.png"))
    toggle.click()
    assert not page.locator(".nav-menu a[href='/researchers']").is_visible()
    # At desktop width the links are simply there.
    page.set_viewport_size({"width": 1280, "height": 800})
    assert not toggle.is_visible()
    assert page.locator(".nav-menu a[href='/researchers']").is_visible()
