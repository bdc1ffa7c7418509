"""Absurd numbers and dates from a request get a clear answer, never a 500 (lib.bounds)."""

from __future__ import annotations

import pytest

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
