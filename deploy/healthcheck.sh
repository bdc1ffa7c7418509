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
if ! health="$(curl -sS --max-time 10 -w '\n%{http_code}' "http://127.0.0.1:${PORT:-8000}/health")"; then
  echo "web: no answer on port ${PORT:-8000}" >&2
  status=1
elif [ "${health##*$'\n'}" != "200" ]; then
  echo "web: unhealthy: ${health%$'\n'*}" >&2
  status=1
fi
python -m wovepaper.worker_health "${workers[@]}" || status=1
exit $status
