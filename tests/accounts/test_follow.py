"""Follow and unfollow: services, htmx and plain-form endpoints, CSRF, the template tag."""

from __future__ import annotations

import pytest
from django.template import Context, Template
from django.test import Client, RequestFactory

from accounts.follows import (
    FollowError,
    followed_researcher_ids,
    is_following,
    researcher_follow,
    researcher_unfollow,
)
from accounts.models import Follow

pytestmark = pytest.mark.django_db


def test_follow_is_idempotent(user_factory, researcher_factory):
    user, researcher = user_factory(), researcher_factory()
    first = researcher_follow(user=user, researcher=researcher)
    second = researcher_follow(user=user, researcher=researcher)
    assert first.pk == second.pk
    assert Follow.objects.filter(user=user).count() == 1
    assert researcher_unfollow(user=user, researcher=researcher) == 1
    assert researcher_unfollow(user=user, researcher=researcher) == 0


def test_following_a_merged_record_follows_the_survivor(user_factory, researcher_factory):
    user = user_factory()
    survivor = researcher_factory("Dan Zhao")
    middle = researcher_factory("Dan Zhao", merged_into=survivor)
    merged = researcher_factory("D. Zhao", merged_into=middle)
    follow = researcher_follow(user=user, researcher=merged)
    assert follow.researcher == survivor
    assert researcher_unfollow(user=user, researcher=merged) == 1
    assert not Follow.objects.exists()


def test_a_record_merged_after_the_follow_is_followed_and_unfollowed_through_its_survivor(
    user_factory, researcher_factory
):
    user = user_factory()
    old = researcher_factory("Dan Zhao")
    researcher_follow(user=user, researcher=old)
    survivor = researcher_factory("Dan Zhao")
    old.merged_into = survivor  # merged after the follow was made: the row still names it
    old.save()
    assert followed_researcher_ids(user=user) == sorted([old.pk, survivor.pk])
    assert is_following(user=user, researcher=survivor)
    # The survivor's page says "Following"; its Unfollow ends the follow made before the merge.
    assert researcher_unfollow(user=user, researcher=survivor) == 1
    assert followed_researcher_ids(user=user) == []
    assert not is_following(user=user, researcher=survivor)
    other = researcher_factory("Someone Else")
    researcher_follow(user=user, researcher=other)
    assert not is_following(user=user, researcher=survivor)


def test_a_merge_loop_is_refused(user_factory, researcher_factory):
    a = researcher_factory("A")
    b = researcher_factory("B", merged_into=a)
    a.merged_into = b
    a.save()
    with pytest.raises(FollowError):
        researcher_follow(user=user_factory(), researcher=b)


def test_htmx_follow_returns_the_button_fragment(client, user_factory, researcher_factory):
    user, researcher = user_factory(), researcher_factory("Grace Hopper")
    Follow.objects.create(user=user_factory(), researcher=researcher)
    client.force_login(user)
    response = client.post(f"/following/researchers/{researcher.pk}/follow", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.startswith('<div class="follow"') and "<html" not in html
    assert 'aria-pressed="true"' in html and "2 followers" in html
    assert f"/following/researchers/{researcher.pk}/unfollow" in html

    response = client.post(
        f"/following/researchers/{researcher.pk}/unfollow", HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert 'aria-pressed="false"' in html and "1 follower<" in html
    assert not Follow.objects.filter(user=user).exists()


def test_htmx_follow_of_a_merged_record_shows_the_survivor(
    client, user_factory, researcher_factory
):
    survivor = researcher_factory("Dan Zhao")
    merged = researcher_factory("Dan Zhao", merged_into=survivor)
    client.force_login(user_factory())
    html = client.post(
        f"/following/researchers/{merged.pk}/follow", HTTP_HX_REQUEST="true"
    ).content.decode()
    assert f'id="follow-{survivor.pk}"' in html and 'aria-pressed="true"' in html


def test_plain_post_redirects_back(client, user_factory, researcher_factory):
    user, researcher = user_factory(), researcher_factory()
    client.force_login(user)
    response = client.post(
        f"/following/researchers/{researcher.pk}/follow", {"next": "/following?page=2"}
    )
    assert response.status_code == 302 and response["Location"] == "/following?page=2"
    assert Follow.objects.filter(user=user, researcher=researcher).exists()
    response = client.post(
        f"/following/researchers/{researcher.pk}/unfollow", {"next": "https://evil.example/"}
    )
    assert response["Location"] == researcher.get_absolute_url()  # off-site next is ignored
    assert not Follow.objects.filter(user=user).exists()


def test_get_is_not_allowed(client, user_factory, researcher_factory):
    client.force_login(user_factory())
    researcher = researcher_factory()
    assert client.get(f"/following/researchers/{researcher.pk}/follow").status_code == 405
    assert not Follow.objects.exists()


def test_signed_out_visitors_are_asked_to_sign_in(client, researcher_factory):
    researcher = researcher_factory()
    response = client.post(f"/following/researchers/{researcher.pk}/follow")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    response = client.post(f"/following/researchers/{researcher.pk}/follow", HTTP_HX_REQUEST="true")
    assert response["HX-Redirect"].startswith("/accounts/login/?next=")
    assert not Follow.objects.exists()


def test_unknown_researcher_is_404(client, user_factory):
    client.force_login(user_factory())
    assert client.post("/following/researchers/999999/follow").status_code == 404


def test_csrf_is_enforced(user_factory, researcher_factory):
    user, researcher = user_factory(), researcher_factory()
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    url = f"/following/researchers/{researcher.pk}/follow"
    assert client.post(url).status_code == 403
    assert client.post(url, HTTP_HX_REQUEST="true").status_code == 403
    assert not Follow.objects.exists()

    # With the token from a page (as the button's form and htmx's X-CSRFToken header send it).
    page = client.get("/following")
    token = page.context["csrf_token"] if page.context else client.cookies["csrftoken"].value
    token = str(token)
    assert client.post(url, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=token).status_code == 200
    assert Follow.objects.filter(user=user).count() == 1


def _render_tag(researcher, user):
    request = RequestFactory().get("/researchers/x")
    request.user = user
    template = Template("{% load follow_tags %}{% follow_button researcher %}")
    return template.render(
        Context({"researcher": researcher, "request": request, "csrf_token": "tok"})
    )


def test_tag_renders_count_and_state(user_factory, researcher_factory, django_assert_num_queries):
    from django.contrib.auth.models import AnonymousUser

    researcher = researcher_factory("Grace Hopper")
    user = user_factory()
    for _ in range(3):
        Follow.objects.create(user=user_factory(), researcher=researcher)
    html = _render_tag(researcher, AnonymousUser())
    assert "Sign in to follow" in html and "3 followers" in html
    assert "/accounts/login/?next=/researchers/x" in html
    with django_assert_num_queries(2):
        html = _render_tag(researcher, user)
    assert 'aria-pressed="false"' in html and 'name="csrfmiddlewaretoken"' in html
    Follow.objects.create(user=user, researcher=researcher)
    html = _render_tag(researcher, user)
    assert 'aria-pressed="true"' in html and "4 followers" in html and ">Following<" in html


def test_followed_list_shows_unfollow(client, user_factory, researcher_factory):
    user = user_factory()
    names = [f"Researcher {i}" for i in range(3)]
    for name in names:
        researcher_follow(user=user, researcher=researcher_factory(name))
    client.force_login(user)
    page = client.get("/following/researchers").content.decode()
    assert all(name in page for name in names)
    assert page.count('aria-pressed="true"') == 3


def test_claim_tag_prompts_signs_in_and_shows_status(user_factory, researcher_factory):
    from django.contrib.auth.models import AnonymousUser

    from accounts.ownership.claims import researcher_claim

    researcher, user = researcher_factory("Grace Hopper"), user_factory()
    template = Template("{% load follow_tags %}{% claim_button researcher %}")

    def render(who):
        request = RequestFactory().get("/researchers/x")
        request.user = who
        return template.render(
            Context({"researcher": researcher, "request": request, "csrf_token": "tok"})
        )

    assert "Sign in</a> to say this is you" in render(AnonymousUser())
    assert f"/following/researchers/{researcher.pk}/claim" in render(user)
    researcher_claim(user=user, researcher=researcher)
    assert "You said this is you: waiting for review." in render(user)
