"""The byline is searched with the title and abstract (#43): SQLite's FTS5 table gets an
`authors` column, its triggers keep it, and the table is rebuilt from the papers. PostgreSQL's
search documents are all marked stale (their digest emptied), so that the periodic sweep, or
`manage.py catch_up --only search` at once, rebuilds each with its byline."""

from django.db import migrations

_COLUMNS = "title, abstract, authors"
_NEW = "new.id, new.title, new.abstract, new.authors"
_OLD = "old.id, old.title, old.abstract, old.authors"

SQLITE_FORWARD = [
    "DROP TRIGGER IF EXISTS papers_paper_fts_ai",
    "DROP TRIGGER IF EXISTS papers_paper_fts_ad",
    "DROP TRIGGER IF EXISTS papers_paper_fts_au",
    "DROP TABLE IF EXISTS papers_paper_fts",
    "CREATE VIRTUAL TABLE papers_paper_fts USING fts5("
    f"{_COLUMNS}, content='papers_paper', content_rowid='id', "
    "tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER papers_paper_fts_ai AFTER INSERT ON papers_paper BEGIN "
    f"INSERT INTO papers_paper_fts(rowid, {_COLUMNS}) VALUES ({_NEW}); END",
    "CREATE TRIGGER papers_paper_fts_ad AFTER DELETE ON papers_paper BEGIN "
    f"INSERT INTO papers_paper_fts(papers_paper_fts, rowid, {_COLUMNS}) "
    f"VALUES ('delete', {_OLD}); END",
    f"CREATE TRIGGER papers_paper_fts_au AFTER UPDATE OF {_COLUMNS} ON papers_paper BEGIN "
    f"INSERT INTO papers_paper_fts(papers_paper_fts, rowid, {_COLUMNS}) "
    f"VALUES ('delete', {_OLD}); "
    f"INSERT INTO papers_paper_fts(rowid, {_COLUMNS}) VALUES ({_NEW}); END",
    "INSERT INTO papers_paper_fts(papers_paper_fts) VALUES ('rebuild')",
]
SQLITE_BACKWARD = [
    *SQLITE_FORWARD[:4],
    "CREATE VIRTUAL TABLE papers_paper_fts USING fts5("
    "title, abstract, content='papers_paper', content_rowid='id', "
    "tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER papers_paper_fts_ai AFTER INSERT ON papers_paper BEGIN "
    "INSERT INTO papers_paper_fts(rowid, title, abstract) "
    "VALUES (new.id, new.title, new.abstract); END",
    "CREATE TRIGGER papers_paper_fts_ad AFTER DELETE ON papers_paper BEGIN "
    "INSERT INTO papers_paper_fts(papers_paper_fts, rowid, title, abstract) "
    "VALUES ('delete', old.id, old.title, old.abstract); END",
    "CREATE TRIGGER papers_paper_fts_au AFTER UPDATE OF title, abstract ON papers_paper BEGIN "
    "INSERT INTO papers_paper_fts(papers_paper_fts, rowid, title, abstract) "
    "VALUES ('delete', old.id, old.title, old.abstract); "
    "INSERT INTO papers_paper_fts(rowid, title, abstract) "
    "VALUES (new.id, new.title, new.abstract); END",
    "INSERT INTO papers_paper_fts(papers_paper_fts) VALUES ('rebuild')",
]


POSTGRES_FORWARD = ["UPDATE papers_papersearchdocument SET source_hash = ''"]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("papers", "0025_paper_record_source")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRES_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRES_FORWARD}),
        )
    ]
