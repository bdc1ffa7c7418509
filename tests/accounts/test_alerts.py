"""Saved searches and their alerts: saved from the search page, checked over new papers, shown on
the saved-searches page, in the feed, the digest and the private Atom/RSS feed, grouped by
search; a search by meaning alerts only above the similarity floor."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from accounts.digests import digest_send
from accounts.library import alerts
from accounts.library.lists import paper_save, reading_list_default
from accounts.library.models import SavedSearch, SearchAlert
from accounts.library.saved_searches import (
    SAVED_SEARCH_MAX,
    SavedSearchError,
    SearchTerms,
    saved_search_create,
)
from papers.search import PAPERS
from papers.search.embedding_stage import embed_papers
from tests.feed_conformance import conforming_feed
from wovepaper.lib.search import backend_for

pytestmark = pytest.mark.django_db


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def recent(paper_factory):
    """Papers published in the last days, as the alerts look for."""

    def make(title: str, abstract: str = "We study it.", days_ago: float = 1, **fields):
        return paper_factory(
            title=title,
            abstract=abstract,
            published=timezone.now() - timedelta(days=days_ago),
            **fields,
        )

    return make


def test_saving_from_the_search_page_link(user_factory):
    user = user_factory()
    client = _signed_in(user)
    html = client.get("/search", {"q": "quantum error correction"}).content.decode()
    assert "/me/searches?q=quantum+error+correction" in html
    offer = client.get("/me/searches", {"q": "quantum error correction", "mode": "keyword"})
    assert "Save this search?" in offer.content.decode()
    assert not SavedSearch.objects.exists()
    client.post("/me/searches", {"q": "quantum error correction", "mode": "keyword"})
    client.post("/me/searches", {"q": "quantum  error correction", "mode": "keyword"})
    saved = SavedSearch.objects.get(user=user)
    assert saved.query == "quantum error correction" and saved.mode == "keyword"


def test_a_check_keeps_new_matching_papers_once(user_factory, recent):
    user = user_factory()
    wanted = recent("Surface codes under circuit noise", "Logical error rates of surface codes.")
    recent("Dwarf galaxy halos", "Dark matter density profiles.")
    old = recent("Surface codes in 2019", "Older surface codes work.", days_ago=400)
    saved = saved_search_create(user=user, terms=SearchTerms(query="surface codes", mode="keyword"))
    assert alerts.saved_search_check(saved=saved) == 1
    assert list(SearchAlert.objects.values_list("paper_id", flat=True)) == [wanted.pk]
    saved.refresh_from_db()
    assert saved.checked_at is not None
    # Checked again: nothing is announced twice, and the old paper stays out.
    assert alerts.saved_search_check(saved=saved) == 0
    assert not SearchAlert.objects.filter(paper=old).exists()


def test_the_category_filter_holds(user_factory, recent):
    user = user_factory()
    recent("Surface codes for qubits", categories=["quant-ph"])
    in_cs = recent("Surface codes for storage", categories=["cs.IT"])
    saved = saved_search_create(
        user=user,
        terms=SearchTerms(query="surface codes", mode="keyword", category="cs.IT"),
    )
    alerts.saved_search_check(saved=saved)
    assert list(SearchAlert.objects.values_list("paper_id", flat=True)) == [in_cs.pk]


def test_a_meaning_search_alerts_only_above_the_similarity_floor(user_factory, recent, settings):
    cache.clear()
    papers = [
        recent(
            "Surface codes for quantum error correction",
            "We study logical error rates of surface codes under circuit noise for qubits.",
            categories=["quant-ph"],
        ),
        recent(
            "Dark matter halos of dwarf spheroidal galaxies",
            "Density profiles of dwarf galaxies constrain dark matter models.",
            categories=["astro-ph.GA"],
        ),
    ]
    embed_papers([p.pk for p in papers], feed_index=False)
    backend_for(PAPERS, "semantic").rebuild()
    user = user_factory()
    saved = saved_search_create(
        user=user,
        terms=SearchTerms(query="quantum error correcting codes", mode="semantic"),
    )
    alerts.saved_search_check(saved=saved)
    assert list(SearchAlert.objects.values_list("paper_id", flat=True)) == [papers[0].pk]
    # Above any similarity a real query reaches: nothing is announced.
    settings.SEARCH_SIMILARITY_FLOOR = 0.99
    cache.clear()
    SearchAlert.objects.all().delete()
    SavedSearch.objects.update(checked_at=None)
    saved.refresh_from_db()
    alerts.saved_search_check(saved=saved)
    assert not SearchAlert.objects.exists()


def test_the_saved_searches_page_groups_alerts_by_search(user_factory, recent):
    user = user_factory()
    first = recent("Surface codes under noise")
    second = recent("Transformers for protein folding")
    for query in ("surface codes", "protein folding"):
        saved = saved_search_create(user=user, terms=SearchTerms(query=query, mode="keyword"))
        alerts.saved_search_check(saved=saved)
    client = _signed_in(user)
    html = client.get("/me/searches").content.decode()
    assert "“surface codes” by words" in html and "“protein folding” by words" in html
    assert first.title in html and second.title in html
    markdown = client.get("/me/searches", HTTP_ACCEPT="text/markdown").content.decode()
    assert "### “surface codes” by words" in markdown and first.arxiv_id in markdown
    feed = client.get("/following").content.decode()
    assert "From your saved searches" in feed and second.title in feed


def test_the_alert_feed_is_private_to_its_secret_address(user_factory, recent):
    user = user_factory()
    paper = recent("Surface codes under noise")
    saved = saved_search_create(user=user, terms=SearchTerms(query="surface codes", mode="keyword"))
    alerts.saved_search_check(saved=saved)
    token = alerts.alert_feed_token(user=user)
    assert len(token) >= 32
    anyone = Client()
    atom = anyone.get(f"/me/alerts/{token}.atom")
    assert atom.status_code == 200 and "noindex" in atom["X-Robots-Tag"]
    parsed = conforming_feed(atom.content)
    (entry,) = parsed.entries
    assert entry.title == f"[“surface codes” by words] {paper.title}"
    assert entry.link.endswith(paper.get_absolute_url())
    rss = conforming_feed(anyone.get(f"/me/alerts/{token}.rss").content)
    assert rss.entries[0].title == entry.title
    _signed_in(user).post("/me/searches/feed/reset")
    assert anyone.get(f"/me/alerts/{token}.atom").status_code == 404
    assert alerts.alert_feed_token(user=user) != token


def test_the_digest_carries_alerts_grouped_by_search_in_bounded_queries(
    user_factory, recent, django_assert_max_num_queries
):
    user = user_factory(email="alerts@example.org")
    papers = [recent(f"Surface codes number {n}") for n in range(3)]
    searches = [
        saved_search_create(
            user=user, terms=SearchTerms(query=f"surface codes number {n}", mode="keyword")
        )
        for n in range(3)
    ]
    # 50 saved searches: the digest reads their alerts in one range, not per search.
    for n in range(SAVED_SEARCH_MAX - 3):
        SavedSearch.objects.create(user=user, query=f"unmatched words {n}", mode="keyword")
    for saved in searches:
        alerts.saved_search_check(saved=saved)
    # 14: the reader's lists, for papers like their library (none here), and the news of
    # papers they saved or follow.
    with django_assert_max_num_queries(14):
        outcome = digest_send(user_id=user.pk, now=timezone.now() + timedelta(minutes=1))
    assert outcome.status == "sent"
    (message,) = mail.outbox
    body = message.body
    for n, paper in enumerate(papers):
        assert f"“surface codes number {n}” by words" in body and paper.title in body
    assert "saved search" in message.subject


def test_other_readers_searches_cannot_be_deleted(user_factory):
    owner, other = user_factory(), user_factory()
    saved = saved_search_create(
        user=owner, terms=SearchTerms(query="surface codes", mode="keyword")
    )
    assert _signed_in(other).post(f"/me/searches/{saved.pk}/delete").status_code == 404
    assert SavedSearch.objects.filter(pk=saved.pk).exists()
    _signed_in(owner).post(f"/me/searches/{saved.pk}/delete")
    assert not SavedSearch.objects.exists()


def test_saved_searches_are_bounded_and_exported(user_factory, recent):
    user = user_factory()
    recent("Surface codes under noise")
    saved = saved_search_create(user=user, terms=SearchTerms(query="surface codes", mode="keyword"))
    alerts.saved_search_check(saved=saved)
    SavedSearch.objects.bulk_create(
        SavedSearch(user=user, query=f"words {n}") for n in range(SAVED_SEARCH_MAX - 1)
    )
    with pytest.raises(SavedSearchError):
        saved_search_create(user=user, terms=SearchTerms(query="one more"))
    from accounts.account_data import user_delete, user_export

    data = user_export(user=user)
    first = next(s for s in data["saved_searches"] if s["query"] == "surface codes")
    assert first["mode"] == "keyword" and len(first["alerts"]) == 1
    user_delete(user=user)
    assert not SavedSearch.objects.exists() and not SearchAlert.objects.exists()


def test_saved_searches_through_the_api(user_factory, recent):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    user = user_factory()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    assert APIClient().get("/api/v1/me/searches/").status_code == 401
    paper = recent("Surface codes under noise", categories=["quant-ph"])
    made = api.post(
        "/api/v1/me/searches/",
        {"query": "surface codes", "mode": "keyword", "category": "quant-ph"},
        format="json",
    )
    assert made.status_code == 201 and made.json()["name"] == "“surface codes” by words in quant-ph"
    again = api.post(
        "/api/v1/me/searches/",
        {"query": "surface codes", "mode": "keyword", "category": "quant-ph"},
        format="json",
    )
    assert again.status_code == 200 and again.json()["id"] == made.json()["id"]
    assert api.post("/api/v1/me/searches/", {"query": "  "}, format="json").status_code == 400
    alerts.saved_search_check(saved=SavedSearch.objects.get())
    listed = api.get("/api/v1/me/searches/").json()
    assert listed["count"] == 1 and listed["results"][0]["checked_at"]
    found = api.get(listed["results"][0]["alerts_url"]).json()
    assert [a["arxiv_id"] for a in found["results"]] == [paper.arxiv_id]
    other = APIClient()
    other.force_authenticate(user_factory())
    assert other.delete(f"/api/v1/me/searches/{made.json()['id']}/").status_code == 404
    assert api.delete(f"/api/v1/me/searches/{made.json()['id']}/").status_code == 204
    assert not SavedSearch.objects.exists()
    paths = api.get("/openapi.json").json()["paths"]
    assert set(paths["/api/v1/me/searches/"]) >= {"get", "post"}
    assert "get" in paths["/api/v1/me/searches/{search_id}/alerts/"]


def test_the_alert_feed_announces_news_of_kept_and_followed_papers_in_bounded_queries(
    user_factory, recent, fixtures_dir, researcher_factory, django_assert_max_num_queries
):
    """Real snapshot records upserted again changed, as a harvest sees them: a new version of a
    saved paper, a journal reference of a followed researcher's paper, a withdrawal of a paper
    the reader neither keeps nor follows (not announced), beside a saved search's alert."""
    from dataclasses import replace

    from accounts.models import Follow
    from papers.ingest.snapshot import parse_snapshot_line
    from papers.ingest.upsert import papers_upsert
    from papers.models import Authorship, Paper

    lines = (fixtures_dir / "arxiv-snapshot" / "first200.jsonl").read_text().splitlines()
    records = [parse_snapshot_line(line) for line in lines]
    plain = [r for r in records if not r.journal_ref and not r.is_withdrawn][:3]
    with_ref = next(r for r in records if r.journal_ref)
    papers_upsert(plain)
    kept, followed, neither = (Paper.objects.get(arxiv_id=r.arxiv_id) for r in plain)

    user = user_factory()
    paper_save(user=user, paper=kept, reading_list=reading_list_default(user=user))
    author = researcher_factory("Followed Author")
    Authorship.objects.filter(paper=followed, position=1).update(researcher=author)
    Follow.objects.create(user=user, researcher=author)
    alerted = recent("Surface codes under noise")
    saved = saved_search_create(user=user, terms=SearchTerms(query="surface codes", mode="keyword"))
    alerts.saved_search_check(saved=saved)
    papers_upsert(
        [
            replace(plain[0], version=plain[0].version + 2),
            replace(plain[1], journal_ref=with_ref.journal_ref),
            replace(plain[2], comments="This paper has been withdrawn by the author"),
        ]
    )

    token = alerts.alert_feed_token(user=user)
    anyone = Client()
    with django_assert_max_num_queries(6):
        atom = anyone.get(f"/me/alerts/{token}.atom")
    assert atom.status_code == 200
    titles = [e.title for e in conforming_feed(atom.content).entries]
    assert f"{kept.title}: v{plain[0].version + 2} posted" in titles
    assert f"{followed.title}: published in {with_ref.journal_ref}" in titles
    assert f"[“surface codes” by words] {alerted.title}" in titles
    assert not any(neither.title in t for t in titles) and len(titles) == 3
    # Newest first: the news came after the alert.
    assert titles[-1].startswith("[“surface codes”")
    rss = conforming_feed(anyone.get(f"/me/alerts/{token}.rss").content)
    news = next(e for e in rss.entries if e.title.startswith(kept.title))
    assert news.link.endswith(kept.get_absolute_url())
    assert news.id.startswith("http://127.0.0.1:8000/me/searches#news-")  # an IRI, as Atom asks
    assert "News of a paper in your lists" in news.summary
    assert [t.term for t in news.tags] == ["News of papers you keep"]


def test_the_alert_feeds_carry_what_the_feed_formats_require(user_factory, recent, settings):
    """Atom: an IRI as each entry's <id>, an <updated> on each entry, the self link on the
    public origin; RSS: a guid that is no permalink says so."""
    import xml.etree.ElementTree as ET

    settings.SITE_URL = "https://wovepaper.example"
    user = user_factory()
    recent("Surface codes under noise")
    saved = saved_search_create(user=user, terms=SearchTerms(query="surface codes", mode="keyword"))
    alerts.saved_search_check(saved=saved)
    token = alerts.alert_feed_token(user=user)
    atom_ns = {"a": "http://www.w3.org/2005/Atom"}
    atom = ET.fromstring(Client().get(f"/me/alerts/{token}.atom").content)
    (self_link,) = atom.findall("a:link[@rel='self']", atom_ns)
    assert self_link.get("href") == f"https://wovepaper.example/me/alerts/{token}.atom"
    (entry,) = atom.findall("a:entry", atom_ns)
    entry_id = entry.find("a:id", atom_ns).text
    assert entry_id.startswith("https://wovepaper.example/me/searches#alert-")
    assert entry.find("a:updated", atom_ns) is not None
    assert entry.find("a:link", atom_ns).get("href").startswith("https://wovepaper.example/")
    rss = ET.fromstring(Client().get(f"/me/alerts/{token}.rss").content)
    guid = rss.find("channel/item/guid")
    assert guid.get("isPermaLink") == "false" and guid.text == entry_id
    atom_link = rss.find("channel/{http://www.w3.org/2005/Atom}link")
    assert atom_link.get("href") == f"https://wovepaper.example/me/alerts/{token}.rss"


def test_a_search_to_the_last_day_there_is_is_checked_every_hour(user_factory, recent):
    # Saved through the page's link, as the sweep did: the check then failed every hour with
    # OverflowError (the day after 9999-12-31).
    user = user_factory()
    wanted = recent("Surface codes under circuit noise", "Logical error rates of surface codes.")
    client = _signed_in(user)
    client.post("/me/searches", {"q": "surface codes", "mode": "keyword", "date_to": "9999-12-31"})
    saved = SavedSearch.objects.get(user=user)
    assert saved.date_to.isoformat() == "9999-12-31"
    assert alerts.saved_search_check(saved=saved) == 1
    assert list(SearchAlert.objects.values_list("paper_id", flat=True)) == [wanted.pk]


def test_on_a_sample_saving_a_search_finds_its_papers_at_once_and_says_why(
    user_factory, paper_factory, settings, django_capture_on_commit_callbacks
):
    """A sample (the demo's): papers years old, nothing harvested lately. Measured from today,
    a saved search stayed "not checked yet" and then found nothing; on the archive's own time
    it is checked when saved, over all the sample, and every page that shows it says so."""
    from papers.archive_time import archive_span_forget

    settings.ARCHIVE_CLOCK = "auto"
    archive_span_forget()
    old = timezone.now() - timedelta(days=900)
    hit = paper_factory(title="Dark matter halos of dwarf galaxies", published=old)
    paper_factory(title="Graded modules over rings", published=old - timedelta(days=400))
    user = user_factory()
    client = _signed_in(user)
    with django_capture_on_commit_callbacks(execute=True):
        saved = client.post("/me/searches", {"q": "dark matter", "mode": "keyword"})
    assert saved.status_code == 302
    search = SavedSearch.objects.get(user=user)
    assert search.checked_at is not None  # checked when saved, not at the next sweep
    assert list(
        SearchAlert.objects.filter(saved_search=search).values_list("paper", flat=True)
    ) == [hit.pk]
    page = " ".join(client.get("/me/searches").content.decode().split())
    assert "This archive is a sample of arXiv, not a daily harvest" in page
    assert "found 1 paper; 1 in all" in page and "Last checked" in page
    # No broker here (as in the demo): when it is checked again, said plainly.
    assert "python manage.py check_saved_searches" in page
    assert "Dark matter halos of dwarf galaxies" in page
    following = client.get("/following").content.decode()
    assert "From your saved searches" in following and "Dark matter halos" in following
    token = user.profile.alert_feed_token or alerts.alert_feed_token(user=user)
    feed = client.get(f"/me/alerts/{token}.atom").content.decode()
    assert "[“dark matter” by words] Dark matter halos of dwarf galaxies" in feed
    preview = client.get("/me/digest").content.decode()
    assert "Dark matter halos of dwarf galaxies" in preview and "Nothing is sent" in preview
    assert not mail.outbox
    # On real time (a daily harvest), the same papers are not new.
    settings.ARCHIVE_CLOCK = "now"
    SearchAlert.objects.all().delete()
    assert alerts.saved_search_check(saved=search) == 0


def test_with_a_broker_the_page_says_when_the_next_hourly_check_is(user_factory, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/15"
    settings.ALERT_CHECK_MINUTE = 40
    schedule = alerts.check_schedule(now=timezone.now().replace(minute=50))
    assert schedule.hourly and schedule.next_at.minute == 40
    assert schedule.next_at > timezone.now().replace(minute=50)
    user = user_factory()
    saved_search_create(user=user, terms=SearchTerms(query="surface codes"))
    page = " ".join(_signed_in(user).get("/me/searches").content.decode().split())
    assert "then every hour at :40 (UTC)" in page and "Next check" in page
    assert "Not checked yet" in page
