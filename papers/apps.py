from django.apps import AppConfig
from django.db.models.signals import post_save


class PapersConfig(AppConfig):
    name = "papers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .models import Paper
        from .search.postgres_documents import paper_saved_reindex

        post_save.connect(
            paper_saved_reindex, sender=Paper, dispatch_uid="papers.search_index_on_save"
        )
