"""Examples for the OpenAPI schema: the first paper of the public arXiv snapshot, exactly as the
API serializes it after an import (before matching, so no researcher or citation count yet)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

_ABSTRACT = (
    "A fully differential calculation in perturbative quantum chromodynamics is presented for "
    "the production of massive photon pairs at hadron colliders. All next-to-leading order "
    "perturbative contributions from quark-antiquark, gluon-(anti)quark, and gluon-gluon "
    "subprocesses are included, as well as all-orders resummation of initial-state gluon "
    "radiation valid at next-to-next-to-leading logarithmic accuracy. The region of phase space "
    "is specified in which the calculation is most reliable. Good agreement is demonstrated "
    "with data from the Fermilab Tevatron, and predictions are made for more detailed tests "
    "with CDF and DO data. Predictions are shown for distributions of diphoton pairs produced "
    "at the energy of the Large Hadron Collider (LHC). Distributions of the diphoton pairs from "
    "the decay of a Higgs boson are contrasted with those produced from QCD processes at the "
    "LHC, showing that enhanced sensitivity to the signal can be obtained with judicious "
    "selection of events."
)
_AUTHORS = ["C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C. -P. Yuan"]


def paper_example(*, detail: bool = False) -> dict:
    site = settings.SITE_URL
    paper: dict[str, Any] = {
        "arxiv_id": "0704.0001",
        "version": 2,
        "title": "Calculation of prompt diphoton production cross sections at Tevatron and LHC "
        "energies",
        "authors": [
            {"position": i, "name": name, "researcher": None}
            for i, name in enumerate(_AUTHORS, start=1)
        ],
        "abstract": _ABSTRACT,
        "categories": ["hep-ph"],
        "primary_category": "hep-ph",
        "published": "2007-04-02T19:18:42Z",
        "published_precision": None,
        "record_source": None,
        "updated": "2008-11-26",
        "doi": "10.1103/PhysRevD.76.013009",
        "journal_ref": "Phys.Rev.D76:013009,2007",
        "cited_by_count": None,
        "is_withdrawn": False,
        "url": f"{site}/papers/0704.0001-calculation-of-prompt-diphoton-production-cross-"
        "sections-at-tevatron-and-lhc",
        "api_url": f"{site}/api/v1/papers/0704.0001/",
        "abs_url": "https://arxiv.org/abs/0704.0001",
        "pdf_url": "https://arxiv.org/pdf/0704.0001",
        # Not analysed yet: the analysis fields stay empty until it is.
        "summary": "",
        "topics": [],
        "paper_type": "",
        "research_field": "",
        "novelty": "",
        "significance_score": None,
        "analysed": None,
        "analysis": None,
    }
    if detail:
        for author in paper["authors"]:
            author.update({"affiliation": "", "institutions": []})
            author["researcher"] = author.pop("researcher")
            author["match"] = None  # no researcher linked, so no match to tell of
            author["institutions"] = author.pop("institutions")
        paper.update(
            {
                "comments": "37 pages, 15 figures; published version",
                "report_no": "ANL-HEP-PR-07-12",
                "license": "",
                "submitter": "Pavel Nadolsky",
                "semantic_scholar_id": None,
                "openalex_id": None,
                "is_deleted": False,
                "modified_at": "2026-11-29T18:36:18Z",
            }
        )
    return paper


def paper_search_example() -> dict:
    """A search result: the paper as listed, found because it contains the words."""
    return {**paper_example(), "match": "words", "similarity": None}
