"""What lineage shows a team must act on, for the core's inbox (registry.hooks.inbox_items):

- its datasets whose latest data-quality checks fail;
- datasets nobody owns that its jobs write (the team that writes it claims it);
- its datasets read by jobs of teams that are not registered consumers;
- its jobs no rule attributes (only its token posts them): "this job is ours";
- for a governance admin, the jobs nobody at all owns.

A job's team is decided as everywhere (registry.jobs): its rules, its namespace's
team, else the team of the token that posted its latest run. Deciding it for every job
of the world cost a scan of all jobs and all their output edges per inbox; the jobs that
may be the teams' are found first (`_jobs_maybe_of`, by index), and only theirs are
decided. Six queries at most, whatever the number of datasets, jobs or runs."""

from __future__ import annotations

from django.db.models import Count, OuterRef, Subquery
from django.urls import reverse

from lineage.models import Direction, Job, JobDataset, QualityCheck, Run
from registry.hooks import InboxItem, inbox_items
from registry.jobs import JobTeam
from registry.models import Dataset, Team, is_governance_admin
from registry.usage import NamespaceTeam, owner_annotations


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


def _jobs_maybe_of(team_ids: list[int]) -> list[int]:
    """The jobs whose team may be one of `team_ids` (one query, each part by an index): those
    the teams' rules name, those in the teams' namespaces, and those the teams' tokens posted
    runs of. A superset: `_teams_jobs` still decides each one's team, as everywhere."""
    ruled = JobTeam.objects.filter(team_id__in=team_ids).annotate(job_id=Subquery(
        Job.objects.filter(namespace=OuterRef("job_namespace"), name=OuterRef("job_name")).values("pk")[:1]))
    in_namespaces = Job.objects.filter(
        namespace__in=NamespaceTeam.objects.filter(team_id__in=team_ids).values("namespace"))
    posted = Run.objects.filter(token_team_id__in=team_ids).order_by()
    return [pk for pk in ruled.values_list("job_id", flat=True).order_by().union(
        in_namespaces.values_list("pk", flat=True).order_by(), posted.values_list("job_id", flat=True))
        if pk is not None]


def _teams_jobs(team_ids: list[int]) -> list[Job]:
    """The jobs of `team_ids`, each with `decided_team_id` (as everywhere: its rules, its
    namespace's team, its latest run's token team) and `by_token` (only the token decides it).
    Two queries: the candidates (`_jobs_maybe_of`), then their facts, by id."""
    candidates = _jobs_maybe_of(team_ids)
    if not candidates:
        return []
    jobs = list(Job.objects.filter(pk__in=candidates)
                .annotate(**owner_annotations(), last_token_team_id=_latest_token_team()).order_by())
    for job in jobs:
        job.decided_team_id = next((t for t in (job.job_team_id, job.namespace_team_id, job.last_token_team_id)
                            if t is not None), None)
        job.by_token = job.job_team_id is None and job.namespace_team_id is None
    return [job for job in jobs if job.decided_team_id in team_ids]


def _unowned_outputs(jobs: list[Job], teams: dict) -> list[InboxItem]:
    """The datasets nobody owns that the teams' jobs write. One query: the jobs' output
    edges, each dataset read by its primary key in a subquery (joined, PostgreSQL walked the
    dataset table's index from its first row to the edges' last dataset)."""
    by_pk = {job.pk: job for job in jobs}
    # Scalar subqueries, not EXISTS: PostgreSQL turns an EXISTS into a join again.
    dataset = Dataset.objects.filter(pk=OuterRef("dataset_id")).order_by()
    edges = sorted(
        JobDataset.objects.filter(job_id__in=list(by_pk), direction=Direction.OUTPUT)
        .annotate(dataset_owner_team=Subquery(dataset.values("owner_team_id")),
                  dataset_namespace=Subquery(dataset.values("namespace")), dataset_name=Subquery(dataset.values("name")))
        .filter(dataset_owner_team__isnull=True).values_list("job_id", "dataset_id", "dataset_namespace", "dataset_name"),
        key=lambda e: (e[2], e[3], by_pk[e[0]].name))
    items, seen = [], set()
    for job_id, dataset_id, namespace, name in edges:
        job = by_pk[job_id]
        key = f"unowned_output:{dataset_id}:{job.decided_team_id}"
        if key in seen:
            continue
        seen.add(key)
        team = teams.get(job.decided_team_id)
        items.append(InboxItem(
            kind="unowned_output", key=key, team_id=job.decided_team_id,
            title=f"{name} has no owner, and {team.name if team else 'your team'}'s job {job.name} writes it",
            detail="Claim it for the team that writes it, so consumers can register and changes reach them.",
            url=Dataset(pk=dataset_id, namespace=namespace, name=name).get_absolute_url()))
    return items


def _unregistered_readers(team_ids: list[int], limit: int | None) -> list[InboxItem]:
    datasets = (Dataset.objects.filter(owner_team_id__in=team_ids).with_unregistered_readers()
                .filter(unregistered_readers__gt=0).select_related("owner_team").order_by("namespace", "name"))[:limit]
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


def _unattributed_jobs(jobs: list[Job], teams: dict) -> list[InboxItem]:
    items = []
    for job in sorted((j for j in jobs if j.by_token), key=lambda j: (j.namespace, j.name)):
        team = teams.get(job.decided_team_id)
        items.append(InboxItem(
            kind="unattributed_job", key=f"unattributed_job:{job.pk}", team_id=job.decided_team_id,
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
def lineage_items(user, team_ids: list[int], limit: int | None = None) -> list[InboxItem]:
    items = []
    if team_ids:
        jobs = _teams_jobs(team_ids)
        teams = Team.objects.in_bulk(team_ids) if jobs else {}
        items = (_failing_checks(team_ids)[:limit] + _unowned_outputs(jobs, teams)[:limit]
                 + _unregistered_readers(team_ids, limit) + _unattributed_jobs(jobs, teams)[:limit])
    if user is not None and is_governance_admin(user):
        items += _jobs_nobody_owns()
    return items
