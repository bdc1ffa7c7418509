from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

pytestmark = pytest.mark.django_db


@override_settings(API_THROTTLE_RATES={"anon": "3/minute", "user": "5/minute"})
def test_anonymous_clients_are_limited_per_ip_with_retry_after(api, world):
    for _ in range(3):
        assert api.get("/api/v1/papers/").status_code == 200
    response = api.get("/api/v1/papers/")
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 60
    error = response.json()["error"]
    assert error["code"] == "throttled" and error["retry_after"] == int(response["Retry-After"])
    # Another address has its own allowance.
    assert api.get("/api/v1/papers/", REMOTE_ADDR="10.1.2.3").status_code == 200


@override_settings(API_THROTTLE_RATES={"anon": "3/minute", "user": "5/minute"})
def test_signed_in_users_are_limited_per_account_not_per_ip(api, world):
    user = get_user_model().objects.create_user("reader", password="a long passphrase")
    api.force_login(user)
    for i in range(5):
        assert api.get("/api/v1/papers/", REMOTE_ADDR=f"10.0.0.{i}").status_code == 200
    response = api.get("/api/v1/papers/", REMOTE_ADDR="10.9.9.9")
    assert response.status_code == 429 and response.has_header("Retry-After")


@override_settings(API_THROTTLE_RATES={"anon": "2/minute", "user": "5/minute"})
def test_forwarded_for_header_cannot_dodge_the_limit(api, world):
    for i in range(2):
        api.get("/api/v1/papers/", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}")
    response = api.get("/api/v1/papers/", HTTP_X_FORWARDED_FOR="192.0.2.99")
    assert response.status_code == 429
