"""The setup a new reader is offered: where they are in it, skipping it and coming back, and the
researchers it suggests to follow from the fields they chose."""

from __future__ import annotations

from collections import Counter

from django.contrib.auth.models import User

from papers.models import Authorship, PaperCategory
from researchers.models import Researcher

from .models import Profile

# How many of the newest papers in the chosen fields suggestions look at: enough to find the
# active researchers, few enough that the query is one short index range scan per field.
SUGGESTION_PAPER_WINDOW = 400


def onboarding_advance(*, profile: Profile, step: str) -> Profile:
    """Remember the step to resume at."""
    profile.onboarding_step = step
    profile.save(update_fields=["onboarding_step", "modified_at"])
    return profile


def onboarding_skip(*, profile: Profile) -> Profile:
    """Stop sending the user to onboarding; the step is kept so they can come back to it."""
    if profile.onboarding != Profile.Onboarding.COMPLETED:
        profile.onboarding = Profile.Onboarding.SKIPPED
        profile.save(update_fields=["onboarding", "modified_at"])
    return profile


def onboarding_resume(*, profile: Profile) -> Profile:
    """A user who skipped comes back: onboarding is pending again at the step they left."""
    if profile.onboarding == Profile.Onboarding.SKIPPED:
        profile.onboarding = Profile.Onboarding.PENDING
        profile.save(update_fields=["onboarding", "modified_at"])
    return profile


def onboarding_complete(*, profile: Profile) -> Profile:
    profile.onboarding = Profile.Onboarding.COMPLETED
    profile.onboarding_step = Profile.Step.FIELDS
    profile.save(update_fields=["onboarding", "onboarding_step", "modified_at"])
    return profile


def onboarding_pending(*, user: User) -> bool:
    return Profile.objects.filter(user=user, onboarding=Profile.Onboarding.PENDING).exists()


def researchers_suggested(
    *, fields: list[str], exclude_ids: list[int] | None = None, limit: int = 12
) -> list[Researcher]:
    """Researchers active in the user's fields: the authors of the newest papers in those
    categories, ranked by how many of those papers they wrote, then by papers here.

    One short index range scan per field (PaperCategory code, published; at most 20 fields),
    then one query for their matched authorships and one for the researchers."""
    if not fields:
        return []
    per_field = max(SUGGESTION_PAPER_WINDOW // len(fields), 50)
    paper_ids: set[int] = set()
    for code in fields[:20]:
        paper_ids.update(
            PaperCategory.objects.filter(code=code)
            .order_by("-published")
            .values_list("paper_id", flat=True)[:per_field]
        )
    if not paper_ids:
        return []
    counts = Counter(
        Authorship.objects.filter(paper_id__in=paper_ids, researcher__isnull=False).values_list(
            "researcher_id", flat=True
        )
    )
    for rid in exclude_ids or []:
        counts.pop(rid, None)
    if not counts:
        return []
    candidates = [rid for rid, _ in counts.most_common(limit * 4)]
    researchers = Researcher.objects.filter(
        pk__in=candidates, merged_into__isnull=True, is_person=True
    )
    ranked = sorted(researchers, key=lambda r: (-counts[r.pk], -r.paper_count, r.pk))
    return ranked[:limit]
