"""Signed-in readers share the cached public page; their own parts come as one htmx fragment
(accounts.fragments, wovepaper.lib.pagecache)."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.test import Client

from accounts.models import Claim, Follow, InstitutionFollow
from institutions.models import Institution
from researchers.models import Researcher

pytestmark = pytest.mark.django_db

LOADER = re.compile(r'<div id="me-fragments" hidden hx-get="([^"]+)"')


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _loader_url(html: str) -> str:
    found = LOADER.search(html)
    assert found, "no fragment loader on the page"
    return unescape(found.group(1))


def _quietly_rename(researcher: Researcher, name: str) -> None:
    """A write that announces nothing: what is served afterwards shows whether it was cached."""
    Researcher.objects.filter(pk=researcher.pk).update(display_name=name)


def test_two_readers_share_one_cached_body_and_get_their_own_fragments(
    user_factory, researcher_factory
):
    researcher = researcher_factory("Grace Hopper")
    url = researcher.get_absolute_url()
    ada, bob = user_factory(), user_factory()
    Follow.objects.create(user=ada, researcher=researcher)
    as_ada, as_bob = _signed_in(ada), _signed_in(bob)

    first = as_ada.get(url)
    assert first.status_code == 200
    _quietly_rename(researcher, "Renamed Quietly")
    second = as_bob.get(url)
    # Bob was served the body rendered for Ada: the same bytes, so nothing of Ada's is in it.
    assert second.content == first.content and second["ETag"] == first["ETag"]
    html = first.content.decode()
    assert "Grace Hopper" in html and "csrfmiddlewaretoken" not in html
    assert "X-CSRFToken" not in html and ada.email not in html
    assert "Sign out" not in html and 'class="chat-dock"' not in html
    for response in (first, second):
        assert "private" in response["Cache-Control"] and "public" not in response["Cache-Control"]
        assert "Cookie" in response["Vary"]

    fragment_url = _loader_url(html)
    assert fragment_url.startswith("/me/fragments?") and f"r={researcher.pk}" in fragment_url
    mine, theirs = as_ada.get(fragment_url), as_bob.get(fragment_url)
    for response in (mine, theirs):
        assert response.status_code == 200
        assert response["Cache-Control"] == "private, no-store" or set(
            response["Cache-Control"].replace(" ", "").split(",")
        ) == {"private", "no-store"}
        assert "Cookie" in response["Vary"] and "ETag" not in response
        body = response.content.decode()
        assert 'id="nav-account" hx-swap-oob="true"' in body and "Sign out" in body
        assert 'class="chat-dock"' in body and "csrfmiddlewaretoken" in body
    assert 'aria-pressed="true"' in mine.content.decode()
    assert 'aria-pressed="false"' in theirs.content.decode()
    assert "1 follower<" in theirs.content.decode()


def test_the_anonymous_body_has_no_loader_and_stays_public(client, researcher_factory):
    url = researcher_factory("Barbara Liskov").get_absolute_url()
    response = client.get(url)
    html = response.content.decode()
    assert "me-fragments" not in html and "Sign in to follow" in html
    assert "public" in response["Cache-Control"]


def test_the_fragment_is_nothing_for_a_signed_out_reader(client, researcher_factory):
    researcher = researcher_factory()
    response = client.get(f"/me/fragments?next=/&r={researcher.pk}")
    assert response.status_code == 204 and response.content == b""
    assert "no-store" in response["Cache-Control"]


def test_institution_and_claim_states_come_in_the_fragment(user_factory, researcher_factory):
    user = user_factory()
    researcher = researcher_factory("Katherine Johnson")
    Claim.objects.create(user=user, researcher=researcher)
    institution = Institution.objects.create(name="NASA Langley", country_code="US")
    InstitutionFollow.objects.create(user=user, institution=institution)
    client = _signed_in(user)

    html = client.get(institution.get_absolute_url()).content.decode()
    body = client.get(_loader_url(html)).content.decode()
    assert f'id="follow-institution-{institution.pk}" hx-swap-oob="true"' in body
    assert 'aria-pressed="true"' in body

    html = client.get(researcher.get_absolute_url()).content.decode()
    assert f'id="claim-{researcher.pk}"' in html and "Sign in</a> to say this is you" in html
    body = client.get(_loader_url(html)).content.decode()
    assert f'id="claim-{researcher.pk}" hx-swap-oob="true"' in body
    assert "You said this is you" in body


def test_the_chat_dock_asks_about_the_page(user_factory, paper_factory):
    paper = paper_factory(title="Docked chat")
    client = _signed_in(user_factory())
    html = client.get(paper.get_absolute_url()).content.decode()
    assert 'id="chat-dock-slot"' in html and "js/chat.js" in html
    body = client.get(_loader_url(html)).content.decode()
    assert 'id="chat-dock-slot" hx-swap-oob="true"' in body
    assert f'name="scope" value="paper:{paper.arxiv_id}"' in body


def test_the_fragment_runs_a_bounded_number_of_queries(
    user_factory, researcher_factory, django_assert_max_num_queries
):
    user = user_factory()
    client = _signed_in(user)
    few = researcher_factory("One Record")
    many = [researcher_factory(f"Record Number{n}") for n in range(30)]
    for r in many:
        Follow.objects.create(user=user, researcher=r)
    client.get(f"/me/fragments?next=/&r={few.pk}")  # warm the session's cached reads
    # Session and user (2), onboarding state (1), researchers (1), follow counts and the
    # reader's follows (2), institutions (1, none asked), claims (1): whatever is asked for.
    with django_assert_max_num_queries(9):
        one = client.get(f"/me/fragments?next=/&r={few.pk}&claim={few.pk}")
    query = "&".join(f"r={r.pk}&claim={r.pk}" for r in many)
    with django_assert_max_num_queries(9):
        response = client.get(f"/me/fragments?next=/&{query}")
    assert one.status_code == response.status_code == 200
    # At most MAX_RECORDS buttons, whatever a hand-made URL asks for.
    assert response.content.decode().count('class="follow"') == 10


def test_one_time_messages_show_on_the_page_itself(user_factory, researcher_factory):
    researcher = researcher_factory("Edsger Dijkstra")
    client = _signed_in(user_factory())
    url = researcher.get_absolute_url()
    client.get(url)  # the shared body is cached
    client.post(f"/following/researchers/{researcher.pk}/follow", {"next": url})
    response = client.get(url)
    html = response.content.decode()
    # Rendered for this reader (the message is theirs), with their own follow state.
    assert "You now follow Edsger Dijkstra." in html
    assert 'aria-pressed="true"' in html and "me-fragments" not in html
    assert "private" in response["Cache-Control"] and "ETag" not in response
    # Shown once; the next visit is the shared body again.
    again = client.get(url).content.decode()
    assert "You now follow" not in again and "me-fragments" in again


def test_follow_still_needs_a_csrf_token(user_factory, researcher_factory):
    user, researcher = user_factory(), researcher_factory()
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    html = strict.get(researcher.get_absolute_url()).content.decode()
    action = f"/following/researchers/{researcher.pk}/follow"
    assert strict.post(action, HTTP_HX_REQUEST="true").status_code == 403
    body = strict.get(_loader_url(html)).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1)
    answer = strict.post(action, {"csrfmiddlewaretoken": token}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and 'aria-pressed="true"' in answer.content.decode()
    assert Follow.objects.filter(user=user, researcher=researcher).exists()


def test_staff_get_their_own_page(user_factory, researcher_factory):
    staff = user_factory(is_staff=True)
    response = _signed_in(staff).get(researcher_factory().get_absolute_url())
    assert "me-fragments" not in response.content.decode()
    assert "private" in response["Cache-Control"] and "ETag" not in response
