"""Trigram index for institution name search on PostgreSQL (pg_trgm comes from papers 0002)."""

from django.db import migrations


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS institution_name_trgm ON institutions_institution "
            "USING GIN (upper(name) gin_trgm_ops)"
        )


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS institution_name_trgm")


class Migration(migrations.Migration):
    dependencies = [("institutions", "0002_initial"), ("papers", "0003_search_indexes")]
    operations = [migrations.RunPython(forward, backward)]
