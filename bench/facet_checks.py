"""The ingest's check of one RunEvent (lineage.validation.check_event: the
core rules and every standard facet against its own schema), on a typical
event and on the same event with one facet that breaks its schema (which the
ingest now drops with a warning instead of refusing the event).

    python bench/facet_checks.py [--smoke]

Prints one JSON line: {"valid_us", "one_bad_facet_us", "machine"} (the best of
5 repeats, microseconds per event). No database is touched.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import timeit
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "client")]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
os.environ.setdefault("SECRET_KEY", "bench")
os.environ.setdefault("DEBUG", "0")

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.0.0/integration/dbt"


def _facet(schema_url: str, **fields) -> dict:
    return {"_producer": PRODUCER, "_schemaURL": schema_url, **fields}


def typical_event() -> dict:
    """2 inputs, 1 output with schema (10 columns) and outputStatistics, a nominalTime run facet."""
    facets = "https://openlineage.io/spec/facets/"
    return {
        "eventType": "COMPLETE", "eventTime": "2026-11-30T01:00:00.000Z", "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.uuid4()), "facets": {"nominalTime": _facet(
            facets + "1-0-0/NominalTimeRunFacet.json", nominalStartTime="2026-11-30T01:00:00Z")}},
        "job": {"namespace": "airflow", "name": "etl.load_orders"},
        "inputs": [{"namespace": "postgres://db:5432", "name": f"raw.t{i}"} for i in range(2)],
        "outputs": [{"namespace": "postgres://db:5432", "name": "stage.orders",
                     "facets": {"schema": _facet(facets + "1-1-1/SchemaDatasetFacet.json",
                                                 fields=[{"name": f"c{i}", "type": "int"} for i in range(10)])},
                     "outputFacets": {"outputStatistics": _facet(
                         facets + "1-0-2/OutputStatisticsOutputDatasetFacet.json", rowCount=5)}}],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a few hundred checks, for CI")
    args = parser.parse_args()
    import django

    django.setup()
    from bench._django import machine
    from lineage.validation import check_event

    event = typical_event()
    bad = copy.deepcopy(event)
    bad["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] = "5"
    assert not check_event(event).problems and not check_event(event).invalid_facets
    assert [f.key for f in check_event(bad).invalid_facets] == ["outputStatistics"]
    number = 200 if args.smoke else 20_000
    figures = {}
    for label, subject in (("valid_us", event), ("one_bad_facet_us", bad)):
        print(f"checking {number} × 5 events ({label})…", file=sys.stderr)
        best = min(timeit.repeat(lambda subject=subject: check_event(subject), number=number, repeat=5))
        figures[label] = round(best / number * 1e6, 1)
    print(json.dumps({**figures, "machine": machine()}))


if __name__ == "__main__":
    main()
