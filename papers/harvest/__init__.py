"""Harvest: arXiv's OAI-PMH interface, read window by window into the papers tables.

- `client`: the OAI-PMH client (`ArxivOAIClient`), the only module in `papers` that touches
  the network: arXiv's shared rate limit, retries and `Retry-After`.
- `oai`: the responses, parsed as a stream into PaperRecords (pure: no network, no database).
- `runs`: harvest runs (HarvestRun): one window, its pages upserted through
  `papers.ingest.upsert` with a checkpoint after every page, resumable.
- `lock`: one harvest per set at a time, across processes: a lock held by a heartbeat.
- `handoff`: what a harvest hands on after each page commits (search documents, embeddings,
  matching).

The Celery tasks are in `papers.tasks`, the command is `manage.py harvest_arxiv`.
"""
