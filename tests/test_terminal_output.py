"""What the embedded default prints in a terminal (`manage.py demo`, runserver): the commands'
own reports, without a line for every HTTP request or inline task, or kombu's broker guess."""

from __future__ import annotations

import logging

from papers.tasks import index_search


def test_inline_task_logs_no_broker_guess_and_no_success_line(caplog):
    with caplog.at_level(logging.INFO):
        assert index_search.delay([]).get() == 0
    noise = [r.getMessage() for r in caplog.records if r.name.startswith(("kombu", "celery"))]
    assert noise == []


def test_source_requests_are_not_logged_one_line_each():
    assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)
    assert logging.getLogger("httpx").isEnabledFor(logging.WARNING)
