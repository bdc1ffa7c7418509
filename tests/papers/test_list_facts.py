"""What a text list (a page's markdown, a digest's line) says of a paper after its title: only
what is known, as precisely as a source gave it."""

from datetime import UTC, datetime

from papers.display import list_facts, published_iso
from papers.ingest.records import PUBLISHED_MONTH
from papers.models import Paper, PaperCategory


def test_known_facts_in_order(paper_factory):
    paper = paper_factory(
        published=datetime(2024, 5, 3, 12, tzinfo=UTC), categories=["cs.LG", "stat.ML"]
    )
    paper.cited_by_count = 1
    assert list_facts(paper) == "2024-05-03, cs.LG stat.ML, 1 citation"
    paper.cited_by_count = 0
    assert list_facts(paper) == "2024-05-03, cs.LG stat.ML, 0 citations"


def test_a_paper_known_only_from_a_source_leaves_no_empty_slot(paper_factory, client):
    """A paper Semantic Scholar or OpenAlex told us of: dated by its identifier's month, no
    categories. The markdown list printed "(2023-02-01, , 38 citations)": a day no source
    gives, and an empty slot where the categories go."""
    paper = paper_factory(
        title="Open and efficient foundation language models",
        published=datetime(2023, 2, 1, tzinfo=UTC),
        published_precision=PUBLISHED_MONTH,
        cited_by_count=38,
    )
    Paper.objects.filter(pk=paper.pk).update(categories="", primary_category="")
    PaperCategory.objects.filter(paper=paper).delete()
    paper.refresh_from_db()
    assert published_iso(paper) == "2023-02"
    assert list_facts(paper) == "2023-02, 38 citations"

    md = client.get("/", HTTP_ACCEPT="text/markdown").content.decode()
    line = next(line for line in md.splitlines() if "Open and efficient" in line)
    assert line.endswith("(2023-02, 38 citations)"), line
    assert ", ," not in md and "2023-02-01" not in md


def test_nothing_known_says_nothing(paper_factory):
    paper = paper_factory()
    paper.published, paper.categories, paper.cited_by_count = None, "", None
    assert published_iso(paper) == "" and list_facts(paper) == ""
