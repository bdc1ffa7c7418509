"""Sign-in limits count per reader, not per load balancer."""

from __future__ import annotations

from django.test import RequestFactory, override_settings

from accounts.adapter import AccountAdapter


def _request(**meta):
    return RequestFactory().post("/accounts/login/", REMOTE_ADDR="10.0.0.9", **meta)


def test_behind_a_trusted_proxy_the_reader_is_the_forwarded_address(settings):
    trusted = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    with override_settings(REST_FRAMEWORK=trusted):
        adapter = AccountAdapter()
        one = adapter.get_client_ip(_request(HTTP_X_FORWARDED_FOR="198.51.100.7"))
        other = adapter.get_client_ip(_request(HTTP_X_FORWARDED_FOR="203.0.113.5"))
    assert (one, other) == ("198.51.100.7", "203.0.113.5")


def test_without_trusted_proxies_a_forwarded_header_is_ignored(settings):
    untrusted = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 0}
    with override_settings(REST_FRAMEWORK=untrusted):
        ip = AccountAdapter().get_client_ip(_request(HTTP_X_FORWARDED_FOR="198.51.100.7"))
    assert ip == "10.0.0.9"


def test_a_forged_chain_cannot_pick_its_own_address(settings):
    trusted = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    with override_settings(REST_FRAMEWORK=trusted):
        # The proxy appends the address it saw; what the client wrote before it is not trusted.
        ip = AccountAdapter().get_client_ip(_request(HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7"))
    assert ip == "198.51.100.7"
