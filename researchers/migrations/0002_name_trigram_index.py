"""Trigram index for researcher name search on PostgreSQL (pg_trgm comes from papers 0002)."""

from django.db import migrations


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS researcher_name_trgm ON researchers_researcher "
            "USING GIN (name_key gin_trgm_ops)"
        )


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS researcher_name_trgm")


class Migration(migrations.Migration):
    dependencies = [("researchers", "0001_initial"), ("papers", "0003_search_indexes")]
    operations = [migrations.RunPython(forward, backward)]
