"""The signed-in user's follows: list, follow, unfollow. Session or token authentication."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from researchers.models import Researcher

from .. import selectors, services
from .serializers import FollowInputSerializer, FollowSerializer


class FollowPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class MeApiView(APIView):
    # Token first: its WWW-Authenticate header makes an anonymous request a 401, not a 403.
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]


class FollowListApi(MeApiView):
    @extend_schema(responses=FollowSerializer(many=True), tags=["me"])
    def get(self, request):
        paginator = FollowPagination()
        page = paginator.paginate_queryset(selectors.follows_for_user(user=request.user), request,
                                           view=self)
        data = FollowSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)

    @extend_schema(request=FollowInputSerializer, responses={201: FollowSerializer,
                                                             200: FollowSerializer}, tags=["me"])
    def post(self, request):
        payload = FollowInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        researcher = Researcher.objects.filter(pk=payload.validated_data["researcher"]).first()
        if researcher is None:
            return Response({"researcher": ["No researcher with this id."]},
                            status=status.HTTP_400_BAD_REQUEST)
        try:
            existed = selectors.is_following(user=request.user, researcher=researcher)
            follow = services.researcher_follow(user=request.user, researcher=researcher)
        except services.FollowError as exc:
            return Response({"researcher": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        return Response(FollowSerializer(follow, context={"request": request}).data,
                        status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED)


class FollowDetailApi(MeApiView):
    @extend_schema(responses={204: None}, tags=["me"])
    def delete(self, request, researcher_id: int):
        researcher = get_object_or_404(Researcher, pk=researcher_id)
        if not services.researcher_unfollow(user=request.user, researcher=researcher):
            return Response({"detail": "You do not follow this researcher."},
                            status=status.HTTP_404_NOT_FOUND)
        return Response(status=status.HTTP_204_NO_CONTENT)
