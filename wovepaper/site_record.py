"""The sites framework's record agrees with SITE_URL, the site's one canonical address.

allauth's e-mails name the current Site ("example.com" by default); SITE_URL is what every
canonical link, feed and API answer uses. After every migrate the Site row is set from it.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

SITE_NAME = "wovepaper"


def site_record_sync(**_signal) -> None:
    """Set the Site row's domain from SITE_URL and its name to the site's. Idempotent."""
    from django.contrib.sites.models import Site

    domain = urlsplit(settings.SITE_URL).netloc or "localhost"
    Site.objects.update_or_create(
        pk=settings.SITE_ID, defaults={"domain": domain, "name": SITE_NAME}
    )
    Site.objects.clear_cache()
