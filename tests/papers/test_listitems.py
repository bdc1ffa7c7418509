"""Paper list items rendered once and served from the cache (papers.listitems): a page with
the items held renders none of them, shows exactly what rendering them would show, and shows
a change to anything an item shows (title, byline links, merges, a researcher's new address)
at once, however the change was written: the key is a digest of what the item shows."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from papers import listitems
from papers.models import Authorship, Paper
from papers.selectors import papers_with_short_bylines
from researchers.curation.decisions import researchers_merge
from researchers.models import Researcher


@pytest.fixture(autouse=True)
def _fresh_pages(settings):
    # Every request renders its page: what is measured here is the items' cache alone.
    settings.PAGE_CACHE_SECONDS = 0
    settings.LIST_ITEM_CACHE_SECONDS = 3600


@pytest.fixture
def item_renders(monkeypatch):
    """How many list items were rendered from the template (not served from the cache)."""
    seen: list[str] = []
    load = listitems.get_template

    class Counted:
        def __init__(self, template) -> None:
            self.template = template

        def render(self, context=None, request=None):
            seen.append(context["paper"].arxiv_id)
            return self.template.render(context, request)

    def loaded(name, using=None):
        template = load(name, using=using)
        return Counted(template) if name == listitems.ITEM_TEMPLATE else template

    monkeypatch.setattr(listitems, "get_template", loaded)
    return seen


def items(html: str) -> list[str]:
    return re.findall(r'<li class="paper-item".*?</li>', html, re.S)


def page(client, path: str = "/") -> str:
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def listed(paper_factory):
    """Three papers on the home page: TeX in a title, stray markup in another, a long byline."""
    tex = paper_factory(title=r"Bounds on $\Lambda_b^0$ decays", abstract=r"We find $x^2 < 1$.")
    markup = paper_factory(
        title="On <script>alert(1)</script> & other tags", abstract="A <b>bold</b> claim."
    )
    long = paper_factory(authors=[f"Author {i}" for i in range(1, 13)])
    return tex, markup, long


def test_a_page_with_its_items_held_renders_none_and_shows_the_same(client, listed, item_renders):
    first = page(client)
    assert len(item_renders) == 3
    item_renders.clear()
    second = page(client)
    assert item_renders == []
    assert second == first
    assert len(items(second)) == 3


def test_held_items_are_the_template_s_own_output_escaping_included(
    client, settings, listed, item_renders
):
    page(client)  # keeps the items
    held = page(client)
    settings.LIST_ITEM_CACHE_SECONDS = 0
    rendered = page(client)
    assert held == rendered
    assert "<script>alert" not in held
    assert "On &lt;script&gt;alert(1)&lt;/script&gt; &amp; other tags" in held
    assert "<math" in held  # the TeX title's formula as MathML
    assert "and 9 more" in held


def test_without_the_cache_every_item_is_rendered_each_time(client, settings, listed, item_renders):
    settings.LIST_ITEM_CACHE_SECONDS = 0
    page(client)
    page(client)
    assert len(item_renders) == 6
    # Nothing kept either, whichever cache the settings name (local memory or Redis).
    for paper in papers_with_short_bylines(list(listed)):
        assert cache.get(listitems.item_key(paper, hide_abstracts=False)) is None


def test_a_new_title_shows_at_once_even_when_written_without_a_signal(client, listed):
    tex, markup, long = listed
    assert "A study of example" in page(client)
    # A bulk write (harvest, import) sends no signal and leaves modified_at as it was.
    Paper.objects.filter(pk=long.pk).update(title="Renamed by the harvest")
    html = page(client)
    assert "Renamed by the harvest" in html
    assert long.title not in html


def test_new_citation_figures_show_at_once(client, listed):
    tex, markup, long = listed
    page(client)
    Paper.objects.filter(pk=tex.pk).update(cited_by_count=1234, cited_by_source="openalex")
    assert "1,234 citations" in page(client)


def test_an_authorship_linked_to_a_researcher_links_the_name_at_once(client, listed):
    tex, markup, long = listed
    page(client)
    ada = Researcher.objects.create(display_name="Ada Lovelace", slug="ada-lovelace")
    Authorship.objects.filter(paper=tex, position=1).update(researcher=ada)
    item = next(i for i in items(page(client)) if tex.arxiv_id in i)
    assert f'<a href="/researchers/{ada.pk}-ada-lovelace">Ada Lovelace</a>' in item


def test_a_merge_moves_the_links_to_the_survivor_at_once(client, listed):
    tex, markup, long = listed
    folded = Researcher.objects.create(display_name="A. Lovelace", slug="a-lovelace")
    survivor = Researcher.objects.create(display_name="Ada Lovelace", slug="ada-lovelace")
    Authorship.objects.filter(paper=tex, position=1).update(researcher=folded)
    assert f"/researchers/{folded.pk}-a-lovelace" in page(client)
    researchers_merge(survivor_id=survivor.pk, folded_ids=[folded.pk], actor=None)
    html = page(client)
    assert f"/researchers/{survivor.pk}-ada-lovelace" in html
    assert f"/researchers/{folded.pk}-a-lovelace" not in html


def test_a_renamed_researcher_is_linked_at_their_new_address_at_once(client, listed):
    tex, markup, long = listed
    ada = Researcher.objects.create(display_name="Ada Byron", slug="ada-byron")
    Authorship.objects.filter(paper=tex, position=1).update(researcher=ada)
    assert f"/researchers/{ada.pk}-ada-byron" in page(client)
    ada.display_name, ada.slug = "Ada Lovelace", "ada-lovelace"
    ada.save()
    html = page(client)
    assert f"/researchers/{ada.pk}-ada-lovelace" in html
    assert f"/researchers/{ada.pk}-ada-byron" not in html


def test_the_page_s_researcher_in_place_is_part_of_the_item(client, paper_factory):
    """The same paper listed on its author's page (their name and position shown) and on the
    list of newest papers (the first names only; abstracts hidden on both) is two items."""
    paper = paper_factory(authors=[f"Author {i}" for i in range(1, 13)])
    tenth = Researcher.objects.create(display_name="Author 10", slug="author-10", paper_count=1)
    Authorship.objects.filter(paper=paper, position=10).update(researcher=tenth)
    page(client, "/papers")
    on_their_page = page(client, tenth.get_absolute_url())
    assert "(10th of 12)" in on_their_page
    assert "(10th of 12)" not in page(client, "/papers")


def test_hidden_abstracts_are_a_different_item(paper_factory):
    paper = paper_factory(abstract="Something quite distinctive.")
    [with_byline] = papers_with_short_bylines([paper])
    shown = listitems.paper_items_html([with_byline])
    hidden = listitems.paper_items_html([with_byline], hide_abstracts=True)
    assert "Something quite distinctive." in shown
    assert "Something quite distinctive." not in hidden


def test_a_change_to_the_rendering_code_is_a_new_key(paper_factory, tmp_path, monkeypatch):
    [paper] = papers_with_short_bylines([paper_factory()])
    template = tmp_path / "_paper_item.jinja"
    template.write_text("one")
    monkeypatch.setattr(listitems, "RENDERED_BY", (template,))
    listitems.renderer_version.cache_clear()
    try:
        before = listitems.item_key(paper, hide_abstracts=False)
        template.write_text("two")
        listitems.renderer_version.cache_clear()
        assert listitems.item_key(paper, hide_abstracts=False) != before
    finally:
        listitems.renderer_version.cache_clear()


def test_every_file_the_rendering_depends_on_exists():
    assert all(path.is_file() for path in listitems.RENDERED_BY)


@pytest.mark.parametrize("zone", ["UTC", "Pacific/Kiritimati", "America/Los_Angeles"])
def test_the_day_filter_writes_what_django_s_date_filter_writes(zone):
    """Lists format dates with `day` (kept per day); it must agree with `date` in every time
    zone, near midnight too, and leave formats with a time of day to `date`."""
    from datetime import UTC, date, datetime

    from django.template import Context, Template
    from django.utils import timezone

    moments = [
        datetime(2024, 1, 1, 0, 30, tzinfo=UTC),
        datetime(2023, 12, 31, 23, 30, tzinfo=UTC),
        datetime(2020, 2, 29, 12, 0, tzinfo=UTC),
        date(2019, 7, 4),
    ]
    day_formats = ["j M Y", "Y-m-d", "D, jS F Y", r"\d\a\y j"]

    def template(formats):
        source = "".join(
            f"{{{{ v|date:'{f}' }}}}|{{{{ v|day:'{f}' }}}}\n".replace("\\", "\\\\") for f in formats
        )
        return Template("{% load paper_tags %}" + source)

    with timezone.override(zone):
        for moment in moments * 2:  # the second time from what `day` kept
            # A time of day is formatted by `date` itself (Django refuses it for a date).
            formats = [*day_formats, "j M Y H:i"] if isinstance(moment, datetime) else day_formats
            lines = template(formats).render(Context({"v": moment})).strip().split("\n")
            for line in lines:
                expected, got = line.split("|")
                assert got == expected


def test_an_item_escapes_as_django_does(paper_factory):
    """The items' Jinja2 template writes every value as Django's `escape` would (quotes as
    &quot; and &#x27;), so an item reads the same as the pages around it."""
    from django.utils.html import escape

    name = 'Seán O\'Brien "the <b>bold</b>"'
    paper = paper_factory(authors=[name, "Ada Lovelace"])
    [with_byline] = papers_with_short_bylines([paper])
    html = listitems.paper_items_html([with_byline])
    assert escape(name) in html
    assert "&#x27;" in escape(name) and "&quot;" in escape(name)
    assert "<b>bold" not in html


def test_an_item_shows_dates_in_the_reader_s_time_zone(paper_factory):
    """`day` reads a time in the current time zone in the items' template too (Django's
    templates convert before a filter that expects local time; Jinja2 does not)."""
    from datetime import UTC, datetime

    from django.utils import timezone

    paper = paper_factory(cited_by_count=3, cited_by_source="openalex")
    Paper.objects.filter(pk=paper.pk).update(
        cited_by_updated_at=datetime(2024, 1, 1, 23, 30, tzinfo=UTC)
    )
    [with_byline] = papers_with_short_bylines([Paper.objects.get(pk=paper.pk)])
    with timezone.override("UTC"):
        assert "as of 1 Jan 2024" in listitems.paper_items_html([with_byline])
    with timezone.override("Pacific/Kiritimati"):  # UTC+14: already the 2nd
        assert "as of 2 Jan 2024" in listitems.paper_items_html([with_byline])


@pytest.mark.parametrize("path", ["/", "/categories/hep-ex", "/search?q=collaboration"])
def test_lists_read_a_byline_as_written_only_cut_where_no_name_was_read(
    client, paper_factory, path
):
    """A collaboration's byline as written runs to tens of kilobytes: list pages leave it unread
    and show the names read from it; where none were, its first 200 characters, read cut."""
    paper_factory(title="Collaboration study one", categories=["hep-ex"])
    unnamed = paper_factory(title="Collaboration study two", categories=["hep-ex"], authors=[])
    written = ", ".join(f"A. Physicist{n}" for n in range(3000))
    Paper.objects.filter(pk=unnamed.pk).update(authors=written)
    with CaptureQueriesContext(connection) as queries:
        html = client.get(path).content.decode()
    assert "Collaboration study one" in html and "Collaboration study two" in html
    assert "Ada Lovelace" in html  # the named paper's byline, as read
    assert written[:150] in html and written[:300] not in html
    assert not _papers_read_with_the_byline_as_written(queries)


def test_a_researchers_and_an_institutions_lists_leave_the_byline_as_written_unread(
    client, paper_factory
):
    from institutions.models import AuthorshipInstitution, Institution

    paper = paper_factory(title="Collaboration study three", authors=["Ada Lovelace", "B. Two"])
    person = Researcher.objects.create(display_name="Ada Lovelace", name_key="ada lovelace")
    first = Authorship.objects.get(paper=paper, position=1)
    Authorship.objects.filter(pk=first.pk).update(researcher=person)
    place = Institution.objects.create(name="Analytical Engine Institute")
    AuthorshipInstitution.objects.create(authorship=first, paper=paper, institution=place)
    for path in (person.get_absolute_url(), place.get_absolute_url()):
        with CaptureQueriesContext(connection) as queries:
            html = client.get(path).content.decode()
        assert "Collaboration study three" in html, path
        assert not _papers_read_with_the_byline_as_written(queries), path


def _papers_read_with_the_byline_as_written(queries: CaptureQueriesContext) -> list[str]:
    """The queries that read papers' rows whole, the byline as written included (a page's
    single papers joined to other rows, a researcher's most cited one, are not lists)."""
    return [
        q["sql"]
        for q in queries.captured_queries
        if 'FROM "papers_paper"' in q["sql"]
        and '"papers_paper"."authors"' in q["sql"]
        and "SUBSTR" not in q["sql"].upper()
    ]
