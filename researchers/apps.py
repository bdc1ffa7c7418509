from django.apps import AppConfig


class ResearchersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "researchers"

    def ready(self):
        # Register the tasks by name in every process, so that other apps can send
        # "researchers.match_papers" by name (and eager runs find it) without importing us.
        from papers import registry

        from . import tasks  # noqa: F401
        from .models import Researcher

        registry.researcher_path = Researcher.path_for
