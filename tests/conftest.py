"""Shared fixtures: factories for the core models, and paths to the recorded corpus."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.db import connection, connections

from papers.models import Authorship, Paper, PaperCategory

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = Path(__file__).parent.parent / "papers" / "sample" / "arxiv-sample.jsonl.gz"

_ids = itertools.count(1)


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def sample_path() -> Path:
    return SAMPLE


def pytest_runtest_setup(item):
    for vendor in ("postgres", "sqlite"):
        if vendor in item.keywords:
            wanted = "postgresql" if vendor == "postgres" else "sqlite"
            if connection.vendor != wanted:
                pytest.skip(f"needs {wanted}; this run is on {connection.vendor}")


@pytest.fixture(autouse=True)
def _empty_cache():
    """Each test starts with an empty cache: a page cached by one test (the home page, say)
    must not answer another test's request over a different database."""
    from django.core.cache import caches

    from wovepaper.lib.embeddings import forget_query_vectors

    for alias in caches:
        caches[alias].clear()
    # And the query vectors each process keeps: another test's encoder may share a name.
    forget_query_vectors()
    yield


@pytest.fixture(autouse=True)
def _archive_on_real_time(settings):
    """The factories date papers in 2024: with the default clock ("auto") every test archive
    would read as a sample (papers.archive_time). Tests of alerts and recommendations keep real
    time unless they set ARCHIVE_CLOCK themselves, as the sample's tests do."""
    settings.ARCHIVE_CLOCK = "now"


@pytest.fixture(autouse=True)
def _own_vector_index(settings, tmp_path):
    """Each test writes its own vector index file, never the developer's var/ nor another
    test's (the database rolls back; a file would not)."""
    from wovepaper.lib.search import reset_backends

    settings.VECTOR_INDEX_DIR = tmp_path / "vector-index"
    reset_backends()
    yield
    reset_backends()


@pytest.fixture
def own_redis(tmp_path):
    """A Redis server of the test's own on a free port (tests.workers.OwnRedis); `start()` it."""
    from tests.workers import OwnRedis

    server = OwnRedis(tmp_path)
    yield server
    server.stop_all()


@pytest.fixture
def paper_factory(db):
    """Create a Paper with authorships and categories; any field can be overridden."""

    def make(*, authors: list[str] | None = None, categories: list[str] | None = None, **fields):
        n = next(_ids)
        categories = categories or ["cs.LG"]
        authors = authors if authors is not None else ["Ada Lovelace", "Alan Turing"]
        defaults = {
            "arxiv_id": f"2401.{n:05d}",
            "title": f"A study of example number {n}",
            "abstract": "We study an example.",
            "authors": ", ".join(authors),
            "categories": " ".join(categories),
            "primary_category": categories[0],
            "published": datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=n % 300),
            "slug": f"a-study-of-example-number-{n}",
        }
        defaults.update(fields)
        paper = Paper.objects.create(**defaults)
        for i, code in enumerate(categories):
            PaperCategory.objects.create(
                paper=paper, code=code, is_primary=i == 0, published=paper.published
            )
        for position, name in enumerate(authors, start=1):
            Authorship.objects.create(
                paper=paper, position=position, name=name, keyname=name.split()[-1] if name else ""
            )
        return paper

    return make


CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


@pytest.fixture
def browser(monkeypatch):
    """Debian's Chromium, headless, driven by Playwright (never a browser of its own)."""
    if not CHROMIUM.exists():
        pytest.fail("Chromium is missing: run `apt-get install -y chromium` (as .ci/run does)")
    # Playwright's sync API runs an event loop in this thread; the ORM calls the test makes
    # around it are still plain synchronous calls.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            yield chromium
        finally:
            chromium.close()
            # With Playwright's loop running, Django keyed the test's ORM calls to a connection
            # of that context; left open, it stops the test database from being dropped.
            connections.close_all()


@pytest.fixture
def browser_page(browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(15_000)
    return page


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, pgvector_server):
    """On PostgreSQL, a second alias on the same server stands in for a read replica: a test
    mirror of the default database (tests that use it name it in `databases`). On any vendor,
    the alias "vectors" is a PostgreSQL with pgvector for the pgvector backend's tests
    (`pgvector_server`), unless VECTOR_DATABASE_URL already names one."""
    from django.conf import settings
    from django.db import connections

    default = settings.DATABASES["default"]
    if default["ENGINE"] == "django.db.backends.postgresql":
        settings.DATABASES["replica1"] = {
            **default,
            "TEST": {**default.get("TEST", {}), "MIRROR": "default"},
        }
    settings.DATABASES.setdefault("vectors", pgvector_server)
    # The connection handler's settings are this same dict: fill in the new aliases' defaults.
    connections.configure_settings(settings.DATABASES)


@pytest.fixture(scope="session")
def pgvector_server():
    """A PostgreSQL 16 with pgvector of the session's own, started by pgserver (a dev
    dependency whose wheel ships both) in a new data directory, listening on a Unix socket
    there only; stopped and removed when the session ends. Debian 12 packages no pgvector, so
    this is how the pgvector backend meets the real extension in every test run. As root,
    pgserver runs PostgreSQL as a system user `pgserver` it creates."""
    import shutil
    import tempfile

    import pgserver

    # Not under pytest's basetemp (kept 0700, and pgserver widens every parent of its data
    # directory for the `pgserver` user): a directory of /tmp of its own.
    data = Path(tempfile.mkdtemp(prefix="wovepaper-pgvector-"))
    server = pgserver.get_server(data / "pgdata", cleanup_mode="delete")
    info = server.get_postmaster_info()
    yield {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "postgres",
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": str(info.socket_dir),
        "PORT": str(info.port),
    }
    server.cleanup()
    shutil.rmtree(data, ignore_errors=True)


# Records each Content-Security-Policy violation in the page, for the browser tests to read.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', e => {
  window.__cspViolations.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline'));
});
"""


def csp_violations(page) -> list[str]:
    """The violations RECORD_VIOLATIONS has recorded in `page` since it was loaded."""
    return list(page.evaluate("window.__cspViolations || []"))


def session_cookie(live_server, user) -> list[dict]:
    """A signed-in session of `user` (made by Django's test client) as cookies for Chromium: the
    session's, and a CSRF cookie, which signing in through the form leaves too."""
    from django.test import Client

    signed_in = Client()
    signed_in.force_login(user)
    signed_in.get("/me/state")  # asks for a token: the answer sets the CSRF cookie
    return [
        {"name": name, "value": signed_in.cookies[name].value, "url": live_server.url}
        for name in ("sessionid", "csrftoken")
    ]


def signed_in_browser_page(browser, live_server, user):
    """A Chromium page signed in as `user` (a session made by Django's test client, its cookie
    handed to the browser), recording CSP violations, and the list its console errors go to."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(RECORD_VIOLATIONS)
    context.add_cookies(session_cookie(live_server, user))
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return page, errors


# --- two papers for the citation exports' tests (papers and the API) ---------------------------


def named(paper, names: list[tuple[str, str]]) -> None:
    """Give the byline's authors their given names (the factory sets family names only)."""
    for position, (given, family) in enumerate(names, start=1):
        Authorship.objects.filter(paper=paper, position=position).update(
            forenames=given, keyname=family
        )


@pytest.fixture
def preprint(paper_factory):
    paper = paper_factory(
        arxiv_id="2401.00042",
        title=r"Bounds on the $\alpha$-{Rényi} entropy of {SU(2)} chains",
        authors=["Émilie Ørsted", "José Núñez"],
        categories=["quant-ph", "math-ph"],
        published=datetime(2024, 1, 3, tzinfo=UTC),
    )
    named(paper, [("Émilie", "Ørsted"), ("José", "Núñez")])
    return paper


@pytest.fixture
def published(paper_factory):
    paper = paper_factory(
        arxiv_id="2305.01234",
        title="Measuring things carefully",
        authors=["Ada Lovelace", "Alan Turing"],
        categories=["hep-ex"],
        published=datetime(2023, 5, 2, tzinfo=UTC),
        journal_ref="Phys. Rev. D 97, 052003 (2024)",
        doi="10.1103/PhysRevD.97.052003",
    )
    named(paper, [("Ada", "Lovelace"), ("Alan", "Turing")])
    return paper
