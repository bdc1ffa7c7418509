"""The signed-in user's follows: list, follow, unfollow. Session or token authentication."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from researchers.models import Researcher
from wovepaper.lib.api.pagination import page_size_from
from wovepaper.lib.api.schema import error_responses, page_number_parameters

from .. import selectors, services
from .serializers import FollowInputSerializer, FollowPageSerializer, FollowSerializer


class FollowPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def get_page_size(self, request) -> int:
        # DRF's falls back to the default for a page size it cannot read; the schema says 400.
        return page_size_from(
            request, self.page_size_query_param, self.page_size, self.max_page_size
        )

    def get_page_number(self, request, paginator) -> str:
        # DRF reads an empty `page` as page 1 and "last" as the last page; the schema says a
        # whole number from 1, so anything else is a 400.
        given = request.query_params.getlist(self.page_query_param)
        if not given:
            return "1"
        if len(given) != 1 or not (given[0].isascii() and given[0].isdigit()) or given[0] == "0":
            raise ValidationError({self.page_query_param: ["Must be a whole number from 1."]})
        return given[0]


def page_parameters(things: str) -> list[OpenApiParameter]:
    return page_number_parameters(
        things,
        page_size=FollowPagination.page_size,
        max_page_size=FollowPagination.max_page_size,
    )


class MeApiView(APIView):
    # Token first: its WWW-Authenticate header makes an anonymous request a 401, not a 403.
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]


class FollowListApi(MeApiView):
    @extend_schema(
        summary="List the researchers you follow",
        description="The signed-in user's follows, newest first, 50 a page (`page`, `page_size` "
        "up to 200). Authenticate with `Authorization: Token <key>` (create the key in your "
        "account settings) or a browser session.",
        parameters=page_parameters("follows"),
        responses={200: FollowPageSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def get(self, request):
        paginator = FollowPagination()
        page = paginator.paginate_queryset(
            selectors.follows_for_user(user=request.user), request, view=self
        )
        data = FollowSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        summary="Follow a researcher",
        description="Follow the researcher with this id; a merged record's id follows the record "
        "it was merged into. Answers 201 for a new follow and 200 when you already followed them.",
        request=FollowInputSerializer,
        responses={
            201: FollowSerializer,
            200: FollowSerializer,
            **error_responses(400, 401, 403, 404),
        },
        tags=["me"],
    )
    def post(self, request):
        payload = FollowInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        researcher = Researcher.objects.filter(pk=payload.validated_data["researcher"]).first()
        if researcher is None:
            # A well-formed id that names no one: not found, as for any other unknown id.
            raise NotFound("No researcher with this id.")
        try:
            existed = selectors.is_following(user=request.user, researcher=researcher)
            follow = services.researcher_follow(user=request.user, researcher=researcher)
        except services.FollowError as exc:
            raise ValidationError({"researcher": [str(exc)]}) from exc
        return Response(
            FollowSerializer(follow, context={"request": request}).data,
            status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED,
        )


class FollowDetailApi(MeApiView):
    @extend_schema(
        summary="Unfollow a researcher",
        description="Stop following the researcher with this id. 404 when you do not follow them.",
        parameters=[
            OpenApiParameter(
                "researcher_id", int, OpenApiParameter.PATH, description="The researcher's id."
            )
        ],
        responses={204: None, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def delete(self, request, researcher_id: int):
        researcher = get_object_or_404(Researcher, pk=researcher_id)
        if not services.researcher_unfollow(user=request.user, researcher=researcher):
            raise NotFound("You do not follow this researcher.")
        return Response(status=status.HTTP_204_NO_CONTENT)
