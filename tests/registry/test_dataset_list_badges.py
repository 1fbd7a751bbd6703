"""The dataset list tells you where to look: a badge per dataset for schema drift,
failed quality checks, open change requests and unregistered readers, each linking
to the section of the dataset page that explains it, in a constant number of queries."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.conf import settings

from change_requests.models import ChangeRequest, ChangeRequestState
from contracts_app.models import DatasetBinding
from registry.models import Dataset
from registry.usage import NamespaceTeam
from tests.registry import troubles

pytestmark = pytest.mark.django_db


def _badges_of(page: str, name: str) -> list[tuple[str, str]]:
    row = re.search(rf'<tr[^>]*>\s*<td class="dataset"><a href="[^"]+">{re.escape(name)}</a>.*?</tr>', page, re.S)
    return re.findall(r'<a class="tag badge [^"]*" title="[^"]*" href="([^"]+)">([^<]+)</a>', row.group(0))


def test_a_dataset_in_trouble_shows_each_badge_linking_to_its_section(client, dataset, owner, other_team):
    contract = troubles.contract()
    DatasetBinding.objects.create(dataset=dataset, contract=contract)
    troubles.drift(dataset, findings=2)
    troubles.quality(dataset, failed=1)
    troubles.open_request(contract)
    troubles.read(dataset, "warehouse/nightly_export", other_team)
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
    contract = troubles.contract()
    DatasetBinding.objects.create(dataset=dataset, contract=contract)
    troubles.drift(dataset, findings=3)
    troubles.drift(dataset, findings=0)  # the latest check matches: the drift is over
    troubles.quality(dataset, failed=0)
    request = troubles.open_request(contract)
    ChangeRequest.objects.filter(pk=request.pk).update(state=ChangeRequestState.PUBLISHED)
    troubles.read(dataset, "analytics/dashboard", consumer_team)
    client.force_login(owner)

    assert _badges_of(client.get("/").content.decode(), "retail.public.orders") == []


def test_unregistered_readers_are_jobs_whose_team_is_neither_a_consumer_nor_the_owner(
        client, dataset, owner, owner_team, consumer_team, other_team):
    troubles.read(dataset, "analytics/dashboard", consumer_team)  # a registered consumer's job
    troubles.read(dataset, "checkout/reconcile", owner_team)  # the owner team reading its own data
    troubles.read(dataset, "warehouse/nightly_export", other_team)  # unregistered
    troubles.read(dataset, "adhoc/notebook")  # nobody says whose: unregistered
    # The namespace's team wins over the posting token's: a consumer's job, posted with another token.
    NamespaceTeam.objects.create(namespace="bi", team=consumer_team)
    troubles.read(dataset, "bi/weekly", other_team)
    # Evidence older than the usage window no longer counts.
    troubles.read(dataset, "legacy/export", other_team, seen_ago=settings.COLUMN_USAGE_WINDOW + timedelta(days=1))

    assert Dataset.objects.with_unregistered_readers().get(pk=dataset.pk).unregistered_readers == 2
    client.force_login(owner)
    assert (f"{dataset.get_absolute_url()}#readers", "2 unregistered readers") in _badges_of(
        client.get("/").content.decode(), "retail.public.orders")


def test_the_badges_keep_the_list_query_count_whatever_the_number_of_datasets(
        client, owner, owner_team, other_team, django_assert_num_queries):
    contract = troubles.contract()
    troubles.open_request(contract)
    for i in range(30):
        troubled = Dataset.objects.create(namespace="s3://lake", name=f"t{i:02}", owner_team=owner_team, owner=owner)
        DatasetBinding.objects.create(dataset=troubled, contract=contract)
        troubles.drift(troubled, findings=1)
        troubles.quality(troubled, failed=2)
        troubles.read(troubled, f"warehouse/export_{i}", other_team)
    client.force_login(owner)
    # 1. the session, 2. the user, 3. the teams of the filter, 4.-9. the datasets with owner
    # team, owner, consumer count, freshness row and every badge's subquery, a seek a status
    # (here all no SLO and never written, after five empty statuses): no count
    with django_assert_num_queries(9):
        page = client.get("/").content.decode()
    assert page.count(">schema drift</a>") == 30 and page.count(">2 failed checks</a>") == 30
    assert page.count(">1 open change request</a>") == 30 and page.count(">1 unregistered reader</a>") == 30
