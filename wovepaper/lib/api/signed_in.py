"""The base of the API's signed-in reader's operations (/api/v1/me/..., the chat's)."""

from __future__ import annotations

from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.views import APIView


class MeApiView(APIView):
    # Token first: its WWW-Authenticate header makes an anonymous request a 401, not a 403.
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]
