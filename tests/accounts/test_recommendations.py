"""Papers like your list: new papers ranked by closeness in meaning to a list's papers, each
with the saved paper it is closest to, on the list's page, in the feed and in the digest;
"not relevant" removes a paper and pushes down its neighbours. Real model, real vectors, real
index file."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from accounts import account_data, follows
from accounts.digests import digest_send
from accounts.library import recommendations
from accounts.library.lists import paper_save, reading_list_create, reading_list_default
from accounts.library.models import RecommendationDismissal
from accounts.library.recommendations import recommendation_dismiss
from papers.models import Authorship
from papers.search import PAPERS
from papers.search.embedding_stage import embed_papers
from wovepaper.lib.search import backend_for

pytestmark = pytest.mark.django_db

SAVED = [
    (
        "Surface codes for quantum error correction",
        "We study logical error rates of surface codes under circuit noise for qubits.",
        ["quant-ph"],
    ),
    (
        "Dark matter halos of dwarf spheroidal galaxies",
        "Density profiles of dwarf galaxies constrain dark matter models.",
        ["astro-ph.GA"],
    ),
]
NEW = [
    (
        "Decoding topological codes with neural networks",
        "A neural decoder for surface codes lowers the logical error rate of qubits.",
        ["quant-ph", "cs.LG"],
    ),
    (
        "Rotation curves of dwarf galaxies and the dark matter core problem",
        "Rotation curves of dwarf galaxies favour cored dark matter halos over cusps.",
        ["astro-ph.GA"],
    ),
    (
        "Stellar kinematics of dwarf galaxies probe their dark matter content",
        "Velocity dispersions of stars in dwarf spheroidals trace dark matter halos.",
        ["astro-ph.GA"],
    ),
    (
        "A recipe book of French pastry",
        "Butter, flour and patience make croissants, tarts and eclairs.",
        ["physics.pop-ph"],
    ),
]
# Close to the saved surface code paper, but published before the window.
OLD = (
    "Fault tolerance thresholds of color codes",
    "Threshold estimates for color codes protecting qubits against noise.",
    ["quant-ph"],
)


@pytest.fixture
def library(paper_factory, user_factory):
    cache.clear()
    now = timezone.now()
    saved = [
        paper_factory(title=t, abstract=a, categories=c, published=now - timedelta(days=400))
        for t, a, c in SAVED
    ]
    new = [
        paper_factory(title=t, abstract=a, categories=c, published=now - timedelta(days=2))
        for t, a, c in NEW
    ]
    old = paper_factory(
        title=OLD[0], abstract=OLD[1], categories=OLD[2], published=now - timedelta(days=90)
    )
    embed_papers([p.pk for p in [*saved, *new, old]], feed_index=False)
    backend_for(PAPERS, "semantic").rebuild()
    user = user_factory(email="reader@example.org")
    reading_list = reading_list_default(user=user)
    for paper in saved:
        paper_save(user=user, paper=paper, reading_list=reading_list)
    yield user, reading_list, saved, new, old
    cache.clear()


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_new_papers_close_to_the_list_are_recommended_with_the_saved_paper_they_are_like(
    library, django_assert_max_num_queries
):
    user, reading_list, (surface, dark), (decoding, rotation, kinematics, pastry), old = library
    with django_assert_max_num_queries(12):
        found = recommendations.list_recommendations(reading_list=reading_list)
    closest = {r.paper.pk: r.closest.pk for r in found}
    assert closest == {decoding.pk: surface.pk, rotation.pk: dark.pk, kinematics.pk: dark.pk}
    # The pastry book is below the similarity floor; the colour codes paper is too old.
    assert pastry.pk not in closest and old.pk not in closest
    scores = [r.score for r in found]
    assert scores == sorted(scores, reverse=True)
    # A wider window takes the older paper in.
    wider = recommendations.list_recommendations(
        reading_list=reading_list, since=timezone.now() - timedelta(days=120)
    )
    assert old.pk in {r.paper.pk for r in wider}


def test_a_paper_already_saved_is_not_recommended(library):
    user, reading_list, _, (decoding, *_), _ = library
    other = reading_list_create(user=user, name="Elsewhere")
    paper_save(user=user, paper=decoding, reading_list=other)
    found = recommendations.list_recommendations(reading_list=reading_list)
    assert decoding.pk not in {r.paper.pk for r in found} and found


def test_not_relevant_removes_the_paper_and_pushes_down_its_neighbours(library):
    user, reading_list, _, (decoding, rotation, kinematics, _), _ = library
    before = {
        r.paper.pk: r.score for r in recommendations.list_recommendations(reading_list=reading_list)
    }
    client = _signed_in(user)
    response = client.post(
        "/me/library/not-relevant", {"paper": kinematics.pk}, headers={"HX-Request": "true"}
    )
    # htmx gets the line that takes the recommendation's place, which can undo it.
    assert response.status_code == 200 and b"Marked not relevant" in response.content
    assert RecommendationDismissal.objects.filter(user=user, paper=kinematics).count() == 1
    after = {
        r.paper.pk: r.score for r in recommendations.list_recommendations(reading_list=reading_list)
    }
    assert kinematics.pk not in after
    # Its neighbour about dwarf galaxies ranks lower; the quantum paper, far from it, barely.
    drop_rotation = before[rotation.pk] - after.get(rotation.pk, -1.0)
    drop_decoding = before[decoding.pk] - after[decoding.pk]
    assert drop_rotation > 0.15 and drop_rotation > 3 * drop_decoding
    # Twice is once; a plain form post is redirected back.
    again = client.post("/me/library/not-relevant", {"paper": kinematics.pk, "next": "/following"})
    assert again.status_code == 302 and again["Location"] == "/following"
    assert RecommendationDismissal.objects.filter(user=user).count() == 1


def test_not_relevant_needs_a_signed_in_reader_and_csrf(library):
    user, _, _, (decoding, *_), _ = library
    response = Client().post("/me/library/not-relevant", {"paper": decoding.pk})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post("/me/library/not-relevant", {"paper": decoding.pk}).status_code == 403
    assert not RecommendationDismissal.objects.exists()


def test_the_list_page_and_its_markdown_show_the_recommendations(library):
    user, reading_list, (surface, _), (decoding, _, _, pastry), _ = library
    client = _signed_in(user)
    html = client.get(f"/me/library/{reading_list.pk}").content.decode()
    section = html.split('id="recs-h"', 1)[1].split("</section>", 1)[0]
    assert "Papers like this list" in html and decoding.title in section
    assert f"Close to “{surface.title}”" in section and pastry.title not in section
    assert 'action="/me/library/not-relevant"' in section and "csrfmiddlewaretoken" in section
    markdown = client.get(
        f"/me/library/{reading_list.pk}", headers={"Accept": "text/markdown"}
    ).content.decode()
    assert "## Papers like this list" in markdown
    assert f"(arXiv:{decoding.arxiv_id}): Close to “{surface.title}”" in markdown


def test_the_feed_shows_papers_like_the_library_naming_the_list(library, researcher_factory):
    user, reading_list, (surface, _), (decoding, *_), _ = library
    html = _signed_in(user).get("/following").content.decode()
    section = html.split('id="recs-h"', 1)[1].split("</section>", 1)[0]
    assert decoding.title in section
    assert f"Close to “{surface.title}” (in {reading_list.name})" in section


def test_a_followed_researchers_new_paper_is_a_candidate(library, researcher_factory, monkeypatch):
    user, reading_list, _, (decoding, *_), _ = library
    # No nearest papers from the index at all: only the follows bring candidates.
    monkeypatch.setattr(recommendations, "POOL", 0)
    assert recommendations.list_recommendations(reading_list=reading_list) == []
    researcher = researcher_factory("Bo Qubit")
    Authorship.objects.filter(paper=decoding, position=1).update(researcher=researcher)
    follows.researcher_follow(user=user, researcher=researcher)
    found = recommendations.list_recommendations(reading_list=reading_list)
    assert [r.paper.pk for r in found] == [decoding.pk]


def test_the_digest_carries_papers_like_the_library(library, authored_paper, researcher_factory):
    user, reading_list, (surface, _), (decoding, *_), _ = library
    researcher = researcher_factory("Ada Quantum")
    follows.researcher_follow(user=user, researcher=researcher)
    authored_paper(researcher, title="Something new by Ada", published=timezone.now())
    outcome = digest_send(user_id=user.pk, now=timezone.now() + timedelta(minutes=1))
    assert outcome.status == "sent"
    (message,) = mail.outbox
    assert "Papers like your library" in message.body and decoding.title in message.body
    assert f"Close to “{surface.title}” (in {reading_list.name})" in message.body
    html = message.alternatives[0][0]
    assert "Papers like your library" in html and decoding.title in html


def test_the_account_export_holds_what_was_marked_not_relevant(library):
    user, _, _, (decoding, *_), _ = library
    recommendation_dismiss(user=user, paper=decoding)
    exported = account_data.user_export(user=user)
    assert [d["arxiv_id"] for d in exported["not_relevant"]] == [decoding.arxiv_id]


def test_news_of_a_saved_paper_reaches_the_feed_and_the_digest(library):
    from papers.models import PaperChange

    user, _, (surface, _), _, _ = library
    PaperChange.objects.create(
        paper=surface, kind=PaperChange.Kind.VERSION, detail="3", recorded_at=timezone.now()
    )
    html = _signed_in(user).get("/following").content.decode()
    section = html.split('id="changes-h"', 1)[1].split("</section>", 1)[0]
    assert surface.title in section and "v3 posted" in section
    markdown = _signed_in(user).get("/following", headers={"Accept": "text/markdown"})
    assert f"{surface.get_absolute_url()}): v3 posted" in markdown.content.decode()
    # News alone is enough for a digest.
    outcome = digest_send(user_id=user.pk, now=timezone.now() + timedelta(minutes=1))
    assert outcome.status == "sent"
    (message,) = mail.outbox
    assert f"{surface.title}: v3 posted" in message.body
    assert "news of 1 paper you keep" in message.subject


def test_the_api_gives_a_lists_recommendations_and_is_in_the_schema(library, user_factory):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    user, reading_list, (surface, _), (decoding, *_), _ = library
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    response = client.get(f"/api/v1/me/lists/{reading_list.pk}/recommendations/")
    assert response.status_code == 200
    by_id = {r["arxiv_id"]: r for r in response.json()["results"]}
    assert by_id[decoding.arxiv_id]["closest_arxiv_id"] == surface.arxiv_id
    assert by_id[decoding.arxiv_id]["url"].endswith(decoding.get_absolute_url())
    other = APIClient()
    other.force_authenticate(user_factory())
    assert other.get(f"/api/v1/me/lists/{reading_list.pk}/recommendations/").status_code == 404
    anonymous = APIClient().get(f"/api/v1/me/lists/{reading_list.pk}/recommendations/")
    assert anonymous.status_code == 401
    paths = Client().get("/openapi.json").json()["paths"]
    assert "get" in paths["/api/v1/me/lists/{list_id}/recommendations/"]


def test_not_relevant_through_the_api_teaches_the_ranking_as_the_site_does_and_undoes(
    library, user_factory
):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    user, reading_list, _, (decoding, rotation, kinematics, _), _ = library

    def scores() -> dict[int, float]:
        found = recommendations.list_recommendations(reading_list=reading_list)
        return {r.paper.pk: r.score for r in found}

    before = scores()
    # The site's button, then taken back, gives the scores the API must reproduce.
    _signed_in(user).post("/me/library/not-relevant", {"paper": kinematics.pk})
    by_site = scores()
    RecommendationDismissal.objects.all().delete()

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    marked = client.post(
        "/api/v1/me/not-relevant/", {"arxiv_id": f"{kinematics.arxiv_id}v2"}, format="json"
    )
    assert marked.status_code == 201
    assert marked.json()["arxiv_id"] == kinematics.arxiv_id and marked.json()["marked_at"]
    again = client.post(
        "/api/v1/me/not-relevant/", {"arxiv_id": kinematics.arxiv_id}, format="json"
    )
    assert again.status_code == 200
    assert RecommendationDismissal.objects.filter(user=user).count() == 1
    after = scores()
    assert after == by_site and kinematics.pk not in after
    assert after[rotation.pk] < before[rotation.pk]
    listed = client.get(f"/api/v1/me/lists/{reading_list.pk}/recommendations/").json()
    assert kinematics.arxiv_id not in {r["arxiv_id"] for r in listed["results"]}
    page = client.get("/api/v1/me/not-relevant/").json()
    assert page["count"] == 1 and page["results"][0]["arxiv_id"] == kinematics.arxiv_id

    # Undone, the paper is back and its neighbours rank as before.
    assert client.delete(f"/api/v1/me/not-relevant/{kinematics.arxiv_id}/").status_code == 204
    assert client.delete(f"/api/v1/me/not-relevant/{kinematics.arxiv_id}/").status_code == 404
    assert scores() == pytest.approx(before)

    missing = client.post("/api/v1/me/not-relevant/", {"arxiv_id": "2401.99999"}, format="json")
    assert missing.status_code == 404
    assert (
        client.post("/api/v1/me/not-relevant/", {"arxiv_id": "x"}, format="json").status_code == 400
    )
    # Another reader's marks are their own; signed out is a 401.
    other = APIClient()
    other.force_authenticate(user_factory())
    other.post("/api/v1/me/not-relevant/", {"arxiv_id": decoding.arxiv_id}, format="json")
    assert client.get("/api/v1/me/not-relevant/").json()["count"] == 0
    assert decoding.pk in scores()
    assert APIClient().get("/api/v1/me/not-relevant/").status_code == 401
    paths = Client().get("/openapi.json").json()["paths"]
    assert {"get", "post"} <= set(paths["/api/v1/me/not-relevant/"])
    assert "delete" in paths["/api/v1/me/not-relevant/{arxiv_id}/"]


# --- "Not relevant" undone on the site ---------------------------------------------------------


def test_not_relevant_is_undone_in_place_and_the_paper_is_recommended_as_before(library):
    user, reading_list, (_, dark), (_, rotation, kinematics, _), _ = library

    def scores() -> dict[int, float]:
        found = recommendations.list_recommendations(reading_list=reading_list)
        return {r.paper.pk: r.score for r in found}

    before = scores()
    client = _signed_in(user)
    htmx = {"HX-Request": "true"}
    next_url = f"/me/library/{reading_list.pk}"
    marked = client.post(
        "/me/library/not-relevant",
        {"paper": kinematics.pk, "list": reading_list.pk, "next": next_url},
        headers=htmx,
    ).content.decode()
    # The line that takes the recommendation's place, with its Undo form.
    assert "Marked not relevant — papers like it will rank lower." in marked
    assert f'id="rec-undo-{kinematics.pk}"' in marked and 'class="recommendation' in marked
    assert 'action="/me/library/not-relevant/undo"' in marked and "csrfmiddlewaretoken" in marked
    assert f'name="list" value="{reading_list.pk}"' in marked
    assert f'name="next" value="{next_url}"' in marked
    assert kinematics.pk not in scores() and scores()[rotation.pk] < before[rotation.pk]

    undone = client.post(
        "/me/library/not-relevant/undo",
        {"paper": kinematics.pk, "list": reading_list.pk, "next": next_url},
        headers=htmx,
    )
    assert undone.status_code == 200
    item = undone.content.decode()
    # The recommendation again, as the list's page shows it (no list named there).
    assert f'id="rec-{kinematics.pk}"' in item and kinematics.title in item
    assert f"Close to “{dark.title}”</p>" in item
    assert 'action="/me/library/not-relevant"' in item and f'value="{next_url}"' in item
    assert not RecommendationDismissal.objects.filter(user=user).exists()
    assert scores() == pytest.approx(before)
    shown = recommendations.recommendation_of(
        user=user, paper=kinematics, reading_list=reading_list
    )
    assert shown is not None and shown.score == pytest.approx(before[kinematics.pk])


def test_undo_on_the_feed_names_the_list_and_a_plain_post_is_redirected(library):
    user, reading_list, (_, dark), (_, _, kinematics, _), _ = library
    client = _signed_in(user)
    client.post("/me/library/not-relevant", {"paper": kinematics.pk})
    item = client.post(
        "/me/library/not-relevant/undo",
        {"paper": kinematics.pk, "next": "/following"},
        headers={"HX-Request": "true"},
    ).content.decode()
    assert f"Close to “{dark.title}” (in {reading_list.name})" in item
    assert 'name="list"' not in item

    # Without htmx: back to `next` with a message; a foreign `next` goes to the marks' page.
    recommendation_dismiss(user=user, paper=kinematics)
    plain = client.post(
        "/me/library/not-relevant/undo",
        {"paper": kinematics.pk, "next": "/following"},
        follow=True,
    )
    assert plain.redirect_chain == [("/following", 302)]
    assert "may be recommended again" in plain.content.decode()
    assert not RecommendationDismissal.objects.exists()
    recommendation_dismiss(user=user, paper=kinematics)
    hostile = client.post(
        "/me/library/not-relevant/undo",
        {"paper": kinematics.pk, "next": "https://evil.example/x"},
    )
    assert hostile["Location"] == "/me/library/not-relevant"
    # Undoing twice is harmless.
    again = client.post("/me/library/not-relevant/undo", {"paper": kinematics.pk})
    assert again.status_code == 302 and not RecommendationDismissal.objects.exists()


def test_the_undo_needs_a_post_a_signed_in_reader_and_csrf(library):
    user, _, _, (decoding, *_), _ = library
    recommendation_dismiss(user=user, paper=decoding)
    client = _signed_in(user)
    assert client.get("/me/library/not-relevant/undo", {"paper": decoding.pk}).status_code == 405
    anonymous = Client().post("/me/library/not-relevant/undo", {"paper": decoding.pk})
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post("/me/library/not-relevant/undo", {"paper": decoding.pk}).status_code == 403
    assert client.post("/me/library/not-relevant/undo", {"paper": 0}).status_code == 404
    assert RecommendationDismissal.objects.filter(user=user).count() == 1


def test_the_not_relevant_page_lists_the_marks_newest_first_in_bounded_queries(
    library, paper_factory, user_factory, django_assert_max_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    user, _, _, (decoding, rotation, *_), _ = library
    client = _signed_in(user)
    signed_out = Client().get("/me/library/not-relevant")
    assert signed_out.status_code == 302 and "/accounts/login/" in signed_out["Location"]
    assert "Nothing marked not relevant" in client.get("/me/library/not-relevant").content.decode()

    marked = [*(paper_factory() for _ in range(3)), paper_factory(title="<b>Bold</b> claims")]
    for paper in marked:
        recommendation_dismiss(user=user, paper=paper)
    recommendation_dismiss(user=user_factory(), paper=decoding)  # another reader's
    with CaptureQueriesContext(connection) as few:
        html = client.get("/me/library/not-relevant").content.decode()
    assert "4 papers" in html and decoding.title not in html
    # Newest first, each title escaped, each with an Undo form back to this page.
    positions = [html.index(f'id="not-relevant-{p.pk}"') for p in reversed(marked)]
    assert positions == sorted(positions)
    assert "&lt;b&gt;Bold&lt;/b&gt; claims" in html and "<b>Bold</b>" not in html
    assert html.count('action="/me/library/not-relevant/undo"') == 4
    assert 'name="next" value="/me/library/not-relevant"' in html

    for _ in range(60):
        recommendation_dismiss(user=user, paper=paper_factory())
    with django_assert_max_num_queries(len(few.captured_queries)):
        page = client.get("/me/library/not-relevant").content.decode()
    assert "64 papers" in page and page.count('class="not-relevant-item"') == 50
    assert "Page 1 of 2" in page and marked[0].title not in page
    assert marked[0].title in client.get("/me/library/not-relevant?page=2").content.decode()

    markdown = client.get("/me/library/not-relevant?page=2", headers={"Accept": "text/markdown"})
    assert markdown["Content-Type"].startswith("text/markdown")
    assert f"(arXiv:{marked[0].arxiv_id}, marked " in markdown.content.decode()
    # The library page and the recommendations lead there.
    assert 'href="/me/library/not-relevant"' in client.get("/me/library").content.decode()
    library_md = client.get("/me/library", headers={"Accept": "text/markdown"})
    assert "/me/library/not-relevant" in library_md.content.decode()
    feed = client.get("/following").content.decode()
    assert rotation.title in feed and 'href="/me/library/not-relevant"' in feed


def test_on_a_sample_papers_like_the_list_come_from_all_it_holds_and_the_page_says_so(
    library, settings
):
    """The fixture's OLD paper (90 days back) is outside a 30-day window on real time; read as
    a sample (papers.archive_time), every paper held is a candidate, and the list page says
    why."""
    from papers.archive_time import archive_span_forget

    user, reading_list, saved, new, old = library
    real = {r.paper.pk for r in recommendations.list_recommendations(reading_list=reading_list)}
    assert old.pk not in real
    settings.ARCHIVE_CLOCK = "sample"
    archive_span_forget()
    sample = {r.paper.pk for r in recommendations.list_recommendations(reading_list=reading_list)}
    assert old.pk in sample and real <= sample
    page = " ".join(_signed_in(user).get(f"/me/library/{reading_list.pk}").content.decode().split())
    assert "This archive is a sample of arXiv, not a daily harvest" in page
    assert "Papers like this list" in page and OLD[0] in page


def test_an_empty_library_says_why_there_is_nothing_like_it(user_factory):
    client = _signed_in(user_factory())
    page = client.get("/following").content.decode()
    assert 'id="recommendations"' in page  # the header's "Recommended" leads here
    assert "Save papers to a list, and papers like them show here." in page
