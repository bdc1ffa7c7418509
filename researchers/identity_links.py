"""The open bulk file of identity links: our researcher ids with their Semantic Scholar,
OpenAlex and ORCID ids and how each link was made, for anyone to download and reuse.

Written as gzipped JSON lines, one researcher record per line (merged records too, with the id
they lead to), streamed from the database in id order, to a temporary file that replaces the
published one only when complete; a sidecar JSON file says when it was made, how many records
it holds and under which terms. Regenerated daily by celery beat
(`researchers.export_identity_links`) and by `manage.py export_identity_links`.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.db.models import Prefetch
from django.utils import timezone

from .curation.identity import OWNER_ACTIONS
from .models import CurationEntry, Researcher

FILE_NAME = "identity-links.jsonl.gz"
META_NAME = "identity-links.json"
LICENCE = {
    "links": "CC0-1.0: our researcher ids and the links we made between them and the sources' "
    "ids are in the public domain.",
    "attribution": [
        "Semantic Scholar author ids: from the Semantic Scholar Academic Graph, "
        "https://www.semanticscholar.org, licensed ODC-BY 1.0 "
        "(https://opendatacommons.org/licenses/by/1-0/): attribute Semantic Scholar.",
        "OpenAlex author ids: from OpenAlex, https://openalex.org, CC0.",
        "ORCID iDs: from the sources above and the researchers' ORCID sign-ins.",
    ],
}
CHUNK = 2000


def export_dir() -> Path:
    return Path(settings.DATA_DIR) / "exports"


def _bare(value: str) -> str:
    return value.rstrip("/").rsplit("/", 1)[-1]


def identity_link_rows() -> Iterator[dict]:
    """Every researcher record with its external ids, in id order (two queries per chunk)."""
    records = (
        Researcher.objects.order_by("pk")
        .select_related("current_institution")
        .prefetch_related(
            "external_ids",
            Prefetch(
                "curation_entries",
                queryset=CurationEntry.objects.filter(action__in=OWNER_ACTIONS).order_by(
                    "created_at", "pk"
                ),
                to_attr="owner_entries",
            ),
        )
    )
    for record in records.iterator(chunk_size=CHUNK):
        yield {
            "id": record.pk,
            "url": settings.SITE_URL + record.get_absolute_url(),
            "name": record.display_name,
            "merged_into": record.merged_into_id,
            # The researcher's own word on the record: verified as theirs (how and when).
            "verified": (
                {"by": record.verified_by, "at": record.verified_at.isoformat()}
                if record.verified_by and record.verified_at
                else None
            ),
            # What the verified researcher set on their page, and each change they made (or
            # the curators made to it), with the reason: never who among staff.
            "owner": {
                "homepage": record.homepage,
                "institution_ror_id": (
                    record.current_institution.ror_id if record.current_institution else None
                ),
                "hidden": record.hidden,
            },
            "owner_changes": [_owner_change(entry) for entry in record.owner_entries],
            "ids": [
                {
                    "source": ext.source,
                    "value": _bare(ext.value),
                    "origin": ext.origin,
                    "linked_at": ext.created_at.isoformat() if ext.created_at else None,
                }
                for ext in sorted(record.external_ids.all(), key=lambda e: (e.source, e.value))
            ],
        }


def _owner_change(entry: CurationEntry) -> dict:
    before, after = entry.before or {}, entry.after or {}
    return {
        "action": entry.action,
        "at": entry.created_at.isoformat(),
        "paper": before.get("arxiv_id"),
        "field": after.get("field"),
        "value": after.get("shown") if "shown" in after else after.get("verified_by"),
        "others": after.get("others", []),
        "reason": after.get("reason", ""),
        "undone": bool(entry.undone_by_id),
    }


def identity_links_export(directory: Path | None = None) -> dict:
    """Write the bulk file and its sidecar; returns the sidecar's content. Idempotent: a rerun
    replaces both files whole (a reader never sees a half-written file)."""
    directory = directory or export_dir()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / FILE_NAME
    partial = directory / f".{FILE_NAME}.partial"
    count = 0
    with gzip.open(partial, "wt", encoding="utf-8") as out:
        for row in identity_link_rows():
            out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
            out.write("\n")
            count += 1
    os.replace(partial, target)
    meta = {
        "file": FILE_NAME,
        "generated_at": timezone.now().isoformat(),
        "records": count,
        "bytes": target.stat().st_size,
        "format": "gzipped JSON lines: {id, url, name, merged_into, verified: {by, at} or null, "
        "owner: {homepage, institution_ror_id, hidden}, owner_changes: [{action, at, paper, "
        "field, value, others, reason, undone}], ids: [{source, value, origin, linked_at}]}; "
        "merged records lead to `merged_into`; `verified.by` is orcid (the researcher's ORCID "
        "sign-in) or curators; owner changes never edit the sources' ids.",
        "licence": LICENCE,
    }
    meta_partial = directory / f".{META_NAME}.partial"
    meta_partial.write_text(json.dumps(meta, indent=2))
    os.replace(meta_partial, directory / META_NAME)
    return meta
