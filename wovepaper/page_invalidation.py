"""What makes cached public pages stale when a record is saved one at a time: the admin, the
curators' actions, follows. The bulk writers (harvest, import, matching, figures, statistics)
announce their changes themselves with `pages_changed`, since bulk writes send no signals."""

from __future__ import annotations

from django.db.models.signals import post_delete, post_save

from accounts.models import Claim, Follow, InstitutionFollow
from institutions.models import Institution
from papers.models import Paper
from researchers.models import CurationEntry, Researcher
from wovepaper.lib.pagecache import SITE, pages_changed

PAGE_KINDS = {Paper: "paper", Researcher: "researcher", Institution: "institution"}


def _record_changed(sender, instance, **kwargs) -> None:
    pages_changed(PAGE_KINDS[sender], [instance.pk])


def _follow_changed(sender, instance, **kwargs) -> None:
    # Follower counts are on the followed record's page.
    if sender is Follow:
        pages_changed("researcher", [instance.researcher_id])
    else:
        pages_changed("institution", [instance.institution_id])


def _identity_changed(sender, instance, **kwargs) -> None:
    # A merge, split, move or claim changes bylines and records across many pages at once.
    pages_changed(SITE)


def connect() -> None:
    for model in PAGE_KINDS:
        post_save.connect(_record_changed, sender=model, dispatch_uid=f"pages-{model.__name__}")
        post_delete.connect(
            _record_changed, sender=model, dispatch_uid=f"pages-del-{model.__name__}"
        )
    for model in (Follow, InstitutionFollow):
        post_save.connect(_follow_changed, sender=model, dispatch_uid=f"pages-{model.__name__}")
        post_delete.connect(
            _follow_changed, sender=model, dispatch_uid=f"pages-del-{model.__name__}"
        )
    for model in (CurationEntry, Claim):
        post_save.connect(_identity_changed, sender=model, dispatch_uid=f"pages-{model.__name__}")
