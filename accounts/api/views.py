"""The signed-in user's follows: list, follow, unfollow. Session or token authentication."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.exceptions import NotFound, Throttled, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from researchers.models import Researcher
from wovepaper.lib.api.pagination import page_size_from
from wovepaper.lib.api.schema import error_responses, page_number_parameters

from .. import chat, selectors, services
from ..models import Conversation
from .serializers import (
    ChatAnswerSerializer,
    ConversationDetailSerializer,
    ConversationPageSerializer,
    ConversationRenameSerializer,
    ConversationSerializer,
    FollowInputSerializer,
    FollowPageSerializer,
    FollowSerializer,
    NewConversationSerializer,
    QuestionSerializer,
)


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


def _page_parameters(things: str) -> list[OpenApiParameter]:
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
        parameters=_page_parameters("follows"),
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


ASK_DESCRIPTION = (
    "The answer is made before the response is sent (not streamed; the site's /chat page "
    "streams it), with the same retrieval and quotas as the page: the papers search finds for "
    "the question (or the paper or researcher of `scope`), cited in `answer.citations`; "
    "`answer.mode` says how it was made (`model`; `quoted` when no language model is "
    "configured: the abstracts' sentences quoted word for word; `nothing` when no paper is "
    "relevant; `error` when the model failed, with the reason in `content`). Past the "
    "account's quota (questions per hour, model tokens per day) the answer is a 429 whose "
    "`Retry-After` says when asking may work again."
)


def _asked(request, question: str, *, conversation=None, scope: str = "") -> Response:
    try:
        conversation, answer = chat.ask(
            request.user, question, conversation=conversation, scope=scope
        )
    except chat.QuotaExceeded as exc:
        raise Throttled(wait=exc.retry_after, detail=str(exc)) from exc
    answer = chat.answer_whole(answer)
    asked = conversation.messages.filter(role="user", pk__lt=answer.pk).order_by("-pk").first()
    body = ChatAnswerSerializer(
        {"conversation": conversation, "question": asked, "answer": answer}
    ).data
    return Response(body, status=status.HTTP_201_CREATED)


class ConversationListApi(MeApiView):
    @extend_schema(
        operation_id="me_conversations_create",
        summary="Ask a question in a new conversation",
        description="Start a conversation with the papers. " + ASK_DESCRIPTION,
        request=NewConversationSerializer,
        responses={201: ChatAnswerSerializer, **error_responses(400, 401, 403)},
        tags=["me"],
    )
    def post(self, request):
        payload = NewConversationSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        return _asked(request, data["question"], scope=data["scope"])

    @extend_schema(
        # Named here: both conversation paths answer GET, so generated ids would collide.
        operation_id="me_conversations_list",
        summary="List your chat conversations",
        description="The signed-in user's conversations with the papers, most recent first, 50 "
        "a page (`page`, `page_size` up to 200).",
        parameters=_page_parameters("conversations"),
        responses={200: ConversationPageSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def get(self, request):
        paginator = FollowPagination()
        page: list[Conversation] | None = paginator.paginate_queryset(
            chat.conversations_for(request.user), request, view=self
        )
        return paginator.get_paginated_response(ConversationSerializer(page, many=True).data)


CONVERSATION_ID = OpenApiParameter(
    "conversation_id", int, OpenApiParameter.PATH, description="The conversation's id."
)


class ConversationDetailApi(MeApiView):
    def _conversation(self, request, conversation_id: int) -> Conversation:
        return get_object_or_404(Conversation, pk=conversation_id, user=request.user)

    @extend_schema(
        operation_id="me_conversations_retrieve",
        summary="One conversation with its messages",
        description="Questions and answers in order; each answer says how it was made (`mode`), "
        "the papers it cites and the tokens the model used.",
        parameters=[CONVERSATION_ID],
        responses={200: ConversationDetailSerializer, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def get(self, request, conversation_id: int):
        conversation = self._conversation(request, conversation_id)
        return Response(ConversationDetailSerializer(conversation).data)

    @extend_schema(
        summary="Rename a conversation",
        description="Give one of your conversations a new title (up to 200 characters).",
        parameters=[CONVERSATION_ID],
        request=ConversationRenameSerializer,
        responses={200: ConversationSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def patch(self, request, conversation_id: int):
        conversation = self._conversation(request, conversation_id)
        payload = ConversationRenameSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        chat.conversation_rename(conversation, payload.validated_data["title"])
        return Response(ConversationSerializer(conversation).data)

    @extend_schema(
        summary="Delete a conversation",
        description="Delete one of your conversations with all its messages.",
        parameters=[CONVERSATION_ID],
        responses={204: None, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def delete(self, request, conversation_id: int):
        self._conversation(request, conversation_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class ConversationMessagesApi(MeApiView):
    @extend_schema(
        operation_id="me_conversations_ask",
        summary="Ask a question in a conversation",
        description="Ask a follow-up question in one of your conversations (its earlier turns "
        "go to the model with it; its scope stays). " + ASK_DESCRIPTION,
        parameters=[CONVERSATION_ID],
        request=QuestionSerializer,
        responses={201: ChatAnswerSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def post(self, request, conversation_id: int):
        conversation = get_object_or_404(Conversation, pk=conversation_id, user=request.user)
        payload = QuestionSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        return _asked(request, payload.validated_data["question"], conversation=conversation)
