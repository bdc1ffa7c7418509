"""Every admin form stays bounded whatever the data size: no relation is offered as a <select>
of every row of a big table (a researcher's page once rendered all 3,500 papers, 430 KB)."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.contrib.sites.models import Site
from django.test import RequestFactory

# Tables that stay small by nature: a choice of every row is what a curator needs.
SMALL_TABLES = {Group, Permission, ContentType, Site}


def _offenders(model_admin, request) -> list[str]:
    found = []
    if isinstance(model_admin, admin.options.InlineModelAdmin):
        formset = model_admin.get_formset(request, obj=None)
        form = formset.form
        # An inline's link to its parent is set by the formset, never chosen.
        model_admin._parent_fk = formset.fk
    else:
        form = model_admin.get_form(request, obj=None)
    parent_link = getattr(getattr(model_admin, "_parent_fk", None), "name", None)
    for name, field in form.base_fields.items():
        if not isinstance(field, forms.ModelChoiceField) or name == parent_link:
            continue
        widget = field.widget
        widget = getattr(widget, "widget", widget)  # RelatedFieldWidgetWrapper
        if isinstance(widget, forms.HiddenInput | admin.widgets.ForeignKeyRawIdWidget):
            continue
        if isinstance(
            widget, admin.widgets.ManyToManyRawIdWidget | admin.widgets.AutocompleteMixin
        ):
            continue
        if field.queryset.model in SMALL_TABLES:
            continue
        found.append(f"{type(model_admin).__name__}.{name} → {field.queryset.model.__name__}")
    return found


def test_no_admin_form_offers_every_row_of_a_big_table(admin_user):
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    offenders = []
    for model_admin in admin.site._registry.values():
        offenders += _offenders(model_admin, request)
        for inline in model_admin.get_inline_instances(request):
            offenders += _offenders(inline, request)
    assert offenders == [], "\n".join(offenders)


def test_a_researcher_with_many_papers_has_a_small_change_page(
    admin_client, paper_factory, django_assert_max_num_queries
):
    from researchers.models import Researcher

    papers = [paper_factory(authors=["Ada Lovelace"]) for _ in range(120)]
    researcher = Researcher.objects.create(
        display_name="Ada Lovelace", name_key="lovelace a", most_cited_paper=papers[0]
    )
    with django_assert_max_num_queries(40):
        response = admin_client.get(f"/admin/researchers/researcher/{researcher.pk}/change/")
    assert response.status_code == 200
    page = response.content.decode()
    assert len(page) < 60_000
    assert sum(paper.title in page for paper in papers[1:]) == 0
