"""The shared world of the tests.

Named people and teams, used everywhere:
- `owner` (alice) is in `owner_team` (Checkout) and owns `dataset` (retail / orders);
- `teammate` (bob) is in `owner_team` too;
- `consumer` (carol) is in `consumer_team` (Analytics), which consumes `dataset`;
- `outsider` (dave) is in `other_team` (Warehouse), which has nothing to do with `dataset`;
- `admin` (gina) is a governance admin (staff) in no team.
"""

from __future__ import annotations

import os

import pytest
from django.contrib.auth import get_user_model

from registry.models import ApiToken, Consumer, Dataset, Membership, Team


def make_user(username: str, **extra):
    return get_user_model().objects.create_user(username, f"{username}@example.com", "pw", **extra)


def bearer(secret: str) -> dict[str, str]:
    """Django test client keyword arguments sending `secret` as a bearer token."""
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def make_team(name: str, slug: str, *members) -> Team:
    team = Team.objects.create(name=name, slug=slug)
    for member in members:
        Membership.objects.create(team=team, user=member)
    return team


# Marks of the files that take longest (a fleet of processes for minutes, subprocesses, servers,
# a browser, a tool installed on first use), heaviest first: `make test` hands these to its
# workers before the rest.
HEAVY_FIRST = ("starts_early", "bench", "slow", "datacontract", "pandera_tool", "browser")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items) -> None:
    """Under pytest-xdist (`make test`), the heaviest files first, then the others, most tests
    first. A file goes to one worker whole (--dist loadfile) in this order (the Makefile passes
    --no-loadscope-reorder, or xdist would order files by their number of tests alone, which
    puts a file of a few minute-long tests last, one core working alone while the other idles).
    Within a file the order is kept; a run without xdist keeps pytest-django's order."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def weight(entry: tuple[int, tuple[str, list]]) -> tuple[int, int, int]:
        position, (_, file_items) = entry
        ranks = [rank for rank, mark in enumerate(HEAVY_FIRST)
                 if any(item.get_closest_marker(mark) for item in file_items)]
        return (min(ranks, default=len(HEAVY_FIRST)), -len(file_items), position)

    ordered = sorted(enumerate(files.items()), key=weight)
    items[:] = [item for _, (_, file_items) in ordered for item in file_items]


@pytest.fixture(autouse=True)
def _fresh_usage_caches():
    """What one test's events wrote (or parsed) is not another's to skip: the ingest remembers
    in this process what it committed, and a test's rollback does not undo that memory."""
    from lineage.api.views import RECENT_TOKEN_CHECKS
    from lineage.facets import RECENT_FACETS
    from lineage.ingest import RECENT_USAGE
    from lineage.sql_usage import clear_caches

    RECENT_USAGE.clear()
    RECENT_FACETS.clear()
    RECENT_TOKEN_CHECKS.clear()
    clear_caches()
    yield
    RECENT_USAGE.clear()
    RECENT_FACETS.clear()
    RECENT_TOKEN_CHECKS.clear()


@pytest.fixture
def owner(db):
    return make_user("alice")


@pytest.fixture
def teammate(db):
    return make_user("bob")


@pytest.fixture
def consumer(db):
    return make_user("carol")


@pytest.fixture
def outsider(db):
    return make_user("dave")


@pytest.fixture
def admin(db):
    return make_user("gina", is_staff=True, is_superuser=True)


@pytest.fixture
def owner_team(owner, teammate):
    return make_team("Checkout", "checkout", owner, teammate)


@pytest.fixture
def consumer_team(consumer):
    return make_team("Analytics", "analytics", consumer)


@pytest.fixture
def other_team(outsider):
    return make_team("Warehouse", "warehouse", outsider)


@pytest.fixture
def unowned_dataset(db):
    return Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders")


@pytest.fixture
def dataset(unowned_dataset, owner_team, owner, consumer_team):
    """retail.public.orders, owned by Checkout (alice), consumed by Analytics."""
    Dataset.objects.filter(pk=unowned_dataset.pk).update(owner_team=owner_team, owner=owner)
    unowned_dataset.refresh_from_db()
    Consumer.objects.create(dataset=unowned_dataset, team=consumer_team)
    return unowned_dataset


@pytest.fixture
def logged_in(client, owner):
    """The test client, logged in as alice."""
    client.force_login(owner)
    return client


@pytest.fixture
def owner_token(owner):
    """(token, secret) for alice."""
    return ApiToken.issue("alice's laptop", user=owner)
