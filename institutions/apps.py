from django.apps import AppConfig


class InstitutionsConfig(AppConfig):
    name = "institutions"
    default_auto_field = "django.db.models.BigAutoField"
