from __future__ import annotations

from typing import cast

from allauth.account.forms import SignupForm as AllauthSignupForm
from django import forms
from django.contrib.auth.hashers import make_password

from .categories import category_codes
from .models import Profile


def _clean_fields(values: list[str]) -> list[str]:
    known = category_codes()
    unknown = [v for v in values if v not in known]
    if unknown:
        raise forms.ValidationError(f"Unknown arXiv categories: {', '.join(unknown[:5])}")
    if len(values) > 20:
        raise forms.ValidationError("Choose at most 20 fields.")
    return values


class FieldsForm(forms.Form):
    # Choices are validated in clean_fields against the current category list, which can be long
    # and is not known at import time.
    # Named after what it holds (its POST parameter and the template's), though Form's own
    # `fields` is the instance's dict of fields: the metaclass moves this one into it.
    fields = forms.MultipleChoiceField(required=False)  # type: ignore[assignment]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choices = [(c, c) for c in sorted(category_codes())]
        self.fields["fields"].choices = choices  # type: ignore[index]  # the dict, as above

    def clean_fields(self) -> list[str]:
        return _clean_fields(self.cleaned_data["fields"])


class SettingsForm(FieldsForm):
    digest_frequency = forms.ChoiceField(
        choices=Profile.Digest.choices, widget=forms.RadioSelect, label="Digest email"
    )


class DeleteAccountForm(forms.Form):
    PHRASE = "delete my account"
    confirm = forms.CharField(label=f'Type "{PHRASE}" to confirm', max_length=64)

    def clean_confirm(self) -> str:
        value = self.cleaned_data["confirm"].strip().lower()
        if value != self.PHRASE:
            raise forms.ValidationError(f'Type "{self.PHRASE}" exactly to delete your account.')
        return value


class ClaimForm(forms.Form):
    message = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 4, "aria-describedby": "claim-help"}),
        label="What shows this is you (optional)",
        help_text="For the curators: a page of yours at your institution, an e-mail address "
        "there, your ORCID iD, papers here you wrote. Up to 2,000 characters.",
    )


class SignupForm(AllauthSignupForm):
    """allauth's sign-up, with the same work whether the address has an account or not.

    For a new address allauth hashes the password (the slow part, on purpose) and creates the
    account; for a taken one it only mails the owner, so the answer came ten times sooner and
    told which addresses have accounts. Hashing the given password on that path too makes both
    take the same time; the hash is thrown away.
    """

    def try_save(self, request):
        if self.account_already_exists:
            make_password(self.cleaned_data.get("password1"))
        return super().try_save(request)


REASON_HELP = "Shown in the page's public history."


class OwnerBylineForm(forms.Form):
    """One byline name the owner says is not theirs, or is theirs too."""

    authorship = forms.IntegerField(min_value=1)
    reason = forms.CharField(max_length=500, help_text=REASON_HELP)


class OwnerMergeForm(forms.Form):
    others = forms.TypedMultipleChoiceField(coerce=int, choices=[])
    reason = forms.CharField(max_length=500, help_text=REASON_HELP)

    def __init__(self, *args, records=(), **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["others"]).choices = [
            (r.pk, f"{r.display_name} #{r.pk}") for r in records
        ]


class OwnerProfileForm(forms.Form):
    """What the owner sets on their page; each field changed is one history entry."""

    display_name = forms.CharField(max_length=255, label="Name shown")
    institution = forms.TypedChoiceField(
        coerce=int, empty_value=None, required=False, label="Current affiliation"
    )
    ror_id = forms.CharField(
        max_length=64,
        required=False,
        label="or its ROR id",
        help_text="Any institution we hold.",
    )
    homepage = forms.URLField(max_length=500, required=False, assume_scheme="https")
    hidden = forms.BooleanField(
        required=False,
        label="Leave my page out of the researcher lists and search",
        help_text="Your page, papers and bylines stay public.",
    )
    reason = forms.CharField(max_length=500, help_text=REASON_HELP)

    def __init__(self, *args, institutions=(), **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["institution"]).choices = [
            ("", "As on my newest paper")
        ] + [(i.pk, i.name) for i in institutions]
        # The example is one we hold (one on the owner's bylines), never an id we may not.
        example = next((i for i in institutions if i.ror_id), None)
        if example is not None:
            example_url = f"https://ror.org/{example.ror_id}"
            self.fields[
                "ror_id"
            ].help_text = f"Any institution we hold, e.g. {example_url} ({example.name})."
