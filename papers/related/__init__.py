"""Papers related to papers: one home for every "related" list, each kind a named strategy.

- `by_meaning`: a paper's nearest neighbours by meaning, with the words, categories and authors
  both share (a paper's page: similar papers).
- `by_citations`: papers that cite the same works as a paper or are cited together with it
  (a paper's page, its markdown variant).
- `like_papers`: the papers nearest to a set of papers, and candidates ranked by closeness to
  the set (researchers working on similar things: researchers.similar; papers like a reader's
  library: accounts.library.recommendations).
- `beside_matches`: how many papers related by meaning a search page keeps beside the papers
  that hold the words (wovepaper.site_search).
- `core`: what they share: the vector index and a cache kept until it changes, the nearest
  papers to a vector, the shown papers read without the deleted ones, a reason's counts.
"""
