from django.apps import AppConfig


class WovepaperConfig(AppConfig):
    """Site-wide pieces (template tags, the demo command) that belong to no single app."""

    name = "wovepaper"
    label = "wovepaper"

    def ready(self) -> None:
        from django.apps import apps
        from django.contrib.auth.signals import user_logged_in
        from django.db.models.signals import post_migrate

        from . import checks  # noqa: F401  registers the system checks
        from .lib.pagecache import note_reader_signed_in
        from .page_invalidation import connect
        from .site_record import site_record_sync

        connect()
        user_logged_in.connect(note_reader_signed_in, dispatch_uid="pagecache-reader")
        # post_migrate is sent only for apps with models, which this one has not: the handler
        # hangs on the sites framework's, after its own (listed earlier, it connects first),
        # which makes "example.com".
        post_migrate.connect(site_record_sync, sender=apps.get_app_config("sites"))
