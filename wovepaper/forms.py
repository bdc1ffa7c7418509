from __future__ import annotations

from django import forms

from wovepaper.lib.identifiers import CATEGORY_CODE_WHOLE

from .site_search import SiteSearch

SORTS = [
    ("relevance", "Best match"),
    ("newest", "Newest"),
    ("oldest", "Oldest"),
    ("cited", "Most cited"),
]
MODES = [
    ("hybrid", "Words and meaning"),
    ("keyword", "Words only"),
    ("semantic", "Meaning only"),
]
TABS = ["papers", "researchers", "institutions"]


class SearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=300, strip=True)
    tab = forms.ChoiceField(required=False, choices=[(t, t) for t in TABS])
    category = forms.CharField(required=False, max_length=32, strip=True)
    date_from = forms.DateField(required=False, label="From")
    date_to = forms.DateField(required=False, label="To")
    sort = forms.ChoiceField(required=False, choices=SORTS)
    mode = forms.ChoiceField(required=False, choices=MODES)

    def clean_category(self) -> str:
        code = self.cleaned_data.get("category", "")
        if code and not CATEGORY_CODE_WHOLE.match(code):
            raise forms.ValidationError("Use an arXiv category code such as cs.LG or hep-th.")
        return code

    def clean(self):
        data = super().clean() or {}
        start, end = data.get("date_from"), data.get("date_to")
        if start and end and start > end:
            self.add_error("date_to", "The end date comes before the start date.")
        return data

    def site_search(self) -> SiteSearch:
        """What a valid form asks for."""
        data = self.cleaned_data
        return SiteSearch(
            query=data.get("q", ""),
            tab=data.get("tab") or "papers",
            category=data.get("category", ""),
            date_from=data.get("date_from"),
            date_to=data.get("date_to"),
            sort=data.get("sort") or "relevance",
            mode=data.get("mode") or "hybrid",
        )
