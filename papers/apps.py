from django.apps import AppConfig
from django.db.models.signals import post_save


class PapersConfig(AppConfig):
    name = "papers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .indexing import paper_saved_reindex
        from .models import Paper

        post_save.connect(
            paper_saved_reindex, sender=Paper, dispatch_uid="papers.search_index_on_save"
        )
