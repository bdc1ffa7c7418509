"""A reader's digest, feed page, private alert feed and news, at the archive's size: queries and
times for a reader with a large library beside one with a small one, and beside their SQL alone.

Issue #32 asks that a reader with 50 saved searches and 2,000 saved papers cost a bounded number
of queries per digest, measured at 1M papers. This makes two readers in the database
DATABASE_URL names (made anew on each run; the papers are the database's own):

- "large": 50 saved searches (20 by words, 15 hybrid with a category or a date range, 15 by
  meaning), 2,000 saved papers in 4 lists (half among the newest papers, half drawn from the
  whole archive), 20 followed researchers, a weekly digest;
- "small" (the reference): 1 saved search, 10 saved papers in 1 list, 1 followed researcher.

The researchers are made here (the synthetic archive has none before matching): 20, each the
second author of about 200 papers spread over the archive and of 25 of the newest 500.
Each saved search is checked once by `accounts.library.alerts.saved_search_check`, as the hourly
sweep does, at the day after the newest paper (the digest's "now", so that the windows hold
papers), and the alerts it keeps are dated an hour before; the archive is given a month of
synthetic news before that day and before today (the feed's 30 days) (`--changes`, 1,000 a day by
default, about arXiv's daily replacements: journal references of papers drawn at random,
"Bench. Synth. J." in their detail, replaced on each run). Then, interleaved reader by reader
for `--repeat` rounds, in this process with production settings (Redis cache, page cache off):

- the digest's build and send (`accounts.digests.digest_send`, locmem mail; its SentDigest and
  `last_digest_at` are reset between rounds, untimed);
- the feed page (`GET /following`) and the private Atom feed (`GET /me/alerts/<token>.atom`);
- the news query alone (`accounts.feed.paper_changes_for_user`, the feed's 30 days);

each with its queries counted and its wall time (p50, p95), and then the same calls' SELECTs
replayed by a bare cursor (their SQL alone: the reference for what Django and the templates
add). The sweep's check of one saved search is timed too (it is per search, by design).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_1m SEARCH_ENGINE=tantivy \\
        SEARCH_INDEX_DIR=benchmarks/out/search-index VECTOR_INDEX_DIR=benchmarks/out/vector-index \\
        python benchmarks/digest.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
sys.path.insert(0, str(ROOT))
# Production's settings, before Django reads them; the page cache off (these pages are private).
os.environ.update(
    {
        "WOVEPAPER_PRODUCTION": "1",
        "SECRET_KEY": secrets.token_urlsafe(48),
        "ALLOWED_HOSTS": "127.0.0.1",
        "REDIS_URL": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12"),
        "DB_CONN_MAX_AGE": "600",
        "STATIC_ROOT": str(OUT / "static"),
        "PAGE_CACHE_SECONDS": "0",
    }
)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Max  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from accounts import digests, follows  # noqa: E402
from accounts.feed import paper_changes_for_user  # noqa: E402
from accounts.library import alerts  # noqa: E402
from accounts.library.models import ReadingList, SavedPaper, SearchAlert  # noqa: E402
from accounts.library.saved_searches import SearchTerms, saved_search_create  # noqa: E402
from accounts.models import Follow, Profile, SentDigest  # noqa: E402
from benchmarks.semantic import LATENCY_QUERIES  # noqa: E402
from papers.models import Authorship, Paper, PaperChange  # noqa: E402
from researchers.models import Researcher  # noqa: E402
from researchers.names import name_key  # noqa: E402
from researchers.page_figures import researchers_update_stats  # noqa: E402

ANALYSED = (
    "papers_paperchange",
    "papers_authorship",
    "accounts_savedpaper",
    "accounts_readinglist",
    "accounts_searchalert",
    "accounts_savedsearch",
    "accounts_follow",
)
READERS = {"large": "bench-digest-large@example.org", "small": "bench-digest-small@example.org"}
BENCH_JOURNAL = "Bench. Synth. J."
BY_WORDS = [
    "quantum",
    "model",
    "field",
    "energy",
    "zeta function",
    "galaxies",
    "entanglement",
    "lattice",
    "xenon",
    "holonomy",
    "gyrokinetic",
    "photodissociation",
    '"dark matter"',
    '"neural network"',
    '"magnetic field"',
    '"phase transition"',
    "neural networks",
    "black hole",
    "spin chain",
    "graph coloring",
]
CATEGORIES = ["hep-th", "astro-ph.GA", "cond-mat.str-el", "quant-ph", "cs.LG"]
# The latency benchmark's topical queries, and five more.
BY_MEANING = [
    *LATENCY_QUERIES,
    "learning the structure of graphs from data",
    "cooling atoms with lasers",
    "the expansion of the universe is speeding up",
    "faster algorithms for sorting",
    "superconductivity at high temperature",
]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def load() -> str:
    return f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"


def ensure_researchers(count: int, papers: int) -> list[int]:
    """`count` researchers (the synthetic archive has none until matching runs), each the second
    author of `papers` papers spread over the archive and of some of the newest, made once."""
    made = []
    top = Paper.objects.aggregate(Max("pk"))["pk__max"]
    newest = list(Paper.objects.order_by("-published", "-id").values_list("pk", flat=True)[:500])
    for number in range(count):
        name = f"Bench Digest Researcher {number + 1}"
        researcher, _ = Researcher.objects.get_or_create(
            name_key=name_key(name), defaults={"display_name": name}
        )
        if researcher.paper_count < papers:
            step = max(top // papers, 1)
            ids = [*range(number + 1, top + 1, step), *newest[number::count]]
            Authorship.objects.filter(paper_id__in=ids, position=2).update(researcher=researcher)
            researchers_update_stats([researcher.pk])
        made.append(researcher.pk)
    return made


def make_reader(kind: str, *, data_now, rng: random.Random, researchers: list[int]):
    """The reader anew: its searches checked, its library and follows made."""
    User = get_user_model()
    User.objects.filter(username=READERS[kind]).delete()
    user = User.objects.create_user(READERS[kind], READERS[kind], secrets.token_urlsafe(16))
    Profile.objects.update_or_create(
        user=user,
        defaults={
            "onboarding": Profile.Onboarding.COMPLETED,
            "digest_frequency": Profile.Digest.WEEKLY,
        },
    )
    large = kind == "large"
    newest = list(
        Paper.objects.filter(is_deleted=False)
        .order_by("-published", "-id")
        .values_list("pk", flat=True)[:1000]
    )
    Follow.objects.bulk_create(
        [Follow(user=user, researcher_id=r) for r in researchers[: 20 if large else 1]]
    )
    if large:
        top = Paper.objects.aggregate(Max("pk"))["pk__max"]
        drawn = set(
            Paper.objects.filter(pk__in=rng.sample(range(1, top + 1), 1500)).values_list(
                "pk", flat=True
            )
        )
        paper_ids = list(dict.fromkeys([*newest, *sorted(drawn - set(newest))]))[:2000]
        assert len(paper_ids) == 2000, f"only {len(paper_ids)} papers to save"
        lists = 4
    else:
        paper_ids, lists = newest[:10], 1
    per_list = len(paper_ids) // lists
    for number in range(lists):
        reading_list = ReadingList.objects.create(user=user, name=f"List {number + 1}")
        SavedPaper.objects.bulk_create(
            [
                SavedPaper(reading_list=reading_list, paper_id=p)
                for p in paper_ids[number * per_list : (number + 1) * per_list]
            ],
            batch_size=1000,
        )
    terms: list[SearchTerms]
    if large:
        first_year = data_now.date().replace(year=data_now.year - 5, month=1, day=1)
        terms = [SearchTerms(q, mode="keyword") for q in BY_WORDS]
        terms += [
            SearchTerms(
                q,
                category=CATEGORIES[n % len(CATEGORIES)],
                date_from=first_year if n % 3 == 0 else None,
            )
            if n % 3 != 2
            else SearchTerms(q, date_from=first_year, date_to=date(data_now.year, 12, 31))
            for n, q in enumerate(BY_WORDS[:15])
        ]
        terms += [SearchTerms(q, mode="semantic") for q in BY_MEANING]
    else:
        terms = [SearchTerms("black hole")]
    checks = []
    for term in terms:
        saved = saved_search_create(user=user, terms=term)
        started = time.perf_counter()
        alerts.saved_search_check(saved=saved, now=data_now)
        checks.append((time.perf_counter() - started) * 1000)
    # As though the sweep had run an hour before the digest.
    SearchAlert.objects.filter(user=user).update(found_at=data_now - timedelta(hours=1))
    return user, checks


def make_news(per_day: int, days: int, rng: random.Random, extra: list[int], ends) -> int:
    """A month of synthetic news before each of `ends` (the data's date, for the digest, and
    today, for the feed's 30 days): journal references of papers drawn at random, plus one
    for each paper of `extra` (so each reader has some)."""
    PaperChange.objects.filter(detail__startswith=BENCH_JOURNAL).delete()
    top = Paper.objects.aggregate(Max("pk"))["pk__max"]
    rows = []
    for end in ends:
        drawn = rng.sample(range(1, top + 1), min(top, per_day * days))
        existing = set(Paper.objects.filter(pk__in=drawn).values_list("pk", flat=True))
        rows += [
            PaperChange(
                paper_id=p,
                kind=PaperChange.Kind.PUBLISHED,
                detail=f"{BENCH_JOURNAL} {n % 97 + 1} ({end.year})",
                recorded_at=end - timedelta(seconds=rng.uniform(60, days * 86400)),
            )
            for n, p in enumerate([*drawn, *extra])
            if p in existing or p in extra
        ]
    PaperChange.objects.bulk_create(rows, batch_size=5000)
    return len(rows)


class Recorder:
    """Counts a call's queries and keeps its SELECTs, to replay them bare."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, object]] = []

    def __call__(self, execute, sql, params, many, context):
        self.statements.append((sql, params))
        return execute(sql, params, many, context)


def reset_digest(user) -> None:
    SentDigest.objects.filter(user=user).delete()
    Profile.objects.filter(user=user).update(last_digest_at=None)


def measures(user, client: Client, token: str, data_now) -> dict:
    researcher_ids = follows.followed_researcher_ids(user=user)

    def digest():
        outcome = digests.digest_send(user_id=user.pk, now=data_now)
        assert outcome.status == "sent", outcome

    def feed():
        response = client.get("/following", secure=True)
        assert response.status_code == 200, response.status_code

    def atom():
        response = client.get(f"/me/alerts/{token}.atom", secure=True)
        assert response.status_code == 200, response.status_code

    def news():
        return paper_changes_for_user(
            user=user,
            researcher_ids=researcher_ids,
            since=timezone.now() - timedelta(days=30),
            limit=20,
        )

    return {"digest": digest, "feed page": feed, "Atom feed": atom, "news query": news}


def prepare(args, data_now, rng: random.Random) -> dict:
    """The two readers and the month of news; prints what they hold."""
    users, checks = {}, {}
    started = time.perf_counter()
    researchers = ensure_researchers(20, 200)
    for kind in READERS:
        users[kind], checks[kind] = make_reader(
            kind, data_now=data_now, rng=rng, researchers=researchers
        )
    extra = [
        paper_id
        for kind, many in (("small", 2), ("large", 20))
        for paper_id in SavedPaper.objects.filter(reading_list__user=users[kind]).values_list(
            "paper_id", flat=True
        )[:many]
    ]
    ends = sorted({data_now, timezone.now()})
    news = make_news(args.changes, 30, rng, extra, ends)
    with connection.cursor() as cursor:
        for table in ANALYSED:
            cursor.execute(f"ANALYZE {table}")
    print(
        f"readers made in {time.perf_counter() - started:.0f} s; {news:,} news, 30 days of "
        f"them before each of {', '.join(f'{end:%Y-%m-%d}' for end in ends)}"
    )
    for kind, user in users.items():
        print(
            f"  {kind}: {user.saved_searches.count()} saved searches, "
            f"{SavedPaper.objects.filter(reading_list__user=user).count():,} saved papers in "
            f"{ReadingList.objects.filter(user=user).count()} lists, "
            f"{Follow.objects.filter(user=user).count()} follows, "
            f"{SearchAlert.objects.filter(user=user).count()} alerts; one search's check "
            f"p50 {percentile(checks[kind], 0.5):.0f} ms, max {max(checks[kind]):.0f} ms"
        )
    return users


def run(calls: dict, users: dict, repeat: int):
    """Each call of each reader, interleaved, `repeat` times after one untimed round: wall
    times, query counts, and the statements of the last round."""
    names = list(calls["small"])
    times: dict[tuple[str, str], list[float]] = {(k, n): [] for k in READERS for n in names}
    queries: dict[tuple[str, str], list[int]] = {(k, n): [] for k in READERS for n in names}
    last: dict[tuple[str, str], list[tuple[str, object]]] = {}
    for round_ in range(repeat + 1):
        for name in names:
            for kind in READERS:
                if name == "digest":
                    reset_digest(users[kind])
                recorder = Recorder()
                with connection.execute_wrapper(recorder):
                    started = time.perf_counter()
                    calls[kind][name]()
                    elapsed = (time.perf_counter() - started) * 1000
                if round_:
                    times[kind, name].append(elapsed)
                    queries[kind, name].append(len(recorder.statements))
                last[kind, name] = recorder.statements
    return times, queries, last


def replay(last: dict, repeat: int, slowest: int):
    """The same SELECTs replayed by a bare cursor, as often: the SQL's own time; and the
    slowest statements of each call, for where the time goes."""
    bare: dict[tuple[str, str], list[float]] = {key: [] for key in last}
    each: dict[tuple[str, str], dict[str, list[float]]] = {key: {} for key in last}
    with connection.cursor() as cursor:
        for _ in range(repeat):
            for key, statements in last.items():
                total = 0.0
                for sql, params in statements:
                    if sql.lstrip().upper().startswith("SELECT"):
                        started = time.perf_counter()
                        cursor.execute(sql, params)
                        cursor.fetchall()
                        took = (time.perf_counter() - started) * 1000
                        each[key].setdefault(sql, []).append(took)
                        total += took
                bare[key].append(total)
    if slowest:
        for key, statements in each.items():
            ranked = sorted(statements.items(), key=lambda item: -percentile(item[1], 0.5))
            print(f"{key[1]}, {key[0]}: slowest statements, p50 ms")
            for sql, spent in ranked[:slowest]:
                print(f"  {percentile(spent, 0.5):7.2f}  {' '.join(sql.split())[:150]}")
    return bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--changes", type=int, default=1000, help="synthetic news a day")
    parser.add_argument("--slowest", type=int, default=0, help="print each call's slowest SQL")
    args = parser.parse_args()
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    call_command("collectstatic", "--noinput", verbosity=0)
    count = Paper.objects.count()
    newest = Paper.objects.aggregate(Max("published"))["published__max"]
    data_now = newest + timedelta(days=1)
    print(
        f"{count:,} papers ({connection.vendor}, {connection.settings_dict['NAME']}), newest "
        f"published {newest:%Y-%m-%d}; {os.cpu_count()} CPUs, {load()}"
    )
    users = prepare(args, data_now, random.Random(32))
    calls = {}
    for kind, user in users.items():
        client = Client(HTTP_X_FORWARDED_PROTO="https", SERVER_NAME="127.0.0.1")
        client.force_login(user)
        calls[kind] = measures(user, client, alerts.alert_feed_token(user=user), data_now)
    times, queries, last = run(calls, users, args.repeat)
    bare = replay(last, args.repeat, args.slowest)
    print(f"\n{args.repeat} rounds, {load()}")
    print(
        f"{'':12}{'reader':>7}{'queries':>9}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'SQL alone p50/p95':>20}{'p95 large/small':>17}"
    )
    for key in sorted(times, key=lambda key: list(calls["small"]).index(key[1])):
        kind, name = key
        counted = sorted(set(queries[key]))
        ratio = percentile(times[key], 0.95) / percentile(times["small", name], 0.95)
        print(
            f"{name:12}{kind:>7}{'/'.join(map(str, counted)):>9}"
            f"{percentile(times[key], 0.5):>9.1f}{percentile(times[key], 0.95):>9.1f}"
            f"{percentile(bare[key], 0.5):>11.1f} / {percentile(bare[key], 0.95):<6.1f}"
            f"{ratio:>15.2f}"
        )
    print(f"load average at the end: {load()}")


if __name__ == "__main__":
    main()
