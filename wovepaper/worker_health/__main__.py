"""`python -m wovepaper.worker_health NAME...`: the health check's reading of the workers' files.

A module of its own: the package is imported with the project's Celery app (every process
stamps its messages), so running the package's own module as `__main__` would load it twice
and make runpy warn on every run.
"""

import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")
django.setup()

from wovepaper.worker_health import main  # noqa: E402 (after django.setup())

sys.exit(main(sys.argv[1:]))
