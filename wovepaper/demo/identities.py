"""The demo's researchers: the recorded papers, matched by production's matching task.

1. The arXiv papers the recordings describe are written with `papers.ingest.upsert.papers_upsert`,
   as the harvester writes papers. Where the project holds real arXiv metadata for one of them it is
   left as it is; otherwise no arXiv record of it was found, so the paper carries only what a source
   recorded (its title and author list, from Semantic Scholar, else OpenAlex), and what only arXiv
   knows (categories, submission date, abstract) stays empty: unknown.
2. Those papers go through `researchers.tasks.match_papers`, inline, with the clients pointed at
   the replay server (`wovepaper.demo.replay`): alignment, identities by external id, same-name
   records, conflicts, figures, institutions and the stored page figures are all production's.
3. Figures keep the day the service gave them (production stamps the day it asked, which for a
   replay would be today).

Idempotent: a paper already matched is not matched again, and unchanged papers are not written.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count

from institutions.models import Institution
from papers.authors import author_list_cleaned, parse_display_name
from papers.ingest.records import PaperRecord, normalize_arxiv_id
from papers.ingest.upsert import papers_upsert
from papers.models import Paper
from papers.services import papers_cited_by_dated
from researchers.models import IdentityConflict, Researcher
from researchers.source_figures import source_figures_dated
from researchers.tasks import match_papers
from sources.openalex import clean_raw_author_name, work_arxiv_id
from wovepaper.features import FEATURES
from wovepaper.lib.queueing import send_after_commit

from .replay import Recordings, replaying


@dataclass
class IdentitiesSummary:
    papers_recorded: int
    papers_written: int
    papers_kept: int
    papers_matched: int
    run: dict | None
    conflicts: int = 0

    def describe(self) -> str:
        if self.run is None:
            return (
                f"Recorded papers: {self.papers_recorded} in place, "
                "all matched on an earlier run; nothing to do."
            )
        message = self.run["message"] or ""
        if "not completed from ROR" in message:
            # The recordings hold no ROR records for these (the replay answers 503 so that they
            # stay as OpenAlex describes them): a fact of the recordings, not a failure.
            message = (
                "Institutions carry the ROR id OpenAlex gives them, with OpenAlex's name and "
                "country (the recordings hold no ROR records to complete them from)."
            )
        lines = [
            f"Recorded papers: {self.papers_written} written, {self.papers_kept} kept as arXiv "
            f"gives them; {self.run['matched']} of {self.papers_matched} matched."
            + (f" {message}" if message else "")
        ]
        if self.conflicts:
            lines.append(
                f"Sources that disagree about who someone is: {self.conflicts} (one person with "
                "two records, or one record for two people), left apart for the curators to "
                "decide; they are in the admin under Identity conflicts."
            )
        return "\n".join(lines)


def _source_byline(recordings: Recordings, arxiv_id: str) -> tuple[str, list[str], str]:
    """(title, author names, source) as a source recorded them: Semantic Scholar first, else
    OpenAlex. OpenAlex's names are the ones printed on the paper (`raw_author_name`), not the
    names of the identities it gave the authorships to: it gives word2vec's "Jeffrey Dean" to an
    identity named "Jay B. Dean", and the byline must not become that identity's name."""
    s2 = recordings.s2_papers.get(arxiv_id)
    if s2:
        return s2["title"], [a.get("name") or "" for a in s2["answer"]["authors"]], "s2"
    for work in recordings.openalex_works:
        answer = work["answer"]
        if work_arxiv_id(answer) == arxiv_id:
            names = [
                clean_raw_author_name(s.get("raw_author_name"))
                or (s.get("author") or {}).get("display_name")
                or ""
                for s in answer.get("authorships") or []
            ]
            return answer.get("display_name") or "", names, "openalex"
    raise KeyError(arxiv_id)


def recorded_arxiv_ids(recordings: Recordings) -> list[str]:
    ids = {normalize_arxiv_id(a) for a in recordings.s2_papers}
    ids |= {
        normalize_arxiv_id(a)
        for w in recordings.openalex_works
        if (a := work_arxiv_id(w["answer"]))
    }
    return sorted(ids)


def paper_records(recordings: Recordings, arxiv_ids: list[str]) -> list[PaperRecord]:
    """Papers with no arXiv record: the title and byline a source gives, the arXiv categories
    where a public copy of arXiv's metadata has them; nothing guessed."""
    records = []
    for arxiv_id in arxiv_ids:
        title, names, source = _source_byline(recordings, arxiv_id)
        # A source's list holds pieces of affiliations as authors too ("A. Building", "UK.").
        authors = author_list_cleaned(
            [parse_display_name(n) for n in names if n.strip()], source_list=True
        )
        records.append(
            PaperRecord(
                arxiv_id=arxiv_id,
                title=" ".join(title.split()),
                authors_raw=", ".join(a.display for a in authors),
                authors=authors,
                categories=recordings.arxiv_categories.get(arxiv_id, {}).get("categories", []),
                record_source=source,
            )
        )
    return records


def _stamp_figure_dates(recordings: Recordings) -> int:
    """Figures taken from a recording are as of the day it was recorded: researchers' and
    papers' citation counts alike."""
    papers_cited_by_dated(recorded=recordings.citation_counts_recorded_on())
    return source_figures_dated(recordings.figures_recorded_on())


def demo_identities_load(recordings: Recordings | None = None) -> IdentitiesSummary:
    recordings = recordings or Recordings()
    arxiv_ids = recorded_arxiv_ids(recordings)
    # A paper with arXiv's own record in the project (only arXiv gives the v1 date) keeps it.
    kept = set(
        Paper.objects.filter(
            arxiv_id__in=arxiv_ids, published__isnull=False, published_precision__isnull=True
        ).values_list("arxiv_id", flat=True)
    )
    with transaction.atomic():
        counts, changed = papers_upsert(
            paper_records(recordings, [a for a in arxiv_ids if a not in kept])
        )
        if changed:
            send_after_commit("papers.index_search", changed)
    todo = list(
        Paper.objects.filter(arxiv_id__in=arxiv_ids, match_state__isnull=True)
        .order_by("-published", "-pk")
        .values_list("pk", flat=True)
    )
    run = None
    conflicts_before = IdentityConflict.objects.count()
    if todo:
        with replaying(recordings):
            run = match_papers(todo)
        _stamp_figure_dates(recordings)
    return IdentitiesSummary(
        papers_recorded=len(arxiv_ids),
        papers_written=counts.created + counts.updated,
        papers_kept=len(kept),
        papers_matched=len(todo),
        run=run,
        conflicts=IdentityConflict.objects.count() - conflicts_before,
    )


def demo_tour(base: str) -> list[str]:
    """Where to look once the demo serves, with pages picked from what was just loaded."""
    live = Researcher.objects.filter(merged_into__isnull=True, is_person=True)
    lines = [
        f"  {Paper.objects.count():,} papers, {live.count():,} researcher records "
        f"({live.exclude(figures_source='').count():,} with figures from a source), "
        f"{Institution.objects.exclude(ror_id=None).count():,} institutions (named as OpenAlex "
        "gives them, with their ROR ids).",
        f"  Home:                {base}/",
    ]
    shown = (
        live.exclude(figures_source="").order_by("-paper_count", "pk").first()
        or live.order_by("-paper_count", "pk").first()
    )
    if shown:
        lines.append(f"  A researcher:        {base}{shown.get_absolute_url()}")
    # A shared name of two or more words: one-word "names" are mostly a source's parsing slips.
    shared = (
        live.filter(name_key__contains=" ")
        .values("name_key")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .order_by("-n", "name_key")
        .values_list("name_key", flat=True)[:1]
    )
    twin = live.filter(name_key__in=list(shared)).order_by("-paper_count", "pk").first()
    if twin:
        lines.append(f"  Same-name records:   {base}{twin.get_absolute_url()}")
    institution = Institution.objects.exclude(ror_id=None).order_by("-paper_count", "pk").first()
    if institution:
        lines.append(f"  An institution:      {base}{institution.get_absolute_url()}")
    lines += [
        f"  Curators' queue:     {base}/admin/researchers/researcher/curation/",
        "  A curator account:   python manage.py createsuperuser  (superusers may merge and "
        "split; give other staff the 'Can merge, split and re-attribute researchers' permission)",
        f"  Follow researchers:  sign up at {base}/accounts/signup/, press Follow on a "
        f"researcher page, then read {base}/following",
        "  Everything a reader has (wovepaper.features; signed in where marked *):",
    ]
    # A feature's page that names a paper or a researcher is shown with one of the demo's.
    cited = Paper.objects.filter(cited_by_count__gt=0).order_by("-cited_by_count", "pk").first()
    examples = {"/papers/<arxiv-id>": f"/papers/{cited.arxiv_id}" if cited else "/papers"}
    if shown:
        examples["/researchers/<id>"] = shown.get_absolute_url()
    width = max(len(f.title) for f in FEATURES) + 4
    for feature in FEATURES:
        page = feature.page
        for placeholder, example in examples.items():
            if page.startswith(placeholder):
                page = example + page.removeprefix(placeholder)
        title = feature.title + (" *" if feature.signed_in else "")
        lines.append(f"    {title.ljust(width)} {base}{page}")
    return lines
