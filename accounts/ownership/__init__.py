"""A researcher owning their page, in one place: from "this is me" to the owner's corrections.

Accounts holds the feature because who owns a page is a reader's claim (accounts.Claim), and
researchers never import accounts (docs/layers.toml). What owning changes on the researcher's
record (verified or not; a paper removed or added; the name, affiliation, homepage or listing
shown) stays written by researchers' own services, researchers.verification and
researchers.owner_edits: a Researcher and its public history are written by researchers alone,
and the curators' undo of an owner's change (researchers.admin) uses the same writes. This
package decides who may make those changes and calls them; nothing else in accounts does.

One flow per module:

- `claims`: a reader's "this is me", confirmed at once by an ORCID tie or waiting for the
  curators, and the limits on making claims; `claim_evidence`, what the curators weigh;
  `claim_views`, the button's confirm step.
- `reviews`: the curators' decision on a claim (from accounts.admin).
- `verification`: the page's verified state following its confirmed claim when a merge or a
  split moves claims (called by accounts.researcher_merges, which also moves follows).
- `corrections`: what the verified owner sees to correct; `correction_views`, their changes.
"""
