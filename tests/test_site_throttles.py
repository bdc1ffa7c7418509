"""The site's routes that do what an API endpoint does are under the API's rate limits: the
citation exports of a shared list, a researcher and a search (wovepaper.lib.api.throttles.
throttled_like_the_api), counted with the reader's API requests; 429 with Retry-After past them."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from accounts.library.lists import paper_save, reading_list_share
from researchers.models import Researcher

pytestmark = pytest.mark.django_db


def _limited(settings, rate: str) -> None:
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "anon": rate, "user": rate}


def test_site_exports_are_throttled_like_the_apis(
    client, settings, django_user_model, paper_factory
):
    paper = paper_factory(title="Graphs and their citations")
    owner = django_user_model.objects.create_user("owner", "o@example.org", "pw-12345678")
    shared = reading_list_share(reading_list=paper_save(user=owner, paper=paper).reading_list)
    researcher = Researcher.objects.create(display_name="Ada Lovelace")
    _limited(settings, "2/minute")
    for url in (
        f"/lists/shared/{shared.share_token}/cite.bib",
        f"/researchers/{researcher.pk}/cite.ris",
        "/search/cite.json?q=graphs",
    ):
        cache.clear()
        answers = [client.get(url).status_code for _ in range(2)]
        assert answers == [200, 200], url
        refused = client.get(url)
        assert refused.status_code == 429, url
        assert 0 < int(refused["Retry-After"]) <= 60, url


def test_the_count_is_the_apis(client, settings, paper_factory):
    paper_factory(title="Graphs and their citations")
    _limited(settings, "2/minute")
    assert client.get("/api/v1/papers/").status_code == 200
    assert client.get("/search/cite.bib?q=graphs").status_code == 200
    assert client.get("/search/cite.bib?q=graphs").status_code == 429
