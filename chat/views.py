"""Chat pages: /chat (conversations, a conversation), asking, the streamed answer, renaming and
deleting. Signed-in users only. Thin: chat.answers does the work.

Asking is a form post. With JavaScript (static/js/chat.js) the post answers JSON naming the
answer's stream, which the page reads as it comes (a chunked plain-text response, shown with
textContent), then swaps in the finished answer rendered here, with its citations. Without
JavaScript the post makes the whole answer and redirects to the conversation.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.onboarding import onboarding_pending
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from . import answers, quotas
from .models import ChatMessage, Conversation

LIST_SIZE = 50


def _wants_json(request: HttpRequest) -> bool:
    return request.headers.get("X-Requested-With") == "fetch"


def _own_conversation(request: AuthenticatedHttpRequest, conversation_id: int) -> Conversation:
    return get_object_or_404(Conversation, pk=conversation_id, user=request.user)


def _save_slots(messages: list[ChatMessage]) -> None:
    """Give each cited paper of the messages a save slot, which reader.js fills from the
    reader's state as on every other page (accounts.reader_state): `message.cited` is its
    citations, each with `save_pk`, set on a paper's first citation in these messages only (a
    slot is found by its id, which must be unique on the page)."""
    paper_ids = answers.cited_paper_ids(messages)
    given: set[int] = set()
    for message in messages:
        cited = []
        for citation in message.citations:
            pk = paper_ids.get(citation["arxiv_id"])
            if pk is not None and pk not in given:
                given.add(pk)
            else:
                pk = None
            cited.append({**citation, "save_pk": pk})
        message.cited = cited  # type: ignore[attr-defined]


@login_required
@require_GET
def chat_page(
    request: AuthenticatedHttpRequest, conversation_id: int | None = None
) -> HttpResponse:
    conversation = _own_conversation(request, conversation_id) if conversation_id else None
    thread = list(conversation.messages.order_by("pk")) if conversation else []
    _save_slots(thread)
    return render(
        request,
        "chat/page.html",
        {
            "conversations": list(answers.conversations_for(request.user)[:LIST_SIZE]),
            "conversation": conversation,
            "thread": thread,
            "chat_scope": conversation.scope if conversation else request.GET.get("scope", ""),
            "quota_problem": quotas.quota_problem(request.user),
            # New accounts land here after signing up (accounts.adapter); the page offers the setup.
            "onboarding_pending": onboarding_pending(user=request.user),
        },
    )


@login_required
@require_POST
def chat_ask(request: AuthenticatedHttpRequest) -> HttpResponse:
    question = request.POST.get("question", "").strip()
    conversation_id = request.POST.get("conversation", "")
    conversation = (
        _own_conversation(request, int(conversation_id)) if conversation_id.isdigit() else None
    )
    if not question:
        error = "Type a question first."
        if _wants_json(request):
            return JsonResponse({"error": error}, status=400)
        messages.error(request, error)
        return redirect(conversation.get_absolute_url() if conversation else "/chat")
    try:
        conversation, answer = answers.ask(
            request.user,
            question,
            conversation=conversation,
            scope=request.POST.get("scope", ""),
        )
    except quotas.QuotaExceeded as exc:
        if _wants_json(request):
            refused = JsonResponse({"error": str(exc)}, status=429)
            if exc.retry_after is not None:
                refused["Retry-After"] = str(exc.retry_after)
            return refused
        messages.error(request, str(exc))
        return redirect(conversation.get_absolute_url() if conversation else "/chat")
    if _wants_json(request):
        return JsonResponse(
            {
                "conversation": conversation.pk,
                "conversation_url": conversation.get_absolute_url(),
                "conversation_title": conversation.title,
                "answer": answer.pk,
                "stream_url": f"/chat/answers/{answer.pk}/stream",
                "answer_url": f"/chat/answers/{answer.pk}",
            }
        )
    answers.answer_whole(answer)
    return redirect(conversation.get_absolute_url())


def _own_answer(request: AuthenticatedHttpRequest, answer_id: int) -> ChatMessage:
    answer = get_object_or_404(
        ChatMessage.objects.select_related("conversation"),
        pk=answer_id,
        user=request.user,
        role=ChatMessage.Role.ASSISTANT,
    )
    return answer


@login_required
@require_GET
def chat_answer_stream(request: AuthenticatedHttpRequest, answer_id: int) -> StreamingHttpResponse:
    """The answer's text as it is made: the one view that calls the model (its own timeout,
    LLM_TIMEOUT, per piece of the stream)."""
    answer = _own_answer(request, answer_id)
    response = StreamingHttpResponse(
        answers.stream_answer(answer), content_type="text/plain; charset=utf-8"
    )
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each piece on at once
    return response


@login_required
@require_GET
def chat_answer(request: AuthenticatedHttpRequest, answer_id: int) -> HttpResponse:
    answer = _own_answer(request, answer_id)
    if answer.mode in (ChatMessage.Mode.PENDING, ChatMessage.Mode.STREAMING):
        raise Http404("this answer is still being made")
    _save_slots([answer])
    # static/js/chat.js swaps it in and tells reader.js, which fills its save slots.
    return render(request, "chat/_message.html", {"message": answer})


@login_required
@require_POST
def chat_rename(request: AuthenticatedHttpRequest, conversation_id: int) -> HttpResponse:
    conversation = _own_conversation(request, conversation_id)
    answers.conversation_rename(conversation, request.POST.get("title", ""))
    return redirect(conversation.get_absolute_url())


@login_required
@require_POST
def chat_delete(request: AuthenticatedHttpRequest, conversation_id: int) -> HttpResponse:
    _own_conversation(request, conversation_id).delete()
    messages.success(request, "Conversation deleted.")
    return redirect("/chat")
