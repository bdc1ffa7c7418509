from __future__ import annotations

from rest_framework import serializers

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
        request = self.context.get("request")
        path = follow.researcher.get_absolute_url()
        return request.build_absolute_uri(path) if request else path


class FollowInputSerializer(serializers.Serializer):
    researcher = serializers.IntegerField(min_value=1)
