"""The dataset list tells you where to look: a badge per dataset for schema drift,
failed quality checks, open change requests and unregistered readers, each linking
to the section of the dataset page that explains it, in a constant number of queries."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from change_requests.models import ChangeRequest, ChangeRequestState
from contracts_app.models import Contract, DatasetBinding, SchemaDriftCheck
from lineage.models import QualityCheck
from registry.models import Dataset
from registry.usage import ColumnRead, NamespaceTeam

pytestmark = pytest.mark.django_db


def _contract(name: str = "retail.public.orders") -> Contract:
    domain, *_, entity = name.split(".")
    return Contract.objects.create(name=name, domain=domain, entity=entity, schema_type="dataframe")


def _drift(dataset, findings: int) -> None:
    SchemaDriftCheck.objects.create(dataset=dataset, contract_name="retail.public.orders", version="1.0",
                                    run_uuid=uuid.uuid4(), job_namespace="airflow", job_name="load_orders",
                                    event_type="COMPLETE", event_time=timezone.now(), drift_count=findings)


def _quality(dataset, failed: int) -> None:
    QualityCheck.objects.create(dataset=dataset, run_uuid=uuid.uuid4(), job_namespace="dbt", job_name="test_orders",
                                event_time=timezone.now(), assertion_count=3, failed_count=failed)


def _open_request(contract) -> ChangeRequest:
    now = timezone.now()
    return ChangeRequest.objects.create(contract=contract, proposed_version="2.0", proposed_document={},
                                        deadline_at=now + timedelta(days=7), remind_at=now + timedelta(days=5))


def _read(dataset, job: str, team=None, *, seen_ago: timedelta = timedelta(hours=1)) -> None:
    namespace, name = job.split("/")
    seen = timezone.now() - seen_ago
    ColumnRead.objects.create(dataset=dataset, job_namespace=namespace, job_name=name, column="", source="input",
                              token_team=team, first_seen_at=seen, last_seen_at=seen)


def _badges_of(page: str, name: str) -> list[tuple[str, str]]:
    row = re.search(rf'<tr[^>]*>\s*<td class="dataset"><a href="[^"]+">{re.escape(name)}</a>.*?</tr>', page, re.S)
    return re.findall(r'<a class="tag badge [^"]*" title="[^"]*" href="([^"]+)">([^<]+)</a>', row.group(0))


def test_a_dataset_in_trouble_shows_each_badge_linking_to_its_section(client, dataset, owner, other_team):
    contract = _contract()
    DatasetBinding.objects.create(dataset=dataset, contract=contract)
    _drift(dataset, findings=2)
    _quality(dataset, failed=1)
    _open_request(contract)
    _read(dataset, "warehouse/nightly_export", other_team)
    client.force_login(owner)

    badges = _badges_of(client.get("/").content.decode(), "retail.public.orders")

    url = dataset.get_absolute_url()
    assert badges == [
        (f"{url}#readers", "1 unregistered reader"),
        (f"{url}#schema-drift", "schema drift"),
        (f"{url}#dataset-change-requests", "1 open change request"),
        (f"{url}#data-quality", "1 failed check"),
    ]
    page = client.get(url).content.decode()
    for anchor in ("readers", "schema-drift", "dataset-change-requests", "data-quality"):
        assert f'id="{anchor}"' in page


def test_a_dataset_with_nothing_wrong_shows_no_badge(client, dataset, owner, consumer_team):
    contract = _contract()
    DatasetBinding.objects.create(dataset=dataset, contract=contract)
    _drift(dataset, findings=3)
    _drift(dataset, findings=0)  # the latest check matches: the drift is over
    _quality(dataset, failed=0)
    request = _open_request(contract)
    ChangeRequest.objects.filter(pk=request.pk).update(state=ChangeRequestState.PUBLISHED)
    _read(dataset, "analytics/dashboard", consumer_team)
    client.force_login(owner)

    assert _badges_of(client.get("/").content.decode(), "retail.public.orders") == []


def test_unregistered_readers_are_jobs_whose_team_is_neither_a_consumer_nor_the_owner(
        client, dataset, owner, owner_team, consumer_team, other_team):
    _read(dataset, "analytics/dashboard", consumer_team)  # a registered consumer's job
    _read(dataset, "checkout/reconcile", owner_team)  # the owner team reading its own data
    _read(dataset, "warehouse/nightly_export", other_team)  # unregistered
    _read(dataset, "adhoc/notebook")  # nobody says whose: unregistered
    # The namespace's team wins over the posting token's: a consumer's job, posted with another token.
    NamespaceTeam.objects.create(namespace="bi", team=consumer_team)
    _read(dataset, "bi/weekly", other_team)
    # Evidence older than the usage window no longer counts.
    _read(dataset, "legacy/export", other_team, seen_ago=settings.COLUMN_USAGE_WINDOW + timedelta(days=1))

    assert Dataset.objects.with_unregistered_readers().get(pk=dataset.pk).unregistered_readers == 2
    client.force_login(owner)
    assert (f"{dataset.get_absolute_url()}#readers", "2 unregistered readers") in _badges_of(
        client.get("/").content.decode(), "retail.public.orders")


def test_the_badges_keep_the_list_query_count_whatever_the_number_of_datasets(
        client, owner, owner_team, other_team, django_assert_num_queries):
    contract = _contract()
    _open_request(contract)
    for i in range(30):
        troubled = Dataset.objects.create(namespace="s3://lake", name=f"t{i:02}", owner_team=owner_team, owner=owner)
        DatasetBinding.objects.create(dataset=troubled, contract=contract)
        _drift(troubled, findings=1)
        _quality(troubled, failed=2)
        _read(troubled, f"warehouse/export_{i}", other_team)
    client.force_login(owner)
    # 1. the session, 2. the user, 3. the teams of the filter, 4. the page's count,
    # 5. the datasets with owner team, owner, consumer count, freshness row and every badge's subquery
    with django_assert_num_queries(5):
        page = client.get("/").content.decode()
    assert page.count(">schema drift</a>") == 30 and page.count(">2 failed checks</a>") == 30
    assert page.count(">1 open change request</a>") == 30 and page.count(">1 unregistered reader</a>") == 30
