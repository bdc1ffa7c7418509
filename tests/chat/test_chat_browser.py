"""The chat in Debian's Chromium: a signed-in reader opens a paper, asks in the docked panel and
reads the answer as the page's own script streams it in, its citation linking to the paper;
then the /chat page, at desktop and phone widths. No Content-Security-Policy violation on the
way."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from accounts.library.models import SavedPaper
from accounts.models import Profile
from chat.models import ChatMessage, Conversation
from tests.conftest import ARTIFACTS, csp_violations, signed_in_browser_page


def _quoted_walk_paper(paper_factory, settings):
    """No model: the answer quotes the abstract of the one paper about quantum walks."""
    settings.LLM_BASE_URL = ""
    settings.LLM_MODEL = ""
    return paper_factory(
        title="An analytic solution for one-dimensional quantum walks",
        abstract="The first general analytic solutions for the one-dimensional walk in position "
        "and momentum space are derived. These solutions reveal new symmetry features of "
        "quantum walk probability densities.",
        categories=["quant-ph"],
    )


def _signed_in_reader(username: str):
    reader = get_user_model().objects.create_user(
        username, f"{username}@example.org", "a-long-pass-9"
    )
    Profile.objects.create(user=reader, onboarding=Profile.Onboarding.COMPLETED)
    return reader


def test_the_docked_panel_streams_a_quoted_answer_with_its_citation(
    live_server, browser, paper_factory, settings
):
    paper = _quoted_walk_paper(paper_factory, settings)
    reader = _signed_in_reader("dock")
    page, errors = signed_in_browser_page(browser, live_server, reader)
    page.goto(live_server.url + paper.get_absolute_url())
    page.click("details.chat-dock summary")
    page.fill("#chat-dock-q", "What do these solutions reveal?")
    page.click(".chat-dock button[type=submit]")
    citation = page.wait_for_selector(".chat-dock .chat-citations a")
    assert citation.get_attribute("href") == paper.get_absolute_url()
    answer = page.inner_text(".chat-dock .chat-assistant .chat-text")
    assert "These solutions reveal new symmetry features" in answer
    assert "quotes the papers" in answer
    assert page.url.endswith(paper.get_absolute_url())  # no reload: the script asked
    assert ChatMessage.objects.get(role="assistant").mode == ChatMessage.Mode.QUOTED
    violations = csp_violations(page)
    page.goto(live_server.url + "/chat")
    page.wait_for_selector(".chat-list a")
    violations += csp_violations(page)
    # On a phone the question comes before the list of conversations, and nothing is wider
    # than the screen.
    page.set_viewport_size({"width": 390, "height": 800})
    question = page.locator("#chat-q").bounding_box()
    listed = page.locator(".chat-list").bounding_box()
    assert question["y"] < listed["y"] and question["y"] + question["height"] < 800
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    page.context.close()
    assert violations == [] and errors == []


@pytest.mark.parametrize("width", [1280, 390])
def test_a_cited_paper_is_saved_from_the_chat_answer(
    live_server, browser, paper_factory, settings, width
):
    """On /chat the finished answer is swapped in by the page's script; each cited paper's save
    control is made by reader.js from the reader's state, saves in place (htmx), and is still
    "Saved in" on the conversation's page."""
    paper = _quoted_walk_paper(paper_factory, settings)
    reader = _signed_in_reader("saver")
    page, errors = signed_in_browser_page(browser, live_server, reader)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(live_server.url + "/chat")
    page.fill("#chat-q", "What do these solutions reveal?")
    page.click(".chat-form button[type=submit]")
    control = f".chat-citations #save-{paper.pk}"
    page.wait_for_selector(f"{control} button")
    # The button's hidden label names the cited paper, as on every list.
    assert paper.title in (page.locator(f"{control} button .sr-only").text_content() or "")
    page.locator(f"{control} button").click()
    page.wait_for_selector(f"{control} .saved-in")
    assert "Reading list" in page.inner_text(control)
    assert SavedPaper.objects.filter(reading_list__user=reader, paper=paper).exists()
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"chat-save-{width}.png"), full_page=True)
    violations = csp_violations(page)

    # The conversation's own page: reader.js makes every cited paper's control.
    page.goto(live_server.url + Conversation.objects.get(user=reader).get_absolute_url())
    page.wait_for_selector(f"{control} .saved-in")
    assert page.locator(f"#save-{paper.pk}").count() == 1
    violations += csp_violations(page)
    page.context.close()
    assert violations == [] and errors == []


@pytest.mark.parametrize("width", [1280, 390])
def test_a_new_conversation_gets_its_address_and_its_place_in_the_list_at_once(
    live_server, browser, paper_factory, settings, width
):
    """#43: the conversation appeared in the sidebar and got its URL only after a reload. Now
    the page's script gives it both as soon as the question is asked; a follow-up stays in it,
    and the address is the conversation's page, which a reload shows the same."""
    paper = _quoted_walk_paper(paper_factory, settings)
    reader = _signed_in_reader(f"sidebar{width}")
    page, errors = signed_in_browser_page(browser, live_server, reader)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(live_server.url + "/chat")
    assert page.inner_text(".chat-list ul") == "None yet."
    page.fill("#chat-q", "What do these solutions reveal?")
    page.click(".chat-form button[type=submit]")
    page.wait_for_selector(".chat-thread .chat-citations a")
    conversation = Conversation.objects.get(user=reader)
    assert page.url == live_server.url + conversation.get_absolute_url()
    current = page.locator(".chat-list a[aria-current=page]")
    assert current.count() == 1 and current.inner_text() == conversation.title
    assert current.get_attribute("href") == conversation.get_absolute_url()
    assert "None yet." not in page.inner_text(".chat-list")
    # A follow-up is asked in the same conversation: no second entry, the same address.
    page.fill("#chat-q", "And what symmetry features do they have?")
    page.click(".chat-form button[type=submit]")
    page.wait_for_selector(".chat-thread > li:nth-child(4).chat-assistant:not([aria-busy])")
    assert Conversation.objects.filter(user=reader).count() == 1
    assert page.locator(".chat-list li").count() == 1
    assert page.url == live_server.url + conversation.get_absolute_url()
    page.reload()
    assert page.locator(".chat-thread .chat-user").count() == 2
    assert page.locator(".chat-list a[aria-current=page]").inner_text() == conversation.title
    assert paper.get_absolute_url() in page.content()
    violations = csp_violations(page)
    page.context.close()
    assert violations == [] and errors == []


def test_a_follow_up_cites_the_paper_the_conversation_is_about(
    live_server, browser, paper_factory, settings
):
    """#43, as a reader meets it: a question about small planets around red dwarfs, then "Who
    wrote it, and what did they find about planets larger than 1.4 Earth radii?", while nine
    other papers hold every word of the follow-up. The follow-up's answer cites the paper the
    conversation is about."""
    from papers.search import PAPERS
    from papers.search.embedding_stage import embed_papers
    from tests.chat.test_chat import (
        FOLLOW_UP,
        LARGER_PLANETS,
        RED_DWARF_PAPERS,
        RED_DWARF_QUESTION,
    )
    from wovepaper.lib.search import backend_for

    settings.LLM_BASE_URL = ""
    settings.LLM_MODEL = ""
    made = [
        paper_factory(title=t, abstract=a, categories=["astro-ph.EP"])
        for t, a in (*RED_DWARF_PAPERS, *LARGER_PLANETS)
    ]
    embed_papers([p.pk for p in made], feed_index=False)
    backend_for(PAPERS, "semantic").rebuild()
    m_dwarfs = made[0]
    reader = _signed_in_reader("followup")
    page, errors = signed_in_browser_page(browser, live_server, reader)
    page.goto(live_server.url + "/chat")
    page.fill("#chat-q", RED_DWARF_QUESTION)
    page.click(".chat-form button[type=submit]")
    page.wait_for_selector(".chat-thread > li:nth-child(2).chat-assistant:not([aria-busy])")
    page.fill("#chat-q", FOLLOW_UP)
    page.click(".chat-form button[type=submit]")
    page.wait_for_selector(".chat-thread > li:nth-child(4).chat-assistant:not([aria-busy])")
    cited = page.locator(".chat-thread > li:nth-child(4) .chat-citations a")
    hrefs = [cited.nth(i).get_attribute("href") for i in range(cited.count())]
    assert m_dwarfs.get_absolute_url() in hrefs
    violations = csp_violations(page)
    page.context.close()
    assert violations == [] and errors == []
