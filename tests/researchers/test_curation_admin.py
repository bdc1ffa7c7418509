"""Curation screens in the admin: access, merge preview and confirm, split, move, distinct,
the audit log, and the curators-only history on the researcher page."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from accounts.models import Follow
from papers.models import Authorship
from researchers.curation.decisions import researchers_merge
from researchers.models import CurationEntry, DistinctPair, Researcher

URLS = [
    "/admin/researchers/researcher/curation/",
    "/admin/researchers/researcher/curation/merge/?ids=1,2",
    "/admin/researchers/researcher/curation/move/",
]


@pytest.fixture
def pair(researcher_factory, paper_factory, link_author, reader_factory):
    a = researcher_factory("Marcus Liwicki")
    b = researcher_factory("Marcus Liwicki")
    for record in (a, b):
        link_author(paper_factory(authors=["Marcus Liwicki"]), 1, record)
    Follow.objects.create(user=reader_factory(), researcher=a)
    return a, b


@pytest.mark.django_db
@pytest.mark.parametrize("url", URLS)
def test_anonymous_and_non_staff_users_get_the_admin_login(client, reader_factory, url):
    response = client.get(url)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    client.force_login(reader_factory())
    response = client.get(url)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


@pytest.mark.django_db
@pytest.mark.parametrize("url", URLS)
def test_staff_without_the_permission_get_403(client, reader_factory, url):
    client.force_login(reader_factory(is_staff=True))
    assert client.get(url).status_code == 403


@pytest.mark.django_db
def test_staff_without_the_permission_cannot_merge_by_posting(client, reader_factory, pair):
    a, b = pair
    client.force_login(reader_factory(is_staff=True))
    response = client.post(
        "/admin/researchers/researcher/curation/merge/",
        {"survivor": b.pk, "folded": str(a.pk), "confirm": "1"},
    )
    assert response.status_code == 403
    assert Researcher.objects.get(pk=a.pk).merged_into_id is None
    response = client.post(
        "/admin/researchers/researcher/curation/distinct/", {"first": a.pk, "second": b.pk}
    )
    assert response.status_code == 403 and not DistinctPair.objects.exists()


@pytest.mark.django_db
def test_merge_preview_then_confirm_then_split(client, curator, pair):
    a, b = pair
    client.force_login(curator)
    preview = client.get(f"/admin/researchers/researcher/curation/merge/?ids={b.pk},{a.pk}")
    html = preview.content.decode()
    assert preview.status_code == 200
    assert "1 authorship and 0 external ids move" in html
    assert "follows: 1 move to the survivor" in html
    assert "Confirm merge" in html and Researcher.objects.get(pk=a.pk).merged_into_id is None

    done = client.post(
        "/admin/researchers/researcher/curation/merge/",
        {"survivor": b.pk, "folded": str(a.pk), "note": "same S2 profile", "confirm": "1"},
    )
    entry = CurationEntry.objects.get(action="merge")
    assert done.status_code == 302 and done["Location"].endswith(
        f"/curationentry/{entry.pk}/change/"
    )
    assert Researcher.objects.get(pk=a.pk).merged_into_id == b.pk
    log = client.get(done["Location"])
    assert log.status_code == 200 and "same S2 profile" in log.content.decode()
    assert "Split…" in log.content.decode()

    page = client.get(f"/admin/researchers/researcher/curation/split/{entry.pk}/")
    assert "Split this merge" in page.content.decode()
    client.post(f"/admin/researchers/researcher/curation/split/{entry.pk}/", {"note": "oops"})
    assert Researcher.objects.get(pk=a.pk).merged_into_id is None
    assert Follow.objects.get().researcher_id == a.pk
    page = client.get(f"/admin/researchers/researcher/curation/split/{entry.pk}/")
    assert "already split" in page.content.decode()


@pytest.mark.django_db
def test_merge_preview_shows_what_blocks_it(client, curator, pair):
    a, b = pair
    client.force_login(curator)
    client.post("/admin/researchers/researcher/curation/distinct/", {"first": a.pk, "second": b.pk})
    preview = client.get(f"/admin/researchers/researcher/curation/merge/?ids={b.pk},{a.pk}")
    html = preview.content.decode()
    assert "marked as not the same person" in html and "Confirm merge" not in html
    response = client.post(
        "/admin/researchers/researcher/curation/merge/",
        {"survivor": b.pk, "folded": str(a.pk), "confirm": "1"},
    )
    assert response.status_code == 200 and "marked as not the same person" in (
        response.content.decode()
    )
    assert Researcher.objects.get(pk=a.pk).merged_into_id is None


@pytest.mark.django_db
def test_move_one_authorship_from_the_admin(client, curator, pair):
    a, b = pair
    authorship = Authorship.objects.get(researcher=a)
    client.force_login(curator)
    url = "/admin/researchers/researcher/curation/move/"
    preview = client.get(url, {"authorship": authorship.pk, "to": b.pk})
    assert "Confirm move" in preview.content.decode()
    client.post(url, {"authorship": authorship.pk, "to": b.pk, "confirm": "1"})
    authorship.refresh_from_db()
    assert authorship.researcher_id == b.pk


@pytest.mark.django_db
def test_audit_log_is_read_only(client, curator, pair):
    a, b = pair
    entry = researchers_merge(survivor_id=b.pk, folded_ids=[a.pk], actor=curator)
    client.force_login(curator)
    assert client.get("/admin/researchers/curationentry/").status_code == 200
    assert client.get("/admin/researchers/curationentry/add/").status_code == 403
    response = client.post(f"/admin/researchers/curationentry/{entry.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403 and CurationEntry.objects.filter(pk=entry.pk).exists()


@pytest.mark.django_db
@override_settings(PAGE_CACHE_SECONDS=0)  # counts the queries of rendering, not of a cache hit
def test_history_on_the_researcher_page_is_for_curators_only(client, curator, pair, reader_factory):
    a, b = pair
    url = b.get_absolute_url()
    client.get(url)  # warm caches (taxonomy, sites) before counting
    with CaptureQueriesContext(connection) as before:
        page = client.get(url)
    assert "Curation history" not in page.content.decode()
    researchers_merge(survivor_id=b.pk, folded_ids=[a.pk], actor=curator, note="one person")
    with CaptureQueriesContext(connection) as after:
        page = client.get(url)
    # Anonymous visitors: no curators' history (the public history shows what, never who), and
    # not one query more than before the merge (fewer: the same-name record and its evidence
    # are gone, folded into this record).
    assert "Curation history" not in page.content.decode()
    assert "one person" not in page.content.decode()
    assert len(after) <= len(before)

    client.force_login(reader_factory(is_staff=True))
    assert "Curation history" not in client.get(url).content.decode()
    client.force_login(curator)
    html = client.get(url).content.decode()
    assert "Curation history" in html and "one person" in html
    assert html.count('href="/admin/researchers/curationentry/') == 1


@pytest.mark.django_db
def test_superuser_can_curate(client, pair):
    admin = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw-123456")
    client.force_login(admin)
    assert client.get("/admin/researchers/researcher/curation/").status_code == 200


@pytest.mark.django_db
def test_researcher_list_links_the_queue_for_curators_only(client, curator, reader_factory):
    client.force_login(curator)
    assert (
        "Review same-name clusters" in client.get("/admin/researchers/researcher/").content.decode()
    )
    viewer = reader_factory(is_staff=True)
    from django.contrib.auth.models import Permission

    viewer.user_permissions.add(Permission.objects.get(codename="view_researcher"))
    client.force_login(viewer)
    assert (
        "Review same-name clusters"
        not in client.get("/admin/researchers/researcher/").content.decode()
    )
    assert client.get("/admin/researchers/researcher/curation/").status_code == 403
