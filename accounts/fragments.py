"""A signed-in reader's own parts of a shared public page, served as one small htmx fragment.

The public pages (wovepaper.lib.pagecache) are rendered once for every signed-in reader, as an
anonymous reader sees them. While that shared body renders, each per-user part notes itself on
the request (`note_follow`, `note_claim`), and the end of the page carries one loader
(`loader_url`): a GET of `/me/fragments` naming those parts, fired by htmx once the page has
loaded. The fragment answers each part with an element of the same id marked `hx-swap-oob`, so
htmx puts it in place: the nav's and the footer's account links (with the sign-out form and its
CSRF token), each follow button (the reader's state, the count, a CSRF token), the "this is me"
button, each paper's save control (on a paper page, and the slot of every paper list item, which
the papers app notes through wovepaper.lib.pagecache.note_reader_part), and the chat dock.
Nothing in the loader is the reader's: its URL is the same for every signed-in reader of the
page. A page rendered for one signed-in reader alone (a one-time message waiting, an unknown
query parameter) has its list items' save slots filled the same way, by a loader that asks for
the save controls only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.http import HttpRequest, QueryDict
from django.template import Engine, RequestContext
from django.urls import reverse

from institutions.models import Institution
from papers.models import Paper
from researchers.models import Researcher
from wovepaper.lib.pagecache import (
    note_reader_part,
    reader_parts,
    rendering_shared_signed_in_page,
)

from . import selectors

_NOTED = "_me_fragment_parts"
# A public page shows one record's buttons; the bound keeps a hand-made URL's queries bounded.
MAX_RECORDS = 10
# Save controls: a page lists at most this many papers (search and lists show 20 to 50).
MAX_PAPERS = 100


@dataclass
class Parts:
    """The per-user parts a page holds, as its loader names them."""

    researchers: list[int] = field(default_factory=list)
    institutions: list[int] = field(default_factory=list)
    claims: list[int] = field(default_factory=list)
    papers: list[int] = field(default_factory=list)
    scope: str = ""
    next_url: str = "/"
    # Only the save controls: the rest of a page rendered for its reader alone is theirs already.
    saves_only: bool = False


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


def note_save(request: HttpRequest | None, paper: Paper) -> None:
    """The page being rendered shows a save control for `paper`."""
    note_reader_part(request, "paper", paper.pk)


def loader_url(request: HttpRequest, *, chat_scope: str = "", saves_only: bool = False) -> str:
    """Where the page's loader asks for the reader's parts: the same for every reader."""
    parts = _noted(request)
    query: list[tuple[str, str | int]] = [("next", request.get_full_path())]
    if saves_only:
        query.append(("saves", 1))
    else:
        query += [("r", pk) for pk in parts.researchers]
        query += [("i", pk) for pk in parts.institutions]
        query += [("claim", pk) for pk in parts.claims]
    query += [("p", pk) for pk in reader_parts(request, "paper")[:MAX_PAPERS]]
    if chat_scope and not saves_only:
        query.append(("scope", chat_scope))
    return f"{reverse('accounts:me_fragments')}?{urlencode(query)}"


def papers_noted(request: HttpRequest) -> bool:
    return bool(reader_parts(request, "paper"))


def parts_from_query(query: QueryDict, *, next_url: str) -> Parts:
    def ids(name: str, bound: int = MAX_RECORDS) -> list[int]:
        return [int(v) for v in query.getlist(name) if v.isdigit()][:bound]

    return Parts(
        researchers=ids("r"),
        institutions=ids("i"),
        claims=ids("claim"),
        papers=ids("p", MAX_PAPERS),
        scope=query.get("scope", "")[:200],
        next_url=next_url,
        saves_only=query.get("saves") == "1",
    )


def render_parts(request: HttpRequest, parts: Parts) -> str:
    """The reader's parts as out-of-band swaps. Queries: the researchers and the institutions
    named (one each), follow counts and the reader's follows (two for the researchers, two per
    institution), the reader's claims (one), whether the setup is unfinished (one), and for the
    save controls the papers, the reader's lists and which papers they saved (three): at most
    9 + 2 × MAX_RECORDS, whatever the page."""
    user = request.user
    if not user.is_authenticated:  # nobody's parts (me_fragments answers 204 before this)
        return ""
    save_pieces = _save_controls(request, parts)
    if parts.saves_only:
        return render_in_one_context(request, save_pieces)
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
    return render_in_one_context(request, pieces + save_pieces)


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


def _save_controls(request: HttpRequest, parts: Parts) -> list[tuple[str, dict]]:
    if not parts.papers:
        return []
    named = Paper.objects.only("pk", "arxiv_id", "title").in_bulk(parts.papers)
    papers = [named[pk] for pk in parts.papers if pk in named]
    controls = selectors.save_controls(user=request.user, papers=papers, next_url=parts.next_url)
    return [("accounts/_save_button.html", {"control": c, "oob": True}) for c in controls]
