"""Full-text search structures, per vendor: a GIN expression index on PostgreSQL (plus trigram
indexes for name lookups), an FTS5 table with sync triggers on SQLite."""

from django.db import migrations

PG_FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX IF NOT EXISTS paper_fts_gin ON papers_paper USING GIN ("
    "to_tsvector('english'::regconfig, coalesce(title, '') || ' ' || coalesce(abstract, '')))",
]
PG_BACKWARD = ["DROP INDEX IF EXISTS paper_fts_gin"]

SQLITE_FORWARD = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS papers_paper_fts USING fts5("
    "title, abstract, content='papers_paper', content_rowid='id', "
    "tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER IF NOT EXISTS papers_paper_fts_ai AFTER INSERT ON papers_paper BEGIN "
    "INSERT INTO papers_paper_fts(rowid, title, abstract) VALUES (new.id, new.title, new.abstract); END",
    "CREATE TRIGGER IF NOT EXISTS papers_paper_fts_ad AFTER DELETE ON papers_paper BEGIN "
    "INSERT INTO papers_paper_fts(papers_paper_fts, rowid, title, abstract) "
    "VALUES ('delete', old.id, old.title, old.abstract); END",
    "CREATE TRIGGER IF NOT EXISTS papers_paper_fts_au AFTER UPDATE OF title, abstract "
    "ON papers_paper BEGIN "
    "INSERT INTO papers_paper_fts(papers_paper_fts, rowid, title, abstract) "
    "VALUES ('delete', old.id, old.title, old.abstract); "
    "INSERT INTO papers_paper_fts(rowid, title, abstract) VALUES (new.id, new.title, new.abstract); END",
    "INSERT INTO papers_paper_fts(papers_paper_fts) VALUES ('rebuild')",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS papers_paper_fts_ai",
    "DROP TRIGGER IF EXISTS papers_paper_fts_ad",
    "DROP TRIGGER IF EXISTS papers_paper_fts_au",
    "DROP TABLE IF EXISTS papers_paper_fts",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("papers", "0002_initial")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": PG_FORWARD, "sqlite": SQLITE_FORWARD}),
            _run({"postgresql": PG_BACKWARD, "sqlite": SQLITE_BACKWARD}),
        ),
    ]
