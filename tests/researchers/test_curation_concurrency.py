"""Two curators merging overlapping records at the same moment, in two real transactions.

A merge participant registered for the test (the same extension point accounts uses) holds the
first merge open after it has locked its records, so that the second one certainly arrives while
the first is in progress; the row locks must make the second wait, see the first's result and
refuse, leaving one consistent state.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from accounts.models import Follow
from papers.models import Authorship
from researchers.curation import decisions
from researchers.curation.decisions import CurationError, MergeParticipant, researchers_merge
from researchers.models import CurationEntry, Researcher, ResearcherExternalId


@pytest.fixture
def holding_participant():
    inside = threading.Event()
    release = threading.Event()

    def merge(*, survivor_id, folded_ids):
        if not inside.is_set():
            inside.set()
            release.wait(timeout=10)
        return {}

    participant = MergeParticipant(
        name="zz-test-hold", preview=lambda **kw: {}, merge=merge, split=lambda **kw: None
    )
    decisions.merge_participant_register(participant)
    yield inside, release
    decisions._participants.pop("zz-test-hold", None)


def run(results, key, **kwargs):
    try:
        results[key] = researchers_merge(**kwargs).pk
    except CurationError as exc:
        results[key] = exc
    finally:
        connection.close()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("second_survivor", ["c", "a"])
def test_concurrent_overlapping_merges_leave_one_consistent_state(
    researcher_factory,
    paper_factory,
    link_author,
    reader_factory,
    curator,
    holding_participant,
    second_survivor,
):
    inside, release = holding_participant
    a, b, c = (researcher_factory("Wei Wang") for _ in range(3))
    for n, record in enumerate((a, b, c)):
        link_author(paper_factory(authors=["Wei Wang"]), 1, record)
        ResearcherExternalId.objects.create(researcher=record, source="s2", value=f"9{n}")
    user = reader_factory()
    for record in (a, b, c):
        Follow.objects.create(user=user, researcher=record)

    results: dict = {}
    # First: fold B into A. Second, overlapping on B while the first holds it: fold B into C,
    # or fold C into B (B as survivor). Either way B is no longer live when the second gets it.
    first = threading.Thread(
        target=run,
        args=(results, "first"),
        kwargs={"survivor_id": a.pk, "folded_ids": [b.pk], "actor": curator},
    )
    second_kwargs = (
        {"survivor_id": c.pk, "folded_ids": [b.pk]}
        if second_survivor == "c"
        else {"survivor_id": b.pk, "folded_ids": [c.pk]}
    )
    second = threading.Thread(
        target=run, args=(results, "second"), kwargs={**second_kwargs, "actor": curator}
    )
    first.start()
    assert inside.wait(timeout=10)
    second.start()
    second.join(timeout=1)
    assert second.is_alive()  # waiting for the first merge's row locks
    release.set()
    first.join(timeout=20)
    second.join(timeout=20)

    assert isinstance(results["first"], int)
    assert isinstance(results["second"], CurationError)
    assert "already merged" in str(results["second"])
    assert CurationEntry.objects.filter(action="merge").count() == 1
    rows = dict(Researcher.objects.values_list("pk", "merged_into_id"))
    assert rows == {a.pk: None, b.pk: a.pk, c.pk: None}
    assert sorted(Authorship.objects.values_list("researcher_id", flat=True)) == sorted(
        [a.pk, a.pk, c.pk]
    )
    assert sorted(ResearcherExternalId.objects.values_list("value", "researcher_id")) == [
        ("90", a.pk),
        ("91", a.pk),
        ("92", c.pk),
    ]
    assert sorted(Follow.objects.values_list("researcher_id", flat=True)) == sorted([a.pk, c.pk])
