"""Settings for wovepaper.

Everything comes from the environment. With nothing set, the site runs on an embedded default:
a SQLite file under var/, Celery tasks run inline, the local-memory cache and console email.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG and env_bool("WOVEPAPER_PRODUCTION"):
        raise ImproperlyConfigured("SECRET_KEY must be set in production")
    # Only the embedded default and the tests get here; production sets WOVEPAPER_PRODUCTION.
    SECRET_KEY = "insecure-embedded-default-key-not-for-production-use-0123456789"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
SITE_URL = env("SITE_URL", "http://127.0.0.1:8000").rstrip("/")
SITE_ID = 1

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sites",
    "django.contrib.humanize",
    "django_htmx",
    "wovepaper",
    "rest_framework",
    "rest_framework.authtoken",
    "allauth",
    "accounts.apps.SignInConfig",  # allauth.account, under the admin heading "Sign-in"
    "allauth.socialaccount",
    "allauth.socialaccount.providers.github",
    "allauth.socialaccount.providers.orcid",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "csp",
    "django.contrib.sitemaps",
    "papers",
    "institutions",
    "researchers",
    "accounts",
    "chat",
]

MIDDLEWARE = [
    # Outermost, so that every response has the policy: Django's 400 for a Host not in
    # ALLOWED_HOSTS is made inside the first middleware that reads the host.
    "csp.middleware.CSPMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before anything reads the body (the next middleware, CSRF's check of a form's token).
    "wovepaper.middleware.RequestBodyLimitMiddleware",
    "wovepaper.middleware.ControlCharacterMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "wovepaper.middleware.PrivateByDefaultMiddleware",
    "wovepaper.lib.replicas.ReplicaReadsMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "accounts.reader_state.ReaderStateCookieMiddleware",
]

# The largest request body read at all (wovepaper.middleware.RequestBodyLimitMiddleware): a
# library import's 5 MB file (accounts.library.importing.IMPORT_MAX_BYTES) and its form around it.
REQUEST_MAX_BODY_BYTES = env_int("REQUEST_MAX_BODY_BYTES", 6 * 1024 * 1024)

ROOT_URLCONF = "wovepaper.urls"
WSGI_APPLICATION = "wovepaper.wsgi.application"
ASGI_APPLICATION = "wovepaper.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "wovepaper.context_processors.site",
                "accounts.context_processors.onboarding",
            ],
        },
    },
    {
        # Papers' list items alone (papers/jinja.py says why), asked for by this engine's name.
        "NAME": "jinja2",
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "papers.jinja.environment"},
    },
]

# The embedded default is a SQLite file; DATABASE_URL=postgres://… selects PostgreSQL (psycopg 3).
DATA_DIR = Path(env("WOVEPAPER_DATA_DIR", str(BASE_DIR / "var")))
DATABASES = {
    "default": dj_database_url.parse(
        env("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'wovepaper.sqlite3'}",
        conn_max_age=env_int("DB_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    if DATABASES["default"]["NAME"] != ":memory:":
        Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }


def postgres_timeouts(database: dj_database_url.DBConfig) -> dj_database_url.DBConfig:
    """A PostgreSQL database's settings with the timeouts that make a silent server fail fast.

    Connecting gives up after DB_CONNECT_TIMEOUT s (psycopg's own default is 130 s, longer than
    gunicorn's 60 s worker timeout, so a frozen host or a partition held every worker and then
    answered gunicorn's bare 500); the request answers 503 with Retry-After
    (wovepaper.health.server_error). A statement is cancelled by the server after
    DB_STATEMENT_TIMEOUT s: off by default, because migrations and workers' batches may run
    longer; deploy/gunicorn.conf.py sets it for the web, below its worker timeout.
    """
    if database["ENGINE"] != "django.db.backends.postgresql":
        return database
    options = database.setdefault("OPTIONS", {})
    options.setdefault("connect_timeout", env_int("DB_CONNECT_TIMEOUT", 5))
    if statement_timeout := env_int("DB_STATEMENT_TIMEOUT", 0):
        options["options"] = f"-c statement_timeout={statement_timeout * 1000}"
    return database


postgres_timeouts(DATABASES["default"])
# Read replicas for anonymous public pages (wovepaper/lib/replicas.py): space-separated URLs of
# PostgreSQL hot standbys of DATABASE_URL, each an alias `replica1`, `replica2`, ...
DATABASE_REPLICAS: list[str] = []
for _n, _url in enumerate(env("DATABASE_REPLICA_URLS", "").split(), start=1):
    DATABASES[f"replica{_n}"] = postgres_timeouts(
        dj_database_url.parse(_url, conn_max_age=env_int("DB_CONN_MAX_AGE", 0))
    )
    DATABASE_REPLICAS.append(f"replica{_n}")
DATABASE_ROUTERS = ["wovepaper.lib.replicas.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL")
if REDIS_URL:
    CACHES = {
        # What can be lost (pages, figures, session reads, rate-limit counters): with Redis down
        # or frozen it answers as an empty cache after a short timeout, and logs it once
        # (wovepaper/lib/cache.py).
        "default": {
            "BACKEND": "wovepaper.lib.cache.FailOpenRedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {
                "socket_connect_timeout": float(env("REDIS_CACHE_TIMEOUT", "0.25")),
                "socket_timeout": float(env("REDIS_CACHE_TIMEOUT", "0.25")),
                "RETRY_AFTER": float(env("REDIS_CACHE_RETRY_AFTER", "5")),
            },
        },
        # What must hold across processes (the harvest lock, the external APIs' shared rate
        # limiter): no fallback to anything process-local; an unreachable Redis is an error.
        "coordination": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {
                "socket_connect_timeout": float(env("REDIS_COORDINATION_TIMEOUT", "5")),
                "socket_timeout": float(env("REDIS_COORDINATION_TIMEOUT", "5")),
            },
        },
        # Each web process's own copy of the cached pages it served last (wovepaper.lib.pagecache):
        # a hit reads only the pages' version tokens from Redis, not the page.
        "pages_near": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "pages-near",
            "OPTIONS": {"MAX_ENTRIES": env_int("PAGE_CACHE_NEAR_ENTRIES", 300)},
        },
    }
    # Sessions read through the cache and written to the database: any web process serves any
    # request behind a load balancer, and a Redis restart signs nobody out.
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
else:
    # One process (the embedded default): both aliases are the same local-memory store.
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "coordination": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]

# Sign-in (django-allauth): email and password, no usernames. Verification is mandatory: only
# then can sign-up answer an address that has an account exactly as one that has none (allauth
# mails the owner instead), so the form cannot be used to find out who has an account.
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/following"
ACCOUNT_ADAPTER = "accounts.adapter.AccountAdapter"
SOCIALACCOUNT_ADAPTER = "accounts.adapter.SocialAccountAdapter"
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_EMAIL_VERIFICATION = env("ACCOUNT_EMAIL_VERIFICATION", "mandatory")
ACCOUNT_PREVENT_ENUMERATION = True
ACCOUNT_FORMS = {"signup": "accounts.forms.SignupForm"}
# An account whose address was never confirmed and that never signed in is removed after this
# many days (accounts.account_data.unverified_accounts_expire, daily): a sign-up with someone
# else's address leaves nothing behind.
ACCOUNT_UNVERIFIED_EXPIRE_DAYS = env_int("ACCOUNT_UNVERIFIED_EXPIRE_DAYS", 7)
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_CONFIRM_EMAIL_ON_GET = False
ACCOUNT_LOGOUT_REDIRECT_URL = "/"
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[wovepaper] "
ACCOUNT_DEFAULT_HTTP_PROTOCOL = "https" if env_bool("WOVEPAPER_PRODUCTION") else "http"
# allauth's own limits, kept in the cache (Redis in production): failed sign-ins per address
# and per account, sign-ups, resets and confirmation emails.
ACCOUNT_RATE_LIMITS = {
    "login": env("RATE_LIMIT_LOGIN", "30/m/ip"),
    "login_failed": env("RATE_LIMIT_LOGIN_FAILED", "10/m/ip,5/5m/key"),
    "signup": env("RATE_LIMIT_SIGNUP", "20/m/ip"),
    "confirm_email": "1/3m/key",
    "reset_password": "20/m/ip,5/m/key",
    "reset_password_from_key": "20/m/ip",
    "change_password": "5/m/user",
    "manage_email": "10/m/user",
    "reauthenticate": "10/m/user",
}
# Social sign-in: a provider appears only when its keys are set in the environment.
SOCIALACCOUNT_PROVIDERS: dict = {}
if env("GITHUB_CLIENT_ID") and env("GITHUB_CLIENT_SECRET"):
    SOCIALACCOUNT_PROVIDERS["github"] = {
        "APPS": [{"client_id": env("GITHUB_CLIENT_ID"), "secret": env("GITHUB_CLIENT_SECRET")}],
        "SCOPE": ["user:email"],
    }
if env("ORCID_CLIENT_ID") and env("ORCID_CLIENT_SECRET"):
    SOCIALACCOUNT_PROVIDERS["orcid"] = {
        "APPS": [{"client_id": env("ORCID_CLIENT_ID"), "secret": env("ORCID_CLIENT_SECRET")}],
        # ORCID_BASE_DOMAIN=sandbox.orcid.org for testing against ORCID's sandbox.
        "BASE_DOMAIN": env("ORCID_BASE_DOMAIN", "orcid.org"),
        "MEMBER_API": env_bool("ORCID_MEMBER_API"),
    }
SOCIALACCOUNT_EMAIL_AUTHENTICATION = False
SOCIALACCOUNT_QUERY_EMAIL = True

# Digests: how long the unsubscribe link in a digest email stays valid; papers listed at most.
DIGEST_UNSUBSCRIBE_MAX_AGE = env_int("DIGEST_UNSUBSCRIBE_MAX_AGE", 90 * 24 * 3600)
DIGEST_MAX_PAPERS = env_int("DIGEST_MAX_PAPERS", 50)
# A paper matched to a followed researcher after the last digest still goes in the next one if
# it was published at most this many days before that digest.
DIGEST_LATE_MATCH_DAYS = env_int("DIGEST_LATE_MATCH_DAYS", 14)

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Production serves collected files (collectstatic into STATIC_ROOT); the embedded default and the
# tests serve straight from the apps' static folders, so nothing needs collecting first.
STATIC_ROOT = (
    Path(env("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
    if env_bool("WOVEPAPER_PRODUCTION") or env("STATIC_ROOT")
    else None
)
WHITENOISE_USE_FINDERS = STATIC_ROOT is None
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if env_bool("WOVEPAPER_PRODUCTION")
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Email: console in the embedded default, SMTP when EMAIL_HOST is set.
EMAIL_HOST = env("EMAIL_HOST")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = env_int("EMAIL_PORT", 587)
    EMAIL_HOST_USER = env("EMAIL_HOST_USER")
    EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
CONTACT_EMAIL = env("CONTACT_EMAIL", "hello@wovepaper.org")
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", f"wovepaper <{CONTACT_EMAIL}>")

# Celery: with no broker, tasks run inline so the embedded default needs no services.
CELERY_BROKER_URL = env("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND") or None
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 6 * 3600)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 6 * 3600 - 60)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Broker options as JSON. Redis redelivers a task that is not acknowledged within
# `visibility_timeout` (1 h by default) and RabbitMQ closes a consumer after `consumer_timeout`
# (30 min, set on the server): harvest tasks hand over to a continuation after
# HARVEST_TASK_SECONDS to stay well inside both (docs/operations.md, "Running it").
CELERY_BROKER_TRANSPORT_OPTIONS = json.loads(env("CELERY_BROKER_TRANSPORT_OPTIONS") or "{}")
# Queueing from a page or a write (wovepaper.lib.queueing): each publish gives up after
# QUEUE_PUBLISH_TIMEOUT s, and after a failure this process leaves the broker alone for
# QUEUE_RETRY_AFTER s; the periodic sweeps take up what was not queued.
QUEUE_PUBLISH_TIMEOUT = float(env("QUEUE_PUBLISH_TIMEOUT", "0.5"))
QUEUE_RETRY_AFTER = float(env("QUEUE_RETRY_AFTER", "5"))
# Prepended to every queue name, so that two deployments (or test runs) can share a broker.
CELERY_QUEUE_PREFIX = env("CELERY_QUEUE_PREFIX")
CELERY_TASK_DEFAULT_QUEUE = f"{CELERY_QUEUE_PREFIX}default"
CELERY_BEAT_SCHEDULE: dict = {}
# Once a day at DIGEST_HOUR (UTC): daily digests, and weekly ones not yet sent this ISO week.
# Each run sends only what is not recorded as sent, so a rerun or a retry is harmless.
CELERY_BEAT_SCHEDULE["accounts-send-digests"] = {
    "task": "accounts.tasks.send_digests",
    "schedule": crontab(minute=0, hour=env_int("DIGEST_HOUR", 6)),
}
ALERT_CHECK_MINUTE = env_int("ALERT_CHECK_MINUTE", 40)
# Saved searches look for new papers each hour (ALERT_CHECK_MINUTE past it), so the digest at
# DIGEST_HOUR and the alert feeds carry what the last harvest brought.
CELERY_BEAT_SCHEDULE["accounts-check-saved-searches"] = {
    "task": "accounts.tasks.check_saved_searches",
    "schedule": crontab(minute=ALERT_CHECK_MINUTE),
}
CELERY_BEAT_SCHEDULE["accounts-expire-unverified"] = {
    "task": "accounts.tasks.expire_unverified_accounts",
    "schedule": crontab(minute=15, hour=env_int("DIGEST_HOUR", 6)),
}
CELERY_TASK_ROUTES: dict = {}
# Matching: the backlog newest first, and researcher figures refreshed oldest first.
CELERY_TASK_ROUTES.update(
    {
        "researchers.match_papers": {"queue": f"{CELERY_QUEUE_PREFIX}match"},
        "researchers.match_next_batch": {"queue": f"{CELERY_QUEUE_PREFIX}match"},
        "researchers.refresh_figures": {"queue": f"{CELERY_QUEUE_PREFIX}match"},
        "researchers.refresh_institutions": {"queue": f"{CELERY_QUEUE_PREFIX}match"},
        "researchers.merge_same_person": {"queue": f"{CELERY_QUEUE_PREFIX}match"},
        "papers.fetch_citations": {"queue": f"{CELERY_QUEUE_PREFIX}match"},
        # One worker consumes `harvest`: arXiv counts requests from all our machines together.
        "papers.harvest_window": {"queue": f"{CELERY_QUEUE_PREFIX}harvest"},
        "papers.harvest_daily": {"queue": f"{CELERY_QUEUE_PREFIX}harvest"},
        "papers.harvest_resume_stale": {"queue": f"{CELERY_QUEUE_PREFIX}harvest"},
    }
)
CELERY_BEAT_SCHEDULE.update(
    {
        "match-next-batch": {"task": "researchers.match_next_batch", "schedule": 60.0},
        "refresh-researcher-figures": {"task": "researchers.refresh_figures", "schedule": 3600.0},
    }
)

# External services: base URLs can be pointed elsewhere by tests and operators.
ARXIV_OAI_URL = env("ARXIV_OAI_URL", "https://oaipmh.arxiv.org/oai")
SEMANTIC_SCHOLAR_API_URL = env(
    "SEMANTIC_SCHOLAR_API_URL", "https://api.semanticscholar.org/graph/v1"
)
SEMANTIC_SCHOLAR_API_KEY = env("SEMANTIC_SCHOLAR_API_KEY")
OPENALEX_API_URL = env("OPENALEX_API_URL", "https://api.openalex.org")
OPENALEX_API_KEY = env("OPENALEX_API_KEY")
OPENALEX_EMAIL = env("OPENALEX_EMAIL", CONTACT_EMAIL)
ROR_API_URL = env("ROR_API_URL", "https://api.ror.org/v2")
ROR_CLIENT_ID = env("ROR_CLIENT_ID")
HTTP_USER_AGENT = f"wovepaper/0.1 (+{SITE_URL}; mailto:{CONTACT_EMAIL})"

# External API calls (wovepaper/http.py): timeouts, retries with backoff, per-service rates in
# requests per second, shared by every worker through the cache (Redis in production).
HTTP_TIMEOUT = float(env("HTTP_TIMEOUT", "30"))
HTTP_CONNECT_TIMEOUT = float(env("HTTP_CONNECT_TIMEOUT", "10"))
HTTP_RETRY_ATTEMPTS = env_int("HTTP_RETRY_ATTEMPTS", 5)
HTTP_RETRY_BACKOFF = float(env("HTTP_RETRY_BACKOFF", "2"))
HTTP_RETRY_BACKOFF_MAX = float(env("HTTP_RETRY_BACKOFF_MAX", "60"))
HTTP_RETRY_AFTER_MAX = float(env("HTTP_RETRY_AFTER_MAX", "300"))
SEMANTIC_SCHOLAR_RATE = float(env("SEMANTIC_SCHOLAR_RATE", "1"))
OPENALEX_RATE = float(env("OPENALEX_RATE", "10"))
ROR_RATE = float(env("ROR_RATE", "6"))

# Matching (researchers.matching): papers per batch (OpenAlex OR-filters take 100), when papers
# a source did not know or a failed batch are tried again, when researcher figures are stale.
MATCH_BATCH_SIZE = env_int("MATCH_BATCH_SIZE", 100)
MATCH_UNKNOWN_RETRY_DAYS = env_int("MATCH_UNKNOWN_RETRY_DAYS", 14)
# A paper's citations (papers.citations.fetch) are fetched again after this many days.
CITATIONS_REFRESH_DAYS = env_int("CITATIONS_REFRESH_DAYS", 30)
# The next papers due for citations (never asked first, then those older than
# CITATIONS_REFRESH_DAYS), one batch of MATCH_BATCH_SIZE every this many seconds: every 60 s is
# 144,000 papers a day, all of arXiv within CITATIONS_REFRESH_DAYS. 0 leaves it to
# `manage.py fetch_citations`.
CITATIONS_FETCH_SECONDS = env_int("CITATIONS_FETCH_SECONDS", 60)
# Papers per batch whose references are read from Semantic Scholar's references endpoint (the
# only source of influence, intents and citing sentences): one request or more per paper, where
# the batch costs one per 100 papers; 0 turns it off (papers.citations.fetch).
CITATIONS_S2_REFERENCES_PER_BATCH = env_int("CITATIONS_S2_REFERENCES_PER_BATCH", 10)
if CITATIONS_FETCH_SECONDS > 0:
    CELERY_BEAT_SCHEDULE["fetch-citations"] = {
        "task": "papers.fetch_citations",
        "schedule": float(CITATIONS_FETCH_SECONDS),
        "kwargs": {"limit": MATCH_BATCH_SIZE},
    }
MATCH_FAILED_RETRY_MINUTES = env_int("MATCH_FAILED_RETRY_MINUTES", 30)
# A batch holds its papers for this lease (researchers.matching.lease), renewed every third of
# it while the batch works, so that no other worker matches them meanwhile; the papers of a
# worker that died are matched again once it lapses, before the rest of the backlog.
MATCH_CLAIM_SECONDS = env_int("MATCH_CLAIM_SECONDS", 120)
# The backlog (researchers.matching.backlog) takes papers of the last MATCH_RECENT_DAYS first,
# then sweeps the whole table for papers never tried, examining at most MATCH_SWEEP_ROWS papers
# per batch (index ranges): a full pass over 2.6M papers takes 130 batches when nothing is found.
# A matching task whose batch could not reach the services is retried this many times, after
# MATCH_TASK_RETRY_BACKOFF seconds doubling up to MATCH_TASK_RETRY_BACKOFF_MAX (with jitter),
# then fails: Celery monitors (Flower) show the retries and the failure.
MATCH_TASK_RETRIES = env_int("MATCH_TASK_RETRIES", 5)
MATCH_TASK_RETRY_BACKOFF = env_int("MATCH_TASK_RETRY_BACKOFF", 60)
MATCH_TASK_RETRY_BACKOFF_MAX = env_int("MATCH_TASK_RETRY_BACKOFF_MAX", 1800)
# Backlog batches run as up to MATCH_PARALLEL_BATCHES chains at once (set it to the number of
# match worker processes), each batch queuing the next while the backlog lasts; a chain whose
# worker died frees its slot MATCH_CHAIN_SECONDS after its last batch started.
MATCH_PARALLEL_BATCHES = env_int("MATCH_PARALLEL_BATCHES", 2)
MATCH_CHAIN_SECONDS = env_int("MATCH_CHAIN_SECONDS", 900)
MATCH_RECENT_DAYS = env_int("MATCH_RECENT_DAYS", 7)
MATCH_SWEEP_ROWS = env_int("MATCH_SWEEP_ROWS", 20_000)
# After a matching run that recorded identity conflicts, merge the records the sources' ids prove
# to be one person (researchers.curation.same_person; each merge reversible, with its history).
MATCH_MERGE_SAME_PERSON = env_bool("MATCH_MERGE_SAME_PERSON", True)
FIGURES_MAX_AGE_DAYS = env_int("FIGURES_MAX_AGE_DAYS", 30)
# Readers' reports of wrong matches: how many one account may file in an hour.
MATCH_REPORTS_PER_HOUR = env_int("MATCH_REPORTS_PER_HOUR", 10)
# Readers' claims to be a researcher: how many may wait for the curators at once, and how many
# one account may make in an hour (accounts.ownership.claims.researcher_claim).
CLAIMS_MAX_PENDING = env_int("CLAIMS_MAX_PENDING", 5)
CLAIMS_PER_HOUR = env_int("CLAIMS_PER_HOUR", 10)

# arXiv OAI-PMH harvesting. arXiv asks for at most one request every 3 s over all our machines;
# the limiter lives in the cache (Redis in production) so every worker shares it.
ARXIV_MIN_INTERVAL = float(env("ARXIV_MIN_INTERVAL", "3"))
# arXiv can take ~180 s before answering 503 on busy days, so the read timeout must be longer.
ARXIV_OAI_TIMEOUT = float(env("ARXIV_OAI_TIMEOUT", "200"))
ARXIV_OAI_MAX_RETRIES = env_int("ARXIV_OAI_MAX_RETRIES", 8)
ARXIV_BACKOFF_BASE = float(env("ARXIV_BACKOFF_BASE", "30"))
ARXIV_BACKOFF_CAP = float(env("ARXIV_BACKOFF_CAP", "900"))
# A Retry-After longer than this is shortened to it (a misbehaving proxy must not stall us a day).
ARXIV_RETRY_AFTER_CAP = float(env("ARXIV_RETRY_AFTER_CAP", "900"))
HARVEST_SETS = env_list("HARVEST_SETS", "cs,math,physics,q-bio,q-fin,stat,eess,econ")
HARVEST_METADATA_PREFIX = env("HARVEST_METADATA_PREFIX", "arXivRaw")
# One harvest per set: the set's lock lapses this many seconds after its holder dies (a live
# harvest's heartbeat renews it every third of it), and a running run whose heartbeat is
# older is shown as stale and resumed by papers.harvest_resume_stale.
HARVEST_LOCK_TTL = env_int("HARVEST_LOCK_TTL", 120)

# Each Celery worker writes what it can do here every WORKER_HEALTH_INTERVAL s
# (wovepaper.worker_health; read by deploy/healthcheck.sh).
WORKER_HEALTH_DIR = env("WORKER_HEALTH_DIR", str(BASE_DIR / "var" / "health"))
WORKER_HEALTH_INTERVAL = env_int("WORKER_HEALTH_INTERVAL", 20)
# ... and the health check fails for a worker whose queue's oldest waiting task (on Redis) has
# waited longer than this (0: never).
WORKER_QUEUE_MAX_AGE = env_int("WORKER_QUEUE_MAX_AGE", 3600)
# A harvest task hands the rest of its run to a continuation task after this long (at a page
# boundary), so that no task outlives the brokers' timeouts.
HARVEST_TASK_SECONDS = env_int("HARVEST_TASK_SECONDS", 600)
# A harvest task that finds its set locked tries again after HARVEST_LOCK_TTL, this many times
# (a redelivered task whose dead predecessor's lock has not lapsed yet), then gives up.
HARVEST_LOCKED_RETRIES = env_int("HARVEST_LOCKED_RETRIES", 3)
# Matching runs in another worker; without a broker (tasks inline) it is left to `manage.py`.
HARVEST_ENQUEUE_MATCHING = env_bool("HARVEST_ENQUEUE_MATCHING", bool(CELERY_BROKER_URL))
# Harvest pages index their papers as they land; this sweep catches up on anything a lost
# task or an interrupted import left out of the search index.
CELERY_BEAT_SCHEDULE["papers-index-search-pending"] = {
    "task": "papers.index_search_pending",
    "schedule": env_int("SEARCH_INDEX_SWEEP_SECONDS", 900),
}
# Runs whose process died (stale heartbeat) are resumed from their checkpoint.
CELERY_BEAT_SCHEDULE["papers-harvest-resume-stale"] = {
    "task": "papers.harvest_resume_stale",
    "schedule": env_int("HARVEST_RESUME_STALE_SECONDS", 300),
}

# Search (wovepaper.lib.search): "database" is the database's own full text (SQLite FTS5, the
# embedded default; PostgreSQL, a fallback that ranks a bounded pool of the matches of common
# words), "tantivy" an index on local disk (one indexer writes it, from the Celery queue
# "search" with one worker process, and every web process reads it), "opensearch" a cluster
# at OPENSEARCH_URL (the same documents; `pip install .[opensearch]`).
# Build an engine's index with `manage.py rebuild_search_index`; writes then feed it after
# commit.
SEARCH_ENGINE = env("SEARCH_ENGINE", "database")
SEARCH_INDEX_DIR = Path(env("SEARCH_INDEX_DIR", str(DATA_DIR / "search-index")))
OPENSEARCH_URL = env("OPENSEARCH_URL", "http://127.0.0.1:9200")
OPENSEARCH_INDEX_PREFIX = env("OPENSEARCH_INDEX_PREFIX", "wovepaper")
SEARCH_COLLECTIONS = {
    "papers": "papers.search.PAPERS",
    "researchers": "researchers.name_search.RESEARCHERS",
    "institutions": "institutions.name_search.INSTITUTIONS",
}
CELERY_TASK_ROUTES["search.index_engine"] = {"queue": f"{CELERY_QUEUE_PREFIX}search"}
CELERY_TASK_ROUTES["search.engine_catch_up"] = {"queue": f"{CELERY_QUEUE_PREFIX}search"}
# With an engine, the indexer also catches up periodically on every record changed since its
# last round (a lost message, a worker that was down): records whose `modified_at` is newer
# than the mark it keeps beside the index. With no mark yet (a new index directory) it looks
# back SEARCH_CATCH_UP_FIRST_HOURS.
SEARCH_CATCH_UP_FIRST_HOURS = env_int("SEARCH_CATCH_UP_FIRST_HOURS", 24)
if SEARCH_ENGINE != "database":
    CELERY_BEAT_SCHEDULE["search-engine-catch-up"] = {
        "task": "search.engine_catch_up",
        "schedule": env_int("SEARCH_CATCH_UP_SECONDS", 900),
    }
# Did you mean (papers.spelling): a search's word that no paper writes is corrected to the word
# one edit away that the most papers write, at least SPELLING_MIN_PAPERS of them, for words of
# SPELLING_MIN_LENGTH letters or more. The words papers write are counted once a day, at
# SPELLING_COUNT_HOUR (UTC).
SPELLING_MIN_LENGTH = max(3, env_int("SPELLING_MIN_LENGTH", 4))
SPELLING_MIN_PAPERS = max(1, env_int("SPELLING_MIN_PAPERS", 1))
CELERY_BEAT_SCHEDULE["papers-count-written-words"] = {
    "task": "papers.count_written_words",
    "schedule": crontab(minute=30, hour=env_int("SPELLING_COUNT_HOUR", 2)),
}
# A language model behind an OpenAI-compatible API (wovepaper.lib.llm): paper analyses and chat
# answers. Without LLM_BASE_URL and LLM_MODEL nothing calls a model: analyses hold only the
# parts computed without one and chat answers by quoting abstracts.
LLM_BASE_URL = env("LLM_BASE_URL")
LLM_MODEL = env("LLM_MODEL")
LLM_API_KEY = env("LLM_API_KEY")
# Seconds a model call may take: a chat answer waits this long for each piece of its stream.
LLM_TIMEOUT = env_int("LLM_TIMEOUT", 30)
LLM_ANALYSIS_TIMEOUT = env_int("LLM_ANALYSIS_TIMEOUT", 120)
# Paper analysis (papers.analysis) on its own queue, so slow model calls never hold up search
# documents or digests. Celery beat analyses the newest papers without a current analysis.
CELERY_TASK_ROUTES["papers.analyse_paper"] = {"queue": f"{CELERY_QUEUE_PREFIX}analysis"}
CELERY_TASK_ROUTES["papers.analyse_backlog"] = {"queue": f"{CELERY_QUEUE_PREFIX}analysis"}
# Chat with the papers (chat.answers): questions one account may ask an hour, and model
# tokens its answers may use in 24 hours.
CHAT_MESSAGES_PER_HOUR = env_int("CHAT_MESSAGES_PER_HOUR", 30)
CHAT_TOKENS_PER_DAY = env_int("CHAT_TOKENS_PER_DAY", 100_000)
# Set aside for each answer from a model until it is made (about what one cost in a hostile
# test: 20 answers used 180,600 tokens).
CHAT_TOKENS_RESERVED_PER_ANSWER = env_int("CHAT_TOKENS_RESERVED_PER_ANSWER", 10_000)
ANALYSIS_BATCH_SIZE = env_int("ANALYSIS_BATCH_SIZE", 200)
CELERY_BEAT_SCHEDULE["papers-analyse-backlog"] = {
    "task": "papers.analyse_backlog",
    "schedule": env_int("ANALYSIS_BACKLOG_SECONDS", 600),
}
# Search by meaning (wovepaper.lib.search.vectors): "usearch", an HNSW index file per
# collection and model under VECTOR_INDEX_DIR, written by the search queue's worker and
# memory-mapped by web processes; "pgvector", a table with an HNSW index per collection and
# model in the database VECTOR_DATABASE (wovepaper.lib.search.pgvector); "exact", every vector
# compared in numpy (small sites); "auto" (the default): pgvector where that database is
# PostgreSQL with the extension available, else usearch (so the embedded SQLite default and
# a PostgreSQL without pgvector keep usearch).
VECTOR_ENGINE = env("VECTOR_ENGINE", "auto")
# The database of pgvector's tables: the site's own, or another PostgreSQL (one with the
# extension, say) given by VECTOR_DATABASE_URL as the alias "vectors". Nothing is migrated
# there: the backend creates its tables itself.
VECTOR_DATABASE = "default"
if env("VECTOR_DATABASE_URL"):
    DATABASES["vectors"] = postgres_timeouts(
        dj_database_url.parse(
            env("VECTOR_DATABASE_URL"), conn_max_age=env_int("DB_CONN_MAX_AGE", 0)
        )
    )
    VECTOR_DATABASE = "vectors"
VECTOR_INDEX_DIR = Path(env("VECTOR_INDEX_DIR", str(DATA_DIR / "vector-index")))
CELERY_TASK_ROUTES["search.index_vectors"] = {"queue": f"{CELERY_QUEUE_PREFIX}search"}
# Each batch of new or changed vectors goes to a small delta beside the main index file; the
# writer merges it into a new main file when it holds VECTOR_DELTA_MAX vectors, and celery
# beat every VECTOR_MERGE_SECONDS.
VECTOR_DELTA_MAX = env_int("VECTOR_DELTA_MAX", 10_000)
CELERY_TASK_ROUTES["search.merge_vectors"] = {"queue": f"{CELERY_QUEUE_PREFIX}search"}
if VECTOR_ENGINE in ("usearch", "auto"):
    CELERY_BEAT_SCHEDULE["search-merge-vectors"] = {
        "task": "search.merge_vectors",
        "schedule": env_int("VECTOR_MERGE_SECONDS", 3600),
    }
# The vector index is compared with the stored vectors by the search worker every
# VECTOR_RECONCILE_SECONDS (search.reconcile_vectors), in id ranges of VECTOR_RECONCILE_RANGE
# rows: the newest VECTOR_RECONCILE_NEWEST, then the next VECTOR_RECONCILE_ROWS of a walk over
# all of them; an entry missing (a lost message) or no longer current is written again.
CELERY_TASK_ROUTES["search.reconcile_vectors"] = {"queue": f"{CELERY_QUEUE_PREFIX}search"}
# The keyword engine's index is compared with its records the same way by
# search.reconcile_engine every ENGINE_RECONCILE_SECONDS: the next ENGINE_RECONCILE_ROWS
# records of a walk over all of them, ENGINE_RECONCILE_RANGE ids a query; a document missing
# (a lost message, for a record unchanged since) is written.
CELERY_TASK_ROUTES["search.reconcile_engine"] = {"queue": f"{CELERY_QUEUE_PREFIX}search"}
ENGINE_RECONCILE_RANGE = env_int("ENGINE_RECONCILE_RANGE", 1_000)
ENGINE_RECONCILE_ROWS = env_int("ENGINE_RECONCILE_ROWS", 100_000)
if SEARCH_ENGINE != "database":
    CELERY_BEAT_SCHEDULE["search-reconcile-engine"] = {
        "task": "search.reconcile_engine",
        "schedule": env_int("ENGINE_RECONCILE_SECONDS", 600),
    }
VECTOR_RECONCILE_RANGE = env_int("VECTOR_RECONCILE_RANGE", 10_000)
VECTOR_RECONCILE_NEWEST = env_int("VECTOR_RECONCILE_NEWEST", 20_000)
VECTOR_RECONCILE_ROWS = env_int("VECTOR_RECONCILE_ROWS", 100_000)
if VECTOR_ENGINE != "exact":
    CELERY_BEAT_SCHEDULE["search-reconcile-vectors"] = {
        "task": "search.reconcile_vectors",
        "schedule": env_int("VECTOR_RECONCILE_SECONDS", 600),
    }
# Sentence embeddings (papers.search.embedding_stage, wovepaper.lib.embeddings): computed on the
# queue "embed" after harvest pages and import batches commit, by as many worker processes on as
# many machines as wanted; `manage.py embed_papers` backfills, and the sweep below catches up.
# The default is all-MiniLM-L6-v2 on ONNX Runtime with int8 matrix products: 1.19x torch's
# papers per CPU-second at the same known-item recall and category agreement (docs/performance.md).
EMBEDDING_ENCODER = env("EMBEDDING_ENCODER", "wovepaper.lib.embeddings.MiniLMOnnxInt8Encoder")
# Whether a query means anything here (search's second part, semantic mode, chat's sources,
# alerts) is decided for the query as a whole (wovepaper.lib.search.evidence): papers hold
# enough of its words, and its nearest paper's cosine similarity is at least
# SEARCH_MEANING_THRESHOLD. It belongs to the encoder: chosen for the default one on tuning
# halves of hand-written paraphrases and reader questions and on meaningless queries already
# looked at, reported on the other halves and on fresh meaningless queries (`python
# benchmarks/semantic.py evidence`); another EMBEDDING_ENCODER needs its own.
SEARCH_MEANING_EVIDENCE = env_bool("SEARCH_MEANING_EVIDENCE", True)
SEARCH_MEANING_THRESHOLD = float(env("SEARCH_MEANING_THRESHOLD", "0.43"))
# ... and papers hold at least this share of its content words (stop words left out): chosen
# with the threshold, on the same tuning sets.
SEARCH_MEANING_WORD_SHARE = float(env("SEARCH_MEANING_WORD_SHARE", "0.4"))
# ... or, below the threshold, one of this many papers nearest in meaning holds the query as
# written, as a phrase (a short phrase lies further from any abstract than a question does).
# Chosen on the tuning halves: of the depths through which no meaningless query passes, the one
# keeping the most queries; 101 is the pool a first page reads anyway (vectors.SENSE_DEPTH), so
# deeper costs a vector search more. 0 turns this way off.
SEARCH_MEANING_NEAREST_HOLDING = env_int("SEARCH_MEANING_NEAREST_HOLDING", 101)
# A query that passes only that way lists the papers at least this near (cosine) to one of those
# holding its words: the words fix the sense ("oort cloud" is not cloud computing). Chosen on the
# tuning halves: the least, in 0.05 steps, at which these lists share a paper's arXiv archive as
# often as the lists of queries that pass by similarity do.
SEARCH_MEANING_SENSE_SIMILARITY = float(env("SEARCH_MEANING_SENSE_SIMILARITY", "0.35"))
# Below this cosine similarity a paper is not "related by meaning" even to a query that passes
# the rule above (a filtered page must not list papers no nearer than chance). 0.15 since #43,
# 0.05 under the lowest similarity of a tuning query to its own paper (0.228); the floor of 0.45
# per paper before it cut the right paper for a quarter of questions written independently.
SEARCH_SIMILARITY_FLOOR = float(env("SEARCH_SIMILARITY_FLOOR", "0.15"))
# "Papers like your list" (accounts.library.recommendations) come from papers this many days
# old at most.
RECOMMENDATION_DAYS = env_int("RECOMMENDATION_DAYS", 30)
# What "new" means for alerts and recommendations (papers.archive_time): "auto" reads the archive
# as a sample (windows reach back over all of it, and the pages say so) when its newest paper is
# more than ARCHIVE_SAMPLE_AFTER_DAYS old, as the demo's is; "now" never, "sample" always.
ARCHIVE_CLOCK = env("ARCHIVE_CLOCK", "auto")
ARCHIVE_SAMPLE_AFTER_DAYS = env_int("ARCHIVE_SAMPLE_AFTER_DAYS", 60)
# Where the ONNX encoders keep the model's ONNX export, made from the bundled weights on first
# use (seconds; nothing is downloaded).
EMBEDDING_MODEL_DIR = Path(env("EMBEDDING_MODEL_DIR", str(DATA_DIR / "models")))
# The model's threads per process (0: the runtime's default, every core). One per embed worker
# process, with one process per core, is what `benchmarks/semantic.py throughput` measured
# fastest per core; the web process sets 1 too (deploy/gunicorn.conf.py says why).
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 0)
# A new web worker loads the encoder, the search indexes and the templates before it accepts a
# request (wovepaper.warmup, from deploy/gunicorn.conf.py); 0 leaves them to the first request.
WEB_WARM_UP = env_bool("WEB_WARM_UP", default=True)
# How long the shared cache keeps a search's query vector for every process (a week).
QUERY_VECTOR_CACHE_SECONDS = env_int("QUERY_VECTOR_CACHE_SECONDS", 7 * 24 * 3600)
# How many query vectors each process keeps besides (0 with the line above: every search embeds
# its words, as benchmarks/search.py --first-time measures).
QUERY_VECTORS_KEPT = env_int("QUERY_VECTORS_KEPT", 2048)
# Without a broker (tasks inline) a harvest or an import would wait on the model, at ~15 papers
# a second: there `manage.py embed_papers` embeds afterwards, as matching is left to manage.py.
EMBED_AFTER_WRITES = env_bool("EMBED_AFTER_WRITES", bool(CELERY_BROKER_URL))
# A sweep embeds pending papers in short batches of EMBED_BATCH_SIZE, each claimed for
# EMBED_CLAIM_SECONDS (no other worker embeds them meanwhile; a dead worker's claim lapses), and
# chained: a batch that holds papers queues the next before it embeds, so one chain keeps every
# idle embed process busy; EMBED_PARALLEL_BATCHES chains at most (each one batch queued ahead),
# each slot held EMBED_CHAIN_SECONDS past its chain's last batch. Beat starts a sweep every
# EMBED_SWEEP_SECONDS.
EMBED_BATCH_SIZE = env_int("EMBED_BATCH_SIZE", 128)
EMBED_CLAIM_SECONDS = env_int("EMBED_CLAIM_SECONDS", 600)
EMBED_PARALLEL_BATCHES = env_int("EMBED_PARALLEL_BATCHES", 2)
EMBED_CHAIN_SECONDS = env_int("EMBED_CHAIN_SECONDS", 900)
CELERY_TASK_ROUTES["papers.embed_papers"] = {"queue": f"{CELERY_QUEUE_PREFIX}embed"}
CELERY_TASK_ROUTES["papers.embed_pending"] = {"queue": f"{CELERY_QUEUE_PREFIX}embed"}
CELERY_BEAT_SCHEDULE["papers-embed-pending"] = {
    "task": "papers.embed_pending",
    "schedule": env_int("EMBED_SWEEP_SECONDS", 600),
}
# New papers reach OAI-PMH around 22:30 America/New_York, Sunday to Thursday.
# The open bulk file of identity links (/data/identity-links.jsonl.gz), daily.
CELERY_BEAT_SCHEDULE["researchers-export-identity-links"] = {
    "task": "researchers.export_identity_links",
    "schedule": crontab(hour=env_int("IDENTITY_LINKS_HOUR_UTC", 3), minute=15),
}
CELERY_BEAT_SCHEDULE["papers-harvest-daily"] = {
    "task": "papers.harvest_daily",
    "schedule": crontab(hour=env_int("HARVEST_HOUR_UTC", 5), minute=30),
}

LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        # httpx logs every request at INFO (a line per source call, thousands a harvest); our
        # clients log what an operator needs themselves: retries, waits and failures.
        "httpx": {"level": "WARNING"},
        # bibtexparser logs each block it cannot read (1.4 million lines for a 2.4 MB file of
        # broken blocks); accounts.library.importing reports them to the reader instead.
        "bibtexparser": {"level": "CRITICAL"},
    },
}
if CELERY_TASK_ALWAYS_EAGER:
    # Inline tasks run inside the command or request that sent them, which reports what they
    # did: a "Task ... succeeded" line for each (a worker's log line) only buries that report.
    LOGGING["loggers"]["celery.app.trace"] = {"level": "WARNING"}

# Production hardening: `manage.py check --deploy` is clean with WOVEPAPER_PRODUCTION=1.
if env_bool("WOVEPAPER_PRODUCTION"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (django-csp), enforced in every mode so that development and the
# browser tests meet the policy production serves. The pages load only our own scripts and
# styles (htmx and the site's JS from our static files; JSON-LD is a data block, not a script,
# and CSP does not apply to it): no inline script or style, nothing from another host. The API
# reference page adds only what Swagger UI needs (wovepaper/machine_readers.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
    }
}

# Extra steps `manage.py demo` runs after the import, each a management command that must cope
# with unreachable external services by saying so and leaving the data as it was.
DEMO_STEPS: list[dict] = []
# Matching on the demo data: a short reachability probe first, so that with the services out of
# reach (no network) the step says so in seconds and changes nothing.
# Offline, as the demo is meant to run, it says so in one line rather than print the probe's
# failures as if something were broken.
DEMO_STEPS.append(
    {
        "command": ["match_researchers"],
        "options": {"probe_timeout": 3.0},
        "offline": "Live matching of the rest of the sample is skipped: Semantic Scholar and "
        "OpenAlex are out of reach, and the demo needs no network (with one, a rerun matches "
        "those papers live).",
    }
)
# The demo's vectors, computed once by the default model (`manage.py embed_papers --save`;
# docs/architecture.md, "Data"): embedding its 3,500 papers anew takes minutes on two
# cores. A paper whose text or model differs from the file's is embedded here.
DEMO_EMBEDDINGS = BASE_DIR / "papers" / "sample" / "demo-embeddings.npz"
DEMO_STEPS.append(
    {
        "say": "Search by meaning: the papers' vectors…",
        "command": ["embed_papers"],
        "options": {"load": DEMO_EMBEDDINGS, "no_progress": True},
    }
)
# The open identity-links file that /llms.txt lists (production writes it daily, at
# IDENTITY_LINKS_HOUR_UTC): without it /data/identity-links.jsonl.gz is a 404 on the demo.
# Saved searches are checked once the data is in (the demo runs no hourly scheduler): the
# pages then say when each was checked and what it found.
# The vocabulary of "Did you mean" (papers.spelling), which production counts once a day.
DEMO_STEPS.append(
    {
        "say": "Spelling suggestions: counting the words papers write…",
        "command": ["count_written_words"],
        "options": {"no_progress": True},
    }
)
DEMO_STEPS.append(
    {"say": "Saved searches: checking each once…", "command": ["check_saved_searches"]}
)
DEMO_STEPS.append(
    {
        "say": "The open identity-links file (/data/identity-links.jsonl.gz)…",
        "command": ["export_identity_links"],
    }
)

# Public API (Django REST framework) and its OpenAPI schema (drf-spectacular).
# Rates are per IP for anonymous clients and per account for signed-in ones; the counters live in
# the default cache, so Redis (REDIS_URL) shares them across every web process in production.
API_THROTTLE_RATES = {
    "anon": env("API_THROTTLE_ANON", "60/minute"),
    "user": env("API_THROTTLE_USER", "300/minute"),
    # The conflict-of-interest check (page and API, one count per account): each check reads
    # every named record's recent bylines, so it has a daily quota of its own.
    "conflicts": env("API_THROTTLE_CONFLICTS", "200/day"),
    # Library imports (accounts.library.importing): each parses a file of up to 5 MB and runs up
    # to 200 title searches.
    "imports": env("API_THROTTLE_IMPORTS", "30/hour"),
}
REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_THROTTLE_CLASSES": [
        "wovepaper.lib.api.throttles.AnonRateThrottle",
        "wovepaper.lib.api.throttles.UserRateThrottle",
    ],
    # Behind N trusted proxies, the client address is the Nth from the right in X-Forwarded-For;
    # with 0 it is REMOTE_ADDR, so a client cannot pick its own throttle key.
    "NUM_PROXIES": env_int("API_NUM_PROXIES", 0),
    "EXCEPTION_HANDLER": "wovepaper.lib.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "wovepaper API",
    "DESCRIPTION": (
        "Every arXiv paper indexed by wovepaper, the researchers who wrote "
        "them (matched to Semantic Scholar and OpenAlex identities) and their institutions (ROR). "
        "Responses are JSON; lists are paged with opaque cursors; errors share one body "
        '`{"error": {"status", "code", "message"}}`. See /developers for a guide.'
    ),
    "VERSION": "1",
    # OpenAPI 3.1 (JSON Schema 2020-12): a field that holds an object or null is oneOf the two,
    # which 3.0.3 cannot say of a referenced schema (allOf with nullable and no type, which a
    # strict client rejects for null).
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVERS": [{"url": SITE_URL}],
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # The one PATCH (renaming a conversation) needs its one field: a "Patched" component with
    # nothing required would say otherwise.
    "COMPONENT_SPLIT_PATCH": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "wovepaper.lib.api.schema.schema_add_throttle_responses",
        "wovepaper.lib.api.schema.schema_add_server_responses",
        "wovepaper.lib.api.schema.schema_blank_strings_any_of",
        "wovepaper.lib.api.schema.schema_public_reads_without_padlock",
    ],
    # Two fields named `source` take different choices (a researcher's ids, a citation's
    # sources): each set gets a name of its own rather than a hashed one.
    "ENUM_NAME_OVERRIDES": {
        "ExternalIdSourceEnum": ["s2", "openalex", "orcid"],
        "CitationSourceEnum": ["s2", "openalex"],
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Swagger UI would otherwise ask validator.swagger.io to draw a badge: no third-party hosts.
    "SWAGGER_UI_SETTINGS": {"validatorUrl": None, "deepLinking": True},
    "CONTACT": {"email": CONTACT_EMAIL},
    "LICENSE": {"name": "Data: arXiv metadata CC0; Semantic Scholar ODC-BY; OpenAlex and ROR CC0"},
}
# Sitemap files list at most this many URLs (the sitemaps.org limit is 50,000), and the index
# (which groups ids into files with one pass over each table) is cached this long.
SITEMAP_PAGE_SIZE = min(env_int("SITEMAP_PAGE_SIZE", 50_000), 50_000)
SITEMAP_INDEX_CACHE_SECONDS = env_int("SITEMAP_INDEX_CACHE_SECONDS", 3600)
# Anonymous public pages are kept in the cache this long at most (wovepaper/lib/pagecache.py):
# a change to the page's own record shows at once, one to another record it mentions (a
# co-author's name, a title in a list) within this time. 0 turns the page cache off.
PAGE_CACHE_SECONDS = env_int("PAGE_CACHE_SECONDS", 600)
# How long a signed-in reader's browser keeps their state for the shared pages
# (accounts.reader_state): a change made on another device shows after at most this long.
READER_STATE_SECONDS = env_int("READER_STATE_SECONDS", 300)
# Rendered paper list items (papers.listitems), keyed by everything they show, so never stale:
# how long one unread is kept (0: every list renders its items each time).
LIST_ITEM_CACHE_SECONDS = env_int("LIST_ITEM_CACHE_SECONDS", 86_400)
# Formulas converted to MathML (papers.conversions), keyed by the converting code, so never
# stale: how long one unread is kept (0: each web process converts the formulas it shows).
MATHML_CACHE_SECONDS = env_int("MATHML_CACHE_SECONDS", 30 * 86_400)
# How long a browser, proxy or CDN may keep an anonymous page without asking again.
PAGE_CACHE_MAX_AGE = env_int("PAGE_CACHE_MAX_AGE", 60)
