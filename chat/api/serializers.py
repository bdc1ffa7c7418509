from __future__ import annotations

from django.core.validators import RegexValidator
from rest_framework import serializers

from wovepaper.lib.api.pagination import NumberedPageSerializer
from wovepaper.lib.api.schema import JSONStringField

from ..models import ChatMessage, Conversation


class ChatMessageSerializer(serializers.ModelSerializer):
    class Meta:
        model = ChatMessage
        fields = [
            "id",
            "role",
            "content",
            "mode",
            "citations",
            "model",
            "prompt_tokens",
            "completion_tokens",
            "created_at",
        ]
        extra_kwargs = {
            "mode": {
                "help_text": "How an answer was made: model, quoted (abstracts quoted, no "
                "model), nothing (no relevant paper), error, or pending."
            },
            "citations": {"help_text": "The papers an answer cites: number, arxiv_id, title, url."},
        }


class ConversationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Conversation
        fields = ["id", "title", "scope", "created_at", "updated_at"]
        read_only_fields = ["id", "scope", "created_at", "updated_at"]


class ConversationDetailSerializer(ConversationSerializer):
    messages = ChatMessageSerializer(many=True, read_only=True)

    class Meta(ConversationSerializer.Meta):
        fields = [*ConversationSerializer.Meta.fields, "messages"]


class ConversationRenameSerializer(serializers.Serializer):
    title = JSONStringField(max_length=200, help_text="The conversation's new title.")


class ConversationPageSerializer(NumberedPageSerializer):
    """What the conversation list answers: one page (PageNumberPagination's shape)."""

    count = serializers.IntegerField(help_text="How many conversations you have.")
    results = ConversationSerializer(many=True)


class QuestionField(JSONStringField):
    """A question in a JSON body: at least one letter or digit (so it can be searched for), NUL
    characters dropped rather than refused (PostgreSQL cannot store them)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)
        self.validators = [v for v in self.validators if "Null" not in type(v).__name__]

    def to_internal_value(self, data) -> str:
        return super().to_internal_value(data).replace("\x00", "").strip()


# Where a conversation was opened from: a paper (its arXiv id) or a researcher (their id).
SCOPE_PATTERN = r"^(paper:[0-9A-Za-z][0-9A-Za-z./-]{0,63}|researcher:[1-9][0-9]{0,11})?$"


class QuestionSerializer(serializers.Serializer):
    question = QuestionField(
        max_length=2000,
        validators=[RegexValidator(r"[^\W_]", "A question needs at least one letter or digit.")],
        help_text="The question, up to 2,000 characters.",
    )


class NewConversationSerializer(QuestionSerializer):
    scope = JSONStringField(
        required=False,
        default="",
        allow_blank=True,
        max_length=80,
        trim_whitespace=False,
        validators=[
            RegexValidator(SCOPE_PATTERN, "Not a scope: paper:<arXiv id> or researcher:<id>.")
        ],
        help_text="What the conversation is about: `paper:<arXiv id>` (that paper), "
        "`researcher:<id>` (their papers) or empty (the whole index).",
    )


class ChatAnswerSerializer(serializers.Serializer):
    """A question asked through the API and its answer, made before the response is sent."""

    conversation = ConversationSerializer()
    question = ChatMessageSerializer()
    answer = ChatMessageSerializer()
