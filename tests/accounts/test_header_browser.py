"""A signed-in reader's header, in Debian's Chromium at 1280 and 390 px: the library, saved
searches and alerts, recommendations and the conflict check are one click from every page (on a
phone, inside the folded menu); the search box shows its whole placeholder; and nothing on a
page is hidden under the fixed "Ask the papers" bar once scrolled or focused into view."""

from __future__ import annotations

import pytest

from tests.conftest import ARTIFACTS, signed_in_browser_page

READER_LINKS = {
    "Library": "/me/library",
    "Searches & alerts": "/me/searches",
    "Recommended": "/following#recommendations",
    "Conflict check": "/conflicts",
    "Following": "/following",
}

# Every element a reader reads or uses in the page's main part, scrolled into view as a keyboard
# or a finger brings it (scrollIntoView honours scroll-padding, as focusing does), then asked
# which element is drawn at its middle: the dock must not be.
COVERED = """
() => {
  const dock = document.querySelector('.chat-dock');
  if (!dock) return ['no chat dock on this page'];
  const covered = [];
  const shown = document.querySelectorAll(
    'main a, main button, main input, main textarea, main select, main label, main h1, main h2, ' +
    'main h3, main p, main li, main dd');
  for (const el of shown) {
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height || box.height > innerHeight / 2) continue;
    el.scrollIntoView({block: 'nearest', behavior: 'instant'});
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (hit && dock.contains(hit)) {
      covered.push(el.tagName + ': ' + el.textContent.trim().slice(0, 50));
    }
  }
  return covered;
}
"""

PLACEHOLDER = """
() => {
  const input = document.querySelector('#nav-q');
  const style = getComputedStyle(input);
  const context = document.createElement('canvas').getContext('2d');
  context.font = style.font;
  const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return [context.measureText(input.placeholder).width, room];
}
"""


@pytest.mark.parametrize("width", [1280, 390])
def test_the_readers_pages_are_one_click_away_and_nothing_hides_under_the_dock(
    live_server, browser, user_factory, paper_factory, width
):
    paper = paper_factory(title="Surface codes under circuit noise", categories=["quant-ph"])
    reader = user_factory()
    page, errors = signed_in_browser_page(browser, live_server, reader)
    page.set_viewport_size({"width": width, "height": 844 if width == 390 else 900})
    pages = ["/", paper.get_absolute_url(), "/papers", "/following", "/me/library"]
    pages += ["/me/searches", "/conflicts", "/accounts/"]
    for path in pages:
        page.goto(f"{live_server.url}{path}")
        if width == 390:
            page.click(".nav-toggle")
        for name, href in READER_LINKS.items():
            link = page.locator(f".nav-menu a:text-is('{name}')")
            assert link.count() == 1, (path, name)
            assert link.is_visible(), (path, name, width)
            assert link.get_attribute("href") == href
        text_width, room = page.evaluate(PLACEHOLDER)
        assert text_width <= room, (path, width, text_width, room)
        assert page.evaluate(COVERED) == [], (path, width)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, path
    # One click: the link leads to the page.
    page.goto(f"{live_server.url}/")
    if width == 390:
        page.click(".nav-toggle")
    page.click(".nav-menu a:text-is('Searches & alerts')")
    page.wait_for_url(f"{live_server.url}/me/searches")
    page.screenshot(path=str(ARTIFACTS / f"header-signed-in-{width}.png"))
    assert errors == []
