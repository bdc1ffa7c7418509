"""A signed-in reader's own parts of a shared public page, served as one small htmx fragment.

The public pages (wovepaper.lib.pagecache) are rendered once for every signed-in reader, as an
anonymous reader sees them. While that shared body renders, each per-user part notes itself on
the request (`note_follow`, `note_claim`), and the end of the page carries one loader
(`loader_url`): a GET of `/me/fragments` naming those parts, fired by htmx once the page has
loaded. The fragment answers each part with an element of the same id marked `hx-swap-oob`, so
htmx puts it in place: the nav's and the footer's account links (with the sign-out form and its
CSRF token), each follow button (the reader's state, the count, a CSRF token), the "this is me"
button, and the chat dock. Nothing in the loader is the reader's: its URL is the same for every
signed-in reader of the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.http import HttpRequest, QueryDict
from django.template import Engine, RequestContext
from django.urls import reverse

from institutions.models import Institution
from researchers.models import Researcher
from wovepaper.lib.pagecache import rendering_shared_signed_in_page

from . import selectors

_NOTED = "_me_fragment_parts"
# A public page shows one record's buttons; the bound keeps a hand-made URL's queries bounded.
MAX_RECORDS = 10


@dataclass
class Parts:
    """The per-user parts a page holds, as its loader names them."""

    researchers: list[int] = field(default_factory=list)
    institutions: list[int] = field(default_factory=list)
    claims: list[int] = field(default_factory=list)
    scope: str = ""
    next_url: str = "/"


def _noted(request: HttpRequest) -> Parts:
    parts = getattr(request, _NOTED, None)
    if parts is None:
        parts = Parts()
        setattr(request, _NOTED, parts)
    return parts


def note_follow(request: HttpRequest | None, record: Researcher | Institution) -> None:
    """The shared page being rendered shows a follow button for `record`."""
    if request is None or not rendering_shared_signed_in_page(request):
        return
    parts = _noted(request)
    ids = parts.institutions if isinstance(record, Institution) else parts.researchers
    if record.pk not in ids:
        ids.append(record.pk)


def note_claim(request: HttpRequest | None, researcher: Researcher) -> None:
    if request is None or not rendering_shared_signed_in_page(request):
        return
    claims = _noted(request).claims
    if researcher.pk not in claims:
        claims.append(researcher.pk)


def loader_url(request: HttpRequest, *, chat_scope: str = "") -> str:
    """Where the shared page's loader asks for the reader's parts: the same for every reader."""
    parts = _noted(request)
    query: list[tuple[str, str | int]] = [("next", request.get_full_path())]
    query += [("r", pk) for pk in parts.researchers]
    query += [("i", pk) for pk in parts.institutions]
    query += [("claim", pk) for pk in parts.claims]
    if chat_scope:
        query.append(("scope", chat_scope))
    return f"{reverse('accounts:me_fragments')}?{urlencode(query)}"


def parts_from_query(query: QueryDict, *, next_url: str) -> Parts:
    def ids(name: str) -> list[int]:
        return [int(v) for v in query.getlist(name) if v.isdigit()][:MAX_RECORDS]

    return Parts(
        researchers=ids("r"),
        institutions=ids("i"),
        claims=ids("claim"),
        scope=query.get("scope", "")[:200],
        next_url=next_url,
    )


def render_parts(request: HttpRequest, parts: Parts) -> str:
    """The reader's parts as out-of-band swaps. Queries: the researchers and the institutions
    named (one each), follow counts and the reader's follows (two for the researchers, two per
    institution), the reader's claims (one), whether the setup is unfinished (one): at most
    6 + 2 × MAX_RECORDS, whatever the page."""
    user = request.user
    if not user.is_authenticated:  # nobody's parts (me_fragments answers 204 before this)
        return ""
    pieces: list[tuple[str, dict]] = [
        ("accounts/fragments/account_links.html", {}),
        ("includes/onboarding_banner.html", {"oob": True, "next_url": parts.next_url}),
    ]
    # Most pages (papers, lists, search) name no record: their fragment asks nothing of these.
    # The buttons show a name and act on an id: the rest of a record's row is not read.
    named = Researcher.objects.only("pk", "display_name", "slug").in_bulk(
        {*parts.researchers, *parts.claims}
    )
    researchers = [named[pk] for pk in parts.researchers if pk in named]
    if researchers:
        selectors.researchers_with_follow_state(researchers, user=user)
    institutions = (
        list(Institution.objects.filter(pk__in=parts.institutions)) if parts.institutions else []
    )
    records: list[Researcher | Institution] = [*researchers, *institutions]
    for record in records:
        context = selectors.follow_button_context(request, record, next_url=parts.next_url)
        pieces.append(("accounts/_follow_button.html", {**context, "oob": True}))
    if parts.claims:
        claims = {c.researcher_id: c for c in user.claims.filter(researcher_id__in=parts.claims)}
        for pk in parts.claims:
            if pk not in named:
                continue
            claim_context = {
                "researcher": named[pk],
                "signed_in": True,
                "claim": claims.get(pk),
                "next_url": parts.next_url,
                "oob": True,
            }
            pieces.append(("accounts/_claim_button.html", claim_context))
    pieces.append(("accounts/fragments/chat_dock.html", {"chat_scope": parts.scope}))
    return render_in_one_context(request, pieces)


def render_in_one_context(request: HttpRequest, pieces: list[tuple[str, dict]]) -> str:
    """Each (template, context) rendered in turn inside one request context. A separate
    `render_to_string` per piece would run every context processor (and build a CSRF token
    context) once per piece: on a fragment of a few small parts that was most of its time."""
    engine = Engine.get_default()
    templates = [(engine.get_template(name), extra) for name, extra in pieces]
    if not templates:
        return ""
    context = RequestContext(request)
    rendered = []
    # Binding the context to a template runs the processors; nested renders reuse that binding.
    with context.render_context.push_state(templates[0][0]), context.bind_template(templates[0][0]):
        for template, extra in templates:
            with context.push(extra):
                rendered.append(template.render(context))
    return "".join(rendered)
