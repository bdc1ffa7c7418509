"""Anonymous public pages served from the page cache, and made stale by the writes that change
what they show (wovepaper/lib/pagecache.py)."""

from __future__ import annotations

import itertools

from django.contrib.auth import get_user_model
from django.contrib.messages.constants import INFO
from django.contrib.messages.storage.base import Message
from django.contrib.messages.storage.cookie import MessageEncoder
from django.test import override_settings

from accounts.models import Follow
from institutions.models import Institution
from institutions.services import institutions_update_stats
from papers.ingest.snapshot import iter_snapshot_lines, parse_snapshot_line
from papers.ingest.upsert import papers_upsert
from papers.models import Paper
from researchers.models import Researcher
from researchers.names import name_key
from researchers.page_figures import researchers_update_stats
from wovepaper.lib.pagecache import SITE, pages_changed


def _researcher(name: str) -> Researcher:
    return Researcher.objects.create(display_name=name, name_key=name_key(name))


def _quietly_retitle(paper: Paper, title: str) -> None:
    """A write that announces nothing (a queryset update sends no signal): what the cache
    serves afterwards shows whether the page came from the cache."""
    Paper.objects.filter(pk=paper.pk).update(title=title)


def test_anonymous_paper_page_is_served_from_the_cache_until_the_paper_changes(
    client, paper_factory
):
    paper = paper_factory(title="Original title")
    url = paper.get_absolute_url()
    first = client.get(url)
    assert first.status_code == 200 and "Original title" in first.content.decode()
    _quietly_retitle(paper, "Quietly changed")
    assert "Original title" in client.get(url).content.decode()

    pages_changed("paper", [paper.pk])
    assert "Quietly changed" in client.get(url).content.decode()


def test_a_saved_paper_shows_at_once(client, paper_factory):
    paper = paper_factory(title="Before the edit")
    url = paper.get_absolute_url()
    client.get(url)
    paper.title = "After the edit"
    paper.save()
    assert "After the edit" in client.get(url).content.decode()


def test_cached_pages_carry_validators_and_answer_304(client, paper_factory):
    url = paper_factory().get_absolute_url()
    first = client.get(url)
    etag = first["ETag"]
    assert etag and first["Last-Modified"]
    assert "public" in first["Cache-Control"] and "max-age=" in first["Cache-Control"]
    assert "Cookie" in first["Vary"] and "Accept" in first["Vary"]
    again = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b""
    assert client.get(url)["ETag"] == etag


def test_markdown_and_html_are_kept_apart(client, paper_factory):
    url = paper_factory(title="Two variants").get_absolute_url()
    html = client.get(url)
    markdown = client.get(url, HTTP_ACCEPT="text/markdown")
    assert html["Content-Type"].startswith("text/html")
    assert markdown["Content-Type"].startswith("text/markdown")
    assert client.get(url)["Content-Type"].startswith("text/html")


def test_signed_in_readers_share_a_cached_body_of_their_own_kind(client, paper_factory, settings):
    paper = paper_factory(title="Shared title")
    url = paper.get_absolute_url()
    client.get(url)  # cached for anonymous readers
    _quietly_retitle(paper, "What the database says")
    user = get_user_model().objects.create_user("reader", "reader@example.org", "pw-123456789")
    client.force_login(user)
    # Signed-in readers share their own body (with reader.js and where their state is, see
    # tests/accounts/test_reader_state.py), never the anonymous one, and never publicly.
    response = client.get(url)
    assert "What the database says" in response.content.decode()
    assert 'id="reader-state"' in response.content.decode()
    assert "private" in response["Cache-Control"] and "public" not in response["Cache-Control"]
    _quietly_retitle(paper, "Later still")
    assert "What the database says" in client.get(url).content.decode()
    client.logout()
    assert "Shared title" in client.get(url).content.decode()
    # A reader with one-time messages in their session is rendered afresh, to show them.
    settings.MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"
    client.force_login(user)
    session = client.session
    session["_messages"] = MessageEncoder().encode([Message(INFO, "Kept in the session")])
    session.save()
    response = client.get(url)
    assert "Later still" in response.content.decode()
    assert "Kept in the session" in response.content.decode() and "ETag" not in response


def test_a_signed_in_readers_shared_page_asks_the_database_nothing(
    client, paper_factory, django_assert_num_queries, settings
):
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"  # as in production
    url = paper_factory(title="Shared title").get_absolute_url()
    reader = get_user_model().objects.create_user("reader", "reader@example.org", "pw-123456789")
    client.force_login(reader)
    client.get(url)  # stores the shared signed-in body
    # The session, written at sign-in, says a reader (not staff) is signed in: serving them the
    # shared body needs neither their user nor anything else from the database.
    with django_assert_num_queries(0):
        response = client.get(url)
    assert 'id="reader-state"' in response.content.decode() and "ETag" in response


def test_staff_get_their_own_page_and_a_session_from_before_the_flag_is_still_checked(
    client, paper_factory
):
    paper = paper_factory(title="Shared title")
    url = paper.get_absolute_url()
    curator = get_user_model().objects.create_user("curator", "c@example.org", is_staff=True)
    client.force_login(curator)
    client.get(url)
    _quietly_retitle(paper, "What the database says")
    response = client.get(url)  # curators' pages are never the shared body
    assert "What the database says" in response.content.decode() and "ETag" not in response
    # A session signed in before sign-in noted the reader's kind: the user is loaded and checked.
    session = client.session
    del session["_page_reader"]
    session.save()
    _quietly_retitle(paper, "Checked again")
    response = client.get(url)
    assert "Checked again" in response.content.decode() and "ETag" not in response


def test_researcher_page_is_stale_once_its_statistics_are_recomputed(
    client, paper_factory, django_assert_num_queries
):
    researcher = _researcher("Dan Zhao")
    url = researcher.get_absolute_url()
    client.get(url)
    with django_assert_num_queries(0):
        assert client.get(url).status_code == 200
    paper = paper_factory(authors=["Dan Zhao"], title="A newly matched paper")
    paper.authorships.filter(position=1).update(researcher=researcher)
    researchers_update_stats([researcher.pk])
    assert "A newly matched paper" in client.get(url).content.decode()


def test_following_changes_the_follower_count_shown(client, paper_factory):
    researcher = _researcher("Biao Sun")
    url = researcher.get_absolute_url()
    assert "0 followers" in client.get(url).content.decode()
    user = get_user_model().objects.create_user("fan", "fan@example.org", "pw-123456789")
    Follow.objects.create(user=user, researcher=researcher)
    assert "1 follower" in client.get(url).content.decode()


def test_institution_page_is_stale_once_its_counts_change(client, paper_factory):
    institution = Institution.objects.create(name="CNRS", country_code="FR")
    url = institution.get_absolute_url()
    client.get(url)
    Institution.objects.filter(pk=institution.pk).update(name="CNRS (renamed quietly)")
    assert "renamed quietly" not in client.get(url).content.decode()
    institutions_update_stats([institution.pk])
    assert "renamed quietly" in client.get(url).content.decode()


def test_a_curation_makes_every_page_stale(client, paper_factory):
    paper = paper_factory(title="Before curation")
    url = paper.get_absolute_url()
    client.get(url)
    _quietly_retitle(paper, "After curation")
    pages_changed(SITE)
    assert "After curation" in client.get(url).content.decode()


def test_home_page_lists_new_papers_at_once(client, paper_factory, sample_path):
    client.get("/")
    lines = itertools.islice(iter_snapshot_lines(sample_path), 5)
    papers_upsert([parse_snapshot_line(line.text) for line in lines])
    newest = Paper.objects.order_by("-published").first()
    assert newest.get_absolute_url() in client.get("/").content.decode()


@override_settings(PAGE_CACHE_SECONDS=0)
def test_the_page_cache_can_be_turned_off(client, paper_factory):
    paper = paper_factory(title="Uncached")
    url = paper.get_absolute_url()
    client.get(url)
    _quietly_retitle(paper, "Seen at once")
    response = client.get(url)
    assert "Seen at once" in response.content.decode() and "ETag" not in response


def test_pages_render_when_the_cache_cannot_be_reached(client, paper_factory):
    paper = paper_factory(title="Served without a cache")
    unreachable = {
        "default": {
            # Production's cache with Redis gone: nothing listens on port 1.
            "BACKEND": "wovepaper.lib.cache.FailOpenRedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.25},
        }
    }
    with override_settings(CACHES=unreachable):
        response = client.get(paper.get_absolute_url())
        assert response.status_code == 200
        assert "Served without a cache" in response.content.decode()
        paper.title = "Saved without a cache"
        paper.save()


def test_each_process_serves_its_own_copy_and_still_sees_every_change(client, paper_factory):
    """Production's caches: Redis shared by every process, and each process's near copy."""
    import secrets

    from django.core.cache import cache
    from django.test import RequestFactory

    from wovepaper.lib.pagecache import _page_key

    prefix = f"near-test-{secrets.token_hex(6)}"
    production_like = {
        "default": {
            "BACKEND": "wovepaper.lib.cache.FailOpenRedisCache",
            "LOCATION": "redis://127.0.0.1:6379/0",
            "KEY_PREFIX": prefix,
        },
        "pages_near": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": prefix,
        },
    }
    paper = paper_factory(title="Original title")
    url = paper.get_absolute_url()
    with override_settings(CACHES=production_like):
        try:
            assert "Original title" in client.get(url).content.decode()
            _quietly_retitle(paper, "Quietly changed")
            # The shared entry is gone (evicted, say): this process's copy still serves, so
            # the hit did not need the page from Redis.
            cache.delete(_page_key(RequestFactory().get(url)))
            assert "Original title" in client.get(url).content.decode()
            # A change announced anywhere reaches this process's copy at once.
            pages_changed("paper", [paper.pk])
            assert "Quietly changed" in client.get(url).content.decode()
        finally:
            redis = cache._cache.get_client()
            keys = list(redis.scan_iter(f"{prefix}:*"))
            if keys:
                redis.delete(*keys)


def test_a_search_asked_again_is_served_from_the_cache_until_new_papers_arrive(
    client, paper_factory, sample_path
):
    paper = paper_factory(title="Tropical geometry of curves")
    first = client.get("/search", {"q": "tropical"})
    assert "Tropical geometry of curves" in first.content.decode() and first["ETag"]
    _quietly_retitle(paper, "Tropical geometry quietly changed")
    assert (
        "Tropical geometry of curves" in client.get("/search", {"q": "tropical"}).content.decode()
    )
    # The htmx fragment and the markdown variant are kept apart from the page.
    fragment = client.get("/search", {"q": "tropical"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment
    # New papers make every search stale: they may match.
    line = next(iter_snapshot_lines(sample_path))
    papers_upsert([parse_snapshot_line(line.text)])
    assert "quietly changed" in client.get("/search", {"q": "tropical"}).content.decode()


def _is_fragment(response) -> bool:
    return "<html" not in response.content.decode()


def test_htmx_headers_other_than_true_never_poison_the_shared_page(client, paper_factory):
    """django-htmx reads only the value "true"; the cache keys on exactly that, so a request
    whose header says anything else gets (and leaves) the page, never the fragment."""
    paper_factory(title="Minimal surfaces in space")
    url, query = "/search", {"q": "surfaces"}
    poison = client.get(url, query, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="false")
    assert poison.status_code == 200 and _is_fragment(poison)
    plain = client.get(url, query)
    assert not _is_fragment(plain) and "public" in plain["Cache-Control"]

    false_first = client.get("/search", {"q": "space"}, HTTP_HX_REQUEST="false")
    assert not _is_fragment(false_first)
    assert _is_fragment(client.get("/search", {"q": "space"}, HTTP_HX_REQUEST="true"))
    restore = client.get(
        "/search", {"q": "space"}, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert not _is_fragment(restore)
    assert {"HX-Request", "HX-History-Restore-Request"} <= {
        part.strip() for part in plain["Vary"].split(",")
    }


def test_unknown_query_parameters_are_served_but_never_stored(client, paper_factory):
    paper = paper_factory(title="Asked with made-up parameters")
    url = paper.get_absolute_url()
    client.get(url)
    junk = client.get(url, {"junk": "1"})
    assert junk.status_code == 200 and "Asked with made-up parameters" in junk.content.decode()
    assert "public" not in junk.get("Cache-Control", "")
    _quietly_retitle(paper, "Quietly retitled")
    # The plain page is the cached one; the made-up variant was never kept, so it renders anew.
    assert "Asked with made-up parameters" in client.get(url).content.decode()
    assert "Quietly retitled" in client.get(url, {"junk": "1"}).content.decode()


def test_the_parameters_a_page_reads_are_cached(client, paper_factory):
    paper = paper_factory(title="Paged search results")
    first = client.get("/search", {"q": "paged", "page": "1", "sort": "newest"})
    assert "public" in first["Cache-Control"]
    _quietly_retitle(paper, "Quietly retitled")
    again = client.get("/search", {"q": "paged", "page": "1", "sort": "newest"})
    assert "Paged search results" in again.content.decode()
