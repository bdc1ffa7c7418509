"""Anonymous public pages read from a replica; signed-in pages, writes and the admin read the
primary. A second alias on the same PostgreSQL server (a test mirror) stands in for the replica."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connections
from django.test.utils import CaptureQueriesContext

from papers.models import Paper

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True, databases=["default", "replica1"]),
]


def _queries(client, url: str) -> tuple[int, int, int]:
    with (
        CaptureQueriesContext(connections["default"]) as primary,
        CaptureQueriesContext(connections["replica1"]) as replica,
    ):
        status = client.get(url).status_code
    return status, len(primary), len(replica)


def test_anonymous_pages_read_the_replica_and_signed_in_pages_the_primary(
    client, settings, paper_factory
):
    settings.DATABASE_REPLICAS = ["replica1"]
    paper = paper_factory(authors=["Ada Lovelace"], title="Notes on the analytical engine")
    status, on_primary, on_replica = _queries(client, paper.get_absolute_url())
    assert status == 200 and on_replica > 0 and on_primary == 0

    user = get_user_model().objects.create_user("reader", "reader@example.org", "pw-123456")
    from accounts.models import Profile

    Profile.objects.create(user=user, onboarding=Profile.Onboarding.COMPLETED)
    client.force_login(user)
    status, on_primary, on_replica = _queries(client, paper.get_absolute_url())
    assert status == 200 and on_primary > 0 and on_replica == 0


def test_without_replicas_everything_reads_the_primary(client, settings, paper_factory):
    settings.DATABASE_REPLICAS = []
    paper = paper_factory(authors=["Ada Lovelace"])
    status, on_primary, on_replica = _queries(client, paper.get_absolute_url())
    assert status == 200 and on_primary > 0 and on_replica == 0
    # Writes never go to a replica, whatever the request.
    settings.DATABASE_REPLICAS = ["replica1"]
    with CaptureQueriesContext(connections["replica1"]) as replica:
        Paper.objects.filter(pk=paper.pk).update(title="Changed")
    assert len(replica) == 0
