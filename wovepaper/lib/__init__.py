"""The ground floor every app builds on: HTTP client base, API plumbing, paging, negotiation,
structured data. Nothing here imports an app (`tests/test_layers.py` keeps it so)."""
