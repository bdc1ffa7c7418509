from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Follows and claims move with researcher merges and come back with splits.
        from researchers.curation import merge_participant_register

        from .curation import PARTICIPANT

        merge_participant_register(PARTICIPANT)
