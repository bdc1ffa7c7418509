"""The base of the API's signed-in reader's operations (/api/v1/me/..., the chat's)."""

from __future__ import annotations

from django.db.models import QuerySet
from rest_framework import status
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from .pagination import NumberedPagination
from .schema import error_responses


def made_or_found_responses(serializer: type[BaseSerializer], *errors: int) -> dict:
    """The schema's responses of a POST MeApiView.made_or_found answers, and its `errors`."""
    return {201: serializer, 200: serializer, **error_responses(*errors)}


class MeApiView(APIView):
    # Token first: its WWW-Authenticate header makes an anonymous request a 401, not a 403.
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]

    def numbered_page(self, queryset: QuerySet, serializer: type[BaseSerializer]) -> Response:
        """The requested page of one of the reader's own lists (NumberedPagination's `page` and
        `page_size`), each item as `serializer` gives it."""
        paginator = NumberedPagination()
        page = paginator.paginate_queryset(queryset, self.request, view=self)
        data = serializer(page, many=True, context={"request": self.request}).data
        return paginator.get_paginated_response(data)

    def made_or_found(self, instance, serializer: type[BaseSerializer], *, made: bool) -> Response:
        """`instance` as `serializer` gives it, answering a POST that makes it once: 201 when
        this request made it, 200 when it was there already."""
        data = serializer(instance, context={"request": self.request}).data
        return Response(data, status=status.HTTP_201_CREATED if made else status.HTTP_200_OK)
