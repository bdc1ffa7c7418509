"""Move PostgreSQL's search vector out of the papers table into papers_papersearchdocument.

As a stored generated column, the vector was computed and GIN-indexed inside every paper
insert: about two thirds of PostgreSQL's work in an import. In a table of its own it is built
by papers.search.postgres_documents after the papers are written. Existing vectors are copied over, so nothing
needs reindexing. SQLite keeps its FTS5 table; the new table stays empty there.
"""

import django.contrib.postgres.search
import django.db.models.deletion
from django.db import migrations, models

PG_FORWARD = [
    "INSERT INTO papers_papersearchdocument (paper_id, source_hash, document) "
    "SELECT id, source_hash, search_vector FROM papers_paper WHERE search_vector IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS paper_search_document_gin "
    "ON papers_papersearchdocument USING GIN (document)",
    "DROP INDEX IF EXISTS paper_search_vector_gin",
    "ALTER TABLE papers_paper DROP COLUMN IF EXISTS search_vector",
]
PG_BACKWARD = [
    "ALTER TABLE papers_paper ADD COLUMN IF NOT EXISTS search_vector tsvector "
    "GENERATED ALWAYS AS ("
    "setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A') || "
    "setweight(to_tsvector('english'::regconfig, coalesce(abstract, '')), 'B')) STORED",
    "CREATE INDEX IF NOT EXISTS paper_search_vector_gin ON papers_paper USING GIN (search_vector)",
    "DROP INDEX IF EXISTS paper_search_document_gin",
]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):

    dependencies = [
        ('papers', '0007_authorship_matched_at'),
    ]

    operations = [
        migrations.CreateModel(
            name='PaperSearchDocument',
            fields=[
                ('paper', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='search_document', serialize=False, to='papers.paper')),
                ('source_hash', models.CharField(blank=True, max_length=32)),
                ('document', django.contrib.postgres.search.SearchVectorField()),
            ],
        ),
        migrations.RunPython(_run(PG_FORWARD), _run(PG_BACKWARD)),
    ]
