from allauth.account.apps import AccountConfig
from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"
    # This module holds a second AppConfig (below): Django needs to be told which is ours.
    default = True
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Follows and claims move with researcher merges and come back with splits.
        from researchers.curation.decisions import merge_participant_register

        # Register the tasks by name in every process, so that a page can hand an import to
        # "accounts.library_import_run" (and an eager run finds it) without importing them.
        from . import tasks  # noqa: F401
        from .researcher_merges import PARTICIPANT

        merge_participant_register(PARTICIPANT)


class SignInConfig(AccountConfig):
    """allauth's account app under its own admin heading: both apps are called "Accounts" by
    default, which made two "Accounts" sections in the admin."""

    verbose_name = "Sign-in"
