"""In a real browser: a reader reports a wrong author match from the paper's byline, a curator
closes it from the curation queue, and the reader sees the outcome on their account page."""

from __future__ import annotations

from accounts.models import Profile
from researchers.models import MatchReport
from tests.conftest import ARTIFACTS, session_cookie


def _signed_in(page, live_server, user) -> None:
    # The session and a CSRF cookie, as signing in through the form leaves them: without one,
    # the shared page's state request and the report page would each mint a CSRF secret, and
    # the later cookie would refuse the report form's token.
    page.context.clear_cookies()
    page.context.add_cookies(session_cookie(live_server, user))


def test_reader_reports_a_match_and_a_curator_closes_it(
    live_server,
    browser_page,
    researcher_factory,
    paper_factory,
    link_author,
    reader_factory,
    curator,
):
    turing = researcher_factory("Alan Turing")
    paper = paper_factory(
        authors=["Alan Turing", "Alonzo Church"], title="On computable numbers, again"
    )
    link_author(paper, 1, turing)
    reader = reader_factory()
    Profile.objects.create(user=reader, onboarding=Profile.Onboarding.COMPLETED)
    page, url = browser_page, live_server.url

    _signed_in(page, live_server, reader)
    page.goto(f"{url}{paper.get_absolute_url()}")
    page.click("text=Report a wrong author match")
    page.check("input[name=authorship]")
    page.fill("textarea[name=note]", "This Alan Turing died in 1954; the paper is from 2024.")
    page.click("text=Send the report")
    page.wait_for_url(f"{url}/accounts/")
    assert "waiting for a curator" in page.inner_text("#reports")
    report = MatchReport.objects.get()
    assert report.kind == "not_by" and report.researcher_id == turing.pk

    _signed_in(page, live_server, curator)
    page.goto(f"{url}/admin/researchers/researcher/curation/")
    assert "This Alan Turing died in 1954" in page.inner_text("table.reports")
    page.fill("table.reports input[name=reason]", "The arXiv byline names this Alan Turing.")
    page.click("table.reports input[value='Keep as is']")
    page.wait_for_url(f"{url}/admin/researchers/researcher/curation/")
    assert "No open reports." in page.inner_text("#content")

    _signed_in(page, live_server, reader)
    page.goto(f"{url}/accounts/")
    reports = page.inner_text("#reports")
    assert "a curator kept the records as they are" in reports
    assert "The arXiv byline names this Alan Turing." in reports
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-outcome.png"), full_page=True)
