"""Curation: people deciding which records are one researcher, and readers seeing why.

One flow per module:

- `decisions`: the curators' decisions (merge, split a merge, move one authorship, confirm or
  unlink an uncertain link, "not the same person"), each one transaction with one
  CurationEntry; other apps take part in merges through `merge_participant_register`.
- `queue`: the review queue, same-name records ranked by the evidence that they are one person.
- `reports`: readers' reports of wrong matches, closed by the decisions that answer them.
- `identity`: the public side, why a page says who wrote what (the sources side by side, the
  same-name evidence, the history of decisions).
- `admin_views`: the curation screens inside the Researcher admin (queue, merge, split, move,
  uncertain links, distinct, declining a report).
- `report_views`: the readers' report form, from a paper's byline or a researcher page.

Accounts' side of a merge (follows and claims) is `accounts.researcher_merges`, registered
from accounts, so that researchers never import accounts.
"""
