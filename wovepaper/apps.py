from django.apps import AppConfig


class WovepaperConfig(AppConfig):
    """Site-wide pieces (template tags, the demo command) that belong to no single app."""

    name = "wovepaper"
    label = "wovepaper"

    def ready(self) -> None:
        from . import checks  # noqa: F401  registers the system checks
        from .page_invalidation import connect

        connect()
