"""The sites framework's record follows SITE_URL after every migrate, outside the demo too."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.sites.models import Site
from django.core.management import call_command


def test_the_site_record_is_the_site_url_after_migrate(db):
    # The test database was made by migrate: allauth's e-mails name this, not "example.com".
    assert Site.objects.get_current().domain == urlsplit(settings.SITE_URL).netloc
    Site.objects.filter(pk=settings.SITE_ID).update(domain="example.com", name="example.com")
    Site.objects.clear_cache()
    call_command("migrate", verbosity=0)
    current = Site.objects.get_current()
    assert (current.domain, current.name) == (urlsplit(settings.SITE_URL).netloc, "wovepaper")
