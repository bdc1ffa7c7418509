"""The signed-in user's conversations with the papers: ask, list, read, rename, delete. Session
or token authentication, as for the follows (accounts.api)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import Throttled
from rest_framework.response import Response

from wovepaper.lib.api.pagination import numbered_page_parameters
from wovepaper.lib.api.schema import body_values, error_responses
from wovepaper.lib.api.signed_in import MeApiView

from .. import answers, quotas
from ..models import Conversation
from .serializers import (
    ChatAnswerSerializer,
    ConversationDetailSerializer,
    ConversationPageSerializer,
    ConversationRenameSerializer,
    ConversationSerializer,
    NewConversationSerializer,
    QuestionSerializer,
)

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
        conversation, answer = answers.ask(
            request.user, question, conversation=conversation, scope=scope
        )
    except quotas.QuotaExceeded as exc:
        raise Throttled(wait=exc.retry_after, detail=str(exc)) from exc
    answer = answers.answer_whole(answer)
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
        data = body_values(request, NewConversationSerializer)
        return _asked(request, data["question"], scope=data["scope"])

    @extend_schema(
        # Named here: both conversation paths answer GET, so generated ids would collide.
        operation_id="me_conversations_list",
        summary="List your chat conversations",
        description="The signed-in user's conversations with the papers, most recent first, 50 "
        "a page (`page`, `page_size` up to 200).",
        parameters=numbered_page_parameters("conversations"),
        responses={200: ConversationPageSerializer, **error_responses(400, 401, 403, 404)},
        tags=["me"],
    )
    def get(self, request):
        return self.numbered_page(answers.conversations_for(request.user), ConversationSerializer)


CONVERSATION_ID = OpenApiParameter(
    "conversation_id", int, OpenApiParameter.PATH, description="The conversation's id."
)


def _own_conversation(request, conversation_id: int) -> Conversation:
    return get_object_or_404(Conversation, pk=conversation_id, user=request.user)


class ConversationDetailApi(MeApiView):
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
        conversation = _own_conversation(request, conversation_id)
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
        conversation = _own_conversation(request, conversation_id)
        payload = body_values(request, ConversationRenameSerializer)
        answers.conversation_rename(conversation, payload["title"])
        return Response(ConversationSerializer(conversation).data)

    @extend_schema(
        summary="Delete a conversation",
        description="Delete one of your conversations with all its messages.",
        parameters=[CONVERSATION_ID],
        responses={204: None, **error_responses(401, 403, 404)},
        tags=["me"],
    )
    def delete(self, request, conversation_id: int):
        _own_conversation(request, conversation_id).delete()
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
        conversation = _own_conversation(request, conversation_id)
        payload = body_values(request, QuestionSerializer)
        return _asked(request, payload["question"], conversation=conversation)
