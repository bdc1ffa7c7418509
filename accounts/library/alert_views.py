"""Saved searches: save one from the search page, list and delete them, and the reader's
private alert feed (Atom and RSS at a secret URL the reader can reset)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.syndication.views import Feed
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.feedgenerator import Atom1Feed
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from papers.archive_time import archive_time
from papers.models import Paper, PaperChange
from wovepaper.lib.api.redirects import site_url
from wovepaper.lib.negotiation import render_page
from wovepaper.lib.queueing import send_after_commit
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from . import alerts
from . import saved_searches as saving
from .forms import SavedSearchForm
from .models import SavedSearch, SearchAlert


def _terms(form: SavedSearchForm) -> saving.SearchTerms:
    data = form.cleaned_data
    return saving.SearchTerms(
        query=data.get("q", ""),
        mode=data.get("mode") or "hybrid",
        category=data.get("category", ""),
        date_from=data.get("date_from"),
        date_to=data.get("date_to"),
    )


@login_required
@require_http_methods(["GET", "POST"])
def saved_searches(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The reader's saved searches with their newest alerts and the feed's URLs. A GET with a
    search's parameters (the search page's "Save this search" link) offers to save it; the POST
    saves it."""
    source = request.POST if request.method == "POST" else request.GET
    form = SavedSearchForm(source) if source.get("q") else None
    if request.method == "POST":
        if form is None or not form.is_valid():
            messages.error(request, "There is no search to save: search for some words first.")
            return redirect("accounts:saved_searches")
        try:
            saved = saving.saved_search_create(user=request.user, terms=_terms(form))
        except saving.SavedSearchError as exc:
            messages.error(request, str(exc))
        else:
            # Checked at once, not at the next hourly sweep: the reader sees what it finds.
            send_after_commit("accounts.tasks.check_saved_search", saved.pk)
            messages.success(
                request,
                f"Saved {saving.saved_search_label(saved)}: the papers it finds show below, on "
                "Following, in your digest and in your alert feed.",
            )
        return redirect("accounts:saved_searches")
    offered = None
    if form is not None and form.is_valid():
        terms = _terms(form)
        offered = SavedSearch(
            query=terms.query,
            mode=terms.mode,
            category=terms.category,
            date_from=terms.date_from,
            date_to=terms.date_to,
        )
    searches = saving.saved_searches_for_user(user=request.user)
    groups = alerts.alerts_grouped(alerts.alerts_for_user(user=request.user))
    token = alerts.alert_feed_token(user=request.user)
    context = {
        "searches": [(s, saving.saved_search_label(s)) for s in searches],
        "groups": groups,
        "offered": offered,
        "offered_label": saving.saved_search_label(offered) if offered else "",
        "offered_query": source.urlencode() if offered else "",
        "max_searches": saving.SAVED_SEARCH_MAX,
        "schedule": alerts.check_schedule(),
        "clock": archive_time(),
        "atom_url": request.build_absolute_uri(reverse("accounts:alert_feed_atom", args=[token])),
        "rss_url": request.build_absolute_uri(reverse("accounts:alert_feed_rss", args=[token])),
    }
    response = render_page(request, "accounts/library/saved_searches", context)
    patch_cache_control(response, private=True, no_store=True)
    return response


@login_required
@require_POST
def saved_search_delete(request: AuthenticatedHttpRequest, search_id: int) -> HttpResponse:
    saved = SavedSearch.objects.filter(user=request.user, pk=search_id).first()
    if saved is None:
        raise Http404("no such saved search of yours")
    saving.saved_search_delete(saved=saved)
    messages.success(request, f"Deleted {saving.saved_search_label(saved)} and its alerts.")
    return redirect("accounts:saved_searches")


@login_required
@require_POST
def alert_feed_reset(request: AuthenticatedHttpRequest) -> HttpResponse:
    alerts.alert_feed_token_reset(user=request.user)
    messages.success(request, "Your alert feed has a new address; the old one no longer works.")
    return redirect("accounts:saved_searches")


def search_url(saved: SavedSearch) -> str:
    """The search page that shows what a saved search asks."""
    query = {"q": saved.query, "mode": saved.mode}
    if saved.category:
        query["category"] = saved.category
    if saved.date_from:
        query["date_from"] = saved.date_from.isoformat()
    if saved.date_to:
        query["date_to"] = saved.date_to.isoformat()
    return f"/search?{urlencode(query)}"


# The category of the feed's news entries, beside each search's own.
NEWS_CATEGORY = "News of papers you keep"


class AlertFeed(Feed):
    """The reader's newest alerts, each titled with the search that found it, and the news of
    the papers they keep or follow, each titled with what changed. The URL is the secret:
    anyone holding it reads the feed, as feed readers cannot sign in."""

    description_template = "accounts/library/alert_feed_item.html"
    route = "accounts:alert_feed_rss"

    def get_object(self, request: HttpRequest, token: str):
        user = alerts.alert_feed_user(token=token)
        if user is None:
            raise Http404("no alert feed at this address")
        return user

    def __call__(self, request, *args, **kwargs):
        response = super().__call__(request, *args, **kwargs)
        response["X-Robots-Tag"] = "noindex"
        patch_cache_control(response, private=True, max_age=300)
        return response

    def title(self, user) -> str:
        return "wovepaper: new papers for your saved searches, news of papers you keep"

    def link(self, user) -> str:
        return site_url(reverse("accounts:saved_searches"))

    def feed_url(self, user) -> str:
        # The feed's own address on the public origin (SITE_URL), not the Sites framework's.
        return site_url(reverse(self.route, args=[user.profile.alert_feed_token]))

    def description(self, user) -> str:
        return (
            "New papers found by the searches you saved on wovepaper, and new versions, "
            "withdrawals and publications of papers in your lists or by researchers you "
            "follow, newest first."
        )

    def items(self, user) -> list[SearchAlert | PaperChange]:
        return alerts.alert_feed_entries(user=user)

    def item_title(self, item: SearchAlert | PaperChange) -> str:
        if isinstance(item, PaperChange):
            return f"{item.paper.title}: {item.announcement}"
        return f"[{saving.saved_search_label(item.saved_search)}] {item.paper.title}"

    def item_link(self, item: SearchAlert | PaperChange) -> str:
        return site_url(item.paper.get_absolute_url())

    def item_guid(self, item: SearchAlert | PaperChange) -> str:
        # One entry per alert or announcement, though several may link to one paper: an id of
        # its own, a URL of the site's (Atom's <id> must be an IRI) that is not the entry's link.
        kind = "news" if isinstance(item, PaperChange) else "alert"
        return site_url(f"{reverse('accounts:saved_searches')}#{kind}-{item.pk}")

    def item_guid_is_permalink(self, item: SearchAlert | PaperChange) -> bool:
        return False

    def item_pubdate(self, item: SearchAlert | PaperChange):
        return item.recorded_at if isinstance(item, PaperChange) else item.found_at

    def item_updateddate(self, item: SearchAlert | PaperChange):
        return self.item_pubdate(item)

    def item_author_name(self, item: SearchAlert | PaperChange) -> str:
        return item.paper.authors[:200]

    def item_categories(self, item: SearchAlert | PaperChange) -> list[str]:
        if isinstance(item, PaperChange):
            return [NEWS_CATEGORY]
        return [saving.saved_search_label(item.saved_search)]

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        item = kwargs["item"]
        context["paper"] = item.paper if isinstance(item.paper, Paper) else None
        if isinstance(item, PaperChange):
            context["change"] = item
        else:
            context["search_url"] = search_url(item.saved_search)
        return context


class AlertAtomFeed(AlertFeed):
    feed_type = Atom1Feed
    route = "accounts:alert_feed_atom"
    subtitle = AlertFeed.description


alert_feed_rss = require_GET(AlertFeed())
alert_feed_atom = require_GET(AlertAtomFeed())
