"""One replica of the ingest, for the dedup test: stores a failing dbt test event for
each dataset named on the command line, all replicas starting at the same instant.

    python -m tests.incidents.replica START_AT DATASET_ID...
"""

from __future__ import annotations

import os
import sys
import time

import django


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    django.setup()
    from lineage.ingest import store_event
    from registry.models import Dataset
    from tests.incidents.conftest import ALL_PASS, failed, test_event

    start_at, ids = float(sys.argv[1]), [int(i) for i in sys.argv[2:]]
    datasets = list(Dataset.objects.filter(pk__in=ids).order_by("pk"))
    events = [test_event(d, [*ALL_PASS[1:], failed("not_null", "order_id")]) for d in datasets]
    time.sleep(max(start_at - time.time(), 0))
    for event in events:
        store_event(event)
    print(f"replica {os.getpid()} stored {len(events)} events", flush=True)
    # The broker client's threads would keep the process alive; everything is committed.
    os._exit(0)


if __name__ == "__main__":
    main()
