from django.apps import AppConfig


class ResearchersConfig(AppConfig):
    name = "researchers"
    default_auto_field = "django.db.models.BigAutoField"
