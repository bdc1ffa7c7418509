"""Conditional GET for API views."""

from __future__ import annotations

from django.views.decorators.http import conditional_page
from rest_framework.views import APIView


class ConditionalGetMixin(APIView):
    """ETag (a digest of the body) on every response and 304 for a matching If-None-Match.

    Django's ConditionalGetMiddleware does the work after the response is rendered; it also
    answers If-Modified-Since when a view sets Last-Modified (detail views do, from modified_at).
    """

    @classmethod
    def as_view(cls, *args, **kwargs):
        return conditional_page(super().as_view(*args, **kwargs))
