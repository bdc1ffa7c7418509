from __future__ import annotations

from rest_framework import serializers

from wovepaper.lib.api.pagination import NumberedPageSerializer
from wovepaper.lib.api.redirects import request_url
from wovepaper.lib.api.schema import JSONIntegerField

from ..models import Follow


class FollowSerializer(serializers.ModelSerializer):
    researcher = serializers.IntegerField(source="researcher_id", read_only=True)
    name = serializers.CharField(source="researcher.display_name", read_only=True)
    url = serializers.SerializerMethodField()
    paper_count = serializers.IntegerField(source="researcher.paper_count", read_only=True)

    class Meta:
        model = Follow
        fields = ["researcher", "name", "url", "paper_count", "created_at"]

    def get_url(self, follow: Follow) -> str:
        path = follow.researcher.get_absolute_url()
        return request_url(self.context, path)


class FollowPageSerializer(NumberedPageSerializer):
    """What the follow list answers: one page of follows (PageNumberPagination's shape)."""

    count = serializers.IntegerField(help_text="How many researchers you follow.")
    results = FollowSerializer(many=True)


class FollowInputSerializer(serializers.Serializer):
    researcher = JSONIntegerField(min_value=1)
