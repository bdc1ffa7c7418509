from django.apps import AppConfig


class InstitutionsConfig(AppConfig):
    name = "institutions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from papers import registry

        from . import selectors

        registry.authorship_institutions = selectors.authorship_institutions_of_paper
        registry.institution_paper_ids = selectors.institution_paper_ids
