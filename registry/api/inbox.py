"""The inbox over the API: what the caller (a person, or a team's token) and their
teams must act on now, or one team's (registry/inbox.py)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.inbox import inbox_of_person, inbox_of_team
from registry.models import Team


class InboxItemSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text='What is asked: "acknowledge", "publish", "review_draft", "stale", '
                                           '"drift", "failing_checks", "unowned_output", "unregistered_readers", '
                                           '"unattributed_job", or a kind another app adds.')
    kind_label = serializers.CharField(help_text="The kind, as the page heads it.")
    title = serializers.CharField(help_text="Who must do what, in a sentence.")
    detail = serializers.CharField(help_text="More, when there is more to say (may be empty).")
    url = serializers.CharField(help_text="The one page where it is resolved; the item leaves the inbox once it is.")
    key = serializers.CharField(help_text="Identifies the item across calls (a digest says which items are new).")
    team = serializers.CharField(allow_null=True, help_text="The slug of the team that must act (null: the caller).")
    due = serializers.DateTimeField(allow_null=True, help_text="The deadline, when there is one.")


class InboxSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="How many items `items` holds.")
    more = serializers.ListField(
        child=serializers.CharField(),
        help_text="The kinds of which more items wait than the first 25 `items` holds (soonest deadline "
                  "first); the next ones show as these are done. Empty: `items` is everything.")
    teams = serializers.ListField(child=serializers.CharField(), help_text="The slugs of the teams it covers.")
    items = InboxItemSerializer(many=True, help_text="Deadlines first, soonest first; then the rest.")


class InboxView(APIView):
    """What the caller and their teams must act on now (or one team's, with `?team=`)."""

    @extend_schema(
        parameters=[OpenApiParameter("team", str, description="A team's slug: that team's inbox instead of yours.")],
        responses={200: InboxSerializer})
    def get(self, request):
        slug = request.query_params.get("team")
        if slug:
            inbox = inbox_of_team(get_object_or_404(Team, slug=slug), request.user)
        else:
            inbox = inbox_of_person(request.user)
        return Response({"count": inbox.count, "more": sorted(inbox.more), "teams": [t.slug for t in inbox.teams],
                         "items": [inbox.to_dict(item) for item in inbox.items]})


class InboxCount(APIView):
    """How many items the caller's inbox shows (the navigation shows it; `more`: some kind holds
    more than its first 25, "25+")."""

    @extend_schema(responses={200: inline_serializer("InboxCount", {"count": serializers.IntegerField(),
                                                                    "more": serializers.BooleanField()})})
    def get(self, request):
        inbox = inbox_of_person(request.user)
        return Response({"count": inbox.count, "more": bool(inbox.more)})
