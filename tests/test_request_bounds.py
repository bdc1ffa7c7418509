"""Absurd numbers and dates from a request get a clear answer, never a 500 (lib.bounds)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from wovepaper.lib.bounds import day_after, whole_number


def test_the_last_day_there_is_searches_to_the_end(client, paper_factory):
    paper_factory(title="Graphs without end")
    response = client.get("/search", {"q": "graphs", "date_to": "9999-12-31"})
    assert response.status_code == 200
    assert "Graphs without end" in response.content.decode()
    api = client.get("/api/v1/papers/", {"published_to": "9999-12-31"})
    assert api.status_code == 200
    search = client.get("/api/v1/search/papers/", {"q": "graphs", "published_to": "9999-12-31"})
    assert search.status_code == 200


@pytest.mark.parametrize("size", ["9" * 5000, "1" * 19, "0", "-1", "１２"])
def test_an_impossible_page_size_is_a_400_in_the_api_error_shape(client, size):
    response = client.get("/api/v1/papers/", {"page_size": size})
    assert response.status_code == 400
    assert "page_size" in response.json()["error"]["fields"]


def test_a_page_number_of_thousands_of_digits_is_page_one(client, paper_factory):
    paper = paper_factory(title="First page")
    response = client.get("/papers", {"page": "9" * 5000})
    assert response.status_code == 200
    assert paper.get_absolute_url() in response.content.decode()


def test_whole_numbers_and_day_after():
    from datetime import date

    assert whole_number("42", minimum=1, maximum=100) == 42
    assert whole_number("0", minimum=1) is None
    assert whole_number("9" * 19) is None
    assert whole_number(" 4") is None and whole_number("٤") is None and whole_number(None) is None
    assert day_after(date(2026, 12, 31)) == date(2027, 1, 1)
    assert day_after(date.max) is None and day_after(None) is None


def test_a_body_past_the_limit_is_refused_from_its_length_before_it_is_read(
    client, django_user_model, settings
):
    # Django reads an uploaded file whole (to memory, then to disk) before a view can look at
    # its size: a 60 MB import was read through before it was said to be too large.
    user = django_user_model.objects.create_user("big", "big@example.org", "pw-12345678")
    client.force_login(user)
    refused_at = settings.REQUEST_MAX_BODY_BYTES + 1

    def upload() -> SimpleUploadedFile:
        return SimpleUploadedFile("library.bib", b"%" * refused_at)

    page = client.post("/me/library/1/import", {"file": upload()})
    assert page.status_code == 413
    assert "larger than 6 MB" in page.content.decode()
    api = client.post("/api/v1/me/lists/", {"file": upload()})
    assert api.status_code == 413 and api.json()["error"]["code"] == "too_large"
    # Under the limit the route answers as it would (a list that is not the reader's: 404).
    small = SimpleUploadedFile("library.bib", b"%" * 1000)
    assert client.post("/me/library/1/import", {"file": small}).status_code == 404
