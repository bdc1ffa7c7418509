"""Who lands on the chat while onboarding is unfinished, from where, what the chat offers
them, and how skipping and coming back work."""

from __future__ import annotations

import pytest

from accounts.models import Profile

pytestmark = pytest.mark.django_db


@pytest.fixture
def pending_client(client, user_factory):
    user = user_factory(onboarding=Profile.Onboarding.PENDING)
    client.force_login(user)
    client.user = user
    return client


@pytest.mark.parametrize(
    "path", ["/following", "/accounts/", "/accounts/email/", "/researchers", "/institutions"]
)
def test_readers_go_where_they_asked_and_are_offered_the_setup(pending_client, path):
    response = pending_client.get(path)
    assert response.status_code == 200
    shown = response.content.decode()
    assert "Finish setting up" in shown and 'href="/onboarding/"' in shown


def test_the_chat_offers_the_setup_and_skipping_it_ends_the_offer(pending_client):
    page = pending_client.get("/chat")
    assert page.status_code == 200
    shown = page.content.decode()
    assert "data-onboarding" in shown and 'href="/onboarding/"' in shown
    assert 'id="onboarding-banner"' not in shown  # the chat makes the offer itself
    response = pending_client.post("/onboarding/skip", {"next": "/chat"})
    assert response["Location"] == "/chat"
    assert "data-onboarding" not in pending_client.get("/chat").content.decode()
    assert "Finish setting up" not in pending_client.get("/following").content.decode()


def test_shared_cached_pages_get_the_offer_with_the_readers_state(pending_client, paper_factory):
    url = paper_factory().get_absolute_url()
    page = pending_client.get(url).content.decode()
    # The offer is every signed-in reader's, hidden; reader.js shows it from the reader's state.
    assert 'aria-label="Finish setting up" hidden data-reader-onboarding' in page
    assert pending_client.get("/me/state").json()["onboarding"] is True


def test_posts_are_not_redirected(pending_client, researcher_factory):
    researcher = researcher_factory()
    response = pending_client.post(f"/following/researchers/{researcher.pk}/follow")
    assert response.status_code == 302
    assert response["Location"] == researcher.get_absolute_url()


def test_signed_out_and_onboarded_users_are_offered_nothing(client, user_factory):
    assert client.get("/following")["Location"].startswith("/accounts/login/")
    client.force_login(user_factory())
    assert "Finish setting up" not in client.get("/following").content.decode()


def test_users_without_a_profile_are_not_sent_to_onboarding(client, django_user_model):
    admin = django_user_model.objects.create_user(
        username="staff", email="s@example.org", password="x", is_staff=True
    )
    client.force_login(admin)
    assert client.get("/following").status_code == 200
    assert client.get("/accounts/").status_code == 200  # makes the profile on first use
    assert Profile.objects.get(user=admin).onboarding == Profile.Onboarding.COMPLETED


def test_skip_and_come_back_at_the_same_step(pending_client):
    pending_client.post("/onboarding/fields", {"fields": []})
    response = pending_client.post("/onboarding/skip")
    assert response.status_code == 302
    profile = Profile.objects.get(user=pending_client.user)
    assert profile.onboarding == Profile.Onboarding.SKIPPED
    assert pending_client.get("/following").status_code == 200  # no longer forced

    settings_page = pending_client.get("/accounts/").content.decode()
    assert "Continue setup" in settings_page
    assert pending_client.get("/onboarding/")["Location"] == "/onboarding/researchers"
    profile.refresh_from_db()
    assert profile.onboarding == Profile.Onboarding.PENDING
    pending_client.post("/onboarding/finish")
    profile.refresh_from_db()
    assert profile.onboarding == Profile.Onboarding.COMPLETED
    assert pending_client.get("/following").status_code == 200


def test_unknown_fields_are_refused(pending_client, paper_factory):
    paper_factory(categories=["math.AG"])
    response = pending_client.post("/onboarding/fields", {"fields": ["math.AG", "not.real"]})
    assert response.status_code == 200
    assert "not.real" in response.content.decode()
    assert Profile.objects.get(user=pending_client.user).fields == []


def test_field_search_keeps_ticked_boxes(pending_client, paper_factory):
    paper_factory(categories=["math.AG", "hep-th"])
    response = pending_client.get(
        "/onboarding/fields",
        {"q": "hep", "fields": ["math.AG"]},
        HTTP_HX_REQUEST="true",
        HTTP_HX_TARGET="category-picker",
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="category-picker">')
    assert 'value="math.AG" checked' in html
    assert 'value="hep-th"' in html


def test_suggestions_follow_fields_and_skip_followed(
    pending_client, researcher_factory, authored_paper
):
    ml = researcher_factory("Grace Hopper")
    other = researcher_factory("Emmy Noether")
    authored_paper(ml, categories=["cs.LG"])
    authored_paper(other, categories=["math.RA"])
    pending_client.post("/onboarding/fields", {"fields": ["cs.LG"]})
    page = pending_client.get("/onboarding/researchers").content.decode()
    assert "Grace Hopper" in page and "Emmy Noether" not in page
    pending_client.post(f"/following/researchers/{ml.pk}/follow")
    page = pending_client.get("/onboarding/researchers").content.decode()
    assert "Grace Hopper" not in page.split('id="researcher-results"')[1]


def test_name_search_finds_researchers(pending_client, researcher_factory):
    researcher_factory("Émilie du Châtelet")
    researcher_factory("Someone Else")
    page = pending_client.get("/onboarding/researchers", {"q": "chatelet"}).content.decode()
    assert "Émilie du Châtelet" in page and "Someone Else" not in page


def test_claim_step_records_a_claim(pending_client, researcher_factory):
    me = researcher_factory("Grace Hopper")
    page = pending_client.get("/onboarding/claim", {"q": "hopper"}).content.decode()
    assert f"/following/researchers/{me.pk}/claim" in page
    pending_client.post(f"/following/researchers/{me.pk}/claim", {"next": "/onboarding/claim"})
    claim = pending_client.user.claims.get()
    assert claim.researcher == me and claim.status == "pending"
