"""The signed-in user's follows (list, follow, unfollow); the library's endpoints are in
accounts.library.api. Session or token authentication."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from researchers.models import Researcher
from wovepaper.lib.api.pagination import numbered_page_parameters
from wovepaper.lib.api.schema import body_values, error_responses
from wovepaper.lib.api.signed_in import MeApiView, made_or_found_responses

from .. import follows
from .serializers import (
    FollowInputSerializer,
    FollowPageSerializer,
    FollowSerializer,
)


class FollowListApi(MeApiView):
    @extend_schema(
        summary="List the researchers you follow",
        description="The signed-in user's follows, newest first, 50 a page (`page`, `page_size` "
        "up to 200). Authenticate with `Authorization: Token <key>` (create the key in your "
        "account settings) or a browser session.",
        parameters=numbered_page_parameters("follows"),
        responses={200: FollowPageSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def get(self, request):
        return self.numbered_page(follows.follows_for_user(user=request.user), FollowSerializer)

    @extend_schema(
        summary="Follow a researcher",
        description="Follow the researcher with this id; a merged record's id follows the record "
        "it was merged into. Answers 201 for a new follow and 200 when you already followed them.",
        request=FollowInputSerializer,
        responses=made_or_found_responses(FollowSerializer, 400, 401, 403, 404),
        tags=["me"],
    )
    def post(self, request):
        payload = body_values(request, FollowInputSerializer)
        researcher = Researcher.objects.filter(pk=payload["researcher"]).first()
        if researcher is None:
            # A well-formed id that names no one: not found, as for any other unknown id.
            raise NotFound("No researcher with this id.")
        try:
            existed = follows.is_following(user=request.user, researcher=researcher)
            follow = follows.researcher_follow(user=request.user, researcher=researcher)
        except follows.FollowError as exc:
            raise ValidationError({"researcher": [str(exc)]}) from exc
        return self.made_or_found(follow, FollowSerializer, made=not existed)


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
        if not follows.researcher_unfollow(user=request.user, researcher=researcher):
            raise NotFound("You do not follow this researcher.")
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- the library -------------------------------------------------------------------------------


# --- saved searches ----------------------------------------------------------------------------


# --- "not relevant" ----------------------------------------------------------------------------
