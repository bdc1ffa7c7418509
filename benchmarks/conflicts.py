"""Benchmark the conflict-of-interest check (researchers.conflicts) at archive scale: 50 authors
against 500 candidate reviewers, on PostgreSQL, over `--papers` papers.

Every row is SYNTHETIC, made here by SQL (generate_series) in the benchmark's own database
(created, migrated and dropped): papers "Synthetic paper n" (arXiv ids 9901.00000…) published
one every `--spread-minutes` going back from 2026-12-01, `--per-paper` authors each, researchers
"Synthetic Researcher n" drawn by a fixed hash (first authors from a smaller pool, so some are
prolific), `--institutions` institutions, and one institution (fixed per researcher) on two
bylines in three.

The 50 authors are the first authors of the newest papers (names, so name resolution is timed
too); the 500 reviewers are their co-authors on older papers mixed with researchers drawn by the
hash. The check runs `--runs` times (the first one cold for the records read); each run's time,
the flags found, and a check that every co-authorship flag is a paper whose bylines hold both
records (one SQL query per flag, untimed) are printed as JSON.

    python benchmarks/conflicts.py --papers 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.import_snapshot import _pg_admin  # noqa: E402

DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432"
DEFAULT_DB_NAME = "wovepaper_bench_conflicts"


def _literal(field) -> str:
    """The SQL value for a column the benchmark does not set: the field's default."""
    from django.db import models

    if field.null:
        return "NULL"
    default = field.get_default()
    if isinstance(field, models.JSONField):
        return f"'{json.dumps(default)}'::jsonb"
    if isinstance(field, models.BooleanField):
        return "TRUE" if default else "FALSE"
    if isinstance(field, models.DateTimeField):
        return "now()"
    if isinstance(field, (models.IntegerField, models.FloatField)):
        return str(default or 0)
    return "''" if default in (None, "") else f"'{default}'"


def _insert(model, given: dict[str, str], source: str) -> str:
    """INSERT … SELECT for `model`: the columns in `given` from their expressions over
    `source`, every other concrete column its default."""
    columns, values = [], []
    for field in model._meta.concrete_fields:
        if field.primary_key and field.column not in given:
            continue
        columns.append(field.column)
        values.append(given.get(field.column) or _literal(field))
    return (
        f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) "
        f"SELECT {', '.join(values)} FROM {source}"
    )


def build(args: argparse.Namespace) -> dict:
    from django.db import connection

    from institutions.models import AuthorshipInstitution, Institution
    from papers.models import Authorship, Paper
    from researchers.models import Researcher

    papers, per = args.papers, args.per_paper
    researchers = max(papers * per // 16, 1000)
    first_pool = max(researchers // 10, 100)
    statements = [
        _insert(
            Researcher,
            {
                "id": "n",
                "display_name": "'Synthetic Researcher ' || n",
                "name_key": "'synthetic researcher ' || n",
                "slug": "'synthetic-researcher-' || n",
            },
            f"generate_series(1, {researchers}) AS n",
        ),
        _insert(
            Institution,
            {"id": "n", "name": "'Synthetic Institution ' || n", "slug": "'synthetic-' || n"},
            f"generate_series(1, {args.institutions}) AS n",
        ),
        _insert(
            Paper,
            {
                "id": "n",
                "arxiv_id": "'99' || lpad((n / 100000)::text, 2, '0') || '.' || "
                "lpad((n % 100000)::text, 5, '0')",
                "title": "'Synthetic paper ' || n",
                "slug": "'synthetic-paper-' || n",
                "published": "timestamptz '2026-12-01' - "
                f"make_interval(mins => (({papers} - n) * {args.spread_minutes})::int)",
            },
            f"generate_series(1, {papers}) AS n",
        ),
        # Position 1 from the prolific pool, the others from everyone, by a fixed hash.
        _insert(
            Authorship,
            {
                "paper_id": "p",
                "position": "k",
                "name": "'Synthetic Researcher ' || r",
                "keyname": "'Researcher'",
                "researcher_id": "r",
                "match_confidence": "0.5 + ((p * 31 + k) % 50) / 100.0",
                "match_method": "'s2'",
                "is_person": "TRUE",
            },
            f"(SELECT p, k, CASE WHEN k = 1 THEN 1 + ((p::bigint * 7919) % {first_pool}) "
            f"ELSE 1 + ((p::bigint * 104729 + k * 15485863) % {researchers}) END AS r "
            f"FROM generate_series(1, {papers}) AS p, generate_series(1, {per}) AS k) AS s",
        ),
        _insert(
            AuthorshipInstitution,
            {
                "authorship_id": "a.id",
                "institution_id": f"1 + ((a.researcher_id * 2654435761) % {args.institutions})",
                "paper_id": "a.paper_id",
            },
            f"{Authorship._meta.db_table} AS a WHERE a.id % 3 <> 0",
        ),
    ]
    started = time.perf_counter()
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)
        for model in (Researcher, Institution, Paper, Authorship):
            table = model._meta.db_table
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT max(id) FROM {table}))"
            )
        cursor.execute("VACUUM ANALYZE")
    return {
        "papers": papers,
        "researchers": researchers,
        "authorships": Authorship.objects.count(),
        "institution_links": AuthorshipInstitution.objects.count(),
        "build_s": round(time.perf_counter() - started, 1),
    }


def pick(authors: int, reviewers: int) -> tuple[list[str], list[str]]:
    """The first authors of the newest papers, and reviewers: their co-authors on older papers
    (one in five) and researchers drawn by the hash."""
    from papers.models import Authorship, Paper
    from researchers.models import Researcher

    newest = list(Paper.objects.order_by("-published", "-id").values_list("id", flat=True)[:400])
    author_ids = list(
        dict.fromkeys(
            Authorship.objects.filter(paper_id__in=newest, position=1)
            .order_by("-paper_id")
            .values_list("researcher_id", flat=True)
        )
    )[:authors]
    coauthor_ids = list(
        dict.fromkeys(
            Authorship.objects.filter(
                paper__authorships__researcher_id__in=author_ids, position__gt=1
            )
            .exclude(researcher_id__in=author_ids)
            .order_by("-paper_id")
            .values_list("researcher_id", flat=True)[: reviewers * 4]
        )
    )[: reviewers // 5]
    total = Researcher.objects.count()
    drawn = [1 + (n * 2654435761) % total for n in range(1, reviewers * 2)]
    reviewer_ids = list(dict.fromkeys([*coauthor_ids, *drawn]))
    reviewer_ids = [r for r in reviewer_ids if r not in set(author_ids)][:reviewers]
    names = dict(
        Researcher.objects.filter(pk__in=author_ids + reviewer_ids).values_list(
            "pk", "display_name"
        )
    )
    return [names[r] for r in author_ids], [names[r] for r in reviewer_ids]


def verify(report) -> int:
    """Every co-authorship flag's papers hold both records in their bylines: one query a flag."""
    from papers.models import Authorship

    checked = 0
    for flag in report.flags:
        for shared in flag.papers:
            on = set(
                Authorship.objects.filter(paper__arxiv_id=shared.arxiv_id).values_list(
                    "researcher_id", flat=True
                )
            )
            assert {flag.author_record.pk, flag.reviewer_record.pk} <= on, shared.arxiv_id
            checked += 1
    return checked


def run(args: argparse.Namespace) -> dict:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from researchers.conflicts import conflict_check_request

    print("making synthetic data (untimed)", file=sys.stderr, flush=True)
    built = build(args)
    author_lines, reviewer_lines = pick(args.authors, args.reviewers)
    times, report = [], None
    for _ in range(args.runs):
        started = time.perf_counter()
        report = conflict_check_request(
            author_lines=author_lines, reviewer_lines=reviewer_lines, years=args.years
        )
        times.append(time.perf_counter() - started)
    assert report is not None
    return {
        **built,
        "authors": len(author_lines),
        "reviewers": len(reviewer_lines),
        "years": args.years,
        "runs_s": [round(t, 3) for t in times],
        "median_s": round(statistics.median(times), 3),
        "flags": len(report.flags),
        "coauthorship_flags": sum(1 for f in report.flags if f.papers),
        "institution_flags": sum(1 for f in report.flags if f.institutions),
        "coauthored_papers_verified": verify(report),
        "unresolved": len(report.unresolved),
        "load_average": os.getloadavg(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=1_000_000)
    parser.add_argument("--per-paper", type=int, default=4)
    parser.add_argument("--institutions", type=int, default=5000)
    parser.add_argument(
        "--spread-minutes", type=int, default=10, help="minutes between two papers' dates"
    )
    parser.add_argument("--authors", type=int, default=50)
    parser.add_argument("--reviewers", type=int, default=500)
    parser.add_argument("--years", type=int, default=3)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--server", default=DEFAULT_SERVER)
    parser.add_argument("--db-name", default=DEFAULT_DB_NAME)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = parser.parse_args()

    _pg_admin(args.server, f'DROP DATABASE IF EXISTS "{args.db_name}" WITH (FORCE)')
    _pg_admin(args.server, f'CREATE DATABASE "{args.db_name}"')
    os.environ["DATABASE_URL"] = f"{args.server}/{args.db_name}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")
    try:
        result = run(args)
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep:
            _pg_admin(args.server, f'DROP DATABASE IF EXISTS "{args.db_name}" WITH (FORCE)')
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
