"""Pages that are the reader's alone are never kept by a browser cache or a proxy."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "path", ["/accounts/", "/accounts/email/", "/chat", "/following", "/following/researchers"]
)
def test_a_signed_in_readers_own_pages_are_private_and_not_stored(client, user_factory, path):
    user = user_factory()
    client.force_login(user)
    response = client.get(path, follow=True)
    assert response.status_code == 200
    cache_control = {part.strip() for part in response["Cache-Control"].split(",")}
    assert {"private", "no-store"} <= cache_control


def test_shared_pages_keep_their_own_caching_for_signed_in_readers(
    client, user_factory, paper_factory
):
    client.force_login(user_factory())
    response = client.get(paper_factory().get_absolute_url())
    assert "no-store" not in response["Cache-Control"]
    assert "private" in response["Cache-Control"] and "max-age" in response["Cache-Control"]
