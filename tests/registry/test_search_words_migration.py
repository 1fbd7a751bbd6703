"""registry 0018 swaps the trigram indexes for the words index, and back."""

from __future__ import annotations

import pytest
from django.db import connection

from registry.models import Dataset
from tests.migrations import migrate, migrate_to_latest

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE_WORDS = [("registry", "0017_column_read_team_indexes")]


def indexes() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'registry_dataset'")
        return dict(cursor.fetchall())


def test_migrating_back_restores_the_trigram_indexes_and_forward_indexes_the_words_of_existing_datasets():
    try:
        migrate(BEFORE_WORDS)
        back = indexes()
        assert {"dataset_namespace_trgm", "dataset_name_trgm", "dataset_description_trgm"} <= set(back)
        assert "dataset_search_words" not in back
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO registry_dataset (namespace, name, description, compatibility_mode, created_at) "
                           "VALUES ('snowflake://acme', 'analytics.orders_daily_2024', '', 'BACKWARD', now())")
    finally:
        migrate_to_latest()
    forward = indexes()
    assert "fastupdate=off" in forward["dataset_search_words"].replace(" ", "")
    assert not {"dataset_namespace_trgm", "dataset_name_trgm", "dataset_description_trgm"} & set(forward)
    assert list(Dataset.objects.matching("rders_dai").values_list("name", flat=True)) == ["analytics.orders_daily_2024"]
