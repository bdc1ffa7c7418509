"""The reader's profile: made at sign-up (or on first use), and the fields and digest it sets."""

from __future__ import annotations

from django.contrib.auth.models import User

from .models import Profile


def profile_get_or_create(*, user: User) -> Profile:
    """The user's profile. Users made outside sign-up (e.g. createsuperuser) get one on first use,
    marked as onboarded, because nobody asked them to onboard."""
    profile, _ = Profile.objects.get_or_create(
        user=user, defaults={"onboarding": Profile.Onboarding.COMPLETED}
    )
    return profile


def profile_create_for_signup(*, user: User) -> Profile:
    """A new user's profile, with onboarding pending. Idempotent."""
    profile, _ = Profile.objects.get_or_create(user=user)
    return profile


def profile_set_fields(*, profile: Profile, fields: list[str]) -> Profile:
    # Order kept as chosen, duplicates dropped.
    profile.fields = list(dict.fromkeys(fields))
    profile.save(update_fields=["fields", "modified_at"])
    return profile


def profile_set_digest(*, profile: Profile, frequency: str) -> Profile:
    if frequency not in Profile.Digest.values:
        raise ValueError(f"unknown digest frequency {frequency!r}")
    profile.digest_frequency = frequency
    profile.save(update_fields=["digest_frequency", "modified_at"])
    return profile
