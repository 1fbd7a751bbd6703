from __future__ import annotations

from django.db import models
from django.db.models import Count, Q


class DatasetQuerySet(models.QuerySet):
    def unowned(self) -> DatasetQuerySet:
        return self.filter(owner_team__isnull=True)

    def matching(self, text: str) -> DatasetQuerySet:
        return self.filter(Q(name__icontains=text) | Q(namespace__icontains=text) | Q(description__icontains=text))

    def for_listing(self) -> DatasetQuerySet:
        """Owner and consumer count in the same query, whatever the number of rows."""
        return self.select_related("owner_team", "owner").annotate(consumer_count=Count("consumers", distinct=True))


class TeamQuerySet(models.QuerySet):
    def of_user(self, user) -> TeamQuerySet:
        if not getattr(user, "is_authenticated", False):
            return self.none()
        team_ids = getattr(user, "principal_team_ids", None)
        if team_ids is not None:  # a team-owned API token
            return self.filter(pk__in=team_ids)
        return self.filter(members=user)


class ApiTokenQuerySet(models.QuerySet):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True)
