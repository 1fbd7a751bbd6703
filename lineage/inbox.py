"""What lineage shows a team must act on, for the core's inbox (registry.hooks.inbox_items):

- its datasets whose latest data-quality checks fail;
- datasets nobody owns that its jobs write (the team that writes it claims it);
- its datasets read by jobs of teams that are not registered consumers;
- its jobs no rule attributes (only its token posts them): "this job is ours";
- for a governance admin, the jobs nobody at all owns.

A job's team is decided as everywhere (registry.jobs): its rules, its namespace's
team, else the team of the token that posted its latest run. Five queries at most,
whatever the number of datasets, jobs or runs."""

from __future__ import annotations

from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.urls import reverse

from lineage.models import Direction, Job, JobDataset, QualityCheck, Run
from registry.hooks import InboxItem, inbox_items
from registry.models import Dataset, Team, is_governance_admin
from registry.usage import owner_annotations


def _latest_token_team(job_ref: str = "pk") -> Subquery:
    return Subquery(Run.objects.filter(job=OuterRef(job_ref)).order_by("-state_at").values("token_team_id")[:1])


def _failing_checks(team_ids: list[int]) -> list[InboxItem]:
    failing = (QualityCheck.objects.filter(dataset__owner_team_id__in=team_ids).latest_per_job().failing()
               .select_related("dataset").order_by("dataset__namespace", "dataset__name", "job_name"))
    by_dataset: dict[int, list[QualityCheck]] = {}
    for check in failing:
        by_dataset.setdefault(check.dataset_id, []).append(check)
    items = []
    for checks in by_dataset.values():
        dataset = checks[0].dataset
        failed = sum(c.failed_count for c in checks)
        items.append(InboxItem(
            kind="failing_checks", key=f"failing_checks:{dataset.pk}", team_id=dataset.owner_team_id,
            title=f"{dataset.name}: {failed} data-quality assertion{'s' if failed != 1 else ''} failing",
            detail="Latest run of " + ", ".join(f"{c.job_namespace}/{c.job_name}" for c in checks[:3])
                   + (" and others" if len(checks) > 3 else "") + ".",
            url=f"{dataset.get_absolute_url()}#data-quality"))
    return items


def _unowned_outputs(team_ids: list[int]) -> list[InboxItem]:
    owners = owner_annotations("job__namespace", "job__name")
    edges = (JobDataset.objects.filter(direction=Direction.OUTPUT, dataset__owner_team__isnull=True)
             .annotate(**owners, token_team_id=_latest_token_team("job"))
             .annotate(writer_team=Coalesce("job_team_id", "namespace_team_id", "token_team_id",
                                            output_field=IntegerField()))
             .filter(writer_team__in=team_ids)
             .select_related("dataset", "job").order_by("dataset__namespace", "dataset__name", "job__name"))
    teams = Team.objects.in_bulk(team_ids)
    items, seen = [], set()
    for edge in edges:
        key = f"unowned_output:{edge.dataset_id}:{edge.writer_team}"
        if key in seen:
            continue
        seen.add(key)
        team = teams.get(edge.writer_team)
        items.append(InboxItem(
            kind="unowned_output", key=key, team_id=edge.writer_team,
            title=f"{edge.dataset.name} has no owner, and {team.name if team else 'your team'}'s job "
                  f"{edge.job.name} writes it",
            detail="Claim it for the team that writes it, so consumers can register and changes reach them.",
            url=edge.dataset.get_absolute_url()))
    return items


def _unregistered_readers(team_ids: list[int]) -> list[InboxItem]:
    datasets = (Dataset.objects.filter(owner_team_id__in=team_ids).with_unregistered_readers()
                .filter(unregistered_readers__gt=0).select_related("owner_team"))
    items = []
    for dataset in datasets:
        n = dataset.unregistered_readers
        items.append(InboxItem(
            kind="unregistered_readers", key=f"unregistered_readers:{dataset.pk}", team_id=dataset.owner_team_id,
            title=(f"1 job of a team not registered as a consumer reads {dataset.name}" if n == 1 else
                   f"{n} jobs of teams not registered as consumers read {dataset.name}"),
            detail="A breaking change would not ask them: ask their teams to register (one click on the dataset page).",
            url=f"{dataset.get_absolute_url()}#readers"))
    return items


def _unattributed_jobs(team_ids: list[int]) -> list[InboxItem]:
    jobs = (Job.objects.annotate(**owner_annotations(), last_token_team_id=_latest_token_team())
            .filter(job_team_id__isnull=True, namespace_team_id__isnull=True, last_token_team_id__in=team_ids)
            .order_by("namespace", "name"))
    teams = Team.objects.in_bulk(team_ids)
    items = []
    for job in jobs:
        team = teams.get(job.last_token_team_id)
        items.append(InboxItem(
            kind="unattributed_job", key=f"unattributed_job:{job.pk}", team_id=job.last_token_team_id,
            title=f"Is {job.namespace}/{job.name} {team.name if team else 'your team'}'s job? No rule says whose it is",
            detail="Only your team's token posts its events. Say it is yours on its page, so changes to what it "
                   "reads ask your team.",
            url=job.get_absolute_url()))
    return items


def _jobs_nobody_owns() -> list[InboxItem]:
    nobody = (Job.objects.annotate(**owner_annotations(), last_token_team_id=_latest_token_team())
              .filter(job_team_id__isnull=True, namespace_team_id__isnull=True, last_token_team_id__isnull=True)
              .aggregate(n=Count("pk"))["n"])
    if not nobody:
        return []
    return [InboxItem(kind="unattributed_job", key="unattributed_job:nobody",
                      title=f"{nobody} job{'s' if nobody != 1 else ''} belong{'' if nobody != 1 else 's'} to no team "
                            "at all",
                      detail="No rule, namespace or token names a team: add rules-file lines for them.",
                      url=reverse("unowned-jobs"))]


@inbox_items(order=40)
def lineage_items(user, team_ids: list[int]) -> list[InboxItem]:
    items = []
    if team_ids:
        items = (_failing_checks(team_ids) + _unowned_outputs(team_ids) + _unregistered_readers(team_ids)
                 + _unattributed_jobs(team_ids))
    if user is not None and is_governance_admin(user):
        items += _jobs_nobody_owns()
    return items
