"""Matching: attach each arXiv authorship to a researcher identity from the sources.

For a batch of papers (newest first): ask both sources for the papers by arXiv id, align each
paper's byline with each source's author list (`researchers.author_list_alignment`), then find the
researcher for each aligned authorship by external id: the Semantic Scholar author id first,
then the OpenAlex id, then the ORCID. A paper only one source knows is matched through that
source. Records are never merged because names agree (merging is the curators' job, see
`researchers.curation.decisions`); where the sources disagree (one OpenAlex id across two Semantic
Scholar ids, or the reverse) the records stay apart and an IdentityConflict is recorded for the
curators.

If a service cannot answer, the batch changes nothing but its PaperMatchState rows (status
"failed", with the error), and is tried again later. Reruns are idempotent.

One flow per module, as allauth keeps its flows:

- `backlog`: which papers a batch takes next (new arrivals, the sweep, due retries).
- `claim`: a batch takes its papers so that no other worker matches them meanwhile.
- `chains`: the slots that bound how many backlog batches run at once.
- `fetch`: ask both sources for a batch's papers; record the failure when one cannot answer.
- `align`: pair each byline position with the sources' authors (pure, no queries).
- `resolve`: find or create the researcher for each aligned authorship, and collect the ids,
  names and conflicts to store.
- `apply`: write one batch's outcome in one transaction.
- `run`: one batch end to end (`match_papers`) and a run of batches (`match_run`).

The reads (the papers and external ids a batch needs) are in
`researchers.selectors`; the writes to other apps' tables go through their services
(`papers.services`, `institutions.services`).
"""

from researchers.selectors import papers_waiting_count

from .backlog import papers_to_match
from .fetch import Clients
from .run import BatchResult, match_papers, match_run

__all__ = [
    "BatchResult",
    "Clients",
    "match_papers",
    "match_run",
    "papers_to_match",
    "papers_waiting_count",
]
