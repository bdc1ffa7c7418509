"""The admin pages where curators see match states, runs and identity conflicts."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from researchers.matching import match_run
from researchers.models import IdentityConflict, Researcher, ResearcherExternalId


@pytest.fixture
def staff_client(client, db):
    user = get_user_model().objects.create_superuser("curator", "c@example.org", "pw-123456")
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_failed_matching_and_conflicts_show_in_the_admin(
    staff_client, sources, paper_factory, settings, clean_cache
):
    llama = paper_factory(arxiv_id="2302.13971", authors=["Hugo Touvron", "Thibaut Lavril"])
    earlier = Researcher.objects.create(display_name="Hugo Touvron")
    ResearcherExternalId.objects.create(researcher=earlier, source="s2", value="999999")
    ResearcherExternalId.objects.create(researcher=earlier, source="openalex", value="A5032644449")
    match_run([llama.pk], trigger="test")
    assert IdentityConflict.objects.count() == 1
    page = staff_client.get("/admin/researchers/identityconflict/")
    assert page.status_code == 200 and "999999" not in page.content.decode()
    assert "A5032644449" in page.content.decode()

    other = paper_factory(arxiv_id="2205.00965", authors=["Tosin P. Adewumi"])
    settings.SEMANTIC_SCHOLAR_API_URL = "http://127.0.0.1:9/s2"
    match_run([other.pk], trigger="test")
    states = staff_client.get("/admin/researchers/papermatchstate/?status=failed")
    assert states.status_code == 200
    assert "Semantic Scholar: unreachable" in states.content.decode()
    runs = staff_client.get("/admin/researchers/matchrun/")
    assert "services unreachable" in runs.content.decode()


@pytest.mark.django_db
def test_admin_is_staff_only(client):
    response = client.get("/admin/researchers/identityconflict/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
