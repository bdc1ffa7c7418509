from __future__ import annotations

from django import forms

from wovepaper.lib.identifiers import CATEGORY_CODE


class ListNameForm(forms.Form):
    name = forms.CharField(max_length=100, strip=True, label="Name")


class NoteForm(forms.Form):
    # Long notes are refused by the service with its own message, not cut by the form.
    note = forms.CharField(required=False, strip=True, widget=forms.Textarea)


class SavedSearchForm(forms.Form):
    """A search as the search page's query string holds it (its `q`, `mode`, `category`,
    `date_from`, `date_to`): what "Save this search" saves."""

    q = forms.CharField(max_length=300, strip=True)
    mode = forms.ChoiceField(
        required=False,
        choices=[("hybrid", "hybrid"), ("keyword", "keyword"), ("semantic", "semantic")],
    )
    category = forms.RegexField(required=False, max_length=32, regex=f"^{CATEGORY_CODE}$")
    date_from = forms.DateField(required=False)
    date_to = forms.DateField(required=False)
