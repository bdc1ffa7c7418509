"""The database away: 503 with Retry-After, in the API's JSON shape under /api/, and a health
endpoint that names what is down. On PostgreSQL the connection is pointed at a port where
nothing listens, as when the server is stopped (SQLite has no server to lose)."""

from __future__ import annotations

import socket

import pytest
from django.db import connections
from django.test import Client


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # free once closed: nothing listens there


@pytest.fixture
def database_away(django_db_blocker):
    connection = connections["default"]
    with django_db_blocker.unblock():
        saved = dict(connection.settings_dict)
        connection.close()
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(_closed_port()))
        try:
            yield
        finally:
            connection.close()
            connection.settings_dict.clear()
            connection.settings_dict.update(saved)


@pytest.fixture
def client_seeing_errors():
    return Client(raise_request_exception=False)


@pytest.mark.postgres
@pytest.mark.parametrize("path", ["/", "/papers", "/researchers", "/search?q=graphs"])
def test_pages_answer_503_with_retry_after_when_the_database_is_away(
    database_away, client_seeing_errors, path
):
    response = client_seeing_errors.get(path)
    assert response.status_code == 503
    assert response["Retry-After"].isdigit()
    assert "briefly unavailable" in response.content.decode()
    assert "default-src" in response["Content-Security-Policy"]


@pytest.mark.postgres
def test_the_api_answers_in_its_json_shape_when_the_database_is_away(
    database_away, client_seeing_errors
):
    response = client_seeing_errors.get("/api/v1/papers/")
    assert response.status_code == 503 and response["Retry-After"].isdigit()
    assert response.json()["error"]["code"] == "unavailable"


@pytest.mark.postgres
def test_health_names_the_database_when_it_is_away(database_away, client_seeing_errors):
    response = client_seeing_errors.get("/health")
    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["database"].startswith("down") and body["checks"]["cache"] == "ok"


@pytest.mark.django_db
def test_health_is_ok_when_everything_answers(client):
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "cache": "ok"}}
    assert "no-store" in response["Cache-Control"]


def test_an_unexpected_api_failure_keeps_the_json_shape(rf):
    from wovepaper.health import server_error

    try:
        raise ValueError("a bug")
    except ValueError:
        response = server_error(rf.get("/api/v1/papers/"))
    assert response.status_code == 500 and b'"server_error"' in response.content
