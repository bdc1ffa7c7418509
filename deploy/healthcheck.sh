#!/usr/bin/env bash
# Health check for one host: the web process answers, and every Celery worker named here
# reaches its database and its broker, and no task has waited in its queue longer than
# WORKER_QUEUE_MAX_AGE (on Redis), as the worker itself last wrote (wovepaper.worker_health: a
# busy solo worker still writes; a dead or hung one stops). Exit status 0 when all are healthy.
#   deploy/healthcheck.sh [worker-name ...]   (default: harvest, match, default, search, analysis and embed on
#   this host)
set -uo pipefail
cd "$(dirname "$0")/.."
host="$(hostname)"
workers=("$@")
[ ${#workers[@]} -eq 0 ] && workers=("harvest@$host" "match@$host" "default@$host" "search@$host" "analysis@$host" "embed@$host")
status=0
# /health answers 200 when the web reaches its database and cache, else 503 naming what is down.
# It is asked as the TLS proxy in front of gunicorn asks: for the public host, saying the
# request came in over https. Under WOVEPAPER_PRODUCTION a plain http request is redirected
# (SECURE_SSL_REDIRECT) and a Host not in ALLOWED_HOSTS refused: the check asks what a reader's
# request through the proxy asks. Host and scheme are SITE_URL's, which the web reads too.
site="${SITE_URL:-http://127.0.0.1:${PORT:-8000}}"
scheme="${site%%://*}"
site_host="${site#*://}"
site_host="${site_host%%/*}"
if ! health="$(curl -sS --max-time 10 -w '\n%{http_code}' -H "Host: $site_host" \
  -H "X-Forwarded-Proto: $scheme" "http://127.0.0.1:${PORT:-8000}/health")"; then
  echo "web: no answer on port ${PORT:-8000}" >&2
  status=1
elif [ "${health##*$'\n'}" != "200" ]; then
  echo "web: unhealthy (HTTP ${health##*$'\n'}): ${health%$'\n'*}" >&2
  status=1
fi
python -m wovepaper.worker_health "${workers[@]}" || status=1
exit $status
