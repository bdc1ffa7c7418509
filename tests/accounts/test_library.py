"""The reader's library: lists, saved papers, notes, the save control through the reader's
fragment, sharing by link, the lists' exports, and the account's export and deletion."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import bibtexparser
import pytest
from django.test import Client
from django.urls import reverse

from accounts import account_data
from accounts.library.importing import papers_save
from accounts.library.lists import (
    LIBRARY_MAX_LISTS,
    LibraryError,
    paper_save,
    paper_unsave,
    reading_list_create,
    reading_list_default,
    reading_list_share,
    reading_list_unshare,
)
from accounts.library.models import ReadingList, SavedPaper
from accounts.library.notes import NOTE_MAX_CHARS, saved_paper_note_set
from papers.ingest.records import PUBLISHED_MONTH
from papers.models import Paper

pytestmark = pytest.mark.django_db


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _many_papers(count: int) -> list[Paper]:
    start = datetime(2020, 1, 1, tzinfo=UTC)
    return Paper.objects.bulk_create(
        Paper(
            arxiv_id=f"2001.{n:05d}",
            title=f"Saved paper number {n}",
            authors="Ada Lovelace",
            categories="cs.LG",
            primary_category="cs.LG",
            published=start + timedelta(hours=n),
            slug=f"saved-paper-number-{n}",
        )
        for n in range(count)
    )


# --- services -------------------------------------------------------------------------------


def test_the_first_save_makes_the_reading_list_and_saving_again_changes_nothing(
    user_factory, paper_factory
):
    user, paper = user_factory(), paper_factory()
    assert not ReadingList.objects.filter(user=user).exists()
    first = paper_save(user=user, paper=paper)
    saved_paper_note_set(saved=first, note="Read section 3.")
    again = paper_save(user=user, paper=paper)
    assert first.pk == again.pk and again.reading_list.name == "Reading list"
    assert SavedPaper.objects.get().note == "Read section 3."
    assert ReadingList.objects.filter(user=user).count() == 1


def test_a_paper_can_be_in_two_lists_and_removed_from_one(user_factory, paper_factory):
    user, paper = user_factory(), paper_factory()
    theory = reading_list_create(user=user, name="  Theory   papers ")
    assert theory.name == "Theory papers"
    paper_save(user=user, paper=paper)
    paper_save(user=user, paper=paper, reading_list=theory)
    assert paper_unsave(user=user, paper_id=paper.pk, reading_lists=[theory]) == 1
    assert list(SavedPaper.objects.values_list("reading_list__name", flat=True)) == ["Reading list"]


def test_names_are_unique_per_reader_and_lists_are_bounded(user_factory, settings):
    user, other = user_factory(), user_factory()
    reading_list_create(user=user, name="Theory")
    reading_list_create(user=other, name="Theory")
    with pytest.raises(LibraryError, match="already have a list"):
        reading_list_create(user=user, name="Theory")
    with pytest.raises(LibraryError, match="needs a name"):
        reading_list_create(user=user, name="   ")
    ReadingList.objects.bulk_create(
        ReadingList(user=user, name=f"List {n}") for n in range(LIBRARY_MAX_LISTS - 1)
    )
    with pytest.raises(LibraryError, match="as many as a library holds"):
        reading_list_create(user=user, name="One too many")


def test_a_reader_cannot_save_into_someone_elses_list(user_factory, paper_factory):
    owner, intruder = user_factory(), user_factory()
    theirs = reading_list_create(user=owner, name="Mine")
    with pytest.raises(LibraryError):
        paper_save(user=intruder, paper=paper_factory(), reading_list=theirs)
    assert not SavedPaper.objects.exists()


def test_a_note_too_long_is_refused_whole(user_factory, paper_factory):
    saved = paper_save(user=user_factory(), paper=paper_factory())
    with pytest.raises(LibraryError):
        saved_paper_note_set(saved=saved, note="x" * (NOTE_MAX_CHARS + 1))
    saved.refresh_from_db()
    assert saved.note == ""


def test_sharing_gives_an_unguessable_link_that_unsharing_ends(user_factory, client):
    user = user_factory()
    one = reading_list_share(reading_list=reading_list_create(user=user, name="One"))
    two = reading_list_share(reading_list=reading_list_create(user=user, name="Two"))
    assert one.share_token and two.share_token and one.share_token != two.share_token
    assert len(one.share_token) >= 32
    # Sharing again keeps the link that was given out.
    assert reading_list_share(reading_list=one).share_token == one.share_token
    url = f"/lists/shared/{one.share_token}"
    assert client.get(url).status_code == 200
    old_token = one.share_token
    reading_list_unshare(reading_list=one)
    assert client.get(url).status_code == 404
    assert reading_list_share(reading_list=one).share_token != old_token


# --- the save control -----------------------------------------------------------------------


def test_saving_from_a_paper_page_with_htmx_answers_the_new_control(user_factory, paper_factory):
    user, paper = user_factory(), paper_factory(title="Attention-free transformers")
    client = _signed_in(user)
    response = client.post(
        "/me/library/save",
        {"paper": paper.pk, "next": paper.get_absolute_url()},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert f'id="save-{paper.pk}"' in html and "Saved in" in html and "Reading list" in html
    assert SavedPaper.objects.filter(reading_list__user=user, paper=paper).exists()
    removed = client.post("/me/library/unsave", {"paper": paper.pk}, HTTP_HX_REQUEST="true")
    assert "Saved in" not in removed.content.decode() and not SavedPaper.objects.exists()


def test_a_signed_out_save_goes_to_sign_in_and_saves_nothing(client, paper_factory):
    paper = paper_factory()
    response = client.post("/me/library/save", {"paper": paper.pk})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    htmx = client.post("/me/library/save", {"paper": paper.pk}, HTTP_HX_REQUEST="true")
    assert htmx["HX-Redirect"].startswith("/accounts/login/")
    assert not SavedPaper.objects.exists()


def test_saving_needs_a_csrf_token(user_factory, paper_factory):
    user, paper = user_factory(), paper_factory()
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    strict.get(paper.get_absolute_url())
    assert strict.post("/me/library/save", {"paper": paper.pk}).status_code == 403
    token = strict.get("/me/state").json()["csrf"]
    answer = strict.post(
        "/me/library/save",
        {"paper": paper.pk, "csrfmiddlewaretoken": token},
        HTTP_HX_REQUEST="true",
    )
    assert answer.status_code == 200 and SavedPaper.objects.filter(paper=paper).exists()


def test_the_paper_page_stays_shared_and_the_saved_state_comes_from_the_readers_state(
    user_factory, paper_factory, client
):
    paper = paper_factory(title="A paper worth keeping")
    reader, other = user_factory(), user_factory()
    paper_save(user=reader, paper=paper)
    anonymous = client.get(paper.get_absolute_url())
    assert "Sign in to save" in anonymous.content.decode()
    assert "public" in anonymous["Cache-Control"]

    as_reader, as_other = _signed_in(reader), _signed_in(other)
    first = as_reader.get(paper.get_absolute_url())
    second = as_other.get(paper.get_absolute_url())
    assert first.content == second.content and "Saved in" not in first.content.decode()
    # The control carries the title reader.js labels its buttons with.
    assert f'id="save-{paper.pk}" data-title="A paper worth keeping"' in first.content.decode()
    assert str(paper.pk) in as_reader.get("/me/state").json()["saved"]
    assert as_other.get("/me/state").json()["saved"] == {}


def test_list_items_leave_their_save_slots_to_the_readers_state(user_factory, paper_factory):
    papers = [paper_factory(categories=["math.CO"]) for _ in range(3)]
    reader = user_factory()
    paper_save(user=reader, paper=papers[1])
    client = _signed_in(reader)
    html = client.get("/categories/math.CO").content.decode()
    for paper in papers:
        assert f'<div class="save-slot" id="save-{paper.pk}"></div>' in html
    assert 'id="reader-state"' in html
    assert list(client.get("/me/state").json()["saved"]) == [str(papers[1].pk)]


def test_search_results_swapped_in_have_save_slots_and_no_loader(user_factory, paper_factory):
    paper = paper_factory(title="Quasicrystal tilings", abstract="Penrose tilings studied.")
    client = _signed_in(user_factory())
    response = client.get("/search", {"q": "quasicrystal"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    # reader.js, loaded with the page, fills the slots htmx puts in it.
    assert f'<div class="save-slot" id="save-{paper.pk}"></div>' in html
    assert "reader-state" not in html and "<script" not in html


def test_a_page_rendered_for_one_reader_has_its_items_save_slots_filled(
    user_factory, paper_factory
):
    paper = paper_factory(categories=["math.CO"])
    reader = user_factory()
    client = _signed_in(reader)
    # An unknown query parameter: the page is rendered for this reader alone.
    html = client.get("/categories/math.CO", {"utm_source": "mail"}).content.decode()
    assert f'<div class="save-slot" id="save-{paper.pk}"></div>' in html
    assert 'id="reader-state" hidden data-saves-only' in html and "Sign out" in html


# --- the library pages ----------------------------------------------------------------------


def test_the_library_needs_sign_in(client):
    assert client.get("/me/library")["Location"].startswith("/accounts/login/")


def test_the_library_lists_the_lists_and_makes_new_ones(user_factory, paper_factory):
    user = user_factory()
    client = _signed_in(user)
    html = client.get("/me/library").content.decode()
    assert "Reading list" in html and "0 papers" in html
    response = client.post("/me/library", {"name": "To cite"})
    made = ReadingList.objects.get(user=user, name="To cite")
    assert response["Location"] == f"/me/library/{made.pk}"
    duplicate = client.post("/me/library", {"name": "To cite"}).content.decode()
    assert "already have a list" in duplicate
    paper_save(user=user, paper=paper_factory(), reading_list=made)
    markdown = client.get("/me/library", HTTP_ACCEPT="text/markdown")
    assert markdown["Content-Type"].startswith("text/markdown")
    assert "- [To cite](" in markdown.content.decode()
    assert f"/me/library/{made.pk}): 1 paper" in markdown.content.decode()


def test_a_list_page_edits_notes_and_removes_papers(user_factory, paper_factory):
    user = user_factory()
    paper = paper_factory(title="Notes <b>escaped</b>")
    saved = paper_save(user=user, paper=paper)
    client = _signed_in(user)
    url = f"/me/library/{saved.reading_list_id}"
    page = client.get(url).content.decode()
    assert "Notes &lt;b&gt;escaped&lt;/b&gt;" in page
    note_url = f"{url}/papers/{paper.pk}/note"
    answer = client.post(note_url, {"note": "<script>x</script> key lemma"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and "&lt;script&gt;" in answer.content.decode()
    saved.refresh_from_db()
    assert saved.note == "<script>x</script> key lemma"
    markdown = client.get(url, HTTP_ACCEPT="text/markdown").content.decode()
    assert "Note: " in markdown and "key lemma" in markdown
    too_long = client.post(note_url, {"note": "y" * (NOTE_MAX_CHARS + 1)}, HTTP_HX_REQUEST="true")
    assert too_long.status_code == 400
    client.post(f"{url}/papers/{paper.pk}/remove")
    assert not SavedPaper.objects.exists()


def test_another_readers_list_is_not_found(user_factory, paper_factory):
    owner, other = user_factory(), user_factory()
    saved = paper_save(user=owner, paper=paper_factory())
    client = _signed_in(other)
    base = f"/me/library/{saved.reading_list_id}"
    assert client.get(base).status_code == 404
    assert client.get(f"{base}/cite.bib").status_code == 404
    assert client.post(f"{base}/papers/{saved.paper_id}/note", {"note": "x"}).status_code == 404
    assert client.post(f"{base}/delete").status_code == 404
    assert client.post(f"{base}/share").status_code == 404
    assert SavedPaper.objects.filter(pk=saved.pk, note="").exists()


def test_a_list_of_two_thousand_papers_pages_in_bounded_queries(
    user_factory, django_assert_max_num_queries
):
    user = user_factory()
    reading_list = reading_list_default(user=user)
    papers_save(reading_list=reading_list, papers=_many_papers(2000))
    client = _signed_in(user)
    client.get("/me/library")
    with django_assert_max_num_queries(8):
        library = client.get("/me/library")
    assert "2,000 papers" in library.content.decode()
    with django_assert_max_num_queries(9):
        page = client.get(f"/me/library/{reading_list.pk}", {"page": 7})
    html = page.content.decode()
    assert html.count('class="saved-item"') == 50 and "Page 7 of 40" in html


def test_a_list_exports_as_bibtex_ris_and_csl_json(user_factory, paper_factory):
    user = user_factory()
    papers = [
        paper_factory(title="Deep sets", authors=["Manzil Zaheer", "Satwik Kottur"]),
        paper_factory(title="Set transformer", doi="10.5555/3327144", journal_ref="ICML (2019)"),
    ]
    theory = reading_list_create(user=user, name="Sets")
    for paper in papers:
        paper_save(user=user, paper=paper, reading_list=theory)
    client = _signed_in(user)
    bib = client.get(f"/me/library/{theory.pk}/cite.bib")
    assert bib["Content-Type"].startswith("application/x-bibtex")
    assert "private" in bib["Cache-Control"] and "public" not in bib["Cache-Control"]
    library = bibtexparser.parse_string(bib.content.decode())
    assert sorted(e.fields_dict["eprint"].value for e in library.entries) == sorted(
        p.arxiv_id for p in papers
    )
    ris = client.get(f"/me/library/{theory.pk}/cite.ris").content.decode()
    assert ris.count("ER  - ") == 2 and "DO  - 10.5555/3327144" in ris
    items = json.loads(client.get(f"/me/library/{theory.pk}/cite.json").content)
    assert {item["number"] for item in items} == {p.arxiv_id for p in papers}


# --- the shared page --------------------------------------------------------------------------


def test_the_shared_page_is_public_unindexed_and_shows_no_notes(
    user_factory, paper_factory, client
):
    owner = user_factory(email="owner-private@example.org")
    paper = paper_factory(title="A shared favourite")
    saved = paper_save(user=owner, paper=paper)
    saved_paper_note_set(saved=saved, note="my private thought")
    shared = reading_list_share(reading_list=saved.reading_list)
    response = client.get(f"/lists/shared/{shared.share_token}")
    html = response.content.decode()
    assert response.status_code == 200 and "A shared favourite" in html
    assert 'content="noindex, nofollow"' in html and "noindex" in response["X-Robots-Tag"]
    assert response["Referrer-Policy"] == "no-referrer"
    assert "no-store" in response["Cache-Control"]
    assert "my private thought" not in html and "owner-private" not in html
    markdown = client.get(f"/lists/shared/{shared.share_token}", HTTP_ACCEPT="text/markdown")
    assert "A shared favourite" in markdown.content.decode()
    bib = client.get(f"/lists/shared/{shared.share_token}/cite.bib").content.decode()
    assert paper.arxiv_id in bib and "my private thought" not in bib
    assert client.get("/lists/shared/not-a-real-token-but-long-enough").status_code == 404


# --- the account's export and deletion ------------------------------------------------------


def test_the_account_export_holds_the_library_and_deletion_removes_it(user_factory, paper_factory):
    user = user_factory()
    paper = paper_factory(title="Exported with its note")
    saved = paper_save(user=user, paper=paper)
    saved_paper_note_set(saved=saved, note="cite in chapter 2")
    reading_list_create(user=user, name="Empty one")
    data = account_data.user_export(user=user)
    assert [entry["name"] for entry in data["library"]] == ["Reading list", "Empty one"]
    (exported,) = data["library"][0]["papers"]
    assert exported["arxiv_id"] == paper.arxiv_id and exported["note"] == "cite in chapter 2"
    account_data.user_delete(user=user)
    assert not ReadingList.objects.exists() and not SavedPaper.objects.exists()
    assert Paper.objects.filter(pk=paper.pk).exists()


def test_the_library_shows_a_month_only_date_as_a_month(paper_factory, user_factory):
    """A paper dated by its identifier's month was listed as "1 Feb 2023", a day no source
    gives."""
    paper = paper_factory(
        published=datetime(2023, 2, 1, tzinfo=UTC), published_precision=PUBLISHED_MONTH
    )
    reader = user_factory()
    saved = paper_save(user=reader, paper=paper)
    page = _signed_in(reader).get(reverse("accounts:library_list", args=[saved.reading_list.pk]))
    html = page.content.decode()
    assert '<time datetime="2023-02"' in html and ">Feb 2023</time>" in html
    assert "1 Feb 2023" not in html
