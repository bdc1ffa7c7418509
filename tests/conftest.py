"""Shared fixtures: factories for the core models, and paths to the recorded corpus."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.db import connection

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
