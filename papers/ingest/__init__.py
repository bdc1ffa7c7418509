"""Ingest: how arXiv records, from a harvest or from the snapshot, become papers.

- `records`: PaperRecord, the source-neutral shape of one paper, and its cleaning rules.
- `upsert`: the one idempotent upsert that both the snapshot import and the harvest go through.
- `snapshot`: the public arXiv metadata snapshot (JSON lines): a streaming reader and a parser.
- `importing`: the bulk import of that snapshot (`manage.py import_arxiv_snapshot`): batched,
  resumable, with the search documents and embeddings built beside it.
- `textmode`: TeX's text mode in titles and abstracts (accents, emphasis), written as Unicode
  when a record is read, harvest and snapshot alike.
"""
