"""Signed-in readers share the cached public page; their own parts come from their state, one
answer for every page that their browser keeps (accounts.reader_state, static/js/reader.js)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from accounts.library.lists import paper_save
from accounts.models import Claim, Follow, InstitutionFollow
from accounts.reader_state import STAND_IN_PAPER, STAND_IN_TITLE
from institutions.models import Institution
from researchers.models import Researcher

pytestmark = pytest.mark.django_db

STATE = "/me/state"


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _quietly_rename(researcher: Researcher, name: str) -> None:
    """A write that announces nothing: what is served afterwards shows whether it was cached."""
    Researcher.objects.filter(pk=researcher.pk).update(display_name=name)


def _cache_control(response) -> set[str]:
    return set(response["Cache-Control"].replace(" ", "").split(","))


def test_two_readers_share_one_cached_body_and_get_their_own_state(
    user_factory, researcher_factory, settings
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
    assert "Grace Hopper" in html and 'id="reader-state"' in html and "js/reader.js" in html
    # Its forms' tokens are left for reader.js to fill.
    assert not re.search(r'name="csrfmiddlewaretoken" value="[^"]', html)
    assert "X-CSRFToken" not in html and ada.email not in html
    # The account links are every signed-in reader's: on the shared page, the token left empty.
    assert 'class="nav-signout"' in html and "Create account" not in html
    # The follow button holds both of a reader's forms, hidden: reader.js shows the reader's.
    follow, unfollow = (
        f"/following/researchers/{researcher.pk}/{a}" for a in ("follow", "unfollow")
    )
    assert re.search(rf'action="{follow}"[^>]*data-following="false" hidden', html)
    assert re.search(rf'action="{unfollow}"[^>]*data-following="true" hidden', html)
    for response in (first, second):
        assert "private" in response["Cache-Control"] and "public" not in response["Cache-Control"]
        assert "Cookie" in response["Vary"]

    mine, theirs = as_ada.get(STATE), as_bob.get(STATE)
    for response in (mine, theirs):
        assert response.status_code == 200 and response["Content-Type"] == "application/json"
        assert _cache_control(response) == {"private", f"max-age={settings.READER_STATE_SECONDS}"}
        assert "Cookie" in response["Vary"]
        state = response.json()
        assert state["csrf"] and state["parts"] == [] and state["onboarding"] is False
    assert mine.json()["following"]["researcher"] == [researcher.pk]
    assert theirs.json()["following"]["researcher"] == []


def test_the_anonymous_body_has_no_reader_parts_and_stays_public(client, researcher_factory):
    url = researcher_factory("Barbara Liskov").get_absolute_url()
    response = client.get(url)
    html = response.content.decode()
    assert "reader-state" not in html and "Sign in to follow" in html and "nav-signout" not in html
    assert "data-following" not in html and 'class="chat-dock"' not in html
    assert "public" in response["Cache-Control"]


def test_the_state_is_nothing_for_a_signed_out_reader(client):
    response = client.get(STATE)
    assert response.status_code == 204 and response.content == b""
    assert "no-store" in response["Cache-Control"]


def test_institution_follows_lists_saves_and_claims_are_in_the_state(
    user_factory, researcher_factory, paper_factory
):
    user = user_factory()
    researcher = researcher_factory("Katherine Johnson")
    Claim.objects.create(user=user, researcher=researcher)
    institution = Institution.objects.create(name="NASA Langley", country_code="US")
    InstitutionFollow.objects.create(user=user, institution=institution)
    paper = paper_factory(title="Orbits")
    saved = paper_save(user=user, paper=paper)
    client = _signed_in(user)

    html = client.get(institution.get_absolute_url()).content.decode()
    assert f'id="follow-institution-{institution.pk}"' in html
    assert 'data-kind="institution"' in html and f'data-pk="{institution.pk}"' in html
    html = client.get(researcher.get_absolute_url()).content.decode()
    assert "Sign in</a> to say this is you" in html
    claim_url = f"/following/researchers/{researcher.pk}/claim"
    assert f'action="{claim_url}" data-claim-offer hidden' in html

    state = client.get(STATE).json()
    assert state["following"]["institution"] == [institution.pk]
    assert state["claimed"] == [researcher.pk]
    claim_parts = [p for p in state["parts"] if f'id="claim-{researcher.pk}"' in p]
    assert len(claim_parts) == 1 and "You said this is you" in claim_parts[0]
    assert state["saved"] == {str(paper.pk): [saved.reading_list_id]}
    # The save control for a paper in that list and for one in none, made by the template for
    # a stand-in paper that reader.js names.
    in_it, in_none = state["save_controls"][str(saved.reading_list_id)], state["save_controls"][""]
    assert set(state["save_controls"]) == {str(saved.reading_list_id), ""}
    assert f'Saved in <a href="/me/library/{saved.reading_list_id}">Reading list</a>' in in_it
    paper_pk, title = STAND_IN_PAPER, STAND_IN_TITLE
    assert f'id="save-{paper_pk}"' in in_it and f'Remove<span class="sr-only"> “{title}”' in in_it
    assert "saved-in" not in in_none and f'name="paper" value="{paper_pk}"' in in_none
    assert f'name="list" value="{saved.reading_list_id}"' in in_none
    assert re.search(r'name="csrfmiddlewaretoken" value="[^"]+"', in_none)


def test_the_chat_dock_on_the_shared_body_asks_about_the_page(user_factory, paper_factory):
    paper = paper_factory(title="Docked chat")
    client = _signed_in(user_factory())
    html = client.get(paper.get_absolute_url()).content.decode()
    assert 'id="chat-dock-slot"' in html and "js/chat.js" in html
    assert f'name="scope" value="paper:{paper.arxiv_id}"' in html
    assert 'name="csrfmiddlewaretoken" value="" data-reader-csrf' in html


def test_the_state_runs_a_bounded_number_of_queries(
    user_factory, researcher_factory, paper_factory, django_assert_max_num_queries
):
    user = user_factory()
    client = _signed_in(user)
    client.get(STATE)  # warm the session's cached reads
    # Session and user (2), follows of researchers and their merges (2) and of institutions
    # (1), lists (1), saved papers (1), claims (1), setup (1): whatever the reader holds.
    with django_assert_max_num_queries(9):
        few = client.get(STATE)
    for n in range(30):
        researcher = researcher_factory(f"Record Number{n}")
        Follow.objects.create(user=user, researcher=researcher)
        Claim.objects.create(user=user, researcher=researcher)
        paper_save(user=user, paper=paper_factory())
    with django_assert_max_num_queries(9):
        many = client.get(STATE)
    assert few.json()["saved"] == {} and len(many.json()["saved"]) == 30
    assert len(many.json()["following"]["researcher"]) == 30


def test_a_change_gives_the_browser_a_new_state_address(user_factory, researcher_factory):
    researcher = researcher_factory("Edsger Dijkstra")
    client = _signed_in(user_factory())
    url = researcher.get_absolute_url()
    assert "wp_state" not in client.get(url).cookies
    assert "wp_state" not in client.get(STATE).cookies
    before = client.cookies.get("wp_state")
    client.post(f"/following/researchers/{researcher.pk}/follow", {"next": url})
    after = client.cookies["wp_state"].value
    assert after and (before is None or before.value != after)
    client.post(f"/following/researchers/{researcher.pk}/unfollow", {"next": url})
    assert client.cookies["wp_state"].value != after
    # Readable by reader.js, which puts it in the state's address.
    assert not client.cookies["wp_state"]["httponly"]


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
    assert 'aria-pressed="true"' in html and "data-following" not in html
    assert "data-saves-only" in html
    assert "private" in response["Cache-Control"] and "ETag" not in response
    # Shown once; the next visit is the shared body again.
    again = client.get(url).content.decode()
    assert "You now follow" not in again and "data-following" in again
    assert 'id="reader-state" hidden data-url' in again


def test_follow_still_needs_the_csrf_token_of_the_state(user_factory, researcher_factory):
    user, researcher = user_factory(), researcher_factory()
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    strict.get(researcher.get_absolute_url())
    action = f"/following/researchers/{researcher.pk}/follow"
    assert strict.post(action, HTTP_HX_REQUEST="true").status_code == 403
    token = strict.get(STATE).json()["csrf"]
    answer = strict.post(action, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=token)
    assert answer.status_code == 200 and 'aria-pressed="true"' in answer.content.decode()
    assert Follow.objects.filter(user=user, researcher=researcher).exists()


def test_staff_get_their_own_page(user_factory, researcher_factory):
    staff = user_factory(is_staff=True)
    response = _signed_in(staff).get(researcher_factory().get_absolute_url())
    html = response.content.decode()
    assert "data-following" not in html and "data-saves-only" in html
    assert "private" in response["Cache-Control"] and "ETag" not in response
