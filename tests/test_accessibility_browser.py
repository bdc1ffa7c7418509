"""Every page template against WCAG 2.1 A/AA, checked by axe-core in Debian's Chromium (#47).

axe-core comes from the `axe-playwright-python` wheel (the `dev` extra); nothing is fetched at
run time. Each page is loaded at 1280 and 390 px, signed out and signed in (a reader who is a
verified researcher with a reading list, and a new reader who has not finished onboarding), over
a small world that shows each part of the site: a co-author graph, TeX titles as MathML, the
researcher and institution tables, the forms (sign-in, sign-up, onboarding, the owner's page,
the library), the chat, search results, /developers. axe runs the rules tagged wcag2a, wcag2aa,
wcag21a and wcag21aa, and the best-practice rules landmark-unique (named in issue 47) and
heading-order; any violation fails the test, listed with the pages it is on. The site's
Content-Security-Policy stays on: axe is injected through the DevTools protocol, which the
policy does not govern.

A second test measures the layout shift of / on a phone (PerformanceObserver, buffered
'layout-shift' entries): the folded menu must lay out before the first paint. A third checks
that a researcher's and an institution's page lay out on a phone in the page's own order, and
keep their heading and side cards in the left column on a wide screen.
"""

from __future__ import annotations

import itertools

import pytest
from allauth.account.models import EmailAddress
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth import get_user_model

from accounts.digests import unsubscribe_token
from accounts.follows import researcher_follow
from accounts.library.lists import paper_save, reading_list_share
from accounts.models import Profile
from accounts.ownership.claims import researcher_claim
from accounts.ownership.reviews import claim_review
from chat.answers import answer_whole, ask
from institutions.models import AuthorshipInstitution, Institution
from researchers.models import Researcher
from researchers.names import name_key
from researchers.page_figures import researchers_update_stats
from tests.accounts.conftest import _fast_passwords, _fresh_cache  # noqa: F401
from tests.conftest import ARTIFACTS, session_cookie

WIDTHS = (1280, 390)
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
    # Best practice, not WCAG: the issue's own finding, and the one other best-practice rule
    # any page here broke (the shared list's papers came right under its h1), kept fixed.
    "rules": {"landmark-unique": {"enabled": True}, "heading-order": {"enabled": True}},
    "resultTypes": ["violations"],
}
# Rules axe must have run on every page, so a page checked by nothing cannot pass.
MUST_RUN = {
    "color-contrast",
    "nested-interactive",
    "scrollable-region-focusable",
    "landmark-unique",
    "heading-order",
}

COAUTHORS = [
    "Maria Keldysh",
    "Jonas Pettersen",
    "Li Wenjun",
    "Amara Okafor",
    "Pedro Alvarez",
    "Sofia Rinaldi",
    "Kenji Watanabe",
    "Nadia Haddad",
]


def _researcher(name: str, **fields) -> Researcher:
    return Researcher.objects.create(display_name=name, name_key=name_key(name), **fields)


def _reader(username: str, onboarding: str):
    user = get_user_model().objects.create_user(
        username, f"{username}@example.org", "a-long-pass-9"
    )
    EmailAddress.objects.create(user=user, email=user.email, primary=True, verified=True)
    Profile.objects.create(user=user, onboarding=onboarding, fields=["math.RA"])
    return user


@pytest.fixture
def world(transactional_db, paper_factory, settings):
    """Papers with TeX in their titles, a researcher with a co-author graph and an institution,
    a verified owner with a shared reading list and a conversation with the papers (answered
    by quoting them: no model), and a reader new to the site."""
    settings.LLM_BASE_URL = ""
    settings.LLM_MODEL = ""
    hub = _researcher("Hana Graded")
    records = {name: _researcher(name) for name in COAUTHORS}
    ring = itertools.cycle(COAUTHORS)
    inst = Institution.objects.create(name="Centre for Graded Algebra", country_code="FR")
    papers = []
    for n in range(8):
        paper = paper_factory(
            title=f"Joint work number {n} on $\\mathbb{{Z}}_{n + 2}$-graded modules",
            abstract="We show that every $\\mathbb{Z}_2$-graded module over the ring "
            "$R = k[x]/(x^2)$ splits. The proof uses spectral sequences.",
            authors=["Hana Graded", next(ring), next(ring), next(ring)],
            categories=["math.RA", "math.CT"],
        )
        for a in paper.authorships.all():
            a.researcher = hub if a.position == 1 else records[a.name]
            a.save(update_fields=["researcher"])
            AuthorshipInstitution.objects.create(authorship=a, institution=inst, paper=paper)
        papers.append(paper)
    researchers_update_stats([hub.pk, *(r.pk for r in records.values())])
    Institution.objects.filter(pk=inst.pk).update(paper_count=len(papers))
    hub.refresh_from_db()

    owner = _reader("owner", Profile.Onboarding.COMPLETED)
    claim_review(claim=researcher_claim(user=owner, researcher=hub), reviewer=None, confirm=True)
    for paper in papers[:3]:
        saved = paper_save(user=owner, paper=paper)
    shared = reading_list_share(reading_list=saved.reading_list)
    researcher_follow(user=owner, researcher=records[COAUTHORS[0]])
    conversation, answer = ask(owner, "Which graded modules split over the ring k[x]/(x^2)?")
    assert answer_whole(answer).citations
    newcomer = _reader("newcomer", Profile.Onboarding.PENDING)
    return {
        "hub": hub,
        "coauthor": records[COAUTHORS[0]],
        "inst": inst,
        "paper": papers[0],
        "list": shared,
        "owner": owner,
        "conversation": conversation,
        "newcomer": newcomer,
    }


def _signed_out_pages(w) -> list[str]:
    paper = w["paper"].get_absolute_url()
    return [
        "/",
        "/search?q=graded+modules&mode=keyword",
        "/search?q=Keldysh&mode=keyword",
        "/search?q=zzzqqq+nothing&mode=keyword",
        "/papers",
        paper,
        f"/papers/{w['paper'].arxiv_id}/references",
        f"/papers/{w['paper'].arxiv_id}/cited-by",
        w["hub"].get_absolute_url(),
        w["coauthor"].get_absolute_url(),
        "/researchers",
        "/conflicts",
        "/institutions",
        w["inst"].get_absolute_url(),
        "/categories/math.RA",
        "/about",
        "/contact",
        "/privacy",
        "/developers",
        "/no-such-page",
        f"/lists/shared/{w['list'].share_token}",
        "/accounts/login/",
        "/accounts/signup/",
        "/accounts/password/reset/",
        f"/digest/unsubscribe/{unsubscribe_token(user_id=w['owner'].pk)}",
    ]


def _owner_pages(w) -> list[str]:
    return [
        "/",
        w["paper"].get_absolute_url(),
        w["hub"].get_absolute_url(),
        "/search?q=graded+modules&mode=keyword",
        f"/me/researchers/{w['hub'].pk}",
        "/me/library",
        f"/me/library/{w['list'].pk}",
        "/me/library/not-relevant",
        "/me/searches",
        "/me/digest",
        "/following",
        "/following/researchers",
        "/accounts/",
        "/accounts/email/",
        "/accounts/password/change/",
        "/accounts/delete/",
        "/accounts/3rdparty/",
        "/chat",
        w["conversation"].get_absolute_url(),
    ]


def _newcomer_pages(w) -> list[str]:
    return [
        "/chat",
        "/onboarding/fields",
        "/onboarding/fields?q=math",
        "/onboarding/researchers",
        "/onboarding/researchers?q=Keldysh",
        "/onboarding/claim",
        f"/following/researchers/{w['hub'].pk}/claim",
        "/categories/math.RA",
    ]


def _axe_violations(axe: Axe, page) -> list[str]:
    """What axe finds on `page` as it stands: one line per rule and element."""
    results = axe.run(page, options=AXE_OPTIONS).response
    ran = {
        r["id"]
        for kind in ("violations", "passes", "incomplete", "inapplicable")
        for r in results[kind]
    }
    assert MUST_RUN <= ran, MUST_RUN - ran
    return [
        f"{v['id']} ({', '.join(t for t in v['tags'] if t.startswith('wcag'))}): "
        f"{node['target']} {node['failureSummary'].splitlines()[-1].strip()}"
        for v in results["violations"]
        for node in v["nodes"]
    ]


def _check_pages(axe: Axe, context, base: str, who: str, paths: list[str]) -> dict:
    """Each violation axe finds on `paths` at each width, with the pages it is on."""
    found: dict[str, list[str]] = {}
    page = context.new_page()
    page.set_default_timeout(20_000)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for path in paths:
            response = page.goto(base + path)
            assert response is not None
            expected = 404 if path == "/no-such-page" else 200
            assert response.status == expected, (who, path, response.status)
            # A page every signed-in reader shares gets the reader's parts after its load
            # (reader.js): check it once they are in. (A selector, not wait_for_function, whose
            # polling evaluates a string, which the policy's script-src refuses.)
            if page.locator("#reader-state").count():
                page.wait_for_selector("html[data-reader-state]", state="attached")
            # axe 4.12 checks a search form's landmark only once it has a name: every one
            # must have one, so that landmark-unique compares them all.
            unnamed = page.locator("[role=search]:not([aria-label]):not([aria-labelledby])")
            if unnamed.count():
                found.setdefault("a search landmark without a name", []).append(
                    f"{who} {width}px {path}"
                )
            for violation in _axe_violations(axe, page):
                found.setdefault(violation, []).append(f"{who} {width}px {path}")
    page.close()
    return found


def test_axe_finds_what_it_should(browser):
    """The check can fail: a page with faint text, a link inside role=img and two search
    landmarks of the same name gives exactly those three violations."""
    page = browser.new_page()
    page.set_content(
        "<!doctype html><html lang='en'><title>t</title><main><h1>t</h1>"
        "<p style='color:#999;background:#fff'>faint</p>"
        "<svg role='img' aria-label='graph'><a href='/x'><text y='10'>x</text></a></svg>"
        "<form role='search' aria-label='Search'><input aria-label='q'></form>"
        "<form role='search' aria-label='Search'><input aria-label='r'></form></main></html>"
    )
    found = {line.split(" ")[0] for line in _axe_violations(Axe(), page)}
    page.close()
    assert found == {"color-contrast", "nested-interactive", "landmark-unique"}


def test_every_page_meets_wcag_21_aa(live_server, browser, world):
    axe = Axe()
    base = live_server.url
    found: dict[str, list[str]] = {}
    for who, paths, user in (
        ("signed out", _signed_out_pages(world), None),
        ("owner", _owner_pages(world), world["owner"]),
        ("newcomer", _newcomer_pages(world), world["newcomer"]),
    ):
        context = browser.new_context()
        if user is not None:
            context.add_cookies(session_cookie(live_server, user))
        for violation, pages in _check_pages(axe, context, base, who, paths).items():
            found.setdefault(violation, []).extend(pages)
        context.close()
    report = "\n".join(
        f"{violation}\n    on {len(pages)} pages: {', '.join(pages[:5])}{' ...' * (len(pages) > 5)}"
        for violation, pages in found.items()
    )
    assert not found, f"{len(found)} violations:\n{report}"


def test_coauthor_graph_is_a_group_of_named_links(live_server, browser, world):
    """Screen readers get the graph's links, each named with the co-author and their count
    (an image's links were hidden from them while a keyboard still reached them)."""
    page = browser.new_page()
    page.goto(live_server.url + world["hub"].get_absolute_url())
    graph = page.get_by_role("group", name="Hana Graded and their 8 most frequent co-authors")
    links = graph.get_by_role("link")
    assert links.count() == 8
    names = {link.evaluate("a => a.querySelector('title').textContent") for link in links.all()}
    assert "Maria Keldysh: 3 shared papers" in names, names
    assert graph.get_by_role("link", name="Maria Keldysh: 3 shared papers").count() == 1
    page.close()


LAYOUT_SHIFT = """() => new Promise(resolve => {
  let total = 0;
  new PerformanceObserver(list => {
    for (const entry of list.getEntries()) if (!entry.hadRecentInput) total += entry.value;
  }).observe({type: 'layout-shift', buffered: true});
  setTimeout(() => resolve(total), 1000);
})"""


LAYOUT_BOX_TOPS = """() => [
  ...document.querySelectorAll('main .layout > *, main .layout > aside > *')
].filter(e => getComputedStyle(e).display !== 'contents')
  .map(e => e.getBoundingClientRect().top)"""


def test_phone_home_page_does_not_shift(live_server, browser, world):
    """Cumulative layout shift of / at 390 px, signed out and signed in, under 0.02: the menu is
    folded by the stylesheet, not by nav.js after the first paint."""
    shifts = {}
    for who, user in (("signed out", None), ("owner", world["owner"])):
        context = browser.new_context(viewport={"width": 390, "height": 844})
        if user is not None:
            context.add_cookies(session_cookie(live_server, user))
        page = context.new_page()
        page.goto(live_server.url + "/", wait_until="networkidle")
        shifts[who] = page.evaluate(LAYOUT_SHIFT)
        # A slow phone paints the page before all of it has arrived (a CI machine under load
        # did): what it shows first must not be pushed down by what arrives later, so the boxes
        # of one column follow the page's order.
        tops = page.evaluate(LAYOUT_BOX_TOPS)
        assert tops == sorted(tops), (who, tops)
        if user is None:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "a11y-home-390.png"))
        context.close()
    print("layout shift of / at 390 px:", shifts)
    assert all(shift < 0.02 for shift in shifts.values()), shifts


# At 1280 px: the left edge of the first side card and of the page's main column; the top of
# the page's h1, the bottom of the heading (the box of the layout holding the h1), the top of the
# first side card and of the main column.
PROFILE_BOXES = """() => {
  const box = s => document.querySelector(s).getBoundingClientRect();
  const h1 = document.querySelector('main .layout h1');
  const head = h1.closest('main .layout > *').getBoundingClientRect();
  const card = box('.cards-last > aside .card'), column = box('.profile-main');
  return {cardLeft: card.left, mainLeft: column.left, h1Top: h1.getBoundingClientRect().top,
          headBottom: head.bottom, cardTop: card.top, mainTop: column.top};
}"""


def test_profile_pages_follow_the_page_order(live_server, browser, world):
    """A researcher's page (signed out, and as its verified owner) and an institution's: on a
    phone the heading, the papers and the side cards follow the page's order, so what a slow
    phone paints first is not pushed down by what arrives later; on a wide screen the heading
    and the cards keep the left column, the cards right under the heading, and the main column
    starts at the top."""
    pages = (
        ("researcher", world["hub"].get_absolute_url(), None),
        ("researcher-owner", world["hub"].get_absolute_url(), world["owner"]),
        ("institution", world["inst"].get_absolute_url(), None),
    )
    ARTIFACTS.mkdir(exist_ok=True)
    wrong = []
    for name, path, user in pages:
        for width in WIDTHS:
            context = browser.new_context(viewport={"width": width, "height": 844})
            if user is not None:
                context.add_cookies(session_cookie(live_server, user))
            page = context.new_page()
            page.goto(live_server.url + path, wait_until="networkidle")
            page.screenshot(path=str(ARTIFACTS / f"a11y-{name}-{width}.png"), full_page=True)
            if width < 860:
                tops = page.evaluate(LAYOUT_BOX_TOPS)
                if tops != sorted(tops):
                    wrong.append((name, width, tops))
            else:
                at = page.evaluate(PROFILE_BOXES)
                if not (
                    at["cardLeft"] < at["mainLeft"]
                    and at["mainTop"] <= at["h1Top"]
                    # Right under the heading: no row stretched between them by the main column.
                    and 0 <= at["cardTop"] - at["headBottom"] <= 16
                ):
                    wrong.append((name, width, at))
            context.close()
    assert wrong == [], wrong


def test_phone_menu_without_script_and_by_keyboard(live_server, browser, transactional_db):
    """Folded by the stylesheet alone: without JavaScript the toggle is a link that shows the
    menu; with it, a button that Enter and the space bar open and close."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + "/")
    researchers = page.locator(".nav-menu a[href='/researchers']")
    assert not researchers.is_visible()
    page.click(".nav-toggle")
    assert researchers.is_visible()
    context.close()

    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(live_server.url + "/")
    toggle = page.get_by_role("button", name="Menu")
    assert toggle.get_attribute("aria-expanded") == "false"
    researchers = page.locator(".nav-menu a[href='/researchers']")
    assert not researchers.is_visible()
    toggle.focus()
    page.keyboard.press("Space")
    assert toggle.get_attribute("aria-expanded") == "true" and researchers.is_visible()
    page.keyboard.press("Enter")
    assert toggle.get_attribute("aria-expanded") == "false" and not researchers.is_visible()
    assert page.url == live_server.url + "/"
    page.close()
