from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

app = Celery("wovepaper")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The search indexer's task lives in the shared library, which is no app.
app.autodiscover_tasks(["wovepaper.lib.search"], related_name="indexer")
