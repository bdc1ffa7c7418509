from django.apps import AppConfig


class WovepaperConfig(AppConfig):
    """Site-wide pieces (template tags, the demo command) that belong to no single app."""

    name = "wovepaper"
    label = "wovepaper"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from . import checks  # noqa: F401  registers the system checks
        from .page_invalidation import connect
        from .site_record import site_record_sync

        connect()
        # After the sites framework's own post_migrate, which makes "example.com".
        post_migrate.connect(site_record_sync, sender=self)
