from __future__ import annotations

from django.core.management.base import BaseCommand

from researchers.identity_links import export_dir, identity_links_export


class Command(BaseCommand):
    help = "Write the open bulk file of identity links (served at /data/identity-links.jsonl.gz)."

    def handle(self, *args, **options):
        meta = identity_links_export()
        self.stdout.write(
            f"{meta['records']:,} researcher records, {meta['bytes']:,} bytes, "
            f"written to {export_dir() / meta['file']}"
        )
